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
	c := NewCosts(g, true)
	assert.False(t, c.HasUnmapped())
	assert.Zero(t, c.Unmapped(1024).Time, "no table: nothing")
	c.Tables = &Tables{Unmappeds: []*UnmappedTable{tb}}
	assert.True(t, c.HasUnmapped())
	assert.Equal(t, 82*us, c.Unmapped(1024).Time)
}

func TestGQAPrefillTable(t *testing.T) {
	us := unit.Microsecond
	key := GQAKey{HeadDim: 128, KV: "bf16"}
	tb, err := NewGQAPrefillTable("t#gqa_prefill", key, []GQAPrefillPoint{
		{Heads: 16, KVHeads: 4, Chunk: 1024, KVLen: 1024, Latency: 18 * us, Row: 1},
		{Heads: 16, KVHeads: 4, Chunk: 4096, KVLen: 4096, Latency: 152 * us, Row: 2},
	})
	require.NoError(t, err)
	shape := func(chunks, tokens, keys int) PrefillShape {
		q, c := tokens/chunks, (keys-tokens)/chunks
		return PrefillShape{Chunks: chunks, Tokens: tokens, Keys: keys, MeanChunk: q, Pairs: float64(chunks) * CausalPairs(q, c, 0), Heads: 16, KVHeads: 4,
			QKDim: 128, VDim: 128, KVBytes: 2, KV: "bf16"}
	}
	for _, tc := range []struct {
		name string
		s    PrefillShape
		want unit.Seconds
		ok   bool
	}{
		{"measured chunk", shape(1, 1024, 1024), 18 * us, true},
		{"two chunks: twice one chunk", shape(2, 2048, 2048), 36 * us, true},
		{"between: log-log in chunk", shape(1, 2048, 2048), unit.Seconds(18*math.Sqrt(152.0/18)) * us, true},
		{"another kv dtype", func() PrefillShape { s := shape(1, 1024, 1024); s.KV = "fp8"; return s }(), 0, false},
		{"MLA dims", func() PrefillShape { s := shape(1, 1024, 1024); s.QKDim = 192; return s }(), 0, false},
		{"other heads", func() PrefillShape { s := shape(1, 1024, 1024); s.Heads = 32; return s }(), 0, false},
		{"prefix on a table without one: x causal pairs", shape(1, 1024, 2048), unit.Seconds(18*(1024*1024+1024*1025/2.0)/(1024*1025/2.0)) * us, true},
		{"sliding window: not full attention", func() PrefillShape {
			s := shape(1, 1024, 1024)
			s.Keys, s.Pairs = 128, CausalPairs(1024, 0, 128)
			return s
		}(), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := tb.Lookup(tc.s)
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.InEpsilon(t, float64(tc.want), float64(e.Time), 1e-6)
			}
		})
	}
	_, err = NewGQAPrefillTable("t#bad", key, []GQAPrefillPoint{{Heads: 16, KVHeads: 4, Chunk: 1024, KVLen: 512, Latency: us, Row: 4}})
	require.Error(t, err, "kv_len below the chunk")

	g, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := NewCosts(g, true)
	roof := c.AttentionPrefill(shape(1, 1024, 1024))
	c.Tables = &Tables{GQAPrefills: []*GQAPrefillTable{tb}}
	e := c.AttentionPrefill(shape(1, 1024, 1024))
	assert.Equal(t, 18*us, e.Time)
	assert.Equal(t, roof.FLOPs, e.FLOPs, "FLOPs from the roofline")
	// a row faster than the hardware allows is floored at the peak
	fast, err := NewGQAPrefillTable("t#fast", key, []GQAPrefillPoint{{Heads: 16, KVHeads: 4, Chunk: 8192, KVLen: 8192, Latency: 1 * us, Row: 1}})
	require.NoError(t, err)
	c.Tables = &Tables{GQAPrefills: []*GQAPrefillTable{fast}}
	f := c.AttentionPrefill(shape(1, 8192, 8192))
	assert.InEpsilon(t, float64(unit.ComputeTime(f.FLOPs, g.PeakFor(dtype.BF16))), float64(f.Time), 1e-9)
	assert.Equal(t, noteFloor, f.Source.Note)
}
