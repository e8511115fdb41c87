package comm

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// Collectives across nodes. A replica whose ranks outnumber its fabric's
// Fabric.NodeGPUs spans ceil(ranks/NodeGPUs) nodes; with Comm.NIC set
// (one NIC per GPU, as on HGX nodes), the traffic inside a node crosses
// the fabric and the traffic between nodes the NIC, each at its own
// bandwidth:
//
//   - all-to-all (EP dispatch and combine): a rank's bytes go to every
//     rank alike; the (g-1)/n share for its own node's peers crosses the
//     fabric, the (n-g)/n share for other nodes the NIC, in parallel:
//     t_a2a + log2(n)*hop + nic latency + max(on-node/AllToAllBW,
//     off-node/NIC BW). EP dispatch and combine are asked of the
//     calibration's EP tables (DeepEP low-latency, Tables.EP) first; a
//     table that covers the rank count answers, else this roofline.
//   - all-reduce: hierarchical, as NCCL runs it across nodes: a
//     reduce-scatter inside each node, an all-reduce of the node's 1/g
//     share among the m nodes over the NIC (ring: 2(m-1)/m of it, 2(m-1)
//     NIC latencies) and an all-gather inside the node.
//   - all-gather and reduce-scatter: a ring over all n ranks whose
//     slowest hop is the NIC: (n-1)*hop + (m-1)*nic latency +
//     (n-1)/n*b/NIC BW.
//
// Without a NIC, or within one node, collectives are priced on the fabric
// alone, as before (the scenario warns when a replica spans nodes without
// hardware.nic).

// nodes is the number of nodes ranks span, and whether they span more
// than one with a NIC to price the traffic between them.
func (c *Comm) nodes(ranks int) (int, bool) {
	g := c.Fabric.NodeGPUs
	if g <= 0 || ranks <= g || !(c.NIC.BW > 0) {
		return 1, false
	}
	return (ranks + g - 1) / g, true
}

// nicNote names the NIC and its source.
func (c *Comm) nicNote(nodes int) string {
	return fmt.Sprintf("across %d nodes of %d GPUs: NIC %s, %s/GPU (%s)", nodes, c.Fabric.NodeGPUs, c.NIC.Name, c.NIC.BW, c.NIC.Source)
}

const (
	formulaAllToAllNodes  = "all-to-all across nodes: t_a2a + log2(n)*hop + nic latency + max(on-node bytes/AllToAllBW, off-node bytes/NIC BW)"
	formulaAllReduceNodes = "hierarchical all-reduce: reduce-scatter in the node + ring all-reduce of b/g over m nodes on the NIC (2(m-1) x nic latency + 2(m-1)/m x (b/g)/NIC BW) + all-gather in the node"
	formulaRingNodes      = "ring across nodes: (n-1)*hop + (m-1)*nic latency + (n-1)/n*b/NIC BW"
)

// allToAllNodes is AllToAll over ranks spanning m nodes.
func (c *Comm) allToAllNodes(ranks, m int, bytesPerRank unit.Bytes) cost.Estimate {
	n, g := float64(ranks), float64(c.Fabric.NodeGPUs)
	on := bytesPerRank * unit.Bytes((g-1)/n)
	off := bytesPerRank * unit.Bytes((n-g)/n)
	t := AllToAllBaseLatency + c.Fabric.Latency*unit.Seconds(math.Log2(n)) + c.NIC.Latency +
		max(unit.TransferTime(on, c.Fabric.AllToAllBW), unit.TransferTime(off, c.NIC.BW))
	return alphaBeta(t, on+off, formulaAllToAllNodes, c.nicNote(m))
}

// allReduceNodes is a hierarchical all-reduce of b over ranks spanning m
// nodes.
func (c *Comm) allReduceNodes(ranks, m int, b unit.Bytes) cost.Estimate {
	g := c.Fabric.NodeGPUs
	rs, ag := c.ReduceScatter(g, b), c.AllGather(g, b)
	share := b / unit.Bytes(g)
	mf := float64(m)
	nic := c.NIC.Latency*unit.Seconds(2*(mf-1)) + unit.TransferTime(share*unit.Bytes(2*(mf-1)/mf), c.NIC.BW)
	e := alphaBeta(rs.Time+nic+ag.Time, rs.Bytes+share*unit.Bytes(2*(mf-1)/mf)+ag.Bytes, formulaAllReduceNodes, c.nicNote(m))
	e.Kernels = rs.Kernels + 1 + ag.Kernels
	return e
}

// ringNodes is an all-gather or reduce-scatter of b over ranks spanning m
// nodes.
func (c *Comm) ringNodes(ranks, m int, b unit.Bytes) cost.Estimate {
	n := float64(ranks)
	wire := b * unit.Bytes((n-1)/n)
	t := c.Fabric.Latency*unit.Seconds(n-1) + c.NIC.Latency*unit.Seconds(m-1) + unit.TransferTime(wire, c.NIC.BW)
	return alphaBeta(t, wire, formulaRingNodes, c.nicNote(m))
}

// EPLookup is a Lookup that also answers expert-parallel dispatch and
// combine by tokens per rank (*Tables, from DeepEP tables). impl names the
// kernels ("deepep_ll", "deepep_normal"; "" any).
type EPLookup interface {
	EP(impl, phase string, ranks, tokensPerRank, hidden, topk, experts int) (cost.Estimate, bool)
}

// DeepEP kernel sets (EPKey.Impl, EPShape.Impl).
const (
	DeepEPLowLatency = "deepep_ll"     // DeepEP low-latency kernels (decode)
	DeepEPNormal     = "deepep_normal" // DeepEP normal (high-throughput) kernels (prefill)
)

// EPShape is one expert-parallel dispatch or combine: Phase "dispatch" or
// "combine", TokensPerRank tokens sent by each rank, the model's Hidden,
// TopK and Experts, and BytesPerRank (what AllToAll would be asked). Impl
// names the DeepEP kernels the engine runs (DeepEPLowLatency,
// DeepEPNormal), "" when it exchanges the tokens otherwise.
type EPShape struct {
	Phase                 string
	Impl                  string
	Ranks, TokensPerRank  int
	Hidden, TopK, Experts int
	BytesPerRank          unit.Bytes
}

// Notes of an EP exchange the engine runs with DeepEP that no table
// answers.
const (
	noteNoDeepEPLL     = "DeepEP low-latency: no deepep_ll table for these ranks and shape; NCCL all-to-all model"
	noteNoDeepEPNormal = "DeepEP normal: no deepep_normal table for these ranks and shape; NCCL all-to-all model"
)

// EP is the cost of an expert-parallel dispatch or combine. Where the
// engine runs DeepEP (Impl set), the calibration's DeepEP table of that
// kernel set that covers the rank count and shape answers, within a node
// or across nodes; else, within one node, AllToAll of the bytes (the NCCL
// model, with a note that no DeepEP table answered), across nodes any EP
// table that covers the rank count (its source names the table), else the
// all-to-all roofline across nodes (its source names the NIC).
func (c *Comm) EP(s EPShape) cost.Estimate {
	if s.Ranks <= 1 {
		return single()
	}
	m, across := c.nodes(s.Ranks)
	if across || s.Impl != "" {
		if t, ok := c.Tables.(EPLookup); ok && s.TokensPerRank > 0 {
			if e, ok := t.EP(s.Impl, s.Phase, s.Ranks, s.TokensPerRank, s.Hidden, s.TopK, s.Experts); ok {
				return fromTable(e, s.BytesPerRank)
			}
		}
	}
	var e cost.Estimate
	if across {
		e = c.allToAllNodes(s.Ranks, m, s.BytesPerRank)
	} else {
		e = c.AllToAll(s.Ranks, s.BytesPerRank)
	}
	if e.Source.Note == "" {
		switch s.Impl {
		case DeepEPLowLatency:
			e.Source.Note = noteNoDeepEPLL
		case DeepEPNormal:
			e.Source.Note = noteNoDeepEPNormal
		}
	}
	return e
}
