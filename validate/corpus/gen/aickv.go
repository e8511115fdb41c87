package main

import "strings"

// aicGeneratorKVNote is the scenario comment of a deployment whose KV
// cache dtype comes from aicGeneratorKV.
const aicGeneratorKVNote = "KV cache fp8: aiconfigurator's generator deployed these rows (its gap-analysis collection, " +
	"silicon_data_source .../aic-auto-gap-analysis/...) with --kv-cache-dtype from its SDK's quant modes, which the rows record " +
	"(gemm_quant_mode fp8 on vLLM, fp8_block on SGLang): TaskConfigFactory._get_quant_mode picks those GEMM modes and " +
	"kvcache_quant_mode fp8 together on sm_89 and later, unless the system's attention tables hold no fp8-KV rows " +
	"(src/aiconfigurator/sdk/task.py @ 612e5b102, 2026-01-23, the rows' collection; the fp8_default and nvfp4_default profiles say the same; " +
	"the perf database's H100 vLLM and SGLang decode attention tables hold fp8-KV rows @ 095f58a), and generator/module_bridge.py writes that mode " +
	"as the worker's kv_cache_dtype (backend_config_mapping.yaml: vLLM and SGLang --kv-cache-dtype)."

// aicGeneratorKV reports whether every row of a deployment was deployed by
// aiconfigurator's config generator with an fp8 KV cache: rows of its
// gap-analysis collection (the source path names aic-auto-gap-analysis,
// as validate's aicGeneratorBudget reads it) on vLLM or SGLang whose
// recorded GEMM quant mode is one of the SDK's quantized defaults (fp8,
// fp8_block, nvfp4). The SDK chose those modes in the same function that
// chose kvcache_quant_mode fp8 (TaskConfigFactory._get_quant_mode,
// ai-dynamo/aiconfigurator src/aiconfigurator/sdk/task.py @ 612e5b102:
// on sm >= 89 kvcache_quant_mode = "fp8" beside the fp8 GEMM modes, moved
// to float16 only where the attention perf tables hold no fp8-KV rows,
// which the H100 vLLM and SGLang tables do; sm < 89 keeps float16), and the
// generator writes the mode as --kv-cache-dtype. Rows that record no quant
// mode (the bf16 collections) are left to the engine's default. get reads
// a column of row i; n is the number of rows.
func aicGeneratorKV(n int, get func(i int, col string) string) bool {
	if n == 0 {
		return false
	}
	for i := 0; i < n; i++ {
		switch strings.ToLower(strings.TrimSpace(get(i, "backend"))) {
		case "vllm", "sglang":
		default:
			return false
		}
		if !strings.Contains(get(i, "silicon_data_source"), "/aic-auto-gap-analysis/") {
			return false
		}
		switch strings.ToLower(strings.TrimSpace(get(i, "gemm_quant_mode"))) {
		case "fp8", "fp8_block", "nvfp4":
		default:
			return false
		}
		if strings.HasPrefix(get(i, "system"), "l40") || strings.HasPrefix(get(i, "system"), "a100") {
			// Below sm_89 (A100) the SDK keeps float16; L40S (sm_89)
			// picks fp8 only where its attention tables hold it, which
			// these rows do not say.
			return false
		}
	}
	return true
}
