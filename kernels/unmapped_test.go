package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

func TestUnmappedTable(t *testing.T) {
	us := unit.Microsecond
	tb, err := NewUnmappedTable("t#unmapped", []UnmappedPoint{
		{Tokens: 4096, Latency: 225 * us, Row: 1},
		{Tokens: 1024, Latency: 82 * us, Row: 2},
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		n    int
		want unit.Seconds
		rows [2]int
		note string
	}{
		{"measured point", 1024, 82 * us, [2]int{2, 2}, ""},
		{"between: log-log", 2048, unit.Seconds(82*math.Sqrt(225.0/82)) * us, [2]int{2, 1}, ""},
		{"below: clamped", 64, 82 * us, [2]int{2, 2}, "clamped: tokens below the measured range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := tb.Lookup(tc.n)
			require.True(t, ok)
			assert.InEpsilon(t, float64(tc.want), float64(e.Time), 1e-9)
			assert.Equal(t, tc.rows, [2]int{e.Source.RowLo, e.Source.RowHi})
			assert.Equal(t, tc.note, e.Source.Note)
			assert.Equal(t, cost.Table, e.Source.Kind)
		})
	}
	above, ok := tb.Lookup(8192)
	require.True(t, ok)
	assert.Greater(t, above.Time, 225*us, "above: the last segment extended in tokens")

	_, err = NewUnmappedTable("t#bad", []UnmappedPoint{{Tokens: 0, Latency: us, Row: 3}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row 3")

	g, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := newCosts(g, true)
	assert.False(t, c.HasUnmapped())
	assert.Zero(t, c.Unmapped(1024).Time, "no table: nothing")
	c.Tables = &Tables{Unmappeds: []*UnmappedTable{tb}}
	assert.True(t, c.HasUnmapped())
	assert.Equal(t, 82*us, c.Unmapped(1024).Time)
}

// A prefill table as calib from-trace writes it: one row per traced
// prefill step, at prefix 0 (kv_len = chunk).
func TestPrefillTableFromTrace(t *testing.T) {
	us := unit.Microsecond
	key := PrefillKey{QKDim: 128, VDim: 128, KV: "bf16"}
	tb, err := NewPrefillTable("t#prefill.trace", key, []PrefillPoint{
		{Heads: 16, KVHeads: 4, Chunk: 1024, Prefix: 0, Latency: 18 * us, Row: 1},
		{Heads: 16, KVHeads: 4, Chunk: 4096, Prefix: 0, Latency: 152 * us, Row: 2},
	})
	require.NoError(t, err)
	shape := func(chunks, tokens, keys int) PrefillShape {
		q, c := tokens/chunks, (keys-tokens)/chunks
		return PrefillShape{Chunks: chunks, Tokens: tokens, Keys: keys, MeanChunk: q, MeanKV: keys / chunks,
			Pairs: float64(chunks) * CausalPairs(q, c, 0), Heads: 16, KVHeads: 4, QKDim: 128, VDim: 128, KVBytes: 2, KV: "bf16"}
	}
	for _, tc := range []struct {
		name string
		s    PrefillShape
		want unit.Seconds
		ok   bool
		note string
	}{
		{"measured chunk", shape(1, 1024, 1024), 18 * us, true, ""},
		{"two chunks: twice one chunk", shape(2, 2048, 2048), 36 * us, true, ""},
		{"between, on kv_len = chunk: log-log in chunk, each chunk at its own point", shape(1, 2048, 2048),
			unit.Seconds(18*math.Sqrt(152.0/18)) * us, true, "clamped: kv_len above the measured range"},
		{"longer prefix: clamped, not extended", shape(1, 1024, 3072), 18 * us, true, "clamped: kv_len above the measured range"},
		{"another kv dtype", func() PrefillShape { s := shape(1, 1024, 1024); s.KV = "fp8"; return s }(), 0, false, ""},
		{"MLA dims", func() PrefillShape { s := shape(1, 1024, 1024); s.QKDim = 192; return s }(), 0, false, ""},
		{"other heads", func() PrefillShape { s := shape(1, 1024, 1024); s.Heads = 32; return s }(), 0, false, ""},
		{"a sliding window", func() PrefillShape { s := shape(1, 1024, 1024); s.Window = 128; return s }(), 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := tb.Lookup(tc.s)
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.InEpsilon(t, float64(tc.want), float64(e.Time), 1e-6)
				assert.Equal(t, tc.note, e.Source.Note)
			}
		})
	}

	fp8, err := NewPrefillTable("t#fp8", PrefillKey{QKDim: 128, VDim: 128, KV: "fp8"},
		[]PrefillPoint{{Heads: 16, KVHeads: 4, Chunk: 1024, Latency: 15 * us, Row: 1}})
	require.NoError(t, err)
	s := shape(1, 1024, 1024)
	s.KV, s.KVBytes = "fp8", 1
	e, ok := fp8.Lookup(s)
	require.True(t, ok, "a GQA shape matches the table of its KV cache dtype")
	assert.Equal(t, 15*us, e.Time)

	g, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := newCosts(g, true)
	roof := c.AttentionPrefill(shape(1, 1024, 1024))
	other, err := NewPrefillTable("t#other", key, []PrefillPoint{{Heads: 16, KVHeads: 4, Chunk: 1024, Latency: 30 * us, Row: 1}})
	require.NoError(t, err)
	c.Tables = &Tables{Prefills: []*PrefillTable{tb, other}}
	e = c.AttentionPrefill(shape(1, 1024, 1024))
	assert.Equal(t, 18*us, e.Time, "the first table that covers the shape answers")
	assert.Equal(t, "t#prefill.trace", e.Source.Table)
	assert.Equal(t, roof.FLOPs, e.FLOPs, "FLOPs from the roofline")
	// a row faster than the hardware allows is floored at the peak
	fast, err := NewPrefillTable("t#fast", key, []PrefillPoint{{Heads: 16, KVHeads: 4, Chunk: 8192, Latency: 1 * us, Row: 1}})
	require.NoError(t, err)
	c.Tables = &Tables{Prefills: []*PrefillTable{fast}}
	f := c.AttentionPrefill(shape(1, 8192, 8192))
	assert.InEpsilon(t, float64(unit.ComputeTime(f.FLOPs, g.PeakFor(dtype.BF16))), float64(f.Time), 1e-9)
	assert.Equal(t, noteFloor, f.Source.Note)
}
