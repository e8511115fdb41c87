package comm

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// AllGather is the cost of a NCCL all-gather over ranks whose gathered
// output is b bytes in total (nccl-tests' S = recvcount*n*elt; each rank
// contributes b/ranks): ring, n-1 steps, each rank sends (n-1)/n*b.
// ranks <= 1 costs nothing. One kernel.
func (c *Comm) AllGather(ranks int, b unit.Bytes) cost.Estimate {
	if ranks <= 1 {
		return single()
	}
	if m, ok := c.nodes(ranks); ok {
		return c.ringNodes(ranks, m, b)
	}
	if c.Tables != nil {
		if t, ok := c.Tables.AllGather(ranks, b); ok {
			return fromTable(t, b)
		}
	}
	t, f := c.ncclTime(cost.AllGather, ranks, b)
	n := float64(ranks)
	return alphaBeta(t, b*unit.Bytes((n-1)/n), f, "")
}

// ReduceScatter is the cost of a NCCL reduce-scatter over ranks of an
// input of b bytes per rank (each rank keeps b/ranks): ring, n-1 steps,
// each rank sends (n-1)/n*b. ranks <= 1 costs nothing. One kernel.
func (c *Comm) ReduceScatter(ranks int, b unit.Bytes) cost.Estimate {
	if ranks <= 1 {
		return single()
	}
	if m, ok := c.nodes(ranks); ok {
		return c.ringNodes(ranks, m, b)
	}
	if c.Tables != nil {
		if t, ok := c.Tables.ReduceScatter(ranks, b); ok {
			return fromTable(t, b)
		}
	}
	t, f := c.ncclTime(cost.ReduceScatter, ranks, b)
	n := float64(ranks)
	return alphaBeta(t, b*unit.Bytes((n-1)/n), f, "")
}

// All-to-all latency: AllToAllBaseLatency + log2(n)*Fabric.Latency, fitted
// to perfdb's nccl-tests alltoall small-message times (512 B - 8 KB;
// H200 6.3/6.6/7.4 us, RTX PRO 6000 6.2/8.2/9.5 us at 2/4/8 ranks) within
// 15%; B200's 9-11 us are above it.
const AllToAllBaseLatency unit.Seconds = 5.5 * unit.Microsecond

const formulaAllToAll = "nccl all-to-all: t_a2a + log2(n)*hop + (n-1)/n*bytesPerRank/AllToAllBW"

// AllToAll is the cost of an all-to-all (EP dispatch or combine) in which
// each rank sends bytesPerRank in total, split over all ranks (its own share
// stays local): AllToAllBaseLatency + log2(n)*Fabric.Latency +
// (n-1)/n*bytesPerRank/AllToAllBW (nccl-tests' busbw convention). NCCL
// grouped send/recv; DeepEP-style kernels are not modelled. ranks <= 1
// costs nothing. One kernel.
func (c *Comm) AllToAll(ranks int, bytesPerRank unit.Bytes) cost.Estimate {
	if ranks <= 1 {
		return single()
	}
	if m, ok := c.nodes(ranks); ok {
		return c.allToAllNodes(ranks, m, bytesPerRank)
	}
	if c.Tables != nil {
		if t, ok := c.Tables.AllToAll(ranks, bytesPerRank); ok {
			return fromTable(t, bytesPerRank)
		}
	}
	n := float64(ranks)
	wire := bytesPerRank * unit.Bytes((n-1)/n)
	t := AllToAllBaseLatency + c.Fabric.Latency*unit.Seconds(math.Log2(n)) + unit.TransferTime(wire, c.Fabric.AllToAllBW)
	return alphaBeta(t, wire, formulaAllToAll, "")
}
