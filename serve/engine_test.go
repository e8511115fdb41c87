package serve

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// TestEngineTable: every row is complete, names parse back to their
// engine, and an unknown engine is refused by name.
func TestEngineTable(t *testing.T) {
	for _, e := range Engines() {
		t.Run(e.String(), func(t *testing.T) {
			r := engines[e]
			require.NotEmpty(t, r.Name)
			require.NotEmpty(t, r.Title)
			require.NotEmpty(t, r.BudgetKey)
			require.NotEmpty(t, r.SeqsKey)
			for name, f := range map[string]bool{"defaults": r.defaults != nil, "validate": r.validate != nil,
				"blockSize": r.blockSize != nil, "runs": r.runs != nil, "scheduler": r.scheduler != nil} {
				assert.True(t, f, "%s missing", name)
			}
			p, ok := ParseEngine(r.Name)
			assert.True(t, ok)
			assert.Equal(t, e, p)
			assert.Equal(t, r.EngineInfo, e.Info())
		})
	}
	_, ok := ParseEngine("VLLM")
	assert.False(t, ok, "names are exact")
	assert.Equal(t, "vllm or sglang", EngineNames(" or "))
	assert.Equal(t, "engine(9)", Engine(9).String())
	assert.Equal(t, EngineInfo{}, Engine(9).Info())
	assert.False(t, Engine(9).Runs(model.Layout{TP: 1, DP: 1, EP: 1}))
}

// TestEngineRows pins what the rows say about layouts and block sizes.
func TestEngineRows(t *testing.T) {
	mla := &model.Config{}
	mla.Attn.Kind = model.MLA
	cases := []struct {
		name         string
		e            Engine
		l            model.Layout
		runs         bool
		m            *model.Config
		arch         kernels.Arch
		block        int
		unlimitedSeq bool
	}{
		{"vllm tp8", VLLM, model.Layout{TP: 8, DP: 1, EP: 8}, true, nil, "sm_90", 16, false},
		{"vllm dp2", VLLM, model.Layout{TP: 4, DP: 2, EP: 8}, true, mla, "sm_90", 64, false},
		{"vllm dp attention", VLLM, model.Layout{TP: 8, DP: 1, EP: 8, DPAttention: true}, false, mla, "sm_100", 128, false},
		{"vllm mla sm_120", VLLM, model.Layout{TP: 1, DP: 1, EP: 1}, true, mla, "sm_120", 16, false},
		{"sglang tp8", SGLang, model.Layout{TP: 8, DP: 1, EP: 8}, true, mla, "sm_90", 1, true},
		{"sglang dp2", SGLang, model.Layout{TP: 4, DP: 2, EP: 8}, false, nil, "sm_90", 1, true},
		{"sglang dp attention", SGLang, model.Layout{TP: 8, DP: 1, EP: 8, DPAttention: true}, true, nil, "sm_90", 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.runs, tc.e.Runs(tc.l))
			assert.Equal(t, tc.block, blockSizeFor(tc.e, tc.m, tc.arch))
			assert.Equal(t, tc.unlimitedSeq, tc.e.Info().UnlimitedSeqs)
			assert.Equal(t, blockSizeFor(tc.e, nil, ""), DefaultConfig(tc.e, "NVIDIA H200", 141e9).Memory.BlockSize,
				"the default block is the row's for a non-MLA model")
		})
	}
}

// TestCaptureSize: each engine's default CUDA-graph capture size, as its
// source sets it (see vllmCaptureSize, sglangCaptureSize).
func TestCaptureSize(t *testing.T) {
	cases := []struct {
		name   string
		e      Engine
		gpu    unit.Bytes
		tp     int
		seqs   int
		drafts int
		want   int
	}{
		{"vllm default seqs", VLLM, 141 * GiB, 8, 1024, 0, 512},
		{"vllm small max_num_seqs", VLLM, 141 * GiB, 8, 64, 0, 128},
		{"vllm small max_num_seqs, 1 draft", VLLM, 141 * GiB, 8, 64, 1, 256},
		{"vllm 100 seqs: the list stops at 200", VLLM, 141 * GiB, 8, 100, 0, 200},
		{"vllm 200 seqs: 400 truncated to the list's 400", VLLM, 141 * GiB, 8, 200, 0, 400},
		{"vllm 150 seqs: 300 truncated to 288", VLLM, 141 * GiB, 8, 150, 0, 288},
		{"sglang b200", SGLang, 179 * GiB, 8, 0, 0, 512},
		{"sglang h200 tp8", SGLang, 140 * GiB, 8, 0, 0, 512},
		{"sglang h100 tp2", SGLang, 79 * GiB, 2, 0, 0, 256},
		{"sglang 48 GiB tp1", SGLang, 48 * GiB, 1, 0, 0, 32},
		{"sglang 24 GiB tp4", SGLang, 24 * GiB, 4, 0, 0, 80},
		{"sglang 16 GiB", SGLang, 16 * GiB, 8, 0, 0, 8},
		{"sglang mtp 3 drafts", SGLang, 179 * GiB, 8, 0, 3, 2048},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(tc.e, "gpu", tc.gpu)
			c.MaxNumSeqs = tc.seqs
			c.Spec.DraftTokens = tc.drafts
			assert.Equal(t, tc.want, CaptureSize(&c, tc.gpu, tc.tp))
		})
	}
	assert.Zero(t, CaptureSize(&Config{Engine: 9}, GiB, 1), "unknown engine")
}

// TestCaptureBatches: SGLang's capture list (get_batch_sizes_to_capture
// @ 0021673) under its default cuda_graph_max_bs; vLLM's padding is not
// modelled (nil).
func TestCaptureBatches(t *testing.T) {
	seq := func(from, to, step int) []int {
		var out []int
		for b := from; b <= to; b += step {
			out = append(out, b)
		}
		return out
	}
	cat := func(parts ...[]int) []int {
		var out []int
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name   string
		gpu    unit.Bytes
		tp     int
		drafts int
		want   []int
	}{
		{"b200 tp8: to 256 by 8, then by 16 to 512", 179 * GiB, 8, 0, cat([]int{1, 2, 4, 8}, seq(16, 256, 8), seq(272, 512, 16))},
		{"h100 tp2: 96 GiB or less stops at 160, max 256", 79 * GiB, 2, 0, cat([]int{1, 2, 4, 8}, seq(16, 160, 8), seq(176, 256, 16))},
		{"48 GiB tp1: max 32", 48 * GiB, 1, 0, cat([]int{1, 2, 4, 8}, seq(16, 32, 8))},
		{"b200 mtp 3 drafts", 179 * GiB, 8, 3, cat(seq(1, 8, 1), seq(10, 32, 2), seq(40, 152, 16), seq(160, 256, 8), seq(272, 512, 16))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(SGLang, "gpu", tc.gpu)
			c.Spec.DraftTokens = tc.drafts
			assert.Equal(t, tc.want, CaptureBatches(&c, tc.gpu, tc.tp))
		})
	}
	assert.Nil(t, CaptureBatches(&Config{Engine: 9}, GiB, 1), "unknown engine")
}

// TestVLLMCaptureSizes: vLLM's capture list (vllm/config/vllm.py @
// 09f030e, _set_cudagraph_sizes): by default 1, 2, 4, 8 to 248 by 8, 256
// up by 16, to min(2 x max_num_seqs x (1 + K), 512) and at most
// max_num_batched_tokens; --max-cudagraph-capture-size replaces the top; a
// given list is sorted, de-duplicated and cut at max_num_batched_tokens.
// In sequences per rank (CaptureBatches), a decode of 1 + K tokens pads
// to the smallest size holding its tokens.
func TestVLLMCaptureSizes(t *testing.T) {
	seq := func(from, to, step int) []int {
		var out []int
		for b := from; b <= to; b += step {
			out = append(out, b)
		}
		return out
	}
	c := DefaultConfig(VLLM, "gpu", 141*GiB)
	def := append(append([]int{1, 2, 4}, seq(8, 248, 8)...), seq(256, 512, 16)...)
	assert.Equal(t, def, CaptureBatches(&c, 141*GiB, 8))
	assert.Equal(t, 512, CaptureSize(&c, 141*GiB, 8))

	c.CUDAGraphMax = 2048
	assert.Equal(t, 2048, CaptureSize(&c, 141*GiB, 8), "--max-cudagraph-capture-size 2048 (budget %d)", c.MaxNumBatchedTokens)
	c.MaxNumBatchedTokens = 1024
	assert.Equal(t, 1024, CaptureSize(&c, 141*GiB, 8), "at most max_num_batched_tokens")
	c.CUDAGraphMax = 0

	c.CUDAGraphSizes = []int{64, 8, 2048, 8, 1}
	c.Memory = Memory{KVBytesPerToken: 1, KVCapacity: 1 << 30, BlockSize: 16, Groups: 1}
	c.Workload = Workload{Requests: 1, RequestRate: 1, Burstiness: 1, InputTokens: 1, OutputTokens: 1}
	assert.Equal(t, []int{1, 8, 64}, CaptureBatches(&c, 141*GiB, 8), "sorted, de-duplicated, 2048 above the budget")
	assert.Equal(t, 64, CaptureSize(&c, 141*GiB, 8))
	require.NoError(t, c.Validate())
	c.CUDAGraphMax = 128
	assert.ErrorContains(t, c.Validate(), "CUDAGraphMax: 128 must equal", "max_cudagraph_capture_size must be the list's largest")
	c.CUDAGraphMax = 64
	require.NoError(t, c.Validate())
	c.CUDAGraphSizes = []int{2048}
	c.CUDAGraphMax = 0
	assert.ErrorContains(t, c.Validate(), "CUDAGraphSizes: no size within", "no size within the budget")
	c.CUDAGraphSizes = []int{0}
	assert.ErrorContains(t, c.Validate(), "CUDAGraphSizes: sizes must be")

	// With K drafts vLLM rounds each size up to a multiple of 1 + K and
	// drops those then above the largest (compilation.py @ 002284d,
	// adjust_cudagraph_sizes_for_spec_decode).
	c.CUDAGraphSizes = []int{1, 2, 4, 8, 16, 23}
	c.Spec.DraftTokens, c.Spec.Acceptance = 3, []float64{0.7} // 4 tokens per decode
	assert.Equal(t, []int{1, 2, 4}, CaptureBatches(&c, 141*GiB, 8), "sizes 4, 8, 16 tokens (23 rounds to 24 > 23: dropped)")
	assert.Equal(t, 16, CaptureSize(&c, 141*GiB, 8))
	c.CUDAGraphMax = 23
	require.NoError(t, c.Validate(), "max_cudagraph_capture_size is checked against the sizes as given")
	c.CUDAGraphMax = 0
	c.CUDAGraphSizes = []int{2, 3}
	assert.Empty(t, CaptureBatches(&c, 141*GiB, 8), "no size holds a decode of 4 tokens")
	assert.ErrorContains(t, c.Validate(), "no size holds one decode of 4 tokens")
	c.CUDAGraphSizes = nil
	c.MaxNumSeqs = 64
	c.Spec.DraftTokens, c.Spec.Acceptance = 2, []float64{0.7} // default top min(64 x 3 x 2, 512) = 384: 3 to 384 by multiples of 3
	b := CaptureBatches(&c, 141*GiB, 8)
	assert.Equal(t, []int{1, 2, 3, 6, 8, 11, 14}, b[:7], "1, 2, 4, 8, 16, 24, 32, 40 rounded to 3, 6, 9, 18, 24, 33, 42")
	assert.Equal(t, 128, b[len(b)-1], "384 / 3")
}

// TestPullsKV: vLLM's disaggregated decode instance pulls the KV
// (NixlConnector), SGLang's prefill instance pushes it.
func TestPullsKV(t *testing.T) {
	assert.True(t, PullsKV(VLLM))
	assert.False(t, PullsKV(SGLang))
	assert.False(t, PullsKV(Engine(9)), "unknown engine")
}

// TestEagerPrefill: SGLang runs prefill and mixed batches without CUDA
// graphs (ForwardMode.is_cuda_graph), vLLM with piecewise graphs.
func TestEagerPrefill(t *testing.T) {
	assert.True(t, EagerPrefill(SGLang))
	assert.False(t, EagerPrefill(VLLM))
	assert.False(t, EagerPrefill(Engine(9)), "unknown engine")
}

// TestPoolCaptureBudget: a disaggregated pool is a vLLM instance started
// with its own --max-num-batched-tokens, so the capture sizes are checked
// against each pool's budget (the config's where a pool has none): [9000]
// with both pools at 10240 or more is valid under a config budget of
// 8192, and a pool whose own budget holds no size is refused at that
// pool's field. Aggregated, the config's budget still refuses it.
func TestPoolCaptureBudget(t *testing.T) {
	c := point(VLLM, 1, 8, 1024, 64)
	c.CUDAGraphSizes = []int{9000}
	require.Equal(t, 8192, c.MaxNumBatchedTokens)
	assert.ErrorContains(t, c.Validate(), "CUDAGraphSizes: no size within max_num_batched_tokens 8192, got [9000] (vLLM would capture no CUDA graph", "aggregated: unchanged")

	d := disagg(c, 1, 1, math.Inf(1), 0)
	d.Disagg.Prefill.MaxNumBatchedTokens, d.Disagg.Decode.MaxNumBatchedTokens = 16384, 10240
	require.NoError(t, d.Validate())
	_, err := Run(d, realistic)
	require.NoError(t, err)

	d.Disagg.Decode.MaxNumBatchedTokens = 4096
	assert.ErrorContains(t, d.Validate(), "Disagg.Decode.MaxNumBatchedTokens: no size within max_num_batched_tokens 4096, got [9000] (vLLM on the decode pool would capture no CUDA graph")
	d.Disagg.Decode.MaxNumBatchedTokens = 10240
	d.Disagg.Prefill.MaxNumBatchedTokens = 0
	assert.ErrorContains(t, d.Validate(), "CUDAGraphSizes: no size within max_num_batched_tokens 8192, got [9000] (vLLM on the prefill pool", "a pool without its own budget runs with the config's")
	d.Disagg.Prefill.MaxNumBatchedTokens = 9000
	d.CUDAGraphMax = 9000
	require.NoError(t, d.Validate())
	d.CUDAGraphSizes = []int{9000, 10000}
	assert.ErrorContains(t, d.Validate(), "Disagg.Decode.MaxNumBatchedTokens: 10240 tokens hold capture sizes up to 10000, but max_cudagraph_capture_size is 9000 (vLLM on the decode pool refuses", "the prefill pool's largest is 9000, the decode pool's 10000")
}

// TestValidatePoolBudgets: a disaggregated config checked before its
// pools are built gives, for each pair of pool budgets, the error (or
// none) Validate gives with a Disagg holding those budgets; with c.Disagg
// set it is Validate, whatever budgets it is given.
func TestValidatePoolBudgets(t *testing.T) {
	c := point(VLLM, 1, 8, 1024, 64)
	c.CUDAGraphSizes = []int{9000}
	c.Spec = Spec{DraftTokens: 3, Acceptance: []float64{0.8}}
	var failed int
	for _, b := range [][2]int{{16384, 10240}, {0, 10240}, {16384, 4096}, {3, 10240}, {16384, 2}, {-1, 0}, {16384, maxTokens + 1}} {
		d := disagg(c, 1, 1, math.Inf(1), 0)
		d.Disagg.Prefill.MaxNumBatchedTokens, d.Disagg.Decode.MaxNumBatchedTokens = b[0], b[1]
		want := d.Validate()
		got := c.ValidatePoolBudgets(b[0], b[1])
		assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "budgets %v", b)
		assert.Equal(t, fmt.Sprint(want), fmt.Sprint(d.ValidatePoolBudgets(16384, 10240)), "budgets %v: Validate with c.Disagg set", b)
		if want != nil {
			failed++
		}
	}
	assert.Equal(t, 6, failed, "every pair but the first is refused")
}
