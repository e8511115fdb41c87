package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAICGeneratorKV(t *testing.T) {
	gap := "source_file=/Users/x/projects/aic-auto-gap-analysis/data/h100_sxm/vllm/0.12.0/qwen3_32b.csv; measured=2026-01-23"
	row := func(backend, src, gemm, system string) map[string]string {
		return map[string]string{"backend": backend, "silicon_data_source": src, "gemm_quant_mode": gemm, "system": system}
	}
	of := func(rows ...map[string]string) bool {
		return aicGeneratorKV(len(rows), func(i int, c string) string { return rows[i][c] })
	}
	assert.True(t, of(row("vllm", gap, "fp8", "h100_sxm")), "vLLM fp8 gap-analysis row")
	assert.True(t, of(row("sglang", gap, "fp8_block", "h100_sxm"), row("sglang", gap, "fp8_block", "h100_sxm")), "SGLang fp8_block rows")
	assert.False(t, of(row("vllm", gap, "", "h100_sxm")), "a row recording no quant mode keeps the engine's default")
	assert.False(t, of(row("vllm", gap, "bfloat16", "h100_sxm")), "bf16 GEMMs")
	assert.False(t, of(row("trtllm", gap, "fp8", "h100_sxm")), "TRT-LLM")
	assert.False(t, of(row("vllm", "source_file=2026-04-06.csv; model=DeepSeek-R1", "fp8", "b200_sxm")), "an InferenceX row")
	assert.False(t, of(row("vllm", gap, "fp8", "h100_sxm"), row("vllm", "db-dump/2026-03-25", "fp8", "h100_sxm")), "a deployment mixing collections")
	assert.False(t, of(row("vllm", gap, "fp8", "a100_sxm")), "below sm_89 the SDK keeps float16")
	assert.False(t, of(), "no rows")
}
