package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// vLLM's Marlin MoE on MXFP4 experts (dtype.MXFP4Marlin; scenarios
// mxfp4.go says when vLLM runs it) on sm_90 is priced by a fit to the
// perf database's own rows of that kernel on H100: ai-dynamo/aiconfigurator
// @ 095f58a, systems/data/h100_sxm/moe/vllm/0.24.0/moe_perf.parquet, the
// w4a16_mxfp4 rows of kernel_source
// vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu
// (896 experts, top-16, hidden 3584, inter 3072; collection_meta.yaml:
// MarlinExperts in the stock v0.24.0 image). Per moe_tp (1, 2, 4, 8, 16:
// per-rank widths 3072 ... 192), ep 1, all three routings (balanced,
// power_law_1.01, power_law_1.2), 81 rows each, 1 to 16384 tokens, fitted
// per width to
//
//	t = fixed + weight_bytes/BW_peak + FLOPs/(peak_bf16*eff)
//
// least squares on the relative error, weight_bytes the rows' own
// working_set_bytes (the experts touched, 4.25 bits a weight) and FLOPs
// 2*pairs*3*hidden*inter: the weights stream at the DRAM peak and the
// dequantise-and-MMA work does not overlap it. Fraction of the bf16 peak
// (eff) and fit error per width 192/384/768/1536/3072: 0.120, 0.164,
// 0.203, 0.226, 0.235; MAPE 9.4, 8.6, 8.8, 9.1, 9.3% (worst 24-49%, the
// balanced rows at 64-128 tokens). The perf database holds no Marlin row
// of gpt-oss's own shape (bench/RESULTS-gptossh.md).
//
// The fit's fixed term follows the shape, not the width: 67-86 us for
// those 896-expert top-16 rows, 40-48 us (median 43.8 us over moe_tp 1-32)
// for the same fit to the H100 Marlin int4 rows of 384 experts, top-8
// (kernel_source vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts,
// moe.vllm-0.24.0.int4_wo.e384.k8.h7168.i2048). gpt-oss (128 experts,
// top-4) is nearer the second; its median is used: MarlinMXFP4Fixed.
var (
	marlinMXFP4Widths  = [...]float64{192, 384, 768, 1536, 3072}
	marlinMXFP4EffSM90 = [...]float64{0.1196, 0.1641, 0.2028, 0.2255, 0.2347}
)

// MarlinMXFP4Fixed is the Marlin MoE layer's fixed cost on sm_90 (above).
const MarlinMXFP4Fixed = 43.8 * unit.Microsecond

// MarlinMXFP4Eff is the fit's fraction of the bf16 peak at a per-rank
// expert width of inter: piecewise linear in log2(inter) between the
// measured widths, the end values beyond them.
func MarlinMXFP4Eff(inter int) float64 {
	return lerpLog2(marlinMXFP4Widths[:], marlinMXFP4EffSM90[:], float64(inter))
}

const noteMarlinMXFP4 = "vLLM Marlin MoE (VLLM_MXFP4_USE_MARLIN); bytes and FLOPs of the layer padded to multiples of 256 (hidden) and 128 (width)"

const formulaMarlinMXFP4 = "fixed + weight_bytes/BW_peak + flops/(peak*eff_compute) (fit to the perf database's H100 Marlin MXFP4 MoE rows)"

// marlinMXFP4 prices one Marlin MXFP4 MoE layer on sm_90 (see above);
// ok is false on other architectures, which keep the W4A16 Marlin
// roofline.
func (c *Costs) marlinMXFP4(s MoEShape) (cost.Estimate, bool) {
	if s.Weight != dtype.MXFP4Marlin || c.GPU.Arch != SM90 || !(c.GPU.MemBW > 0) {
		return cost.Estimate{}, false
	}
	fixed, eff := MarlinMXFP4Fixed, MarlinMXFP4Eff(s.Inter)
	wb := MoEWeightBytes(s)
	fl := MoEFLOPs(s)
	peak := c.GPU.PeakFor(dtype.BF16)
	tMem := unit.TransferTime(wb, c.GPU.MemBW)
	var tComp unit.Seconds
	if peak > 0 {
		tComp = unit.ComputeTime(fl, peak*unit.FLOPsPerSecond(eff))
	}
	body := tMem + tComp
	e := cost.Estimate{Bytes: MoEBytes(s), FLOPs: fl, Kernels: MoEKernels}
	e.Source = cost.Source{Kind: cost.Roofline, Formula: formulaMarlinMXFP4, Efficiency: eff, Bound: "memory", Note: noteMarlinMXFP4}
	if tComp > tMem {
		e.Source.Bound = "compute"
	}
	if fixed > body {
		e.Source.Bound = "latency"
	}
	e.Time = body + fixed
	e.Lo = body*unit.Seconds(ComputeSpread.Lo) + fixed*unit.Seconds(LatencySpread.Lo)
	e.Hi = body*unit.Seconds(ComputeSpread.Hi) + fixed*unit.Seconds(LatencySpread.Hi)
	if e.Lo < tMem {
		e.Lo = tMem
	}
	return e, true
}
