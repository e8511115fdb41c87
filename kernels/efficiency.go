package kernels

import (
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// Efficiency holds the per-op-class fractions of peak the roofline uses.
// Mem* fields are fractions of the GPU's peak DRAM bandwidth, Compute*
// fields fractions of its dense tensor-core peak at the op's precision.
type Efficiency struct {
	// Mem is the DRAM streaming fraction of weight- and KV-streaming kernels
	// (cuBLAS/CUTLASS GEMMs, grouped MoE GEMMs in bf16/fp8, attention).
	Mem float64
	// MemGEMMBatch is the DRAM fraction of bf16 GEMMs at more than
	// GEMMBatchRows rows (M), where the architecture's GEMMs stream
	// weights slower than at a few rows; 0 = Mem.
	MemGEMMBatch float64
	// MemMarlin is the DRAM fraction of W4A16 Marlin kernels (dense and MoE).
	MemMarlin float64
	// MemElementwise is the DRAM fraction of elementwise kernels (norms,
	// rotary, activation, residual add, KV-cache write, sampling passes).
	MemElementwise float64
	// ComputeGEMM is the tensor-core fraction of dense bf16/fp8 GEMMs.
	ComputeGEMM float64
	// ComputeGEMMVLLM is ComputeGEMM for bf16 GEMMs on vLLM (Costs.Engine
	// "vllm") where the perf database measures vLLM's own apart from the
	// architecture's (sm_90: EffComputeGEMMVLLMSM90); 0 = ComputeGEMM.
	ComputeGEMMVLLM float64
	// ComputeGEMMBF16 is the tensor-core fraction of bf16 GEMMs on this
	// GPU, any engine, where the GPU carries its own measurement
	// (GPU.GEMMCompute); 0 = ComputeGEMMVLLM / ComputeGEMM.
	ComputeGEMMBF16 float64
	// ComputeMarlin is the fraction of the bf16 peak that W4A16 Marlin
	// reaches when compute-bound (it dequantizes to bf16 and uses mma.sync).
	ComputeMarlin float64
	// ComputeMoE is the fraction of peak of grouped bf16/fp8 MoE GEMMs.
	ComputeMoE float64
	// ComputeAttention is the fraction of the bf16 peak of decode attention
	// when compute-bound (MLA with many heads per GPU).
	ComputeAttention float64
	// MoEFixedMarlin is a fixed cost of a W4A16 Marlin MoE layer beyond
	// its kernels' t_kernel (routing glue and the grouped kernel's start-up
	// at low parallelism), seen as the intercept of layer time vs weight
	// bytes at small token counts.
	MoEFixedMarlin unit.Seconds
	// MLAHeadPad: decode MLA kernels process query heads in tiles of this
	// many heads; compute time uses heads rounded up to it (the Triton MLA
	// kernel uses BLOCK_H=16, vllm-project/vllm
	// `vllm/v1/attention/ops/triton_decode_attention.py`).
	// FLOPs reported are the real ones.
	MLAHeadPad int
	// QuantGEMM prices dense GEMMs that compute on quantized activations
	// (fp8, int8, fp4: the engines' scaled-mm kernels, the activation
	// quantization kernel included), by weight-scale family. The default
	// is the bf16 GEMM's EffMem with StreamKernelLatency +
	// SmallKernelLatency; sm_90, sm_100 and sm_103 carry values fitted on
	// the perf database's GEMM rows (QuantGEMMSM90, QuantGEMMSM100,
	// QuantGEMMSM103).
	QuantGEMM QuantGEMMCosts
}

// QuantGEMMCost is the roofline of one family of quantized-activation
// GEMMs: t = max(bytes/(BW*Mem), FLOPs/(peak*Compute)) + Fixed, Fixed
// standing for both kernels (activation quantization and the GEMM).
// Compute 0 means Efficiency.ComputeGEMM; architectures with perf
// database rows take their measured fractions (QuantGEMMComputeFor, the
// mechanism quant-gemm-compute, on by default; bench/RESULTS-quant-gemm.md).
type QuantGEMMCost struct {
	Mem     float64
	Fixed   unit.Seconds
	Compute float64
}

// QuantGEMMCosts holds a QuantGEMMCost per weight-scale family.
type QuantGEMMCosts struct {
	// FP8 is per-tensor (or per-channel) fp8 and int8: CUTLASS scaled_mm
	// after a per-token dynamic activation quant.
	FP8 QuantGEMMCost
	// FP8Block is block-scaled fp8 (128x128 weight blocks, 1x128 activation
	// groups; mxfp8): per-token-group quant, then DeepGEMM or CUTLASS
	// blockwise kernels.
	FP8Block QuantGEMMCost
	// FP4 is NVFP4 (fp4 activations, fp8 scales per 16): the fp4 activation
	// quant with swizzled scales, then a CUTLASS/CuteDSL fp4 GEMM.
	FP4 QuantGEMMCost
}

// For is the cost family of a GEMM whose weights are stored in f; ok is
// false when f computes in bf16 (bf16 weights, weight-only formats).
func (q QuantGEMMCosts) For(f dtype.Format) (QuantGEMMCost, bool) {
	switch {
	case f.Compute == dtype.BF16:
		return QuantGEMMCost{}, false
	case f.Compute == dtype.FP4:
		return q.FP4, true
	case f.GroupSize > 0:
		return q.FP8Block, true
	default:
		return q.FP8, true
	}
}

// Named efficiency constants with their derivations.
const (
	// EffMem = 0.80: aiconfigurator's mem_bw_empirical_scaling_factor
	// (systems/*.yaml @095f58a). Checked against op-level measurements: with
	// t_kernel = StreamKernelLatency it reproduces H200 bf16 torch.mm at M=1,
	// measured on an H200, 2026-11-29 (torch 2.11, graph replay; gate_up
	// 7168->4096: 18.3 vs 19.2 us; down 2048->7168:
	// 10.6 vs 10.2 us; o_proj 8192->7168: 33.6 vs 33.4 us), our own H200
	// runs with weights rotated through 4x L2 (measure_h200.json: 7168x18432
	// bf16 at M=1-64 in 68.9-69.1 us = 0.80 of 4.8 TB/s; model 71.8 us), and the
	// perfdb Marlin MoE layer on RTX PRO 6000 at 48-256 tokens, TP8 (all 384
	// experts, 1.19 GB per GPU in 0.82-0.88 ms: 0.76-0.81 of 1.792 TB/s).
	EffMem = 0.80
	// EffMemMarlinSM90 = 0.58: the perfdb Marlin MoE layer on H200, TP8:
	// 8 -> 16 tokens adds 198 MB of experts in +71 us (2.79 TB/s = 0.58 of
	// 4.8), and 48 tokens (1.19 GB) take 466 us = 40 us + 1.19 GB/2.79 TB/s.
	// Marlin is "not yet optimized for Hopper" (IST-DASLab/marlin README @
	// 2f6d7c1; Frantar et al., arXiv 2408.11743).
	EffMemMarlinSM90 = 0.58
	// EffMemElementwise = 0.60: a graph-captured 1 GiB device copy_ on an
	// H200 moved 2.71 TB/s read+write (0.56 of peak;
	// testdata/measure_h200.json, copy_1GiB); a device-to-device copy
	// measured on an H200, 2026-11-29, 4.23 TB/s (0.88). At
	// decode sizes the per-kernel latency dominates these kernels, and
	// their inputs are often still in L2.
	EffMemElementwise = 0.60
	// EffComputeGEMM = 0.70: H200 bf16 GEMM at M=512, measured on an H200,
	// 2026-11-29, reaches 660-740 TFLOP/s of 989 (0.67-0.75); measure_h200.json: bf16
	// 4096x7168x7168 819 TFLOP/s (0.83), fp8 torch._scaled_mm same shape
	// 1407 TFLOP/s (0.71 of 1979).
	EffComputeGEMM = 0.70
	// EffComputeGEMMVLLMSM90 = 0.77: vLLM's own bf16 GEMMs on sm_90, the
	// median of the compute fractions of the perf database's vLLM bf16
	// GEMM rows at M, N, K >= 4096 (ai-dynamo/aiconfigurator @ 095f58a,
	// systems/data/{h100_sxm,h200_sxm}/gemm/vllm/{0.14.0,0.19.0,0.24.0}/
	// gemm_perf.parquet, 3,625 rows: H100 0.83 / 0.78 / 0.80, H200 0.76 /
	// 0.75 / 0.77; quartiles 0.735-0.805; of 989 TFLOP/s). SGLang's rows
	// on the same GPUs reach 0.71 (H100 0.5.9), EffComputeGEMM. At prefill
	// sizes (M 1024-8192, N, K >= 4096) the same files give 0.76-0.84.
	EffComputeGEMMVLLMSM90 = 0.77
	// EffComputeMarlin = 0.35: perfdb Marlin MoE on RTX PRO 6000, TP8, at
	// 4096-16384 tokens: 2*pairs*3*7168*256 FLOPs in 2.55-8.43 ms =
	// 142-171 TFLOP/s = 0.30-0.37 of 467.8. It puts the memory/compute
	// crossover of W4A16 at M ~ 30 tokens per expert, in line with Marlin's
	// "close to ideal speedups up to batchsizes of 16-32" (IST-DASLab/marlin
	// README @ 2f6d7c1; arXiv 2408.11743).
	EffComputeMarlin = 0.35
	// EffComputeMarlinSM90 = 0.17: perfdb Marlin MoE on H200, TP8, 16384
	// tokens: 1.44e12 FLOPs in 8.59 ms = 168 TFLOP/s = 0.17 of 989.
	EffComputeMarlinSM90 = 0.17
	// EffComputeMoE = 0.31: perfdb fp8-block Triton MoE on H200, TP1, 256
	// experts, 16384 tokens: 2*131072*3*7168*2048 = 1.15e13 FLOPs in 18.67 ms
	// = 618 TFLOP/s = 0.31 of 1979.
	EffComputeMoE = 0.31
	// EffComputeAttention = 0.50: an assumption for FlashMLA/FlashInfer-class
	// decode kernels on sm_90/sm_100 (not measured here).
	EffComputeAttention = 0.50
	// EffComputeAttentionSM120 = 0.08: perfdb TRITON_MLA module on RTX PRO
	// 6000, 128 heads, batch 1024, KV 4 -> 2048: +5.8e11 FLOPs in +15.2 ms =
	// 38 TFLOP/s = 0.08 of 467.8 (the kernel runs with num_stages=1 on SM120).
	EffComputeAttentionSM120 = 0.08
	// EffMemGEMMBatchSM120 = 0.71: vLLM 0.19.0's own bf16 GEMMs on an RTX
	// PRO 6000 Blackwell Server Edition, measured op by op by aiconfigurator
	// (ai-dynamo/aiconfigurator @ 095f58a, systems/data/rtx_pro_6000_server/
	// gemm/vllm/0.19.0/gemm_perf.parquet): over its rows with 17 <= M <= 128
	// and weights of 128 MB or more (beyond the 128 MB L2), 1218 rows, the
	// median DRAM traffic (K x N + M x K + M x N) x 2 B over latency is 0.709
	// of 1.792 TB/s (M 17-64: 0.705, M 65-128: 0.714; 129-256: 0.68-0.70),
	// where the same rows at M <= 16 reach 0.821 (EffMem 0.80 stands there).
	// e.g. M=128, N=16384, K=5120: 175.4 us, 0.55; N=65536, K=4096: 394.4
	// us, 0.78.
	EffMemGEMMBatchSM120 = 0.71
	// EffComputeGEMMVLLMSM120 = 0.77: vLLM 0.19.0's own bf16 GEMMs on an
	// RTX PRO 6000 Blackwell Server Edition when compute-bound, the median
	// fraction of 467.8 TFLOP/s over the perf database's rows at M
	// 1024-2048, N, K >= 4096 (ai-dynamo/aiconfigurator @ 095f58a,
	// systems/data/rtx_pro_6000_server/gemm/vllm/0.19.0/gemm_perf.parquet,
	// 891 rows: 0.769), the step sizes of a chunked-prefill engine at a
	// 2048-token budget; the same rows reach 0.83 at M 1024-4095 and 0.90
	// at M >= 4096. LLMServingSim's layer profile of vLLM 0.19.0 on the
	// same GPU (casys-kaist/LLMServingSim @ 5daddb2,
	// profiler/perf/RTXPRO6000/*/bf16/*/dense.csv) gives 0.71-0.85 per
	// projection at 1024-2048 tokens.
	EffComputeGEMMVLLMSM120 = 0.77
	// GEMMBatchRows is the row count up to which a GEMM streams its weights
	// at Mem; above it MemGEMMBatch applies where an architecture sets one.
	GEMMBatchRows = 16
	// MLAHeadTile = 16: Triton MLA decode BLOCK_H (vllm-project/vllm
	// `vllm/v1/attention/ops/triton_decode_attention.py`).
	MLAHeadTile = 16
)

// Fixed Marlin MoE layer costs (perfdb vLLM fused_marlin_moe, Kimi-K2.5
// dims; intercepts of layer time vs expert bytes at 1-16 tokens, minus the
// 10.5 us of per-kernel costs MoE already counts: 2 x 3 us + 3 x 1.5 us).
const (
	// MoEFixedMarlin: RTX PRO 6000 TP8 and EP8, 8 -> 16 tokens: intercept
	// 24-26 us; 1 token at TP8: 32 us for 24.8 MB (17 us of streaming).
	MoEFixedMarlin unit.Seconds = 13 * unit.Microsecond
	// MoEFixedMarlinSM90: H200 TP8 and EP8, intercept 40-42 us.
	MoEFixedMarlinSM90 unit.Seconds = 30 * unit.Microsecond
)

// Fixed per-kernel costs.
const (
	// StreamKernelLatency is the fixed cost of a DRAM-streaming kernel
	// (GEMM, grouped MoE GEMM, attention): aiconfigurator's
	// mem_empirical_constant_latency (3 us), which with EffMem reproduces
	// the H200 torch.mm points (measured on an H200, 2026-11-29) within 5%
	// (see EffMem).
	StreamKernelLatency unit.Seconds = 3 * unit.Microsecond
	// SmallKernelLatency is the fixed cost of a small kernel (norm, rotary,
	// activation, top-k, routing glue) inside a CUDA graph: measured on an
	// H200 (kernels/testdata/measure_h200.json, PyTorch 2.11, graph replay):
	// a bf16 add over [1..64, 7168] takes 1.50-1.84 us, a 1-element add
	// 0.92 us (a CUDA graph from Go replayed captured kernels at ~0.7 us each,
	// measured on an H200, 2026-11-29).
	SmallKernelLatency unit.Seconds = 1.5 * unit.Microsecond
	// HostLaunchLatency is the host cost of launching one kernel without a
	// CUDA graph from an eager PyTorch engine: 10.5 us per back-to-back
	// tiny op on the H200 host (kernels/testdata/measure_h200.json,
	// eager_tiny_op_us). The raw driver call is cheaper (4.5-5.7 us per
	// cuLaunchKernel from Go, measured on an H200, 2026-11-29).
	HostLaunchLatency unit.Seconds = 10 * unit.Microsecond
)

// Host time per kernel of an engine's eager forward, on the C++ side of
// its profiler trace (bench/ttftbw/launch_trace.py; bench/RESULTS-ttftbw.md):
// the self time of the ATen/custom ops and of the CUDA runtime and driver
// calls inside the forward, divided by the kernels it launches. The
// Python that issues each kernel is left out (the traces record it with
// with_stack, which inflates it), so these are lower bounds of the host
// time per kernel; the whole forward per launch is the upper bound.
const (
	// vllmEagerLaunch: the TraceLens B200 vLLM trace (AMD-AGI/TraceLens @
	// 171dd74 tests/traces/b200/eager_trace.json.gz: gpt-oss-120b TP8, one
	// 888-token prefill, no CUDA graph): 761 launches, cpu_op 25.31 ms +
	// cuda_runtime 6.63 ms + cuda_driver 1.79 ms of self time in
	// gpt_oss.py forward = 44.3 us per launch (the whole 79.1 ms forward:
	// 104 us per launch), against 10.9 ms of GPU kernels.
	vllmEagerLaunch unit.Seconds = 44.3 * unit.Microsecond
	// sglangEagerLaunch: the TraceLens SGLang extend trace
	// (tests/traces/inference/sglang_prefilldecode: Qwen3-8B, MI300X host,
	// step[EXTEND bs=15 toks=15360], run eagerly as SGLang runs extends):
	// 521 launches, cpu_op 6.45 ms + runtime 2.58 ms = 17.3 us per launch
	// (the whole 28.9 ms step: 55.5 us per launch).
	sglangEagerLaunch unit.Seconds = 17.3 * unit.Microsecond
)

// EngineHostLaunch is the host time per eagerly launched kernel of the
// engine named engine ("vllm", "sglang") measured on its own profiler
// trace, or HostLaunchLatency (the PyTorch tiny-op figure) for another.
func EngineHostLaunch(engine string) unit.Seconds {
	switch engine {
	case "vllm":
		return vllmEagerLaunch
	case "sglang":
		return sglangEagerLaunch
	}
	return HostLaunchLatency
}

// Quantized-activation GEMM costs per architecture: t = fixed + bytes/(BW*eff)
// fitted (least relative absolute deviation) on aiconfigurator's perf
// database GEMM rows (ai-dynamo/aiconfigurator @ 095f58a,
// systems/data/<gpu>/gemm/<engine>/<version>/gemm_perf.parquet: the engine's
// own GEMM kernel timed one op at a time) at decode sizes, M <= 64, N and
// K >= 1024, 4 MB to 1.2 GB moved; bench/quantgemm/fit.py reproduces every
// figure and bench/RESULTS-quant-gemm.md states the rows and residuals. The
// bf16 rows of the same files fit 3.6-4.0 us and 0.83-0.86, and reach
// 0.70-0.74 of the bf16 peak at M, N, K >= 4096: the defaults
// (StreamKernelLatency, EffMem, EffComputeGEMM) within their spread, so
// they stand for bf16 and the difference below is the quantized kernels'
// own.
var (
	// QuantGEMMSM90: H100 and H200, vLLM 0.24.0 and SGLang 0.5.14. fp8
	// (CutlassFP8ScaledMMLinearKernel, sgl_kernel fp8_scaled_mm): 20,872
	// rows, 6.1 us + 0.79 of BW, |residual| median 6%. Block fp8 (SGLang's
	// DeepGEMM gemm_nt_f8f8bf16): 10,438 rows, 6.1 us + 0.84, median 6%;
	// vLLM 0.24.0's block-fp8 rows (56 us and more at any size) are left
	// out (RESULTS-quant-gemm.md). fp4: sm_90 has no fp4 MMA; the fp8
	// figures stand.
	QuantGEMMSM90 = QuantGEMMCosts{
		FP8:      QuantGEMMCost{Mem: 0.79, Fixed: 6.1 * unit.Microsecond},
		FP8Block: QuantGEMMCost{Mem: 0.84, Fixed: 6.1 * unit.Microsecond},
		FP4:      QuantGEMMCost{Mem: 0.79, Fixed: 6.1 * unit.Microsecond},
	}
	// QuantGEMMSM100: B200 (and GB200), the memory side pooled over B200
	// and B300 (sm_100, sm_103), vLLM 0.19.0 and 0.24.0, SGLang 0.5.14. fp8:
	// 26,090 rows, 6.1 us + 0.70 of BW (B200 alone 0.70, B300 alone 0.71),
	// median 12%. NVFP4 (FlashInferCuteDslNvFp4LinearKernel, sglang
	// flashinfer cutedsl nvfp4): 24,020 rows, 6.4 us + 0.68 (B200 0.65, B300
	// 0.74), median 14%. Block fp8 (vLLM 0.19.0 default, SGLang DeepGEMM):
	// 12,103 rows, 14.8 us + 0.59, median 9%; vLLM 0.24.0's DeepGEMM rows
	// (150-850 us, median 231) left out.
	QuantGEMMSM100 = QuantGEMMCosts{
		FP8:      QuantGEMMCost{Mem: 0.70, Fixed: 6.1 * unit.Microsecond},
		FP8Block: QuantGEMMCost{Mem: 0.59, Fixed: 14.8 * unit.Microsecond},
		FP4:      QuantGEMMCost{Mem: 0.68, Fixed: 6.4 * unit.Microsecond},
	}
	// QuantGEMMSM103: B300 (and GB300): QuantGEMMSM100's pooled figures.
	QuantGEMMSM103 = QuantGEMMSM100
)

// QuantGEMMCompute is the fraction of the dense tensor-core peak the
// engines' quantized GEMMs reach when compute-bound, per family: the median
// of the perf database's rows at M, N, K >= 4096 (bench/quantgemm/fit.py;
// the bf16 rows of the same files reach 0.70-0.74, EffComputeGEMM).
type QuantGEMMCompute struct{ FP8, FP8Block, FP4 float64 }

// Measured compute fractions (ai-dynamo/aiconfigurator @ 095f58a, the
// files of QuantGEMMSM90 and QuantGEMMSM100, each GPU alone where they
// differ).
var (
	// QuantGEMMComputeSM90: H100 and H200: fp8 0.55 (2,772 rows), block
	// fp8 0.61 (1,386, SGLang); fp4 as fp8.
	QuantGEMMComputeSM90 = QuantGEMMCompute{FP8: 0.55, FP8Block: 0.61, FP4: 0.55}
	// QuantGEMMComputeSM100: B200: fp8 0.42 (2,079 rows), block fp8 0.53
	// (1,180), nvfp4 0.45 (2,079).
	QuantGEMMComputeSM100 = QuantGEMMCompute{FP8: 0.42, FP8Block: 0.53, FP4: 0.45}
	// QuantGEMMComputeSM103: B300: fp8 0.55 (1,386 rows), block fp8 0.73
	// (693, SGLang), nvfp4 0.32 (1,386: B300's fp4 peak is 14,000 TFLOP/s,
	// the kernels reach about 4,450, as on B200).
	QuantGEMMComputeSM103 = QuantGEMMCompute{FP8: 0.55, FP8Block: 0.73, FP4: 0.32}
)

// WithCompute is c with each family's compute fraction from q.
func (c QuantGEMMCosts) WithCompute(q QuantGEMMCompute) QuantGEMMCosts {
	c.FP8.Compute, c.FP8Block.Compute, c.FP4.Compute = q.FP8, q.FP8Block, q.FP4
	return c
}

// QuantGEMMComputeFor is the measured compute fractions of a's quantized
// GEMMs; ok is false for an architecture without perf database rows.
func QuantGEMMComputeFor(a Arch) (QuantGEMMCompute, bool) {
	switch a {
	case SM90:
		return QuantGEMMComputeSM90, true
	case SM100:
		return QuantGEMMComputeSM100, true
	case SM103:
		return QuantGEMMComputeSM103, true
	}
	return QuantGEMMCompute{}, false
}

// DefaultQuantGEMM is the quantized GEMM cost of an architecture without
// perf database rows: the bf16 GEMM's EffMem with one stream kernel and
// one small kernel (the activation quantization).
func DefaultQuantGEMM() QuantGEMMCosts {
	d := QuantGEMMCost{Mem: EffMem, Fixed: StreamKernelLatency + SmallKernelLatency}
	return QuantGEMMCosts{FP8: d, FP8Block: d, FP4: d}
}

// Spread is the interval a roofline estimate carries: Lo = Time*Lo,
// Hi = Time*Hi.
type Spread struct{ Lo, Hi float64 }

// Stated spreads of roofline estimates, by bound.
var (
	// MemorySpread: memory-bound ops. With EffMem = 0.80 the fastest
	// streaming seen is the H200 GEMV at 4.5/4.8 = 0.94 of peak (time
	// x0.85), the slowest the H200 Marlin MoE at 0.53 (x1.5; covered by the
	// sm_90 override) and cuBLAS M=1 GEMMs at 0.60-0.66 (x1.2-1.33).
	MemorySpread = Spread{Lo: 0.85, Hi: 1.35}
	// ComputeSpread: compute-bound ops; measured efficiencies lie within
	// -10%/+20% of the named constants above, widened for unmeasured shapes.
	ComputeSpread = Spread{Lo: 0.85, Hi: 1.40}
	// LatencySpread: ops dominated by fixed per-kernel costs; a small kernel
	// costs from the 0.92 us graph-replay floor to a few us
	// (measure_h200.json: bf16 add 1.5-1.8 us; torch's rms_norm 6.7 us,
	// an unfused kernel vLLM does not use).
	LatencySpread = Spread{Lo: 0.60, Hi: 2.00}
)

// DefaultEfficiency is the efficiency set for a GPU without arch-specific
// measurements (sm_100 and custom GPUs).
func DefaultEfficiency() Efficiency {
	return Efficiency{
		Mem:              EffMem,
		MemMarlin:        EffMem,
		MemElementwise:   EffMemElementwise,
		ComputeGEMM:      EffComputeGEMM,
		ComputeMarlin:    EffComputeMarlin,
		ComputeMoE:       EffComputeMoE,
		ComputeAttention: EffComputeAttention,
		MoEFixedMarlin:   MoEFixedMarlin,
		MLAHeadPad:       MLAHeadTile,
		QuantGEMM:        DefaultQuantGEMM(),
	}
}

// EfficiencyFor is DefaultEfficiency with the arch-specific values measured
// for g's architecture (its ArchFacts, arch.go): sm_90 Marlin (EffMemMarlinSM90,
// EffComputeMarlinSM90, MoEFixedMarlinSM90), sm_120 attention
// (EffComputeAttentionSM120), batched bf16 GEMMs (EffMemGEMMBatchSM120) and
// vLLM's compute-bound bf16 GEMMs (EffComputeGEMMVLLMSM120);
// then g's own measured bf16 GEMM fractions where it carries them
// (GPU.GEMMMem, GPU.GEMMCompute: a custom GPU's gemm_mem_efficiency and
// gemm_compute_efficiency).
func EfficiencyFor(g GPU) Efficiency {
	e := DefaultEfficiency()
	if f := g.Arch.Facts().efficiency; f != nil {
		f(&e)
	}
	if g.GEMMMem > 0 {
		e.MemGEMMBatch = g.GEMMMem
	}
	e.ComputeGEMMBF16 = g.GEMMCompute
	return e
}

// newCosts returns Costs for g with EfficiencyFor(g), no tables.
func newCosts(g GPU, graphs bool) *Costs {
	return &Costs{GPU: g, Eff: EfficiencyFor(g), Graphs: graphs}
}
