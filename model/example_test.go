package model_test

import (
	"fmt"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/model"
)

// Kimi-K2.5 stores its routed experts in INT4 with a bf16 scale per 32
// weights (0.5625 B/param) and everything else in bf16; at TP8 each GPU
// holds an eighth of every expert.
func ExampleConfig_Weights() {
	c, err := model.Preset("kimi-k2.5")
	if err != nil {
		panic(err)
	}
	w := c.Weights(model.Layout{TP: 8, EP: 1, DP: 1})
	fmt.Printf("routed experts: %s, %.4f B/param\n", c.Quant.RoutedExperts.Name, c.Quant.RoutedExperts.BytesPerParam())
	fmt.Printf("routed experts: %s total, %s per GPU\n", w.Total[model.ClassRoutedExperts], w.PerGPU[model.ClassRoutedExperts])
	fmt.Printf("all weights per GPU: %s\n", w.PerGPUTotal(false))
	fmt.Printf("KV cache per token: %s (bf16)\n", c.KVBytesPerToken(dtype.KVBF16))
	// Output:
	// routed experts: int4-g32, 0.5625 B/param
	// routed experts: 570.76GB total, 71.35GB per GPU
	// all weights per GPU: 76.18GB
	// KV cache per token: 70.3KB (bf16)
}

// A config.json that is not one of the supported architectures is refused
// with the file, the position of the key and the supported list.
func ExampleParse_unsupported() {
	_, err := model.Parse("config.json", []byte(`{"architectures": ["BertModel"]}`))
	fmt.Println(err)
	// Output:
	// config.json:1:2: architectures: unsupported architecture "BertModel"; supported: DeciLMForCausalLM, DeepseekV32ForCausalLM, DeepseekV3ForCausalLM, DeepseekV4ForCausalLM, Gemma4ForCausalLM, Gemma4ForConditionalGeneration, Glm4MoeForCausalLM, GlmMoeDsaForCausalLM, GptOssForCausalLM, KimiK25ForConditionalGeneration, KimiK3ForConditionalGeneration, KimiLinearForCausalLM, Llama4ForCausalLM, Llama4ForConditionalGeneration, LlamaForCausalLM, MiMoForCausalLM, MiMoV2FlashForCausalLM, MiniMaxM2ForCausalLM, MiniMaxM3ForCausalLM, MiniMaxM3SparseForCausalLM, MiniMaxM3SparseForConditionalGeneration, MixtralForCausalLM, NemotronHForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen3VLForConditionalGeneration, Qwen3VLMoeForConditionalGeneration, Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration, Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration, Step3p7FlashForCausalLM
}
