package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
)

// PrefillKey is what a prefill attention table was measured for: the q/k
// and v head dims (GQA: both head_dim; MLA's un-absorbed prefill: 192 and
// 128), the KV dtype and the sliding window (0: none).
type PrefillKey struct {
	QKDim, VDim int
	KV          string // "bf16", "fp8": the KV cache's (GQA); bf16 for MLA's up-projected k/v
	Window      int
}

// PrefillPoint is one measured prefill attention call: one chunk of Chunk
// new tokens after Prefix cached ones, Heads and KVHeads per GPU.
type PrefillPoint struct {
	Heads, KVHeads, Chunk, Prefix int
	Latency                       unit.Seconds
	Row                           int
}

// PrefillTable is prefill attention latency by (chunk, kv_len = prefix +
// chunk) for each measured (heads, kv_heads) per GPU, one chunk a call:
// log-log between the measured points. calib gpu measures it with
// moecast's kernels (a grid of chunks and prefixes); calib from-trace
// writes it from a trace's prefill steps (one row per step, mostly at
// prefix 0).
type PrefillTable struct {
	curve.Table
	Key    PrefillKey
	series series2[[2]int]
}

// NewPrefillTable builds a prefill attention table.
func NewPrefillTable(name string, key PrefillKey, pts []PrefillPoint) (*PrefillTable, error) {
	p := make([]pt2[[2]int], len(pts))
	for i, q := range pts {
		if q.Heads <= 0 || q.KVHeads <= 0 || q.Chunk <= 0 || q.Prefix < 0 {
			return nil, curve.RowErrorf(q.Row, "heads, kv_heads and chunk must be positive, prefix not negative")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt2[[2]int]{key: [2]int{q.Heads, q.KVHeads}, a: float64(q.Chunk), b: float64(q.Prefix + q.Chunk),
			y: float64(q.Latency), row: q.Row}
	}
	s, loo, err := buildSeries2(p)
	if err != nil {
		return nil, err
	}
	// Above a chunk's longest measured kv_len the last segment is extended
	// linearly, each extra key costing at least its FLOPs at the series'
	// best measured rate (with a window, extra prefix adds no work: 0).
	// That takes a table that measured some chunk at two kv_len or more
	// (calib gpu's grid of prefixes); one with a single kv_len per chunk
	// clamps kv_len (noted): a traced table's rows lie on kv_len = chunk,
	// and a query between two of them then reads both chunks at their own
	// point (log-log along that line) rather than extending the shorter
	// chunk and clamping the longer.
	best := map[[2]int]float64{}
	for _, q := range pts {
		f := 2 * CausalPairs(q.Chunk, q.Prefix, key.Window) * float64(q.Heads) * float64(key.QKDim+key.VDim)
		k := [2]int{q.Heads, q.KVHeads}
		best[k] = max(best[k], f/float64(q.Latency))
	}
	extend := false
	for _, g := range s.grids {
		for j := range g.A() {
			extend = extend || g.Curve(j).Len() >= 2
		}
	}
	for i, g := range s.grids {
		h := s.keys[i]
		for j, chunk := range g.A() {
			slope := 0.0
			if key.Window == 0 && best[h] > 0 {
				slope = 2 * chunk * float64(h[0]) * float64(key.QKDim+key.VDim) / best[h]
			}
			if extend {
				g.Curve(j).SetAbove(curve.LinearAbove, slope)
			}
		}
	}
	t := &PrefillTable{Key: key, series: s}
	t.Init(name, []curve.Axis{{Name: "chunk"}, {Name: "kv_len", Extrapolated: extend,
		How: "last segment extended linearly in kv_len, each key at least its FLOPs at the series' best measured rate"}}, kernelNotes, loo)
	return t, nil
}

// Lookup answers a step's prefill attention for a measured (heads,
// kv_heads) per GPU, dims, KV dtype and window: the table's time for one
// chunk of the mean chunk length at the mean kv_len (prefix + chunk), times
// the chunks (one varlen launch runs them all: for several short chunks
// this is the time of as many one-chunk launches, an upper bound).
func (t *PrefillTable) Lookup(s PrefillShape) (cost.Estimate, bool) {
	k := t.Key
	if s.QKDim != k.QKDim || s.VDim != k.VDim || s.Window != k.Window || s.TopK > 0 || s.Chunks <= 0 || s.Tokens <= 0 ||
		prefillKV(s) != k.KV {
		return cost.Estimate{}, false
	}
	g := t.series.find([2]int{s.Heads, s.KVHeads})
	if g == nil {
		return cost.Estimate{}, false
	}
	chunk := float64(s.Tokens) / float64(s.Chunks)
	kv := float64(s.MeanKV)
	if kv < chunk {
		kv = chunk
	}
	r := g.At(chunk, kv)
	e := t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.ClampA, r.ClampB))
	n := unit.Seconds(s.Chunks)
	e.Time *= n
	e.Lo *= n
	e.Hi *= n
	return e, true
}

// prefillKV is the KV dtype name of a prefill shape: the KV cache's for GQA
// (KV), else bf16 for 2-byte K/V (MLA's up-projected k/v); other widths
// have no table.
func prefillKV(s PrefillShape) string {
	if s.KV != "" {
		return s.KV
	}
	if s.KVBytes == 2 {
		return "bf16"
	}
	return ""
}

// Heads lists the measured (heads, kv_heads) per GPU.
func (t *PrefillTable) Heads() [][2]int { return t.series.keys }
