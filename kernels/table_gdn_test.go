package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// TestGDNTableCosts: a GDN layer's chunked scan is priced from a gdn table
// that covers it, the scenario's engine's own table before another's,
// read log-log between its measured tokens per sequence; with Roofline set
// (the gdn-table mechanism off), a KDA layer, or a shape beyond the rows,
// the roofline prices it.
func TestGDNTableCosts(t *testing.T) {
	mk := func(engine string, scale float64) *GDNTable {
		tb, err := NewGDNTable("gdn."+engine, GDNKey{Phase: "prefill", KDim: 128, VDim: 128}, []GDNPoint{
			{KHeads: 4, VHeads: 16, Seqs: 1, SeqLen: 1024, Latency: unit.Seconds(75e-6 * scale), Row: 1},
			{KHeads: 4, VHeads: 16, Seqs: 1, SeqLen: 4096, Latency: unit.Seconds(210e-6 * scale), Row: 2},
			{KHeads: 4, VHeads: 16, Seqs: 8, SeqLen: 1024, Latency: unit.Seconds(252e-6 * scale), Row: 3},
		})
		require.NoError(t, err)
		tb.SetOrigin(engine, "1", false, "perfdb "+engine+" gdn rows")
		return tb
	}
	kt := &Tables{GDNs: []*GDNTable{mk("vllm", 2), mk("sglang", 1)}}
	kt.Rank()
	c := newCosts(gpu(t, "b200-sxm"), false)
	c.Tables, c.Engine = kt, "sglang"
	s := RecurrentShape{GDN: true, KHeads: 4, Seqs: 1, Tokens: 2048, Heads: 16, KDim: 128, VDim: 128, StateBytes: 4, Chunk: 64}
	e := c.RecurrentPrefill(s)
	// log-log between 1024 (75 us) and 4096 (210 us) at 2048: 75 x (210/75)^(1/2)
	assert.InDelta(t, 125.5e-6, float64(e.Time), 0.1e-6, "sglang's own table, interpolated")
	assert.Contains(t, e.Source.Table, "gdn.sglang")
	c.Engine = "vllm"
	assert.InDelta(t, 251e-6, float64(c.RecurrentPrefill(s).Time), 0.2e-6, "vllm's own table")
	c.Engine = "sglang"

	roof := s
	roof.Roofline = true
	r := c.RecurrentPrefill(roof)
	assert.Less(t, float64(r.Time), 60e-6, "the roofline of the chunked algorithm (far below the measured scan)")
	kda := s
	kda.GDN = false
	assert.Equal(t, r.Time, c.RecurrentPrefill(kda).Time, "a KDA layer: no gdn table")
	beyond := s
	beyond.Tokens = 8192
	assert.NotEqual(t, e.Time, c.RecurrentPrefill(beyond).Time)
	_, ok := kt.GDN(beyond)
	assert.False(t, ok, "8192 tokens per sequence is beyond the rows")
	dec := s
	dec.Chunk, dec.Tokens = 0, 1
	_, ok = kt.GDN(dec)
	assert.False(t, ok, "a prefill table does not answer a decode step")
}

// TestGDNTableDeferred: a GDN table built on first use answers as one
// built at once, with the same leave-one-out error and heads, whichever
// of them is read first.
func TestGDNTableDeferred(t *testing.T) {
	pts := []GDNPoint{
		{KHeads: 4, VHeads: 16, Seqs: 1, SeqLen: 1024, Latency: 75e-6, Row: 1},
		{KHeads: 4, VHeads: 16, Seqs: 1, SeqLen: 4096, Latency: 210e-6, Row: 2},
		{KHeads: 4, VHeads: 16, Seqs: 8, SeqLen: 1024, Latency: 252e-6, Row: 3},
		{KHeads: 4, VHeads: 16, Seqs: 8, SeqLen: 4096, Latency: 700e-6, Row: 4},
		{KHeads: 2, VHeads: 8, Seqs: 1, SeqLen: 1024, Latency: 50e-6, Row: 5},
		{KHeads: 2, VHeads: 8, Seqs: 4, SeqLen: 1024, Latency: 90e-6, Row: 6},
	}
	key := GDNKey{Phase: "prefill", KDim: 128, VDim: 128}
	eager, err := NewGDNTable("gdn", key, pts)
	require.NoError(t, err)
	s := RecurrentShape{GDN: true, KHeads: 4, Seqs: 3, Tokens: 3 * 2048, Heads: 16, KDim: 128, VDim: 128, StateBytes: 4, Chunk: 64}
	want, ok := eager.Lookup(s)
	require.True(t, ok)
	for _, first := range []string{"lookup", "loo", "heads"} {
		lazy, err := NewGDNTableDeferred("gdn", key, pts)
		require.NoError(t, err)
		switch first {
		case "loo":
			p, n := lazy.LOOError()
			ep, en := eager.LOOError()
			assert.Equal(t, ep, p, first)
			assert.Equal(t, en, n, first)
		case "heads":
			assert.Equal(t, eager.Heads(), lazy.Heads(), first)
		}
		e, ok := lazy.Lookup(s)
		require.True(t, ok, first)
		assert.Equal(t, want, e, first)
		assert.Equal(t, eager.Heads(), lazy.Heads(), first)
	}
	_, err = NewGDNTableDeferred("gdn", GDNKey{Phase: "decode", KDim: 128, VDim: 128}, pts)
	assert.Error(t, err, "rows are checked at once: a decode row of 1024 tokens")
}
