package comm

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// NCCL's analytic model (NVIDIA/nccl src/graph/tuning.cc, NCCL 2.28
// defaults), which NCCL itself uses to pick an algorithm and protocol:
//
//	latency = baseLat[algo][proto] + steps * hwLat[link][algo][proto]
//	time    = latency + bytes / algBW
//
// Ring all-reduce takes 2(n-1) steps and algBW = busBW * n/(2(n-1));
// all-gather and reduce-scatter n-1 steps and algBW = busBW * n/(n-1);
// tree all-reduce 2(n-1) intra-node hops and algBW = busBW/2.
// Protocol bandwidth factors (tuning.cc): ring LL busBW/4 for all-reduce,
// /3 for the others; LL128 x0.92; tree x0.9, tree LL /3.8 more, tree LL128
// x7/9. LL128 is enabled by default only on NVLink. busBW is the fabric's
// measured large-message bus bandwidth (Fabric.BusBW) rather than NCCL's
// topology-search estimate. NCCL's tree correction factors for medium sizes
// and NVLS (NVLink SHARP) are not modelled. The fabric's Latency stands for
// NCCL's ring LL hop latency and scales the other hop latencies.

type algo uint8

const (
	ring algo = iota
	tree
)

type proto uint8

const (
	protoLL proto = iota
	protoLL128
	protoSimple
	numProtos
)

// baseLat[algo][proto] in us.
var baseLat = [2][numProtos]float64{
	{6.6, 14.0, 8.4}, // ring
	{6.8, 14.0, 8.4}, // tree
}

// hwLat[nvlink?0:1][algo][proto] in us.
var hwLat = [2][2][numProtos]float64{
	{{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}}, // NVLink: ring, tree
	{{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}},  // PCI: ring, tree
}

// Formula strings naming the chosen NCCL algorithm and protocol.
var ncclFormula = [2][numProtos]string{
	{
		"nccl ring/LL: baseLat + steps*hwLat + bytes/(busBW/4 * n/steps)",
		"nccl ring/LL128: baseLat + steps*hwLat + bytes/(0.92*busBW * n/steps)",
		"nccl ring/Simple: baseLat + steps*hwLat + bytes/(busBW * n/steps)",
	},
	{
		"nccl tree/LL: baseLat + 2(n-1)*hwLat + bytes/(0.9*busBW/3.8/2)",
		"nccl tree/LL128: baseLat + 2(n-1)*hwLat + bytes/(0.9*busBW*7/9/2)",
		"nccl tree/Simple: baseLat + 2(n-1)*hwLat + bytes/(0.9*busBW/2)",
	},
}

// ncclTime returns NCCL's modelled time for a collective of b bytes (the
// full buffer: all-reduce input, all-gather output, reduce-scatter input)
// over n ranks, minimised over the enabled algorithms and protocols as NCCL
// does, with the formula of the winner.
func (c *Comm) ncclTime(kind cost.Category, n int, b unit.Bytes) (unit.Seconds, string) {
	link := 1
	if c.Fabric.NVLink {
		link = 0
	}
	bus := float64(c.Fabric.BusBW)
	// Fabric.Latency replaces NCCL's ring LL hop latency; the other hop
	// latencies scale with it.
	hop := 1.0
	if l := c.Fabric.Latency.Us(); l > 0 {
		hop = l / hwLat[link][ring][protoLL]
	}
	best := math.Inf(1)
	formula := ""
	nf := float64(n)
	for a := ring; a <= tree; a++ {
		if a == tree && kind != cost.AllReduce {
			continue
		}
		for p := protoLL; p < numProtos; p++ {
			if p == protoLL128 && !c.Fabric.NVLink {
				continue
			}
			var lat, bw float64
			if a == ring {
				steps := nf - 1
				if kind == cost.AllReduce {
					steps = 2 * (nf - 1)
				}
				f := 1.0
				switch p {
				case protoLL:
					f = 1.0 / 3
					if kind == cost.AllReduce {
						f = 1.0 / 4
					}
				case protoLL128:
					f = 0.92
				}
				lat = baseLat[ring][p] + steps*hwLat[link][ring][p]*hop
				bw = bus * f * nf / steps
			} else {
				f := 0.9
				switch p {
				case protoLL:
					f *= 1 / 3.8
				case protoLL128:
					f *= 7.0 / 9
				}
				lat = baseLat[tree][p] + 2*(nf-1)*hwLat[link][tree][p]*hop
				bw = bus * f / 2
			}
			t := lat*1e-6 + float64(b)/bw
			if t < best {
				best, formula = t, ncclFormula[a][p]
			}
		}
	}
	return unit.Seconds(best), formula
}
