package serve

import (
	"math"
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
	"github.com/stretchr/testify/assert"
)

// TestSGLangMemFraction: mem_fraction_static as server_args.py derives it,
// each want worked by hand from the source's formula (MiB, rounded to 3
// places) for the GPU's nvidia-smi memory.
func TestSGLangMemFraction(t *testing.T) {
	const (
		b200 = 183359 * MiB
		h100 = 81559 * MiB
	)
	mtp := Spec{DraftTokens: 3, Lookahead: 3}
	ngram := Spec{DraftTokens: 3}
	qwen35 := model.Vision{Present: true, Hidden: 1152} // no num_hidden_layers key: 24
	for _, tc := range []struct {
		name  string
		mem   unit.Bytes
		chunk int // 0: the engine's default for the GPU
		spec  Spec
		in    FractionInputs
		want  float64
	}{
		// 512 + 1.5 x 16384 + 2 x 512 + 8/8 x 1024 = 27136 MiB
		{"B200 TP8", b200, 0, Spec{}, FractionInputs{TP: 8}, math.Round((183359.0-27136)/183359*1000) / 1000},
		// TP4: 512 + 24576 + 1024 + 512 = 26624
		{"B200 TP4", b200, 0, Spec{}, FractionInputs{TP: 4}, 0.855},
		// DP attention dp 8: + 3 x 512 x 8 + 1.5 x 512 x 8 (max_bs 512 > 300)
		{"B200 TP8 DP-attention 8", b200, 0, Spec{}, FractionInputs{TP: 8, DP: 8}, math.Round((183359.0-27136-12288-6144)/183359*1000) / 1000},
		// H100 TP2: 512 + 12288 + 2 x 256 + 256 = 13568
		{"H100 TP2", h100, 0, Spec{}, FractionInputs{TP: 2}, math.Round((81559.0-13568)/81559*1000) / 1000},
		// chunk 2048, TP1: 512 + 3072 + 512 + 128 = 4224, raised to the 10 GiB floor
		{"H100 TP1 floor", h100, 2048, Spec{}, FractionInputs{TP: 1}, math.Round((81559.0-10240)/81559*1000) / 1000},
		// MTP drafter: + 2 GiB; n-gram (drafts on the host): nothing
		{"B200 TP8 MTP", b200, 0, mtp, FractionInputs{TP: 8}, math.Round((183359.0-27136-2048)/183359*1000) / 1000},
		{"B200 TP8 n-gram", b200, 0, ngram, FractionInputs{TP: 8}, 0.852},
		// before 0.5.3: 32 GiB above 160 GiB; (9.5 + tp/2) GiB below 90
		{"B200 0.5.1", b200, 0, Spec{}, FractionInputs{TP: 8, Version: "0.5.1.post1"}, math.Round((183359.0-32768)/183359*1000) / 1000},
		{"H100 TP2 0.5.1", h100, 0, Spec{}, FractionInputs{TP: 2, Version: "0.5.1-rc0.pre1"}, math.Round((81559.0-10752)/81559*1000) / 1000},
		{"H100 TP2 0.5.1 DP-attention", h100, 0, Spec{}, FractionInputs{TP: 2, DP: 2, Version: "v0.5.1"}, math.Round((81559.0-10752-4096)/81559*1000) / 1000},
		// 0.5.5 on: the formula; a nightly tag is the newest
		{"B200 0.5.5", b200, 0, Spec{}, FractionInputs{TP: 8, Version: "0.5.5.post2"}, 0.852},
		{"B200 nightly", b200, 0, Spec{}, FractionInputs{TP: 8, Version: "nightly-dev-20260216-d3bae71e"}, 0.852},
		// a vision tower: x 0.95 x (1 - 0.1 x (24 x 1152^2 / (24 x 1024^2) - 1))
		{"B200 TP8 Qwen3.5 vision", b200, 0, Spec{}, FractionInputs{TP: 8, Vision: qwen35}, 0.852 * 0.95 * (1 - 0.1*(1152.0*1152/(1024*1024)-1))},
		{"vision factor floor", b200, 0, Spec{}, FractionInputs{TP: 8, Vision: model.Vision{Present: true, Layers: 48, Hidden: 4096}}, 0.852 * 0.95 * 0.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(SGLang, "b200", tc.mem)
			if tc.chunk > 0 {
				c.MaxNumBatchedTokens = tc.chunk
			}
			c.Spec = tc.spec
			in := tc.in
			in.GPUMemory = tc.mem
			got := DefaultMemFraction(&c, in)
			assert.InDelta(t, tc.want, got, 1e-9, "%+v", in)
		})
	}
	c := DefaultConfig(VLLM, "b200", b200)
	assert.Equal(t, 0.90, DefaultMemFraction(&c, FractionInputs{GPUMemory: b200, TP: 8}), "vLLM's gpu_memory_utilization")
	c = DefaultConfig(SGLang, "b200", 0)
	assert.Equal(t, 0.88, DefaultMemFraction(&c, FractionInputs{TP: 8}), "memory unknown: server_args.py's fallback")
}

// TestSGLangMaxRunning: max_running_requests from the KV pool:
// min(tokens / 2, clamp(tokens / context x 512, 2048, 4096)) per DP rank.
func TestSGLangMaxRunning(t *testing.T) {
	for v, want := range map[string]bool{"0.5.1.post1": true, "0.5.2": true, "v0.5.1-rc0.pre1": true, "0.4.9": true,
		"0.5.3": false, "0.5.3rc0": false, "0.5.10.post1": false, "0.6": false, "1.0.0": false, "nightly-dev": false, "": false} {
		assert.Equal(t, want, sglangBefore(v, 0, 5, 3), "%q before 0.5.3", v)
	}

	assert.Equal(t, 3125, sglangMaxRunning(1_000_000, 163840), "tokens / context x 512")
	assert.Equal(t, 4096, sglangMaxRunning(10_000_000, 163840), "at most 4096")
	assert.Equal(t, 2048, sglangMaxRunning(100_000, 163840), "at least 2048")
	assert.Equal(t, 1500, sglangMaxRunning(3000, 131072), "half the pool")
	c := DefaultConfig(SGLang, "b200", 183359*MiB)
	c.Memory = Memory{KVBytesPerToken: 1000, KVCapacity: 1e9, BlockSize: 1, Groups: 4}
	assert.Equal(t, 4*3125, DefaultMaxRunning(&c, 163840), "per rank, times the ranks")
	v := DefaultConfig(VLLM, "b200", 183359*MiB)
	v.Memory = c.Memory
	assert.Equal(t, v.MaxNumSeqs, DefaultMaxRunning(&v, 163840), "vLLM keeps its max_num_seqs")
}
