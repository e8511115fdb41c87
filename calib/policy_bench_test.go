package calib

import (
	"testing"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
)

// BenchmarkEmbeddedMoELookup is one MoE lookup in the embedded H200
// calibration as a scenario's Costs makes it (Select's ranked tables),
// for a vLLM run (vLLM's row first in the file: the first covering table
// answers) and an SGLang run (vLLM's row passed over for SGLang's: the
// source policy's extra scan).
//
//	go test ./calib -run '^$' -bench EmbeddedMoELookup
func BenchmarkEmbeddedMoELookup(b *testing.B) {
	f, err := Embedded("h200-sxm")
	if err != nil || f == nil {
		b.Fatal(err)
	}
	kt := Select(Box{GPU: "h200-sxm", Fabric: "nvlink4", GPUs: 8}, f).Kernels()
	for _, engine := range []string{"vllm", "sglang"} {
		b.Run(engine, func(b *testing.B) {
			moe := kernels.MoEShape{Tokens: 64, GlobalTokens: 64, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048,
				MoETP: 1, EP: 8, Weight: dtype.INT4G32, Engine: engine}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := kt.MoE(moe); !ok {
					b.Fatal("no answer")
				}
			}
		})
	}
}
