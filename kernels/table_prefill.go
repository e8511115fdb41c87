package kernels

import (
	"strings"
	"sync"
	"sync/atomic"

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
	Key PrefillKey
	// Origin: where the rows were measured (source.go); Tables.Prefill
	// puts the scenario's engine's tables first.
	Origin
	series series2[[2]int]
	// extendKV: kv_len above a chunk's range is extrapolated (a grid of
	// prefixes), not clamped (one kv_len per chunk).
	extendKV bool
	// notes caches the Source notes of answers given in another table's
	// stead (Tables.Prefill), so that building them allocates once.
	notesMu sync.Mutex
	notes   atomic.Pointer[map[altNoteKey]string]
	later   later // the grids, when built on first use (NewPrefillTableLazy)
}

// NewPrefillTableLazy is NewPrefillTable with everything but the name and
// key done on first use (as NewMoETableLazy).
func NewPrefillTableLazy(name string, key PrefillKey, load func() ([]PrefillPoint, error)) *PrefillTable {
	t := &PrefillTable{Key: key}
	t.Init(name, prefillAxes(false), kernelNotes, nil)
	setLoad(&t.later, name, load, func(pts []PrefillPoint) error {
		b, err := NewPrefillTable(name, key, pts)
		if err != nil {
			return err
		}
		// every reader of these waits for the build (later.do), but for
		// the name and key, which are the same (and the origin, which the
		// caller sets)
		t.Table, t.series, t.extendKV = b.Table, b.series, b.extendKV
		return nil
	})
	return t
}

// LOOError is the table's leave-one-out error (curve.Table.LOOError),
// after the deferred build.
func (t *PrefillTable) LOOError() (float64, int) {
	t.later.do()
	return t.Table.LOOError()
}

func prefillAxes(extend bool) []curve.Axis {
	return []curve.Axis{{Name: "chunk"}, {Name: "kv_len", Extrapolated: extend,
		How: "last segment extended linearly in kv_len, each key at least its FLOPs at the series' best measured rate"}}
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
	t := &PrefillTable{Key: key, series: s, extendKV: extend}
	t.Init(name, prefillAxes(extend), kernelNotes, loo)
	return t, nil
}

// Lookup answers a step's prefill attention for a measured (heads,
// kv_heads) per GPU, dims, KV dtype and window: the table's time for one
// chunk of the mean chunk length at the mean kv_len (prefix + chunk), times
// the chunks (one varlen launch runs them all: for several short chunks
// this is the time of as many one-chunk launches, an upper bound).
func (t *PrefillTable) Lookup(s PrefillShape) (cost.Estimate, bool) {
	e, _, ok := t.lookup(s, false)
	return e, ok
}

// lookup is Lookup, with the flags of the answer; atPrefix0 reads the
// table at kv_len = chunk (no cached prefix) whatever s.MeanKV is.
func (t *PrefillTable) lookup(s PrefillShape, atPrefix0 bool) (cost.Estimate, curve.Flags, bool) {
	k := t.Key
	if s.QKDim != k.QKDim || s.VDim != k.VDim || s.Window != k.Window || s.TopK > 0 || s.Chunks <= 0 || s.Tokens <= 0 ||
		prefillKV(s) != k.KV {
		return cost.Estimate{}, 0, false
	}
	t.later.do()
	g := t.series.find([2]int{s.Heads, s.KVHeads})
	if g == nil {
		return cost.Estimate{}, 0, false
	}
	chunk := float64(s.Tokens) / float64(s.Chunks)
	kv := float64(s.MeanKV)
	if kv < chunk || atPrefix0 {
		kv = chunk
	}
	r := g.At(chunk, kv)
	f := curve.FlagsOf(r.ClampA, r.ClampB)
	e := t.Estimate(r.Y, r.RowLo, r.RowHi, f)
	n := unit.Seconds(s.Chunks)
	e.Time *= n
	e.Lo *= n
	e.Hi *= n
	return e, f, true
}

// clampsKV reports whether an answer with flags f clamped kv_len (the
// prefix) above the table's measured range rather than extrapolating.
func (t *PrefillTable) clampsKV(f curve.Flags) bool { return f&curve.AboveB != 0 && !t.extendKV }

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
func (t *PrefillTable) Heads() [][2]int { t.later.do(); return t.series.keys }

// prefillAnswer is one table's answer to a prefill query.
type prefillAnswer struct {
	tb *PrefillTable
	e  cost.Estimate
	f  curve.Flags
}

// prefillChoose answers a prefill query from a stack of tables in policy
// order (source.go):
//
//  1. The first table that covers the shape answers, unless it is another
//     engine's and a later table of its class measured on the scenario's
//     engine (s.Engine) covers it too (choose's rule); an answer from
//     another engine's table says so in its note.
//  2. The perf database's prefill rows are one prompt each (prefix 0): a
//     chunk after a cached prefix is read there only by clamping kv_len
//     to the chunk, which drops the prefix's keys. When the chosen answer
//     clamps kv_len so and another table covers kv_len (calib gpu's grid
//     of prefixes: in range or extrapolated), that table answers, scaled
//     by chosen/covering at the chunk with no prefix (the nearest point
//     both cover: the engine's level, the covering table's growth with
//     the prefix); unscaled when the covering table does not read that
//     point. With no such table the clamped answer stands (its note says
//     so).
func prefillChoose(ts []*PrefillTable, s PrefillShape) (cost.Estimate, bool) {
	var buf [8]prefillAnswer
	c := buf[:0]
	for _, tb := range ts {
		if s.OwnEngineOnly && tb.yields(s.Engine) {
			continue
		}
		if e, f, ok := tb.lookup(s, false); ok {
			c = append(c, prefillAnswer{tb, e, f})
		}
	}
	if len(c) == 0 {
		return cost.Estimate{}, false
	}
	// 1: the policy's answer, moved to the front
	if o := &c[0].tb.Origin; o.yields(s.Engine) {
		for i := 1; i < len(c); i++ {
			if u := &c[i].tb.Origin; u.User == o.User && u.Engine == s.Engine {
				a := c[i]
				copy(c[1:i+1], c[:i])
				c[0] = a
				break
			}
		}
	}
	first := c[0]
	other := first.tb.yields(s.Engine)
	if first.tb.clampsKV(first.f) {
		// 2: a table that covers the prefix
		for _, a := range c[1:] {
			if a.tb.clampsKV(a.f) {
				continue
			}
			e := a.e
			kind := altCovering
			if b, _, ok := a.tb.lookup(s, true); ok && b.Time > 0 {
				// first's clamped answer is its value at no prefix
				r := first.e.Time / b.Time
				e.Time *= r
				e.Lo *= r
				e.Hi *= r
				kind = altScaled
			}
			e.Source.Note = a.tb.altNote(first.tb, a.f, kind, other, s.Engine)
			e.Source.Policy = a.tb.why[whyCovering]
			return e, true
		}
	}
	e := first.e
	e.Source.Policy = first.tb.whyFor(s.Engine)
	if other {
		e.Source.Note = first.tb.altNote(nil, first.f, altOtherEngine, true, s.Engine)
	}
	return e, true
}

// The ways Tables.Prefill answers in another table's stead.
const (
	altOtherEngine = iota // another engine's table: none of the scenario's engine covers the shape
	altScaled             // a table covering the prefix, scaled to the clamping table at no prefix
	altCovering           // a table covering the prefix, as it is
)

type altNoteKey struct {
	pref   *PrefillTable
	flags  curve.Flags
	kind   int
	other  bool
	engine string
}

// altNote is the Source note of an answer of t (flags f) given in pref's
// stead (kind), built once per combination: a lookup does not allocate.
func (t *PrefillTable) altNote(pref *PrefillTable, f curve.Flags, kind int, other bool, engine string) string {
	k := altNoteKey{pref, f, kind, other, engine}
	if m := t.notes.Load(); m != nil {
		if n, ok := (*m)[k]; ok {
			return n
		}
	}
	t.notesMu.Lock()
	defer t.notesMu.Unlock()
	old := t.notes.Load()
	if old != nil {
		if n, ok := (*old)[k]; ok {
			return n
		}
	}
	var parts []string
	if own := t.Estimate(0, 0, 0, f).Source.Note; own != "" {
		parts = append(parts, own)
	}
	if other {
		parts = append(parts, "no "+engine+" table covers this shape: "+otherEngineOf(pref, t)+"'s measured kernels answer")
	}
	switch kind {
	case altScaled:
		parts = append(parts, "the prefix is beyond "+pref.Name()+" (its rows: no cached prefix; it would clamp kv_len): this table's answer, scaled by the ratio "+pref.Name()+" / this table at the chunk with no prefix (the nearest point both cover)")
	case altCovering:
		parts = append(parts, "the prefix is beyond "+pref.Name()+" (its rows: no cached prefix; it would clamp kv_len): this table's answer as it is (the other table does not read the chunk with no prefix)")
	}
	n := strings.Join(parts, "; ")
	m := map[altNoteKey]string{k: n}
	if old != nil {
		for kk, v := range *old {
			m[kk] = v
		}
	}
	t.notes.Store(&m)
	return n
}

// otherEngineOf is the engine of the table answering in the scenario's
// engine's stead: pref (the clamping table) when another answers for it.
func otherEngineOf(pref, t *PrefillTable) string {
	if pref != nil {
		return pref.Engine
	}
	return t.Engine
}
