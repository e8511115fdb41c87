package model

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moecast/moecast/internal/dtype"
)

// FuzzLoadConfig feeds config.json parsing arbitrary bytes: it must never
// panic, every error must be a one-line message naming the file and no Go
// internals, and every accepted config must validate, stay within the
// plausibility limits and yield finite, non-negative byte counts. The
// corpus in testdata/fuzz/FuzzLoadConfig holds implausible and mistyped
// values (issue 8).
//
//	go test ./model -run '^$' -fuzz FuzzLoadConfig -fuzztime 30s
func FuzzLoadConfig(f *testing.F) {
	for _, n := range PresetNames() {
		f.Add([]byte(presetJSON(f, n)))
	}
	f.Add([]byte(strings.Replace(presetJSON(f, "llama-4-maverick"), `"interleave_moe_layer_step": 2`, `"interleave_moe_layer_step": 0`, 1)))
	if b, err := os.ReadFile(filepath.Join("testdata", "glm-4.5_config.json")); err == nil {
		f.Add(b)
	}
	k25 := presetJSON(f, "kimi-k2.5")
	for _, s := range []string{
		"", "{", "[]", "null", `{"architectures": []}`, `{"architectures": [1]}`,
		`{"architectures": ["KimiK25ForConditionalGeneration"], "text_config": {"architectures": ["MixtralForCausalLM"]}}`,
		`{"architectures": ["MixtralForCausalLM"], "hidden_size": 1, "num_hidden_layers": 1, "vocab_size": 1, "num_attention_heads": 1, "num_key_value_heads": 1, "num_local_experts": 1, "num_experts_per_tok": 1, "intermediate_size": 1}`,
		`{"architectures": ["GptOssForCausalLM"], "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["["]}}`,
		`{"architectures": ["DeepseekV3ForCausalLM"], "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["re:["]}}}}`,
		strings.Replace(k25, `"num_bits": 4`, `"num_bits": -4`, 1),
		strings.Replace(k25, `"group_size": 32`, `"group_size": 0`, 1),
		strings.Replace(k25, `"hidden_size": 7168`, `"hidden_size": 1e400`, 1),
		strings.Replace(k25, `"first_k_dense_replace": 1`, `"first_k_dense_replace": -5`, 1),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.json", data)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "fuzz.json") || strings.Contains(msg, "\n") {
				t.Fatalf("error not one line naming the file: %q", msg)
			}
			for _, leak := range []string{"[]string", "[]int", "model.", "int64", "JSON string", "JSON number", "strconv.", "Go struct", "Go value", "error parsing regexp"} {
				if strings.Contains(msg, leak) {
					t.Fatalf("Go internals (%s) in the error: %q", leak, msg)
				}
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config does not validate: %v", err)
		}
		for _, l := range []Layout{{TP: 1, EP: 1, DP: 1}, {TP: 8, EP: 8, DP: 1}, {TP: 2, EP: 4, DP: 2, DPAttention: true}} {
			_ = c.CheckLayout(l)
			w := c.Weights(l)
			for cls := range NumClasses {
				for _, v := range []float64{float64(w.Total[cls]), float64(w.PerGPU[cls])} {
					if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s bytes %v for layout %+v", cls, v, l)
					}
				}
			}
			if kv := float64(c.KVBytesPerTokenPerGPU(dtype.KVBF16, l)); kv <= 0 || math.IsInf(kv, 0) {
				t.Fatalf("kv bytes/token %v", kv)
			}
		}
		if p := c.Params(); p.Active > p.Total || p.Total <= 0 || p.Total+p.MTP > maxParams {
			t.Fatalf("params %+v", p)
		}
	})
}
