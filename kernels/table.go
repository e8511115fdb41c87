package kernels

// Calibration tables for kernel costs: the Lookup implementation that the
// calib package builds from a calibration file (docs/calibration.md).
//
// Every table answers only queries whose fixed keys (dtype, model dims) it
// was measured with, and whose rank split (moe_tp, ep; heads per GPU) is one
// of its measured series; along the measured axes (tokens, M, batch, KV
// length) it interpolates piecewise-linearly in log-log space (latency
// against size is close to a power law piecewise), is exact on measured
// points, and clamps with a "clamped: ..." note outside the measured range,
// except MoE tokens above the range, which extend the last segment
// linearly ("extrapolated: ..."). MoE series are made non-decreasing in
// tokens at load (monotone envelope); an fp8-KV MLA query no fp8-KV table
// covers is answered from a bf16-KV table with the KV read corrected.
// The interval of each Estimate is the table's leave-one-out interpolation
// error (the 90th percentile of |LOO prediction - measured| / measured over
// its interior points): Lo = t(1-e), Hi = t(1+e).
//
// Bytes and FLOPs of a table Estimate are zero: the caller (Costs) knows
// the op's traffic from its shape, and floors every table result at the
// op's DRAM streaming time.

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// Own notes of kernel tables, as curve.Table flags.
const (
	noteL2      = curve.FirstNote << iota // a source row used is L2-resident (warm one-layer replay)
	noteRouting                           // MoE: uniform routing mapped onto balanced-table tokens
	noteKVFP8                             // MLA: fp8-KV query answered from a bf16-KV table
	noteDeepEP                            // MoE: the rank computes only its dispatched pairs (DeepEP)

	// noteLegacyMLA is MLA tables' own use of noteRouting's bit (MLA
	// tables route nothing): the legacy collector's excess taken off.
	noteLegacyMLA = noteRouting
)

// kernelNotes are the words of noteL2, noteRouting, noteKVFP8 and
// noteDeepEP.
var kernelNotes = []string{
	"source rows L2-resident (one layer replayed warm); floored at DRAM streaming time by the caller",
	"routing: uniform-routing tokens mapped to the balanced-routing token count with the same distinct experts",
	kvFP8Note,
	"DeepEP dispatch: the rank computes only its T·k/ep pairs; rows at ep ranks and at 1 rank split into the experts' share g(T)/ep and the per-token part O(T/ep) of the received tokens (MoETable.Lookup)",
}

// mlaNotes are MLA tables' notes: kernelNotes with noteLegacyMLA's words
// in place of the routing note.
var mlaNotes = []string{kernelNotes[0], legacyMLANote, kernelNotes[2], kernelNotes[3]}

// axes names a table's measured axes for curve.Table.Init.
func axes(names ...string) []curve.Axis {
	out := make([]curve.Axis, len(names))
	for i, n := range names {
		out[i] = curve.Axis{Name: n}
	}
	return out
}

// series1 groups points by an integer key into log-log curves.
type series1[K comparable] struct {
	keys   []K
	curves []*curve.Curve
}

type pt1[K comparable] struct {
	key  K
	x, y float64
	row  int
}

func buildSeries1[K comparable](pts []pt1[K]) (series1[K], []float64, error) {
	var s series1[K]
	idx := map[K]int{}
	var xs, ys [][]float64
	var rows [][]int
	for _, p := range pts {
		i, ok := idx[p.key]
		if !ok {
			i = len(s.keys)
			idx[p.key] = i
			s.keys = append(s.keys, p.key)
			xs, ys, rows = append(xs, nil), append(ys, nil), append(rows, nil)
		}
		xs[i], ys[i], rows[i] = append(xs[i], p.x), append(ys[i], p.y), append(rows[i], p.row)
	}
	var loo []float64
	for i := range s.keys {
		sortByX(xs[i], ys[i], rows[i])
		c, err := curve.New(xs[i], ys[i], rows[i], true)
		if err != nil {
			return s, nil, fmt.Errorf("series %v: %w", s.keys[i], err)
		}
		s.curves = append(s.curves, c)
		loo = c.LOO(loo)
	}
	return s, loo, nil
}

func (s *series1[K]) find(k K) *curve.Curve {
	for i, key := range s.keys {
		if key == k {
			return s.curves[i]
		}
	}
	return nil
}

// series2 groups points by a key into grids over (a, b).
type series2[K comparable] struct {
	keys  []K
	grids []*curve.Grid
}

type pt2[K comparable] struct {
	key     K
	a, b, y float64
	row     int
}

// buildSeries2 groups pts by key (in the order keys first appear), each
// key's points by a (ascending) into curves over b (ascending, points of
// equal b in their order in pts), and returns the grids and every grid's
// leave-one-out errors in that order. One stable sort of the points by
// (key, a, b) makes the groups: a and b come from integers (never NaN
// nor -0), so its order is the one grouping by maps, then sorting each
// group's b stably, gave (a table's first use spent a third of its build
// in those maps).
func buildSeries2[K comparable](pts []pt2[K]) (series2[K], []float64, error) {
	var s series2[K]
	type ord struct {
		key  int // the key's place in s.keys
		a, b float64
		i    int // the point's place in pts
	}
	at := map[K]int{}
	o := make([]ord, len(pts))
	for i, p := range pts {
		k, ok := at[p.key]
		if !ok {
			k = len(s.keys)
			at[p.key] = k
			s.keys = append(s.keys, p.key)
		}
		o[i] = ord{key: k, a: p.a, b: p.b, i: i}
	}
	slices.SortStableFunc(o, func(p, q ord) int {
		if c := cmp.Compare(p.key, q.key); c != 0 {
			return c
		}
		if c := cmp.Compare(p.a, q.a); c != 0 {
			return c
		}
		return cmp.Compare(p.b, q.b)
	})
	x, y, rows := make([]float64, len(pts)), make([]float64, len(pts)), make([]int, len(pts))
	for i, q := range o {
		p := &pts[q.i]
		x[i], y[i], rows[i] = p.b, p.y, p.row
	}
	var loo []float64
	for lo := 0; lo < len(o); {
		k := o[lo].key
		var as []float64
		var curves []*curve.Curve
		for lo < len(o) && o[lo].key == k {
			a, hi := o[lo].a, lo+1
			for hi < len(o) && o[hi].key == k && o[hi].a == a {
				hi++
			}
			// each curve its own slices (full slice expressions: New
			// may keep them)
			c, err := curve.New(x[lo:hi:hi], y[lo:hi:hi], rows[lo:hi:hi], true)
			if err != nil {
				return s, nil, fmt.Errorf("series %v at %g: %w", s.keys[k], a, err)
			}
			as, curves = append(as, a), append(curves, c)
			lo = hi
		}
		g, err := curve.NewGrid(as, curves, true)
		if err != nil {
			return s, nil, fmt.Errorf("series %v: %w", s.keys[k], err)
		}
		s.grids = append(s.grids, g)
		loo = g.LOO(loo)
	}
	return s, loo, nil
}

func (s *series2[K]) find(k K) *curve.Grid {
	for i, key := range s.keys {
		if key == k {
			return s.grids[i]
		}
	}
	return nil
}

func sortByX(x, y []float64, rows []int) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return x[idx[i]] < x[idx[j]] })
	x2, y2, r2 := append([]float64(nil), x...), append([]float64(nil), y...), append([]int(nil), rows...)
	for i, j := range idx {
		x[i], y[i], rows[i] = x2[j], y2[j], r2[j]
	}
}

func checkLatency(row int, l unit.Seconds) error {
	if !(l > 0) || math.IsInf(float64(l), 0) {
		return curve.RowErrorf(row, "latency must be positive and finite, got %v", float64(l))
	}
	return nil
}

// ---- GEMM ----

// GEMMPoint is one measured GEMM: Y[M x N] = X[M x K] W[K x N].
type GEMMPoint struct {
	M, N, K int
	Latency unit.Seconds
	Row     int // 1-based table row
}

// GEMMTable is GEMM latency by (M, N, K) for one weight dtype, interpolated
// over M for each measured (N, K).
type GEMMTable struct {
	curve.Table
	Origin
	Dtype  string // weight format name as in dtype.Format.Name ("bf16", "fp8-b128", "int4-g32")
	series series1[[2]int]
	later  later // the curves, when built on first use (NewGEMMTableLazy)
}

// NewGEMMTableLazy is NewGEMMTable with everything but the name and dtype
// done on first use (as NewMoETableLazy).
func NewGEMMTableLazy(name, weightDtype string, load func() ([]GEMMPoint, error)) *GEMMTable {
	t := &GEMMTable{Dtype: weightDtype}
	t.Init(name, axes("m"), kernelNotes, nil)
	setLoad(&t.later, name, load, func(pts []GEMMPoint) error {
		b, err := NewGEMMTable(name, weightDtype, pts)
		if err != nil {
			return err
		}
		// every reader of these waits for the build (later.do), but for
		// the name and dtype, which are the same
		t.Table, t.series = b.Table, b.series
		return nil
	})
	return t
}

// LOOError is the table's leave-one-out error (curve.Table.LOOError),
// after the deferred build.
func (t *GEMMTable) LOOError() (float64, int) {
	t.later.do()
	return t.Table.LOOError()
}

// NewGEMMTable builds a GEMM table named name (the Source.Table string).
func NewGEMMTable(name, weightDtype string, pts []GEMMPoint) (*GEMMTable, error) {
	p := make([]pt1[[2]int], len(pts))
	for i, q := range pts {
		if q.M <= 0 || q.N <= 0 || q.K <= 0 {
			return nil, curve.RowErrorf(q.Row, "m, n, k must be positive")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt1[[2]int]{key: [2]int{q.N, q.K}, x: float64(q.M), y: float64(q.Latency), row: q.Row}
	}
	s, loo, err := buildSeries1(p)
	if err != nil {
		return nil, err
	}
	t := &GEMMTable{Dtype: weightDtype, series: s}
	t.Init(name, axes("m"), kernelNotes, loo)
	return t, nil
}

// Lookup answers a GEMM of the table's dtype and a measured (N, K).
func (t *GEMMTable) Lookup(s GEMMShape) (cost.Estimate, bool) {
	if s.Weight.Name != t.Dtype {
		return cost.Estimate{}, false
	}
	t.later.do()
	c := t.series.find([2]int{s.N, s.K})
	if c == nil || s.M <= 0 {
		return cost.Estimate{}, false
	}
	r := c.At(float64(s.M))
	e := t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.Clamp, curve.Inside))
	if s.Count > 1 {
		e = e.Scale(float64(s.Count))
	}
	return e, true
}

// ---- MoE ----

// MoEKey is what a MoE table was measured for (aiconfigurator moe_perf
// columns): the expert weight quantization, the model's expert count, top-k,
// hidden and full (unsplit) expert FFN width, and the routing distribution.
type MoEKey struct {
	Quant        string // "int4_wo" (W4A16), "fp8_block", "fp8" (per-tensor), "nvfp4", "bf16", "mxfp4", "mxfp4_mxfp8"
	Experts      int
	TopK         int
	Hidden       int
	Inter        int    // moe_intermediate_size before the expert-TP split
	Distribution string // "balanced", "uniform", "power_law_1.01", ...
}

// MoEPoint is one measured MoE layer on one GPU.
type MoEPoint struct {
	Tokens, MoETP, EP int
	Latency           unit.Seconds
	// L2Resident marks a row whose per-GPU weight working set fits in the
	// source GPU's L2 (a warm one-layer replay is faster than a real step).
	L2Resident bool
	Row        int
}

// MoETable is MoE layer latency by tokens for each measured (moe_tp, ep).
type MoETable struct {
	curve.Table
	Origin
	Key    MoEKey
	series series1[[2]int]
	l2     []bool // l2[row]: row marked L2-resident
	raised []int  // rows raised by the monotone envelope
	later  later  // the curves, when built on first use (NewMoETableDeferred)
}

// monotoneEnvelope raises, within each series, every point's latency to
// the largest latency measured at fewer tokens (a running max along
// tokens), and returns the rows it raised in row order. A MoE layer does
// not get faster with more tokens; upstream rows that do (DeepSeek-V3 fp8
// on H200 TP8: 565 us at 768 tokens, 473 us at 1024) are measurement
// noise or a kernel-config switch, and would make a larger batch cheaper.
func monotoneEnvelope(p []pt1[[2]int]) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		pa, pb := p[idx[a]], p[idx[b]]
		if pa.key != pb.key {
			if pa.key[0] != pb.key[0] {
				return pa.key[0] < pb.key[0]
			}
			return pa.key[1] < pb.key[1]
		}
		return pa.x < pb.x
	})
	var raised []int
	for j := 1; j < len(idx); j++ {
		prev, cur := &p[idx[j-1]], &p[idx[j]]
		if prev.key == cur.key && cur.y < prev.y {
			cur.y = prev.y
			raised = append(raised, cur.row)
		}
	}
	sort.Ints(raised)
	return raised
}

// Raised lists the rows whose latency the monotone envelope raised (see
// NewMoETable); for a lazy table (NewMoETableLazy), once it is built.
func (t *MoETable) Raised() []int { return t.raised }

// NewMoETable builds a MoE table. Within each (moe_tp, ep) series the
// latencies are made non-decreasing in tokens (monotone envelope: each
// row raised to the running max; Raised lists the rows changed).
func NewMoETable(name string, key MoEKey, pts []MoEPoint) (*MoETable, error) {
	t, curves, err := newMoETable(name, key, pts)
	if err != nil {
		return nil, err
	}
	return t, curves()
}

// NewMoETableDeferred is NewMoETable with the curves and their
// leave-one-out error built on first use (a lookup that matches the key,
// LOOError, Series): for the tables of the embedded calibrations, of which
// a scenario reads a few (DeferredTables). The rows are checked and the
// envelope applied now (Raised is known); a failure of the deferred build
// is a programmer error (the embedded tables are built eagerly by a test)
// and panics.
func NewMoETableDeferred(name string, key MoEKey, pts []MoEPoint) (*MoETable, error) {
	t, curves, err := newMoETable(name, key, pts)
	if err != nil {
		return nil, err
	}
	t.later.set(name, curves)
	return t, nil
}

// NewMoETableLazy is NewMoETable with everything but the name and key
// done on first use (a lookup that matches the key, LOOError, Series):
// load gives the points then (an embedded calibration reads the table's
// rows only when a scenario asks for its key). Raised is known after
// that. The embedded tables are built eagerly by a test; a failure here
// is a programmer error and panics (as NewMoETableDeferred's).
func NewMoETableLazy(name string, key MoEKey, load func() ([]MoEPoint, error)) *MoETable {
	t := &MoETable{Key: key}
	t.Init(name, moeAxes, kernelNotes, nil)
	setLoad(&t.later, name, load, func(pts []MoEPoint) error {
		curves, err := t.points(pts)
		if err != nil {
			return err
		}
		return curves()
	})
	return t
}

var moeAxes = []curve.Axis{{Name: "tokens", Extrapolated: true, How: "last segment extended linearly in tokens"}}

func newMoETable(name string, key MoEKey, pts []MoEPoint) (*MoETable, func() error, error) {
	t := &MoETable{Key: key}
	curves, err := t.points(pts)
	if err != nil {
		return nil, nil, err
	}
	t.Init(name, moeAxes, kernelNotes, nil)
	return t, curves, nil
}

// points checks the key and points of t, marks its L2-resident rows and
// applies the monotone envelope; curves builds the series.
func (t *MoETable) points(pts []MoEPoint) (curves func() error, err error) {
	key := t.Key
	if key.Experts <= 0 || key.TopK <= 0 || key.TopK > key.Experts {
		return nil, fmt.Errorf("moe table: experts %d and topk %d must be positive with topk <= experts", key.Experts, key.TopK)
	}
	p := make([]pt1[[2]int], len(pts))
	for i, q := range pts {
		if q.Tokens <= 0 || q.MoETP <= 0 || q.EP <= 0 {
			return nil, curve.RowErrorf(q.Row, "tokens, moe_tp and ep must be positive")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt1[[2]int]{key: [2]int{q.MoETP, q.EP}, x: float64(q.Tokens), y: float64(q.Latency), row: q.Row}
		if q.L2Resident {
			t.l2 = markRow(t.l2, q.Row)
		}
	}
	t.raised = monotoneEnvelope(p)
	return func() error {
		s, loo, err := buildSeries1(p)
		if err != nil {
			return err
		}
		t.series = s
		// Above the measured tokens the layer is compute-bound: extend the
		// last segment linearly in tokens (never decreasing) instead of
		// clamping, which would price 2x the largest measured batch as 1x.
		for _, c := range s.curves {
			c.SetAbove(curve.LinearAbove, 0)
		}
		t.SetLOO(loo)
		return nil
	}, nil
}

// LOOError is the table's leave-one-out error (curve.Table.LOOError),
// after the deferred build.
func (t *MoETable) LOOError() (float64, int) {
	t.later.do()
	return t.Table.LOOError()
}

// MoEQuant maps a weight format to the quant names of MoE tables
// (aiconfigurator moe_dtype): W4A16 INT4 of any group size is "int4_wo".
func MoEQuant(f dtype.Format) string {
	switch {
	case f.Bits == 4 && f.GroupSize == 16 && f.Compute == dtype.FP4:
		// NVFP4 (ModelOpt "nvfp4", compressed-tensors "fp4-g16" W4A4)
		return "nvfp4"
	case f.Name == "mxfp4-a8":
		// MXFP4 weights, MXFP8 activations (aiconfigurator w4a8_mxfp4_mxfp8)
		return "mxfp4_mxfp8"
	case strings.HasPrefix(f.Name, "int4"):
		return "int4_wo"
	case f.Name == "fp8":
		// static per-tensor fp8 (ModelOpt FP8): aiconfigurator's "fp8"
		return "fp8"
	case strings.HasPrefix(f.Name, "fp8"):
		return "fp8_block"
	}
	return f.Name
}

// UniformDistinctExperts is the expected number of distinct experts that T
// tokens touch when each picks k of E experts uniformly at random:
// E (1 - (1 - k/E)^T).
func UniformDistinctExperts(tokens float64, experts, topk int) float64 {
	e := float64(experts)
	return e * (1 - math.Pow(1-float64(topk)/e, tokens))
}

// Lookup answers a MoE layer when a table of the same quant, dims and a
// measured (moe_tp, ep) exists and the table's routing is balanced or
// uniform (the sim's routing model is uniform).
//
// Correction for balanced routing (aiconfigurator's "balanced" sends token t
// to experts (t*S/T + k*S) mod E with S = E/topk: topk*T distinct experts,
// spread evenly over the EP ranks, for T < S and all E from T = S). The
// query's distinct experts D are s.ExpertsTouched x EP when the caller sets
// ExpertsTouched (sim: the most-loaded EP rank's distinct experts, so D
// includes routing imbalance), else uniform routing's mean
// E(1-(1-k/E)^T). The table is read at T' = min(D, E)/k, the token count
// whose balanced routing touches as many experts per rank (the weight-bound
// part), plus the table's own growth above S tokens, where every expert is
// already read (the compute part):
//
//	t(T) = f(T') + max(0, f(T) - f(S))   for T > S;   t(T) = f(T') otherwise.
//
// Without ExpertsTouched the result is also capped at f(T): uniform routing
// on average reads no more experts than balanced routing at the same tokens
// (the cap only acts where the table is noisy). With it, T' may exceed T:
// the busiest rank of a random routing reads more experts than any rank of
// a perfectly balanced one.
func (t *MoETable) Lookup(s MoEShape) (cost.Estimate, bool) {
	return t.lookup(nil, s)
}

// lookup is Lookup with the table's power-law siblings, by distribution
// (Tables.skewed, linked by Tables.Rank): MoEShape.Routing reads them.
// The links belong to the Tables that holds the table, not to the table:
// one table is shared by every selection of a cached calibration, which
// may run in parallel.
func (t *MoETable) lookup(skewed map[string]*MoETable, s MoEShape) (cost.Estimate, bool) {
	k := t.Key
	if MoEQuant(s.Weight) != k.Quant || s.Experts != k.Experts || s.TopK != k.TopK || s.Hidden != k.Hidden {
		return cost.Estimate{}, false
	}
	if s.Inter*max(1, s.MoETP) != k.Inter {
		return cost.Estimate{}, false
	}
	if k.Distribution != "balanced" && k.Distribution != "uniform" {
		return cost.Estimate{}, false
	}
	tp, ep := max(1, s.MoETP), max(1, s.EP)
	if u := skewed[s.Routing]; u != nil && s.Routing != "" && !s.DeepEP {
		if e, ok := u.skewedRead(tp, ep, s); ok {
			return e, true
		}
	}
	c, T, ok := t.seriesAt(tp, ep, s)
	if !ok {
		return cost.Estimate{}, false
	}
	r := t.at(c, T, s.ExpertsTouched, ep)
	if s.DeepEP && ep > 1 {
		if c1 := t.series.find([2]int{tp, 1}); c1 != nil {
			if d, ok := t.dispatched(c, c1, T, s.ExpertsTouched, ep); ok && d.y < r.y {
				d.flags |= noteDeepEP
				r = d
			}
		}
	}
	return t.Estimate(r.y, r.lo, r.hi, r.flags), true
}

// seriesAt is t's curve at the layer's TP x EP split and the tokens it is
// read at (the DP group's tokens where given, else the rank's); false where
// the table has no such split or there are no tokens.
func (t *MoETable) seriesAt(tp, ep int, s MoEShape) (*curve.Curve, float64, bool) {
	t.later.do()
	c := t.series.find([2]int{tp, ep})
	if c == nil {
		return nil, 0, false
	}
	tokens := s.GlobalTokens
	if tokens <= 0 {
		tokens = s.Tokens
	}
	if tokens <= 0 {
		return nil, 0, false
	}
	return c, float64(tokens), true
}

// skewedNote is the note of a read of a power-law table (skewedRead).
const skewedNote = "routing: the perf database's power-law rows (its collector's skewed routing, the busiest EP rank measured), read at the layer's tokens as aiconfigurator's SDK reads them"

// skewedRead reads t, a power-law routing table, at the layer's tokens:
// the rows' own routing model replaces the uniform-routing remap of the
// balanced rows. aiconfigurator's collector draws the tokens per expert
// from a bounded power law and swaps the most loaded EP rank's experts
// onto the measured rank (collector/helper.py
// _generate_power_law_distribution @ 095f58a), so a row is the slowest
// rank's layer, as a step waits for.
func (t *MoETable) skewedRead(tp, ep int, s MoEShape) (cost.Estimate, bool) {
	c, T, ok := t.seriesAt(tp, ep, s)
	if !ok {
		return cost.Estimate{}, false
	}
	r := c.At(T)
	e := t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.Clamp, curve.Inside)|t.l2Flag(r.RowLo, r.RowHi))
	if e.Source.Note == "" {
		e.Source.Note = skewedNote
	} else {
		e.Source.Note += "; " + skewedNote
	}
	return e, true
}

// moeRead is one read of a MoE table: the latency (us), the rows used and
// the flags.
type moeRead struct {
	y      float64
	lo, hi int
	flags  curve.Flags
}

// at reads series c (the rows of ep ranks) at T tokens entering the layer
// across the DP group, with touched the busiest rank's distinct experts (0:
// uniform routing's mean), under the balanced-routing correction above.
func (t *MoETable) at(c *curve.Curve, T, touched float64, ep int) moeRead {
	k := t.Key
	if k.Distribution == "uniform" {
		r := c.At(T)
		return moeRead{r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.Clamp, curve.Inside) | t.l2Flag(r.RowLo, r.RowHi)}
	}
	S := float64(k.Experts) / float64(k.TopK)
	D, capped := UniformDistinctExperts(T, k.Experts, k.TopK), true
	if touched > 0 {
		D, capped = math.Min(touched*float64(ep), float64(k.Experts)), false
	}
	Tp := D / float64(k.TopK)
	if math.Abs(Tp-T) <= 1e-9*T { // e.g. T = 1, EP = 1: both routings touch topk experts
		Tp = T
	}
	r := c.At(Tp)
	y := r.Y
	lo, hi := r.RowLo, r.RowHi
	flags := curve.FlagsOf(r.Clamp, curve.Inside)
	rt := c.At(T)
	if T > S {
		rs := c.At(S)
		if d := rt.Y - rs.Y; d > 0 {
			y += d
		}
		lo, hi = min(lo, rt.RowLo, rs.RowLo), max(hi, rt.RowHi, rs.RowHi)
		flags |= curve.FlagsOf(rt.Clamp, curve.Inside)
	}
	if capped && y > rt.Y { // noise in the table below S tokens
		y = rt.Y
		lo, hi = min(lo, rt.RowLo), max(hi, rt.RowHi)
	}
	if Tp != T {
		flags |= noteRouting
	}
	flags |= t.l2Flag(r.RowLo, r.RowHi)
	return moeRead{y, lo, hi, flags}
}

// dispatched is the layer on one of ep ranks whose tokens arrive by an
// expert-parallel dispatch (DeepEP): the rank computes only the
// token-expert pairs routed to its experts, about T·k/ep of them, where
// the table's rows at ep ranks replay vLLM's fused_experts over all T
// tokens with an expert map (aiconfigurator collector/vllm/collect_moe.py:
// every rank sees the DP group's tokens and masks the experts it does not
// hold). The rows at ep ranks (cE) and at one rank (c1) at the same tokens
// split each row into a part that every rank pays per token entering it
// (activation quantisation, align/sort, masked output, sum: O(T)) and the
// experts' part, which the ep ranks share (g(T)/ep, their weights and
// FLOPs):
//
//	t_ep(T) = O(T) + g(T)/ep,  t_1(T) = O(T) + g(T)
//	g(T) = (t_1(T) - t_ep(T)) / (1 - 1/ep),  O = t_ep - g/ep  (each >= 0)
//
// and a dispatched rank pays the experts' part at T and the per-token part
// of the T/ep tokens' pairs it receives: g(T)/ep + O(T/ep).
func (t *MoETable) dispatched(cE, c1 *curve.Curve, T, touched float64, ep int) (moeRead, bool) {
	e := float64(ep)
	d1 := math.Min(touched*e, float64(t.Key.Experts))
	if touched <= 0 {
		d1 = 0
	}
	rE, r1 := t.at(cE, T, touched, ep), t.at(c1, T, d1, 1)
	g := math.Max(0, (r1.y-rE.y)/(1-1/e))
	R := math.Max(1, T/e)
	qE, q1 := t.at(cE, R, 0, ep), t.at(c1, R, 0, 1)
	gR := math.Max(0, (q1.y-qE.y)/(1-1/e))
	o := math.Max(0, qE.y-gR/e)
	y := g/e + o
	if !(y > 0) {
		return moeRead{}, false
	}
	lo, hi := min(rE.lo, r1.lo, qE.lo, q1.lo), max(rE.hi, r1.hi, qE.hi, q1.hi)
	return moeRead{y, lo, hi, rE.flags | r1.flags | qE.flags | q1.flags}, true
}

func (t *MoETable) l2Flag(lo, hi int) curve.Flags { return l2Flag(t.l2, lo, hi) }

func markRow(rows []bool, row int) []bool {
	for len(rows) <= row {
		rows = append(rows, false)
	}
	rows[row] = true
	return rows
}

// l2Flag is noteL2 when row lo or hi is marked L2-resident.
func l2Flag(rows []bool, lo, hi int) curve.Flags {
	if (lo >= 0 && lo < len(rows) && rows[lo]) || (hi >= 0 && hi < len(rows) && rows[hi]) {
		return noteL2
	}
	return 0
}

// Series lists the measured (moe_tp, ep) pairs and their token ranges.
func (t *MoETable) Series() (splits [][2]int, lo, hi []float64, n []int) {
	t.later.do()
	for i, key := range t.series.keys {
		a, b := t.series.curves[i].Range()
		splits, lo, hi, n = append(splits, key), append(lo, a), append(hi, b), append(n, t.series.curves[i].Len())
	}
	return
}

// ---- MLA ----

// MLAKey is what an MLA module table was measured for.
type MLAKey struct {
	GEMMDtype  string // dtype of the projections ("bf16", "nvfp4")
	KV         string // KV cache dtype ("bf16", "fp8")
	KVLoRARank int
	QKRopeDim  int
	// Model dims of the measured module (0: not recorded, not checked).
	Hidden, QLoRARank, QKNopeDim, VHeadDim int
}

// dimOK is false when both a table and a query know a dim and they differ.
func dimOK(table, query int) bool { return table == 0 || query == 0 || table == query }

// MLAPoint is one measured MLA decode module.
type MLAPoint struct {
	Heads, Batch, KVLen int
	Latency             unit.Seconds
	L2Resident          bool
	Row                 int
}

// MLATable is MLA module latency by (batch, KV length) for each measured
// heads-per-GPU count.
type MLATable struct {
	curve.Table
	Origin
	Key MLAKey
	// MemBW is the peak DRAM bandwidth of the GPU the table was measured
	// on (0: unknown). It prices the KV read saved when an fp8-KV query is
	// answered from this bf16-KV table (Tables.MLAModule).
	MemBW unit.BytesPerSecond
	// LegacyCollector marks rows collected by the perf database's legacy
	// MLA collector (the native norm/rotary chain): a lookup takes its
	// measured excess off (LegacyMLAOverhead) unless the query keeps it
	// (MLAShape.KeepCollectorBias). calib sets it (calib.LegacyMLA).
	LegacyCollector bool
	series          series2[int]
	l2              []bool // l2[row]: row marked L2-resident
	later           later  // the grids, when built on first use (NewMLATableLazy)
}

// NewMLATableLazy is NewMLATable with everything but the name, key and
// MemBW done on first use (as NewMoETableLazy).
func NewMLATableLazy(name string, key MLAKey, memBW unit.BytesPerSecond, load func() ([]MLAPoint, error)) *MLATable {
	t := &MLATable{Key: key, MemBW: memBW}
	t.Init(name, axes("batch", "kv_len"), mlaNotes, nil)
	setLoad(&t.later, name, load, func(pts []MLAPoint) error {
		b, err := NewMLATable(name, key, pts)
		if err != nil {
			return err
		}
		// every reader of these waits for the build (later.do), but for
		// the name, key and MemBW, which are the same
		t.Table, t.series, t.l2 = b.Table, b.series, b.l2
		return nil
	})
	return t
}

// LOOError is the table's leave-one-out error (curve.Table.LOOError),
// after the deferred build.
func (t *MLATable) LOOError() (float64, int) {
	t.later.do()
	return t.Table.LOOError()
}

// NewMLATable builds an MLA module table.
func NewMLATable(name string, key MLAKey, pts []MLAPoint) (*MLATable, error) {
	p := make([]pt2[int], len(pts))
	t := &MLATable{Key: key}
	for i, q := range pts {
		if q.Heads <= 0 || q.Batch <= 0 || q.KVLen <= 0 {
			return nil, curve.RowErrorf(q.Row, "heads, batch and kv_len must be positive")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt2[int]{key: q.Heads, a: float64(q.Batch), b: float64(q.KVLen), y: float64(q.Latency), row: q.Row}
		if q.L2Resident {
			t.l2 = markRow(t.l2, q.Row)
		}
	}
	s, loo, err := buildSeries2(p)
	if err != nil {
		return nil, err
	}
	t.series = s
	t.Init(name, axes("batch", "kv_len"), mlaNotes, loo)
	return t, nil
}

// Lookup answers the MLA module for a measured heads-per-GPU count and the
// table's model dims (kv_lora_rank, qk_rope_dim, and hidden, q_lora_rank,
// qk_nope_dim, v_head_dim where both sides know them: GLM-5 shares
// DeepSeek-V3's latent and rope widths but not its projections). The shape
// carries no projection dtype, so only bf16-projection tables answer (MLA
// attention stays bf16 in the shipped models but DeepSeek-V3's fp8).
func (t *MLATable) Lookup(s MLAShape) (cost.Estimate, bool) {
	r, flags, ok := t.lookup(s)
	if !ok {
		return cost.Estimate{}, false
	}
	d := t.legacyExcess(s, s.KV)
	if d > 0 {
		flags |= noteLegacyMLA
	}
	return shiftDown(t.Estimate(r.Y, r.RowLo, r.RowHi, flags), d), true
}

// covers reports whether Lookup answers s; coversFP8FromBF16 whether
// lookupFP8FromBF16 does.
func (t *MLATable) covers(s MLAShape) bool {
	_, _, ok := t.lookup(s)
	return ok
}

func (t *MLATable) coversFP8FromBF16(s MLAShape) bool {
	_, ok := t.lookupFP8FromBF16(s)
	return ok
}

func (t *MLATable) lookup(s MLAShape) (curve.GridResult, curve.Flags, bool) {
	k := t.Key
	if k.GEMMDtype != "bf16" || k.KV != s.KV.String() || s.KVLoRARank != k.KVLoRARank || s.QKRopeDim != k.QKRopeDim ||
		!dimOK(k.Hidden, s.Hidden) || !dimOK(k.QLoRARank, s.QLoRARank) || !dimOK(k.QKNopeDim, s.QKNopeDim) || !dimOK(k.VHeadDim, s.VHeadDim) {
		return curve.GridResult{}, 0, false
	}
	t.later.do()
	g := t.series.find(s.Heads)
	if g == nil || s.Batch <= 0 || s.Context <= 0 {
		return curve.GridResult{}, 0, false
	}
	r := g.At(float64(s.Batch), float64(s.Context))
	flags := curve.FlagsOf(r.ClampA, r.ClampB)
	flags |= l2Flag(t.l2, r.RowLo, r.RowHi)
	return r, flags, true
}

const kvFP8Note = "kv fp8: no fp8-KV series covers the query; bf16-KV module time used, less the KV read saved " +
	"(batch x kv_len x (kv_lora_rank + qk_rope_dim) x 1 B at the table GPU's peak DRAM bandwidth, at most half the time)"

// lookupFP8FromBF16 answers an fp8-KV query from this table's bf16-KV
// series when it covers the query with KV = bf16:
//
//	t_fp8 = t_bf16 - min(t_bf16/2, B x L x (kv_lora_rank + qk_rope_dim) x (2 - 1) B / BW_peak)
//
// The subtraction is the bf16 - fp8 byte difference of the latent KV read
// at peak bandwidth, i.e. at most the time the read can save (a real read
// runs below peak), and never more than half the module (the read is at
// most the whole module, and fp8 halves it). Lo and Hi shift by the same
// amount. With MemBW unknown the bf16 time is used as is (conservative).
func (t *MLATable) lookupFP8FromBF16(s MLAShape) (cost.Estimate, bool) {
	if s.KV != dtype.KVFP8 {
		return cost.Estimate{}, false
	}
	q := s
	q.KV = dtype.KVBF16
	r, flags, ok := t.lookup(q)
	if !ok {
		return cost.Estimate{}, false
	}
	d := t.legacyExcess(s, dtype.KVBF16)
	if d > 0 {
		flags |= noteLegacyMLA
	}
	e := shiftDown(t.Estimate(r.Y, r.RowLo, r.RowHi, flags|noteKVFP8), d)
	r.Y = float64(e.Time)
	if t.MemBW > 0 {
		saved := float64(s.Batch) * float64(s.Context) * float64(s.KVLoRARank+s.QKRopeDim) *
			(dtype.KVBF16.Bytes() - dtype.KVFP8.Bytes()) / float64(t.MemBW)
		d := unit.Seconds(math.Min(saved, r.Y/2))
		e.Time -= d
		e.Lo = max(0, e.Lo-d)
		e.Hi -= d
	}
	return e, true
}

// Heads lists the measured heads-per-GPU counts.
func (t *MLATable) Heads() []int { t.later.do(); return t.series.keys }

// ---- GQA ----

// GQAKey is what a GQA attention table was measured for.
type GQAKey struct {
	HeadDim int
	KV      string // KV cache dtype ("bf16", "fp8")
}

// GQAPoint is one measured GQA decode attention.
type GQAPoint struct {
	Heads, KVHeads, Batch, KVLen int
	Latency                      unit.Seconds
	Row                          int
}

// GQATable is GQA attention latency by (batch, KV length) for each measured
// (heads, kv_heads) per GPU.
type GQATable struct {
	curve.Table
	Origin
	Key    GQAKey
	series series2[[2]int]
	later  later // the grids, when built on first use (NewGQATableDeferred)
}

// NewGQATable builds a GQA table.
func NewGQATable(name string, key GQAKey, pts []GQAPoint) (*GQATable, error) {
	t, grids, err := newGQATable(name, key, pts)
	if err != nil {
		return nil, err
	}
	return t, grids()
}

// NewGQATableDeferred is NewGQATable with the grids and their
// leave-one-out error built on first use (as NewMoETableDeferred).
func NewGQATableDeferred(name string, key GQAKey, pts []GQAPoint) (*GQATable, error) {
	t, grids, err := newGQATable(name, key, pts)
	if err != nil {
		return nil, err
	}
	t.later.set(name, grids)
	return t, nil
}

// NewGQATableLazy is NewGQATable with everything but the name and key
// done on first use (as NewMoETableLazy).
func NewGQATableLazy(name string, key GQAKey, load func() ([]GQAPoint, error)) *GQATable {
	t := &GQATable{Key: key}
	t.Init(name, axes("batch", "kv_len"), kernelNotes, nil)
	setLoad(&t.later, name, load, func(pts []GQAPoint) error {
		grids, err := t.points(pts)
		if err != nil {
			return err
		}
		return grids()
	})
	return t
}

func newGQATable(name string, key GQAKey, pts []GQAPoint) (*GQATable, func() error, error) {
	t := &GQATable{Key: key}
	grids, err := t.points(pts)
	if err != nil {
		return nil, nil, err
	}
	t.Init(name, axes("batch", "kv_len"), kernelNotes, nil)
	return t, grids, nil
}

// points checks the points of t; grids builds the series.
func (t *GQATable) points(pts []GQAPoint) (grids func() error, err error) {
	p := make([]pt2[[2]int], len(pts))
	for i, q := range pts {
		if q.Heads <= 0 || q.KVHeads <= 0 || q.Batch <= 0 || q.KVLen <= 0 {
			return nil, curve.RowErrorf(q.Row, "heads, kv_heads, batch and kv_len must be positive")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt2[[2]int]{key: [2]int{q.Heads, q.KVHeads}, a: float64(q.Batch), b: float64(q.KVLen), y: float64(q.Latency), row: q.Row}
	}
	return func() error {
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
func (t *GQATable) LOOError() (float64, int) {
	t.later.do()
	return t.Table.LOOError()
}

// Lookup answers GQA attention for a measured (heads, kv_heads) per GPU.
// covers reports whether Lookup answers s.
func (t *GQATable) covers(s GQAShape) bool {
	if s.HeadDim != t.Key.HeadDim || s.KV.String() != t.Key.KV {
		return false
	}
	t.later.do()
	return t.series.find([2]int{s.Heads, s.KVHeads}) != nil && s.Batch > 0 && s.Context > 0
}

func (t *GQATable) Lookup(s GQAShape) (cost.Estimate, bool) {
	if s.HeadDim != t.Key.HeadDim || s.KV.String() != t.Key.KV {
		return cost.Estimate{}, false
	}
	t.later.do()
	g := t.series.find([2]int{s.Heads, s.KVHeads})
	if g == nil || s.Batch <= 0 || s.Context <= 0 {
		return cost.Estimate{}, false
	}
	return t.answer(g, s), true
}

// answer is Lookup's estimate of s from g, t's grid of s's heads.
func (t *GQATable) answer(g *curve.Grid, s GQAShape) cost.Estimate {
	r := g.At(float64(s.Batch), float64(s.Context))
	flags := curve.FlagsOf(r.ClampA, r.ClampB)
	return t.Estimate(r.Y, r.RowLo, r.RowHi, flags)
}

// ---- the set ----

// Tables is a set of kernel calibration tables; it implements Lookup. For
// each query the source policy (source.go) chooses the table that
// answers: the first (in policy order, Rank) that covers it, the
// scenario's engine's own before another engine's.
type Tables struct {
	GEMMs []*GEMMTable
	MoEs  []*MoETable
	MLAs  []*MLATable
	GQAs  []*GQATable
	// Prefills price prefill attention (GQA and MLA's un-absorbed form):
	// measured by calib gpu or written by calib from-trace, one op.
	Prefills []*PrefillTable
	// Elementwises price small memory-bound kernels by bytes moved.
	Elementwises []*ElementwiseTable
	// Unmappeds price, per layer, the kernels of a traced step that map
	// to no modelled op (unmapped.go).
	Unmappeds []*UnmappedTable
	// GDNs price Gated DeltaNet state updates (table_gdn.go).
	GDNs []*GDNTable

	// moeIndex: MoEs by the keys a query matches (Rank builds it).
	moeIndex map[moeIndexKey][]*MoETable
	// skewed: for each balanced MoE table, its power-law siblings of the
	// same origin and key, by distribution (Rank links them, linkSkewed).
	skewed map[*MoETable]map[string]*MoETable
	// gqaIndex: GQAs by their key (Rank builds it).
	gqaIndex map[GQAKey][]*GQATable
	// picks remembers the table the source policy chooses for a GQA
	// query (a gqaPick) and for an MLA-module query (an mlaPick), by the
	// hash of the query less its batch and context (gqaPickKey.hash,
	// mlaPickHash; the pick keeps the query it is for). Which tables cover
	// a query does not depend on its batch and context once both are
	// positive, so a serving simulation's hundreds of thousands of
	// attention lookups walk the tables once. Rank makes it; copies of the
	// set share it, as they share the indexes.
	picks *sync.Map
}

// gqaPickKey is a GQA query less its batch and context.
type gqaPickKey struct {
	heads, kvHeads, headDim int
	kv                      dtype.KVCache
	engine                  string
}

func (k gqaPickKey) hash() uint64 {
	h := pickMix(1, uint64(k.heads))
	h = pickMix(h, uint64(k.kvHeads))
	h = pickMix(h, uint64(k.headDim))
	h = pickMix(h, uint64(k.kv))
	return pickString(h, k.engine)
}

// mlaPickHash is the hash of MLA-module query s less its batch and
// context.
func mlaPickHash(s *MLAShape) uint64 {
	h := pickMix(2, uint64(s.Heads))
	for _, v := range [...]int{s.KVLoRARank, s.QKRopeDim, int(s.KV), s.TotalHeads, s.Hidden, s.QLoRARank, s.QKNopeDim, s.VHeadDim} {
		h = pickMix(h, uint64(v))
	}
	if s.KeepCollectorBias {
		h = pickMix(h, 1)
	}
	return pickString(h, s.Engine)
}

// pickMix folds a into h (a multiply-xorshift round, as wyhash's).
func pickMix(h, a uint64) uint64 {
	hi, lo := bits.Mul64(h^a^0xa0761d6478bd642f, 0xe7037ed1a0b428db)
	return hi ^ lo
}

// pickString folds s into h, eight bytes at a time.
func pickString(h uint64, s string) uint64 {
	h = pickMix(h, uint64(len(s)))
	for i := 0; i < len(s); i += 8 {
		var w uint64
		for j := i; j < min(i+8, len(s)); j++ {
			w = w<<8 | uint64(s[j])
		}
		h = pickMix(h, w)
	}
	return h
}

// gqaPick is the table choose picks for GQA query key, its grid of the
// query's heads and its policy (nil t: no table covers the query).
type gqaPick struct {
	key    gqaPickKey
	t      *GQATable
	g      *curve.Grid
	policy string
}

var _ Lookup = (*Tables)(nil)

// Empty reports whether the set holds no table.
func (t *Tables) Empty() bool {
	return t == nil || len(t.GEMMs)+len(t.MoEs)+len(t.MLAs)+len(t.GQAs)+len(t.Prefills)+len(t.Elementwises)+len(t.Unmappeds)+len(t.GDNs) == 0
}

// GEMM implements Lookup.
func (t *Tables) GEMM(s GEMMShape) (cost.Estimate, bool) {
	return choose(t.GEMMs, s, s.Engine, (*GEMMTable).Lookup)
}

// MoE implements Lookup.
func (t *Tables) MoE(s MoEShape) (cost.Estimate, bool) {
	return choose(t.moeTables(s), s, s.Engine, func(tb *MoETable, s MoEShape) (cost.Estimate, bool) {
		return tb.lookup(t.skewed[tb], s)
	})
}

// MLAModule implements Lookup. An fp8-KV query that no fp8-KV table
// covers (the perf database measures fp8 KV at fewer head counts) is
// answered from a bf16-KV table with the KV read corrected
// (MLATable.lookupFP8FromBF16, Source.Note says so), rather than dropping
// the whole module to the roofline.
func (t *Tables) MLAModule(s MLAShape) (cost.Estimate, bool) {
	if t.picks == nil || s.Batch <= 0 || s.Context <= 0 {
		if e, ok := choose(t.MLAs, s, s.Engine, (*MLATable).Lookup); ok {
			return e, true
		}
		return choose(t.MLAs, s, s.Engine, (*MLATable).lookupFP8FromBF16)
	}
	k := s
	k.Batch, k.Context = 0, 0
	h := mlaPickHash(&k)
	v, ok := t.picks.Load(h)
	p, _ := v.(*mlaPick)
	if !ok || p == nil || p.key != k {
		p = &mlaPick{key: k}
		if tb, policy, found := pick(t.MLAs, s, s.Engine, (*MLATable).covers); found {
			p.t, p.policy = tb, policy
		} else if tb, policy, found := pick(t.MLAs, s, s.Engine, (*MLATable).coversFP8FromBF16); found {
			p.t, p.policy, p.fp8 = tb, policy, true
		}
		if !ok {
			t.picks.LoadOrStore(h, p) // else another query of this hash keeps the place
		}
	}
	if p.t == nil {
		return cost.Estimate{}, false
	}
	look := p.t.Lookup
	if p.fp8 {
		look = p.t.lookupFP8FromBF16
	}
	e, _ := look(s)
	e.Source.Policy = p.policy
	return e, true
}

// mlaPick is the table choose picks for an MLA-module query less its
// batch and context, whether it answers from its bf16-KV series for an
// fp8-KV query (lookupFP8FromBF16), and its policy (nil t: no table
// covers the query).
type mlaPick struct {
	key    MLAShape
	t      *MLATable
	fp8    bool
	policy string
}

// GQA implements Lookup: choose's answer, the table it picks remembered
// per query less batch and context (picks) once the set is ranked.
func (t *Tables) GQA(s GQAShape) (cost.Estimate, bool) {
	if t.picks == nil || s.Batch <= 0 || s.Context <= 0 {
		return choose(t.gqaTables(s), s, s.Engine, (*GQATable).Lookup)
	}
	k := gqaPickKey{heads: s.Heads, kvHeads: s.KVHeads, headDim: s.HeadDim, kv: s.KV, engine: s.Engine}
	h := k.hash()
	v, ok := t.picks.Load(h)
	p, _ := v.(*gqaPick)
	if !ok || p == nil || p.key != k {
		p = &gqaPick{key: k}
		if tb, policy, found := pick(t.gqaTables(s), s, s.Engine, (*GQATable).covers); found {
			p.t, p.g, p.policy = tb, tb.series.find([2]int{s.Heads, s.KVHeads}), policy
		}
		if !ok {
			t.picks.LoadOrStore(h, p) // else another query of this hash keeps the place
		}
	}
	if p.t == nil {
		return cost.Estimate{}, false
	}
	e := p.t.answer(p.g, s)
	e.Source.Policy = p.policy
	return e, true
}

// Prefill implements Lookup: the source policy's table answers
// (prefillChoose), except that an answer that clamps the prefix gives way
// to a table that measured it.
func (t *Tables) Prefill(s PrefillShape) (cost.Estimate, bool) { return prefillChoose(t.Prefills, s) }

// ---- elementwise ----

// ElementwisePoint is one measured small memory-bound kernel (a norm,
// rotary embedding, KV-cache write, top-k): the bytes it moves (reads plus
// writes, as Costs.Elementwise counts them) and its latency.
type ElementwisePoint struct {
	Bytes   unit.Bytes
	Latency unit.Seconds
	Row     int
}

// ElementwiseTable is elementwise-kernel latency by bytes moved, one curve
// over all the table's kernels (whatever the op: Costs.Elementwise knows
// only the bytes).
type ElementwiseTable struct {
	curve.Table
	series series1[struct{}]
}

// NewElementwiseTable builds an elementwise table.
func NewElementwiseTable(name string, pts []ElementwisePoint) (*ElementwiseTable, error) {
	p := make([]pt1[struct{}], len(pts))
	for i, q := range pts {
		if !(q.Bytes > 0) || math.IsInf(float64(q.Bytes), 0) {
			return nil, curve.RowErrorf(q.Row, "bytes must be positive and finite")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt1[struct{}]{x: float64(q.Bytes), y: float64(q.Latency), row: q.Row}
	}
	s, loo, err := buildSeries1(p)
	if err != nil {
		return nil, err
	}
	t := &ElementwiseTable{series: s}
	t.Init(name, axes("bytes"), kernelNotes, loo)
	return t, nil
}

// Lookup answers one elementwise kernel of b bytes: interpolated in
// log-log between the measured sizes, clamped (with its note) below the
// smallest, where a kernel's fixed latency dominates. Above the largest
// measured size the table does not answer: a larger kernel is bandwidth
// bound, which the roofline prices, and a latency measured on a small
// kernel says nothing about it.
func (t *ElementwiseTable) Lookup(b unit.Bytes) (cost.Estimate, bool) {
	if len(t.series.curves) == 0 || !(b > 0) {
		return cost.Estimate{}, false
	}
	r := t.series.curves[0].At(float64(b))
	if r.Clamp == curve.Above {
		return cost.Estimate{}, false
	}
	return t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.Clamp, curve.Inside)), true
}

// Elementwise implements Lookup.
func (t *Tables) Elementwise(b unit.Bytes) (cost.Estimate, bool) {
	return curve.First(t.Elementwises, b)
}
