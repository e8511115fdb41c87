package kernels

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
)

// GDNKey is what a Gated DeltaNet state-update table was measured for: the
// phase ("prefill": the chunked algorithm over the prompts' tokens,
// "decode": one token's recurrence per sequence) and the key and value head
// dims.
type GDNKey struct {
	Phase      string
	KDim, VDim int
}

// GDNPoint is one measured state-update kernel call on one rank: Seqs
// sequences of SeqLen new tokens each (decode: SeqLen 1), KHeads key heads
// and VHeads value heads per GPU.
type GDNPoint struct {
	KHeads, VHeads, Seqs, SeqLen int
	Latency                      unit.Seconds
	Row                          int
}

// GDNTable is the state-update kernel of a Gated DeltaNet layer by
// (tokens per sequence, sequences), one grid per measured (key heads,
// value heads) per GPU, log-log between the measured points. The perf
// database's gdn_perf rows (calib/perfdb_gdn.go) time the kernel alone:
// the chunked scan chunk_gated_delta_rule over batch x seq_len tokens
// (prefill), the fused recurrent decode over batch sequences (decode); the
// causal conv and the projections are other ops.
type GDNTable struct {
	curve.Table
	Key GDNKey
	Origin
	series series2[[2]int]
	later  later // the grids, when built on first use (NewGDNTableDeferred)
}

// NewGDNTable builds a Gated DeltaNet state-update table.
func NewGDNTable(name string, key GDNKey, pts []GDNPoint) (*GDNTable, error) {
	t, grids, err := newGDNTable(name, key, pts)
	if err != nil {
		return nil, err
	}
	return t, grids()
}

// NewGDNTableDeferred is NewGDNTable with the grids and their
// leave-one-out error built on first use (as NewGQATableDeferred): the
// embedded calibrations hold GDN rows that only a hybrid model's
// lookups read.
func NewGDNTableDeferred(name string, key GDNKey, pts []GDNPoint) (*GDNTable, error) {
	t, grids, err := newGDNTable(name, key, pts)
	if err != nil {
		return nil, err
	}
	t.later.set(name, grids)
	return t, nil
}

// newGDNTable checks pts and names the table; grids builds its series.
func newGDNTable(name string, key GDNKey, pts []GDNPoint) (*GDNTable, func() error, error) {
	p := make([]pt2[[2]int], len(pts))
	for i, q := range pts {
		if q.KHeads <= 0 || q.VHeads <= 0 || q.Seqs <= 0 || q.SeqLen <= 0 {
			return nil, nil, curve.RowErrorf(q.Row, "k_heads, v_heads, seqs and seq_len must be positive")
		}
		if key.Phase == "decode" && q.SeqLen != 1 {
			return nil, nil, curve.RowErrorf(q.Row, "a decode row runs one token per sequence: seq_len must be 1, got %d", q.SeqLen)
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, nil, err
		}
		p[i] = pt2[[2]int]{key: [2]int{q.KHeads, q.VHeads}, a: float64(q.SeqLen), b: float64(q.Seqs), y: float64(q.Latency), row: q.Row}
	}
	t := &GDNTable{Key: key}
	t.Init(name, axes("seq_len", "seqs"), kernelNotes, nil)
	return t, func() error {
		s, loo, err := buildSeries2(p)
		if err != nil {
			return err
		}
		t.series = s
		t.SetLOO(loo)
		return nil
	}, nil
}

// LOOError is the table's leave-one-out error (curve.Table.LOOError),
// after the deferred build.
func (t *GDNTable) LOOError() (float64, int) {
	t.later.do()
	return t.Table.LOOError()
}

// Lookup answers the state update of a GDN layer on one rank: s.Seqs
// sequences of s.Tokens/s.Seqs tokens each (prefill: the step's chunks;
// decode: one token each), for the table's phase, dims and measured
// (key heads, value heads). Above the measured sequences or tokens per
// sequence the table does not answer (the roofline does): the kernel's
// time there grows with work the rows do not show. Below them it clamps
// (noted): a kernel's fixed latency dominates there.
func (t *GDNTable) Lookup(s RecurrentShape) (cost.Estimate, bool) {
	k := t.Key
	phase := "prefill"
	if s.Chunk == 0 {
		phase = "decode"
	}
	if !s.GDN || phase != k.Phase || s.KDim != k.KDim || s.VDim != k.VDim || s.Seqs <= 0 || s.Tokens <= 0 {
		return cost.Estimate{}, false
	}
	t.later.do()
	g := t.series.find([2]int{s.KHeads, s.Heads})
	if g == nil {
		return cost.Estimate{}, false
	}
	seqLen := float64(s.Tokens) / float64(s.Seqs)
	if phase == "decode" {
		seqLen = 1
	}
	r := g.At(seqLen, float64(s.Seqs))
	if r.ClampA == curve.Above || r.ClampB == curve.Above {
		return cost.Estimate{}, false
	}
	return t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.ClampA, r.ClampB)), true
}

// Heads lists the measured (key heads, value heads) per GPU.
func (t *GDNTable) Heads() [][2]int { t.later.do(); return t.series.keys }

// GDN answers a Gated DeltaNet state update from the tables in policy
// order (the scenario's engine's own first: choose).
func (t *Tables) GDN(s RecurrentShape) (cost.Estimate, bool) {
	return choose(t.GDNs, s, s.Engine, (*GDNTable).Lookup)
}
