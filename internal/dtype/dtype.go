// Package dtype describes how numbers are stored and computed: weight storage
// formats with group scales (bf16, fp8 block-scaled, INT4 W4A16 group 32,
// MXFP4) and the tensor-core precision a kernel computes in.
//
// Both model (byte accounting) and kernels (op costs) use it, so it sits
// below both.
package dtype

import "fmt"

// Compute is the tensor-core precision a GEMM runs at.
type Compute uint8

const (
	BF16 Compute = iota // bf16/fp16 inputs, fp32 accumulate
	FP8                 // fp8 e4m3 inputs
	INT8
	FP4
)

func (c Compute) String() string {
	switch c {
	case BF16:
		return "bf16"
	case FP8:
		return "fp8"
	case INT8:
		return "int8"
	case FP4:
		return "fp4"
	}
	return fmt.Sprintf("compute(%d)", uint8(c))
}

// Format is a weight storage format.
//
// Bytes per parameter = Bits/8 + ScaleBits/8/GroupSize (no scale term when
// GroupSize is 0). For INT4 with one bf16 scale per 32 weights that is
// 0.5 + 2/32 = 0.5625 B/param (Kimi-K2.5's compressed-tensors W4A16, group
// 32: ai-dynamo/aiconfigurator @ 095f58a,
// aic-core/src/aiconfigurator_core/model_configs/moonshotai--Kimi-K2.5_config.json).
type Format struct {
	Name      string  // short name used in output: "bf16", "int4-g32", "fp8-b128", "mxfp4"
	Bits      float64 // bits per stored weight value
	GroupSize int     // weights that share one scale; 0 means no per-group scale
	ScaleBits float64 // bits per scale value
	Compute   Compute // precision the matmul runs at (W4A16 dequantizes to bf16)
}

// BytesPerParam is the storage cost of one weight including its share of
// group scales, in bytes.
func (f Format) BytesPerParam() float64 {
	b := f.Bits / 8
	if f.GroupSize > 0 {
		b += f.ScaleBits / 8 / float64(f.GroupSize)
	}
	return b
}

// Quantized reports whether the format stores fewer bits than it computes
// in (weight-only quantization such as W4A16).
func (f Format) Quantized() bool { return f.Bits < 16 && f.Compute == BF16 }

// Standard formats.
var (
	// BF16Weights is plain bf16 storage.
	BF16Weights = Format{Name: "bf16", Bits: 16, Compute: BF16}
	// FP8Block128 is DeepSeek-V3's fp8 e4m3 with one fp32 scale per
	// 128x128 block (16384 weights).
	FP8Block128 = Format{Name: "fp8-b128", Bits: 8, GroupSize: 128 * 128, ScaleBits: 32, Compute: FP8}
	// INT4G32 is compressed-tensors pack-quantized W4A16, symmetric, one
	// bf16 scale per 32 weights (Kimi-K2.5 routed experts), run by Marlin in bf16.
	INT4G32 = Format{Name: "int4-g32", Bits: 4, GroupSize: 32, ScaleBits: 16, Compute: BF16}
	// MXFP4 is OCP microscaling fp4 (e2m1) with one e8m0 scale per 32
	// weights (gpt-oss experts); computed in bf16 on GPUs without fp4 MMA.
	MXFP4 = Format{Name: "mxfp4", Bits: 4, GroupSize: 32, ScaleBits: 8, Compute: BF16}
	// MXFP4A8 is the same MXFP4 weights run with the activations quantised
	// to MXFP8 (e4m3, one e8m0 scale per 32) on fp8 tensor cores: FlashInfer's
	// TRT-LLM-gen MXFP4 x MXFP8 MoE on sm_100 (SGLang's flashinfer_mxfp4
	// runner by default, vLLM with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1).
	MXFP4A8 = Format{Name: "mxfp4-a8", Bits: 4, GroupSize: 32, ScaleBits: 8, Compute: FP8}
	// MXFP4Marlin is the same MXFP4 weights run by vLLM's Marlin MoE
	// (MarlinExperts: e2m1 dequantised to bf16 in registers, bf16 MMA),
	// which vLLM picks for MXFP4 experts when VLLM_MXFP4_USE_MARLIN=1
	// (select_mxfp4_moe_backend, vllm/model_executor/layers/fused_moe/
	// oracle/mxfp4.py @ 001eda3; get_mxfp4_backend,
	// vllm/model_executor/layers/quantization/mxfp4.py @ 007d500). Its own
	// format so that the MoE tables of the other MXFP4 kernels (the perf
	// database's OAI Triton rows) do not price it.
	MXFP4Marlin = Format{Name: "mxfp4-marlin", Bits: 4, GroupSize: 32, ScaleBits: 8, Compute: BF16}
	// NVFP4 is NVIDIA's fp4 (e2m1) with one fp8 e4m3 scale per 16 weights
	// (and one fp32 scale per tensor, not counted), weights and activations
	// both fp4 (ModelOpt quant_algo NVFP4): run on fp4 tensor cores.
	NVFP4 = Format{Name: "nvfp4", Bits: 4, GroupSize: 16, ScaleBits: 8, Compute: FP4}
	// NVFP4A16 is NVFP4 weights with bf16 activations (ModelOpt
	// W4A16_NVFP4): dequantized and run in bf16.
	NVFP4A16 = Format{Name: "nvfp4-a16", Bits: 4, GroupSize: 16, ScaleBits: 8, Compute: BF16}
	// FP8Tensor is fp8 e4m3 with one fp32 scale per tensor (static
	// per-tensor FP8: ModelOpt quant_algo FP8, vLLM fp8 without
	// weight_block_size); the per-tensor scale is not counted.
	FP8Tensor = Format{Name: "fp8", Bits: 8, Compute: FP8}
	// MXFP8 is OCP microscaling fp8 (e4m3) with one e8m0 scale per 32
	// weights (ModelOpt quant_algo MXFP8).
	MXFP8 = Format{Name: "mxfp8", Bits: 8, GroupSize: 32, ScaleBits: 8, Compute: FP8}
)

// KVCache is the storage precision of the KV cache.
type KVCache uint8

const (
	KVBF16 KVCache = iota
	KVFP8
)

// Bytes is the size of one KV element.
func (k KVCache) Bytes() float64 {
	if k == KVFP8 {
		return 1
	}
	return 2
}

func (k KVCache) String() string {
	if k == KVFP8 {
		return "fp8"
	}
	return "bf16"
}
