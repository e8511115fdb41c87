package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

func handPrefill(t *testing.T, window int) *PrefillTable {
	t.Helper()
	tb, err := NewPrefillTable("q#prefill", PrefillKey{QKDim: 128, VDim: 128, KV: "bf16", Window: window}, []PrefillPoint{
		{Heads: 8, KVHeads: 1, Chunk: 1024, Prefix: 0, Latency: 40 * us, Row: 1},
		{Heads: 8, KVHeads: 1, Chunk: 1024, Prefix: 7168, Latency: 300 * us, Row: 2},
		{Heads: 8, KVHeads: 1, Chunk: 4096, Prefix: 0, Latency: 300 * us, Row: 3},
	})
	require.NoError(t, err)
	return tb
}

func TestPrefillTable(t *testing.T) {
	tb := handPrefill(t, 0)
	// One chunk of 1024 after 7168 cached tokens: kv_len 8192, row 2.
	one := PrefillShape{Chunks: 1, Tokens: 1024, MeanChunk: 1024, MeanKV: 8192, Heads: 8, KVHeads: 1, QKDim: 128, VDim: 128, KVBytes: 2}
	tests := []struct {
		name   string
		s      func(PrefillShape) PrefillShape
		ok     bool
		time   unit.Seconds
		lo, hi unit.Seconds // bounds when time is 0
		rowLo  int
	}{
		{"measured point", func(s PrefillShape) PrefillShape { return s }, true, 300 * us, 0, 0, 2},
		{"two chunks: twice one", func(s PrefillShape) PrefillShape { s.Chunks, s.Tokens = 2, 2048; return s }, true, 600 * us, 0, 0, 2},
		{"between prefixes", func(s PrefillShape) PrefillShape { s.MeanKV = 4096; return s }, true, 0, 40 * us, 300 * us, 1},
		// Above kv_len 8192 the last segment goes on linearly: at 16384
		// at least 300 us plus 8192 keys' FLOPs at the best measured rate.
		{"above the measured kv_len: extended", func(s PrefillShape) PrefillShape { s.MeanKV = 16384; return s }, true, 0, 500 * us, 700 * us, 1},
		{"mean kv below the chunk is the chunk", func(s PrefillShape) PrefillShape { s.MeanKV = 0; return s }, true, 40 * us, 0, 0, 1},
		{"other heads", func(s PrefillShape) PrefillShape { s.Heads = 16; return s }, false, 0, 0, 0, 0},
		{"other dims (MLA)", func(s PrefillShape) PrefillShape { s.QKDim = 192; return s }, false, 0, 0, 0, 0},
		{"fp8 KV has no table", func(s PrefillShape) PrefillShape { s.KVBytes = 1; return s }, false, 0, 0, 0, 0},
		{"a window layer needs a window table", func(s PrefillShape) PrefillShape { s.Window = 128; return s }, false, 0, 0, 0, 0},
		{"DSA top-k selection: dense tables do not answer", func(s PrefillShape) PrefillShape { s.TopK = 2048; return s }, false, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := tb.Lookup(tt.s(one))
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			if tt.time > 0 {
				assert.InDelta(t, float64(tt.time), float64(e.Time), 1e-12)
			} else {
				assert.Greater(t, e.Time, tt.lo)
				assert.Less(t, e.Time, tt.hi)
			}
			assert.Equal(t, tt.rowLo, e.Source.RowLo)
			assert.Equal(t, "q#prefill", e.Source.Table)
		})
	}
	w := handPrefill(t, 128)
	s := one
	s.Window = 128
	e, ok := w.Lookup(s)
	require.True(t, ok)
	assert.InDelta(t, float64(300*us), float64(e.Time), 1e-12)
	_, err := NewPrefillTable("x", PrefillKey{QKDim: 128, VDim: 128, KV: "bf16"}, []PrefillPoint{{Heads: 8, KVHeads: 1, Chunk: 256, Prefix: -1, Latency: us, Row: 4}})
	assert.ErrorContains(t, err, "row 4")
}

// AttentionPrefill answers from a covering table (floored at the DRAM
// streaming time) and from the roofline otherwise.
func TestAttentionPrefillTable(t *testing.T) {
	g, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	s := PrefillShape{Chunks: 1, Tokens: 1024, Keys: 8192, Pairs: CausalPairs(1024, 7168, 0), MeanChunk: 1024, MeanKV: 8192,
		Heads: 8, KVHeads: 1, QKDim: 128, VDim: 128, KVBytes: 2}
	roof := (&Costs{GPU: g}).AttentionPrefill(s)
	tab := (&Costs{GPU: g, Tables: &Tables{Prefills: []*PrefillTable{handPrefill(t, 0)}}}).AttentionPrefill(s)
	assert.Equal(t, "q#prefill", tab.Source.Table)
	assert.InDelta(t, float64(300*us), float64(tab.Time), 1e-12)
	assert.Empty(t, roof.Source.Table)
	assert.Equal(t, roof.FLOPs, tab.FLOPs, "the table keeps the shape's FLOPs")
	s.Heads = 64
	other := (&Costs{GPU: g, Tables: &Tables{Prefills: []*PrefillTable{handPrefill(t, 0)}}}).AttentionPrefill(s)
	assert.Empty(t, other.Source.Table, "no series for 64 heads: the roofline")
}

// engPrefill is an engine table as the perf database's rows make one: one
// prompt a row (prefix 0), half the proxy's time (handPrefill's).
func engPrefill(t *testing.T, name, engine string, scale float64) *PrefillTable {
	t.Helper()
	tb, err := NewPrefillTable(name, PrefillKey{QKDim: 128, VDim: 128, KV: "bf16"}, []PrefillPoint{
		{Heads: 8, KVHeads: 1, Chunk: 512, Prefix: 0, Latency: unit.Seconds(scale * 12e-6), Row: 1},
		{Heads: 8, KVHeads: 1, Chunk: 1024, Prefix: 0, Latency: unit.Seconds(scale * 20e-6), Row: 2},
		{Heads: 8, KVHeads: 1, Chunk: 4096, Prefix: 0, Latency: unit.Seconds(scale * 150e-6), Row: 3},
	})
	require.NoError(t, err)
	tb.Engine = engine
	return tb
}

// TestPrefillPolicy: a chunk after a long cached prefix is not priced by
// an engine table clamped at prefix 0 when the proxy measured the prefix
// (the proxy's answer at the engine's level), and the scenario's
// engine's table answers before another engine's.
func TestPrefillPolicy(t *testing.T) {
	vllm := engPrefill(t, "e#prefill.vllm", "vllm", 1)
	sgl := engPrefill(t, "e#prefill.sglang", "sglang", 1.2)
	proxy := handPrefill(t, 0) // 40 us at 1024 (prefix 0), 300 us at 1024 after 7168
	ts := &Tables{Prefills: []*PrefillTable{vllm, sgl, proxy}}
	one := PrefillShape{Chunks: 1, Tokens: 1024, MeanChunk: 1024, MeanKV: 1024, Heads: 8, KVHeads: 1, QKDim: 128, VDim: 128, KVBytes: 2}

	// no prefix: the engine table answers at its own point
	e, ok := ts.Prefill(one)
	require.True(t, ok)
	assert.InDelta(t, 20e-6, float64(e.Time), 1e-12)
	assert.Equal(t, "e#prefill.vllm", e.Source.Table)
	assert.Empty(t, e.Source.Note)

	// 7168 cached tokens: the proxy's 300 us scaled by vllm/proxy at the
	// chunk with no prefix (20/40), not the engine's 20 us clamped
	long := one
	long.MeanKV = 8192
	e, ok = ts.Prefill(long)
	require.True(t, ok)
	assert.InDelta(t, 150e-6, float64(e.Time), 1e-12)
	assert.Equal(t, "q#prefill", e.Source.Table)
	assert.Contains(t, e.Source.Note, "the prefix is beyond e#prefill.vllm")
	assert.Contains(t, e.Source.Note, "scaled by the ratio e#prefill.vllm / this table at the chunk with no prefix")
	assert.Nil(t, e.Source.Range) // the proxy measured kv_len 8192

	// the scenario runs SGLang: its table first, then vLLM's
	long.Engine = "sglang"
	e, ok = ts.Prefill(long)
	require.True(t, ok)
	assert.InDelta(t, 1.2*150e-6, float64(e.Time), 1e-12)
	assert.Contains(t, e.Source.Note, "beyond e#prefill.sglang")
	one.Engine = "sglang"
	e, ok = ts.Prefill(one)
	require.True(t, ok)
	assert.Equal(t, "e#prefill.sglang", e.Source.Table)
	assert.InDelta(t, 1.2*20e-6, float64(e.Time), 1e-12)
	// vLLM's table before SGLang's in the stack: the same for a vLLM run
	ts2 := &Tables{Prefills: []*PrefillTable{sgl, vllm, proxy}}
	one.Engine = "vllm"
	e, _ = ts2.Prefill(one)
	assert.Equal(t, "e#prefill.vllm", e.Source.Table)
	// only the other engine's table covers: it answers and says so
	one.Engine = "sglang"
	e, _ = (&Tables{Prefills: []*PrefillTable{vllm}}).Prefill(one)
	assert.Equal(t, "e#prefill.vllm", e.Source.Table)
	assert.Contains(t, e.Source.Note, "no sglang table covers this shape: vllm's measured kernels answer")
	// ... unless the shape says another engine's kernel is not its engine's
	one.OwnEngineOnly = true
	_, ok = (&Tables{Prefills: []*PrefillTable{vllm}}).Prefill(one)
	assert.False(t, ok, "no sglang table: the proxy's turn")
	e, _ = (&Tables{Prefills: []*PrefillTable{vllm, sgl}}).Prefill(one)
	assert.Equal(t, "e#prefill.sglang", e.Source.Table, "its own engine's table still answers")
	one.OwnEngineOnly = false

	// no table covers the prefix: the clamped answer stands, noted
	long.Engine = ""
	e, _ = (&Tables{Prefills: []*PrefillTable{vllm}}).Prefill(long)
	assert.InDelta(t, 20e-6, float64(e.Time), 1e-12)
	assert.Contains(t, e.Source.Note, "clamped: kv_len above the measured range")

	// no allocation once the notes are built
	long.Engine = "sglang"
	n := testing.AllocsPerRun(100, func() { _, _ = ts.Prefill(long) })
	assert.Zero(t, n)
}

// TestVLLMOwnMLAPrefill: a vLLM MLA prefill (q/k 192, v 128) outside
// sm_90/sm_100/sm_103 leaves another engine's MLA prefill table aside (vLLM
// runs FlashAttention there, the proxy's kernel) and the proxy answers;
// on sm_100, for SGLang, and for GQA (q/k = v) the other engine's table
// still answers when it is the only one.
func TestVLLMOwnMLAPrefill(t *testing.T) {
	mla := PrefillShape{Chunks: 1, Tokens: 1024, MeanChunk: 1024, MeanKV: 1024, Heads: 8, KVHeads: 8, QKDim: 192, VDim: 128, KVBytes: 2, Engine: "vllm"}
	assert.True(t, vllmOwnMLAPrefill(SM120, mla))
	assert.True(t, vllmOwnMLAPrefill(SM80, mla))
	for _, a := range []Arch{SM90, SM100, SM103} {
		assert.False(t, vllmOwnMLAPrefill(a, mla), string(a))
	}
	sgl := mla
	sgl.Engine = "sglang"
	assert.False(t, vllmOwnMLAPrefill(SM120, sgl))
	gqa := mla
	gqa.QKDim = 128
	assert.False(t, vllmOwnMLAPrefill(SM120, gqa))
}

// TestVLLMOwnMLAPrefillCosts: on the RTX PRO 6000 (sm_120) a vLLM MLA
// prefill leaves SGLang's MLA table aside (the proxy answers), unless
// Costs.AnyEngineMLAPrefill (the vllm-own-mla-prefill mechanism off); on
// the H200 SGLang's table answers either way; a GQA prefill with a
// narrower v (MiMo-V2's 192/128, KV "bf16") is not MLA.
func TestVLLMOwnMLAPrefillCosts(t *testing.T) {
	sgl, err := NewPrefillTable("e#mla_prefill.sglang", PrefillKey{QKDim: 192, VDim: 128, KV: "bf16"}, []PrefillPoint{
		{Heads: 8, KVHeads: 8, Chunk: 512, Latency: 50e-6, Row: 1},
		{Heads: 8, KVHeads: 8, Chunk: 2048, Latency: 400e-6, Row: 2},
	})
	require.NoError(t, err)
	sgl.Engine = "sglang"
	s := PrefillShape{Chunks: 1, Tokens: 1024, Keys: 1024, Pairs: CausalPairs(1024, 0, 0), MeanChunk: 1024, MeanKV: 1024,
		Heads: 8, KVHeads: 8, QKDim: 192, VDim: 128, KVBytes: 2}
	at := func(g string, any bool, s PrefillShape) string {
		c := &Costs{GPU: gpu(t, g), Engine: "vllm", Tables: &Tables{Prefills: []*PrefillTable{sgl}}, AnyEngineMLAPrefill: any}
		return c.AttentionPrefill(s).Source.Table
	}
	assert.Empty(t, at("rtx-pro-6000-server", false, s), "vLLM on sm_120: the proxy")
	assert.Equal(t, "e#mla_prefill.sglang", at("rtx-pro-6000-server", true, s), "mechanism off: SGLang's table")
	assert.Equal(t, "e#mla_prefill.sglang", at("h200-sxm", false, s), "sm_90: SGLang's table")

	gqa, err := NewPrefillTable("e#prefill.sglang", PrefillKey{QKDim: 192, VDim: 128, KV: "bf16"}, []PrefillPoint{
		{Heads: 8, KVHeads: 1, Chunk: 512, Latency: 50e-6, Row: 1},
		{Heads: 8, KVHeads: 1, Chunk: 2048, Latency: 400e-6, Row: 2},
	})
	require.NoError(t, err)
	gqa.Engine = "sglang"
	g := s
	g.KVHeads, g.KV = 1, "bf16"
	assert.False(t, vllmOwnMLAPrefill(SM120, g), "GQA with v narrower than q/k")
	c := &Costs{GPU: gpu(t, "rtx-pro-6000-server"), Engine: "vllm", Tables: &Tables{Prefills: []*PrefillTable{gqa}}}
	assert.Equal(t, "e#prefill.sglang", c.AttentionPrefill(g).Source.Table, "a GQA prefill still reads another engine's table")
}
