package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// activations is the profile's activation term of the deployment st with
// the model's vocabulary vocab (0: the preset's).
func activations(t *testing.T, st setup, p MemoryProfile, vocab int) (act unit.Bytes, mem Memory) {
	t.Helper()
	c := st.config(t)
	c.Profile = p
	if vocab > 0 {
		m := *c.Model
		m.Vocab = vocab
		c.Model = &m
	}
	s, err := New(c)
	require.NoError(t, err)
	pt, err := s.Step(1, 1024)
	require.NoError(t, err)
	mem = pt.Memory
	var sum unit.Bytes
	for _, r := range mem.ReserveParts {
		assert.NotEmpty(t, r.Source, "part %s names its source", r.Name)
		sum += r.Bytes
		if r.Name == "activations" {
			act = r.Bytes
		}
	}
	assert.Equal(t, mem.Reserve, sum, "reserve = sum of its parts")
	require.Positive(t, act)
	return act, mem
}

var qwenTP2 = setup{name: "qwen3-235b h200 tp2", preset: "qwen3-235b-a22b", gpu: "h200-sxm", fabric: "nvlink4", gpus: 2, tp: 2, ep: 1, dp: 1, graphs: true}

func TestProfileReserveGrowsWithTokens(t *testing.T) {
	// One sampler row: the forward is the peak, and every term of it is
	// linear in the tokens below the fused-MoE chunk.
	a2k, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 2048, Seqs: 1}, 0)
	a8k, mem := activations(t, qwenTP2, MemoryProfile{Tokens: 8192, Seqs: 1}, 0)
	assert.InEpsilon(t, 4, float64(a8k)/float64(a2k), 1e-9, "2048 -> 8192 tokens: %s -> %s", a2k, a8k)
	assert.Equal(t, a8k+ncclReserve(2), mem.Reserve)
	// Usable is the budget less weights and this reserve.
	c := qwenTP2.config(t)
	assert.InEpsilon(t, float64(unit.Bytes(float64(c.GPU.EngineMemory())*0.9)-mem.Weights-mem.Reserve), float64(mem.Usable), 1e-12)
}

func TestProfileReserveGrowsWithVocab(t *testing.T) {
	// 1024 sampler rows over 1024 tokens: the sampler is the peak, rows x
	// vocab x 8 B (fp32 logits and probabilities).
	p := MemoryProfile{Tokens: 1024, Seqs: 1024}
	a1, _ := activations(t, qwenTP2, p, 151936)
	a2, _ := activations(t, qwenTP2, p, 2*151936)
	assert.InEpsilon(t, float64(1024*151936*8), float64(a2-a1), 1e-9, "vocab x2: %s -> %s", a1, a2)
	// More rows than tokens: the sampler runs min(seqs, tokens) rows.
	a3, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 1024, Seqs: 4096}, 151936)
	assert.Equal(t, a1, a3)
}

func TestProfileReserveShardsOverTP(t *testing.T) {
	p := MemoryProfile{Tokens: 8192, Seqs: 1}
	tp4 := qwenTP2
	tp4.gpus, tp4.tp = 4, 4
	a2, _ := activations(t, qwenTP2, p, 0)
	a4, _ := activations(t, tp4, p, 0)
	// The attention heads and expert width split over TP; the residual
	// stream and the MoE's hidden-width cache do not.
	assert.Less(t, a4, a2, "TP4 %s < TP2 %s", a4, a2)
	assert.Greater(t, a4, a2/2, "TP4 %s keeps the replicated parts of TP2's %s", a4, a2)
}

func TestProfileReserveZeroKeepsFixed(t *testing.T) {
	_, mem := activations(t, qwenTP2, MemoryProfile{Tokens: 8192, Seqs: 1024}, 0)
	s := qwenTP2.sim(t)
	pt, err := s.Step(1, 1024)
	require.NoError(t, err)
	assert.Equal(t, OtherReserve+ncclReserve(2), pt.Memory.Reserve, "zero profile: aiconfigurator's figure")
	assert.Less(t, mem.Reserve, pt.Memory.Reserve, "qwen3-235b TP2 at 8192 tokens profiles below 3.5 GiB")
}

func TestProfileValidate(t *testing.T) {
	for _, p := range []MemoryProfile{{Tokens: -1}, {Seqs: -1}, {Tokens: MaxBatchSize + 1}} {
		c := qwenTP2.config(t)
		c.Profile = p
		_, err := New(c)
		require.Error(t, err, "%+v", p)
		assert.Contains(t, err.Error(), "Profile")
	}
}

// TestProfileWeightsAndKV: SGLang's mem_fraction_static bounds weights and
// KV alone: no reserve, usable = memory x fraction - weights.
func TestProfileWeightsAndKV(t *testing.T) {
	c := qwenTP2.config(t)
	c.GPUMemoryUtilization = 0.852
	c.Profile = MemoryProfile{WeightsAndKV: true, Tokens: 8192}
	s, err := New(c)
	require.NoError(t, err)
	pt, err := s.Step(1, 1024)
	require.NoError(t, err)
	m := pt.Memory
	assert.Zero(t, m.Reserve)
	require.Len(t, m.ReserveParts, 1)
	assert.NotEmpty(t, m.ReserveParts[0].Source)
	assert.InEpsilon(t, float64(unit.Bytes(float64(c.GPU.EngineMemory())*0.852)-m.Weights), float64(m.Usable), 1e-12)
}

// reserveParts is the deployment st's reserve parts by name under the
// profile p.
func reserveParts(t *testing.T, st setup, p MemoryProfile) map[string]unit.Bytes {
	t.Helper()
	c := st.config(t)
	c.Profile = p
	s, err := New(c)
	require.NoError(t, err)
	pt, err := s.Step(1, 1024)
	require.NoError(t, err)
	parts := map[string]unit.Bytes{}
	for _, r := range pt.Memory.ReserveParts {
		assert.NotEmpty(t, r.Source, "part %s names its source", r.Name)
		parts[r.Name] += r.Bytes
	}
	return parts
}

// TestProfileSamplerSort: vLLM's native top-k/top-p sort peaks at 9.5
// fp32 copies of the sampler's logits, and 12.5 when the rejection
// sampler's run follows under speculative decoding, against 2 (logits and
// probabilities) otherwise; the forward's hidden state is held under all
// three. 1024 rows over 1024 tokens make the sampler the peak.
func TestProfileSamplerSort(t *testing.T) {
	const vocab = 151936
	l := float64(1024 * vocab * 4)
	plain, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 1024, Seqs: 1024}, vocab)
	sorted, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 1024, Seqs: 1024, SamplerSort: true}, vocab)
	assert.InEpsilon(t, 7.5*l, float64(sorted-plain), 1e-9, "sort: %s -> %s", plain, sorted)
	spec := qwenTP2
	spec.spec = Spec{Method: SpecNgram, DraftTokens: 2, Acceptance: []float64{0.5}}
	specPlain, _ := activations(t, spec, MemoryProfile{Tokens: 1024, Seqs: 1024}, vocab)
	specSorted, _ := activations(t, spec, MemoryProfile{Tokens: 1024, Seqs: 1024, SamplerSort: true}, vocab)
	assert.Equal(t, plain, specPlain, "without the sort the draft changes nothing")
	assert.InEpsilon(t, 10.5*l, float64(specSorted-specPlain), 1e-9, "sort + rejection sampler: %s -> %s", specPlain, specSorted)
	// The hidden state: 1024 tokens x hidden in bf16 on top of 12.5 copies.
	c := qwenTP2.config(t)
	assert.InEpsilon(t, 12.5*l+float64(1024*c.Model.Hidden*2), float64(specSorted), 1e-9)
	// One sampler row: the forward is the peak and the sort moves nothing.
	a, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 8192, Seqs: 1}, 0)
	b, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 8192, Seqs: 1, SamplerSort: true}, 0)
	assert.Equal(t, a, b)
}

var glm5H200 = setup{name: "glm-5 h200 tp8", preset: "glm-5", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 1, dp: 1, graphs: true}

// TestProfileIndexerWorkspace: on a DSA model the indexer's workspace,
// 40 x max_model_len keys of 132 B (128 fp8 + one fp32 scale), is a
// reserve part of its own, which takes the fused-MoE caches in (the
// forward's MoE term loses them); it grows with max_model_len; a model
// without the indexer has none, and the flag needs a max_model_len.
func TestProfileIndexerWorkspace(t *testing.T) {
	base := MemoryProfile{Tokens: 8192, Seqs: 1}
	off := reserveParts(t, glm5H200, base)
	assert.NotContains(t, off, "workspace")
	p := base
	p.IndexerWorkspace, p.MaxModelLen = true, 202752
	on := reserveParts(t, glm5H200, p)
	assert.InEpsilon(t, 40*202752*132, float64(on["workspace"]), 1e-12, "workspace %s", on["workspace"])
	assert.Less(t, on["activations"], off["activations"], "the MoE caches leave the forward term")
	p.MaxModelLen = 2 * 202752
	assert.InEpsilon(t, 2*40*202752*132, float64(reserveParts(t, glm5H200, p)["workspace"]), 1e-12)
	// A short max_model_len: the MoE caches are the larger, and the buffer
	// is their size, the forward term without them.
	p.MaxModelLen = 1024
	short := reserveParts(t, glm5H200, p)
	assert.Greater(t, float64(short["workspace"]), 40*1024*132.0)
	assert.Equal(t, on["activations"], short["activations"])

	q := MemoryProfile{Tokens: 8192, Seqs: 1, IndexerWorkspace: true, MaxModelLen: 202752}
	assert.NotContains(t, reserveParts(t, qwenTP2, q), "workspace", "no indexer, no workspace")

	c := glm5H200.config(t)
	c.Profile = MemoryProfile{Tokens: 8192, Seqs: 1, IndexerWorkspace: true}
	_, err := New(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_model_len")
}

// TestProfileSamplerTriton: vLLM's Triton top-k/top-p path holds 3.5
// fp32 copies of the sampler's logits (bf16 logits, fp32 copy masked in
// place, probabilities, exponential draws) plus the kernel's buffer of
// min(next_power_of_2(min(SMs, rows)), SMs) vocabulary rows, 6.5 copies
// with the rejection sampler; below 8 rows apply_top_k_top_p sorts; a GPU
// without an SM count sizes the buffer by the rows; SamplerSort wins.
func TestProfileSamplerTriton(t *testing.T) {
	const vocab = 151936
	const rows = 1024
	l := float64(rows * vocab * 4)
	p := MemoryProfile{Tokens: 1024, Seqs: rows}
	c := qwenTP2.config(t)
	require.Equal(t, 132, c.GPU.SMs, "h200-sxm")
	buf := float64(132 * vocab * 4) // min(next_power_of_2(132) = 256, 132) rows
	plain, _ := activations(t, qwenTP2, p, vocab)
	tp := p
	tp.SamplerTriton = true
	triton, _ := activations(t, qwenTP2, tp, vocab)
	assert.InEpsilon(t, 1.5*l+buf, float64(triton-plain), 1e-9, "triton: %s -> %s", plain, triton)
	spec := qwenTP2
	spec.spec = Spec{Method: SpecNgram, DraftTokens: 2, Acceptance: []float64{0.5}}
	specTriton, _ := activations(t, spec, tp, vocab)
	assert.InEpsilon(t, 4.5*l+buf, float64(specTriton-plain), 1e-9, "triton + rejection sampler: %s", specTriton)
	assert.InEpsilon(t, 6.5*l+buf+float64(1024*c.Model.Hidden*2), float64(specTriton), 1e-9)
	// SamplerSort wins over SamplerTriton.
	both := tp
	both.SamplerSort = true
	sorted, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 1024, Seqs: rows, SamplerSort: true}, vocab)
	bothAct, _ := activations(t, qwenTP2, both, vocab)
	assert.Equal(t, sorted, bothAct)

	// The buffer: 20 rows run 20 programs, next_power_of_2 = 32 buffer
	// rows; a GPU without an SM count takes the rows themselves.
	assert.InEpsilon(t, float64(32*vocab*4), c.tritonSamplerBuffer(20), 1e-12)
	assert.InEpsilon(t, float64(132*vocab*4), c.tritonSamplerBuffer(1000), 1e-12)
	c.GPU.SMs = 0
	assert.InEpsilon(t, float64(20*vocab*4), c.tritonSamplerBuffer(20), 1e-12)

	// Below 8 rows the sort runs (7 rows: 9.5 copies).
	small := MemoryProfile{Tokens: 1024, Seqs: 7}
	s0, _ := activations(t, qwenTP2, small, 13*vocab)
	s1, _ := activations(t, qwenTP2, MemoryProfile{Tokens: 1024, Seqs: 7, SamplerSort: true}, 13*vocab)
	require.Greater(t, s1, s0, "the sort is the peak here")
	small.SamplerTriton = true
	s2, _ := activations(t, qwenTP2, small, 13*vocab)
	assert.Equal(t, s1, s2)
}

// TestProfileARFusion: FlashInfer's all-reduce fusion workspace is a
// non-torch reserve part of 4 x TP x tokens x hidden bf16 values plus TP x
// 256 int32 flags, tokens = min(max size / (hidden x 2),
// max_num_batched_tokens) by architecture and TP; none at TP 1 or with
// DP ranks, none without the flag; it comes out of the KV cache.
func TestProfileARFusion(t *testing.T) {
	h := 4096 // qwen3-235b-a22b hidden
	p := MemoryProfile{Tokens: 8192, Seqs: 1}
	off := reserveParts(t, qwenTP2, p)
	assert.NotContains(t, off, "allreduce fusion")
	p.ARFusion = true
	on := reserveParts(t, qwenTP2, p)
	// h200 (sm_90) at TP 2: 64 MiB / (4096 x 2) = 8192 tokens, the budget.
	want := 4*2*8192*float64(h)*2 + 2*256*4
	assert.InEpsilon(t, want, float64(on["allreduce fusion"]), 1e-12, "%s", on["allreduce fusion"])
	assert.Equal(t, off["activations"], on["activations"])
	// A smaller budget caps the tokens.
	p.Tokens = 2048
	assert.InEpsilon(t, 4*2*2048*float64(h)*2+2*256*4, float64(reserveParts(t, qwenTP2, p)["allreduce fusion"]), 1e-12)
	p.Tokens = 8192
	// sm_90 at TP 4: 2 MiB / (4096 x 2) = 256 tokens; sm_100 at TP 4: 32 MiB.
	tp4 := qwenTP2
	tp4.gpus, tp4.tp = 4, 4
	assert.InEpsilon(t, 4*4*256*float64(h)*2+4*256*4, float64(reserveParts(t, tp4, p)["allreduce fusion"]), 1e-12)
	tp4.gpu, tp4.fabric = "b200-sxm", "nvlink5"
	assert.InEpsilon(t, 4*4*4096*float64(h)*2+4*256*4, float64(reserveParts(t, tp4, p)["allreduce fusion"]), 1e-12)
	// TP 1 (FlashInfer supports 2, 4, 8) and DP ranks: none.
	tp1 := qwenTP2
	tp1.gpus, tp1.tp = 1, 1
	tp1.preset = "qwen3-30b-a3b"
	assert.NotContains(t, reserveParts(t, tp1, p), "allreduce fusion")
	dp := qwenTP2
	dp.gpus, dp.tp, dp.dp = 4, 2, 2
	assert.NotContains(t, reserveParts(t, dp, p), "allreduce fusion")
	// It leaves the KV cache.
	_, memOff := activations(t, qwenTP2, MemoryProfile{Tokens: 8192, Seqs: 1}, 0)
	_, memOn := activations(t, qwenTP2, MemoryProfile{Tokens: 8192, Seqs: 1, ARFusion: true}, 0)
	assert.InEpsilon(t, want, float64(memOff.Usable-memOn.Usable), 1e-9)
}

// TestProfileFICutlassMoE: with FlashInfer's CUTLASS fused MoE (block-fp8
// experts on Hopper with EP), the forward's MoE block holds vLLM's M x K
// workspace13 and FlashInfer's per-call workspace in place of the Triton
// caches; hand-computed for DeepSeek-V3 (hidden 7168, inter 2048, top-8,
// 256 experts over EP 8) at 8192 tokens. Not on Blackwell, without EP,
// with bf16 experts, or where DP ranks exchange tokens before the experts.
func TestProfileFICutlassMoE(t *testing.T) {
	ds := setup{name: "deepseek-v3 h200 tp8 ep8", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 8, dp: 1, graphs: true}
	p := MemoryProfile{Tokens: 8192, Seqs: 1}
	off := reserveParts(t, ds, p)
	p.FICutlassMoE = true
	on := reserveParts(t, ds, p)
	T, k, h, inter, e := 8192.0, 8.0, 7168.0, 2048.0, 32.0
	n := T * k
	triton := n * (max(2*inter, h) + inter) * 2
	fi := T*h*2 + n*h*2 + 2*n*inter*2 + (n*h + n*56*4) + 4*n*4 + e*T*4
	assert.InEpsilon(t, fi-triton, float64(on["activations"]-off["activations"]), 1e-9,
		"on %s off %s", on["activations"], off["activations"])
	for _, st := range []setup{
		{name: "b200", preset: "deepseek-v3", gpu: "b200-sxm", fabric: "nvlink5", gpus: 8, tp: 8, ep: 8, dp: 1, graphs: true},
		{name: "no EP", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 1, dp: 1, graphs: true},
		{name: "bf16 experts", preset: "qwen3-235b-a22b", gpu: "h200-sxm", fabric: "nvlink4", gpus: 4, tp: 4, ep: 4, dp: 1, graphs: true},
		{name: "DP exchange", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 1, ep: 8, dp: 8, dpAttention: true, graphs: true},
	} {
		assert.Equal(t, reserveParts(t, st, MemoryProfile{Tokens: 8192, Seqs: 1}), reserveParts(t, st, p), st.name)
	}
}
