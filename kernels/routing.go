package kernels

// PerfDBRouting is the routing distribution aiconfigurator's SDK prices a
// model family's MoE layers with, from the power-law rows its collector
// measures beside the balanced ones ("power_law_<alpha>"), by the model's
// config.json architecture; "" where the SDK names no family for it.
//
// ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/sdk/:
// config.py (ModelConfig.workload_distribution = "power_law"); common.py
// ARCHITECTURE_TO_MODEL_FAMILY (DeepseekV3ForCausalLM -> DEEPSEEK,
// KimiK25ForConditionalGeneration -> KIMIK25, GlmMoeDsaForCausalLM and
// DeepseekV32ForCausalLM -> DEEPSEEKV32, GptOssForCausalLM,
// Qwen3MoeForCausalLM, Qwen2MoeForCausalLM, MiniMaxM2ForCausalLM and
// MixtralForCausalLM -> MOE, Qwen3_5MoeForConditionalGeneration -> QWEN35);
// the alpha each family's model sets: models/deepseek.py (DEEPSEEK and
// KIMIK25: _power_law_alpha = 1.01), models/deepseek_v32.py (1.01),
// models/moe.py (1.2), models/qwen35.py (workload_distribution + "_1.2").
// Kimi-K2.5's text model is DeepseekV3ForCausalLM (its config's
// text_config), which the same entry covers.
func PerfDBRouting(architecture string) string {
	switch architecture {
	case "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "KimiK25ForConditionalGeneration":
		return "power_law_1.01"
	case "GptOssForCausalLM", "Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM", "MiniMaxM2ForCausalLM", "MixtralForCausalLM",
		"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM":
		return "power_law_1.2"
	}
	return ""
}
