package calib

import (
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// Physical bounds on a measured latency. A row below its floor claims to
// move data faster than the hardware its provenance names can (the
// fabric's link bandwidth for a collective; the GPU's DRAM bandwidth and
// peak throughput for a GEMM): a wrong unit (latency_us for ms), a wrong
// size column or another box's numbers. A row above its ceiling is a
// wrong unit the other way or a broken measurement (a pause, a hang).
// Either would price every query near it with a plausible-looking but
// wrong number, so the table is refused at the row.
//
// Floors are lower bounds whatever the algorithm:
//
//   - allreduce, allgather, reducescatter, alltoall: every rank receives
//     (or sends) at least (n-1)/n of the buffer from (to) the others, over a
//     link of Fabric.BW per direction: t >= (n-1)/n x bytes / BW (NVLS and
//     in-switch reduction do not beat it: each rank still receives its
//     share of the result);
//   - gemm: t >= 2 M N K / (the GPU's largest dense peak), and t >= the
//     weights' bytes (N K x bits/8, scales not counted) / DRAM bandwidth
//     unless the rows were measured with a warm cache and the weights fit
//     in L2 (then a replay reads them from L2);
//   - elementwise: t >= bytes / DRAM bandwidth, under the same cache
//     condition (bytes above L2, or a flushed cache).
//
// Ops whose bytes depend on routing or caching (moe, mla, gqa, ep) have
// no such floor (kernels.Costs floors their lookups at the DRAM streaming
// time). Every row of every op takes at least minOpLatency: a GPU kernel
// launched or replayed from a graph takes a microsecond or more (the
// smallest latency in the embedded calibrations is 2.25 us, an 8-GPU NCCL
// all-reduce on H200), so 100 ns is a unit slip (latency_us holding ms
// divided by 1e6). Every op has the ceiling ceilFixed + ceilFactor x floor.
const (
	minOpLatency = unit.Seconds(100e-9)
	ceilFixed    = unit.Seconds(10)
	ceilFactor   = 1000
)

// plausibleRows checks every row of t against the floor and ceiling of
// the box its provenance names (a GPU or fabric that is not a preset has
// no floor). The error is a curve.RowError, which buildErr places at the
// row's line.
func plausibleRows(prov Provenance, t *Table, c *colIndex) error {
	gpu, hasGPU := kernels.LookupGPU(prov.GPU)
	fab, hasFab := comm.LookupFabric(prov.Fabric)
	for i, r := range t.Rows {
		lat := unit.Seconds(r[c.lat]) * c.latScale
		floor, why := minOpLatency, "the least a GPU op takes (a kernel launch or graph node)"
		switch Op(t.Op) {
		case OpAllReduce, OpAllGather, OpReduceScatter, OpAllToAll:
			if !hasFab {
				break
			}
			n := r[c.idx["ranks"]]
			bytes := r[c.idx["bytes"]]
			floor = unit.Seconds((n - 1) / n * bytes / float64(fab.BW))
			why = "(ranks-1)/ranks x bytes at the " + fab.Name + " link bandwidth " + fab.BW.String()
		case OpElementwise:
			// the kernel reads and writes bytes at least once: from DRAM
			// unless a warm replay finds them in L2
			l2 := prov.GPUL2Bytes
			if hasGPU && l2 == 0 {
				l2 = float64(gpu.L2)
			}
			if b := r[c.idx["bytes"]]; hasGPU && (prov.Cache == "flushed" || b > l2) {
				if f := unit.Seconds(b / float64(gpu.MemBW)); f > floor {
					floor, why = f, "the bytes at the "+gpu.Name+" DRAM bandwidth "+gpu.MemBW.String()
				}
			}
		case OpGEMM:
			if !hasGPU {
				break
			}
			m, nn, k := r[c.idx["m"]], r[c.idx["n"]], r[c.idx["k"]]
			var peak unit.FLOPsPerSecond
			for _, p := range gpu.Peak {
				peak = max(peak, p)
			}
			if peak > 0 {
				if f := unit.Seconds(2 * m * nn * k / float64(peak)); f > floor {
					floor, why = f, "2 x m x n x k at the "+gpu.Name+" peak "+peak.String()
				}
			}
			wbytes := nn * k * weightBits(t.Keys.Dtype) / 8
			l2 := prov.GPUL2Bytes
			if l2 == 0 {
				l2 = float64(gpu.L2)
			}
			if prov.Cache == "flushed" || wbytes > l2 {
				if f := unit.Seconds(wbytes / float64(gpu.MemBW)); f > floor {
					floor, why = f, "the n x k weights at the "+gpu.Name+" DRAM bandwidth "+gpu.MemBW.String()
				}
			}
		}
		if lat < floor {
			return curve.RowErrorf(i+1, "%s %g is below the physical floor %s (%s): check the latency unit and the size columns, or the provenance's gpu and fabric",
				t.Columns[c.lat], r[c.lat], floor, why)
		}
		if ceil := ceilFixed + ceilFactor*floor; lat > ceil {
			return curve.RowErrorf(i+1, "%s %g (%s) is absurdly slow, above %s: check the latency unit",
				t.Columns[c.lat], r[c.lat], lat, ceil)
		}
	}
	return nil
}

// weightBits is the bits per stored weight of a GEMM weight-format name
// ("bf16", "int4-g32", "fp8-b128"), scales not counted; 4 when unknown
// (the smallest, so the floor stays a lower bound).
func weightBits(name string) float64 {
	switch {
	case name == "fp32":
		return 32
	case name == "bf16" || name == "fp16":
		return 16
	case strings.HasPrefix(name, "int8") || strings.HasPrefix(name, "fp8"):
		return 8
	}
	return 4
}
