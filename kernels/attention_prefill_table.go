package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
)

// GQAPrefillPoint is one measured GQA prefill attention: one layer's
// attention of a chunk of Chunk new tokens over KVLen keys (its prefix and
// itself, causal), for Heads query and KVHeads key/value heads per GPU.
// Latency is per chunk.
type GQAPrefillPoint struct {
	Heads, KVHeads, Chunk, KVLen int
	Latency                      unit.Seconds
	Row                          int
}

// GQAPrefillTable is GQA prefill attention latency per chunk by (chunk,
// KV length) for each measured (heads, kv_heads) per GPU: log-log between
// the measured points (causal attention grows as a power of the chunk),
// clamped outside them with a note.
type GQAPrefillTable struct {
	curve.Table
	Key    GQAKey
	series series2[[2]int]
	// diagonal: every row has kv_len = chunk (no cached prefix measured,
	// as in the perf database's context attention); a prefix is priced by
	// the causal (query, key) pairs it adds (Lookup).
	diagonal bool
}

// NewGQAPrefillTable builds a GQA prefill table.
func NewGQAPrefillTable(name string, key GQAKey, pts []GQAPrefillPoint) (*GQAPrefillTable, error) {
	p := make([]pt2[[2]int], len(pts))
	diagonal := true
	for i, q := range pts {
		diagonal = diagonal && q.KVLen == q.Chunk
		if q.Heads <= 0 || q.KVHeads <= 0 || q.Chunk <= 0 || q.KVLen < q.Chunk {
			return nil, curve.RowErrorf(q.Row, "heads, kv_heads and chunk must be positive and kv_len at least chunk")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt2[[2]int]{key: [2]int{q.Heads, q.KVHeads}, a: float64(q.Chunk), b: float64(q.KVLen), y: float64(q.Latency), row: q.Row}
	}
	s, loo, err := buildSeries2(p)
	if err != nil {
		return nil, err
	}
	t := &GQAPrefillTable{Key: key, series: s, diagonal: diagonal}
	t.Init(name, axes("chunk", "kv_len"), kernelNotes, loo)
	return t, nil
}

// Lookup answers the prefill attention of s (every chunk of the step, at
// the mean chunk and mean keys per chunk) for GQA shapes (QKDim = VDim) of
// the table's head dim and KV dtype and a measured (heads, kv_heads).
func (t *GQAPrefillTable) Lookup(s PrefillShape) (cost.Estimate, bool) {
	if s.Chunks <= 0 || s.Tokens <= 0 || s.QKDim != s.VDim || s.QKDim != t.Key.HeadDim || s.KV != t.Key.KV {
		return cost.Estimate{}, false
	}
	g := t.series.find([2]int{s.Heads, s.KVHeads})
	if g == nil {
		return cost.Estimate{}, false
	}
	n := float64(s.Chunks)
	chunk, kv := float64(s.Tokens)/n, float64(s.Keys)/n
	// The rows measured full causal attention: a sliding window (fewer
	// pairs than full attention of chunks of the mean length over the
	// mean prefix; uneven chunks only add pairs) is not what they hold.
	prefix := max(kv-chunk, 0)
	full := chunk*prefix + chunk*(chunk+1)/2
	if s.Pairs > 0 && s.Pairs < 0.999*n*full {
		return cost.Estimate{}, false
	}
	scale := 1.0
	if t.diagonal {
		// no prefix measured: the chunk's own attention, times the causal
		// pairs the prefix adds (the kernel is compute-bound at prefill
		// sizes, as the roofline prices it)
		kv = chunk
		scale = full / (chunk * (chunk + 1) / 2)
	}
	r := g.At(chunk, max(kv, chunk))
	e := t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.ClampA, r.ClampB))
	if scale > 1 && e.Source.Note == "" {
		e.Source.Note = notePrefillPrefix
	}
	m := unit.Seconds(n * scale)
	e.Time *= m
	e.Lo *= m
	e.Hi *= m
	return e, true
}

// notePrefillPrefix: a diagonal table's time scaled to a cached prefix.
const notePrefillPrefix = "prefix: chunk's time x causal pairs (chunk over its prefix) / pairs (chunk alone); the rows hold no prefix"

// GQAPrefill is the prefill attention of s from the first GQA prefill
// table that answers.
func (t *Tables) GQAPrefill(s PrefillShape) (cost.Estimate, bool) {
	return curve.First(t.GQAPrefills, s)
}
