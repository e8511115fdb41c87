package comm

// Calibration tables for collectives: the Lookup implementation that the
// calib package builds from a calibration file (docs/calibration.md).
//
// A collective table holds latency against message size for each measured
// rank count, for one collective and one implementation. Along the size
// axis it interpolates piecewise-linearly in log-log space, is exact on
// measured points and clamps below the measured range with a "clamped: ..."
// note; above it, it extrapolates the last segment in log-log space with a
// slope of at least 1 (time at least proportional to size, i.e. never
// faster than the last measured point's bandwidth) with an
// "extrapolated: ..." note; rank counts must match a measured one. The interval
// of each Estimate is the table's leave-one-out interpolation error (p90 of
// |LOO prediction - measured| / measured over interior points).
//
// Message sizes are nccl-tests' size(B) column: the whole buffer of one
// rank for AllReduce; for AllGather and ReduceScatter the whole gathered
// (resp. reduced) array, recvcount x sizeof x ranks (nccl-tests
// doc/PERFORMANCE.md); for AllToAll the bytes one rank sends in total.

import (
	"fmt"
	"math"
	"sort"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
)

// sizeAxis is a collective or EP table's measured axis: above the range
// the last segment is extended (buildByRanks).
func sizeAxis(name string) []curve.Axis {
	return []curve.Axis{{Name: name, Extrapolated: true,
		How: "last segment extended in log-log with slope >= 1: never faster than the last measured point's bandwidth"}}
}

// estimate is a table answer for one curve lookup.
func estimate(t *curve.Table, r curve.Result) cost.Estimate {
	return t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.Clamp, curve.Inside))
}

type byRanks struct {
	ranks  []int
	curves []*curve.Curve
}

func (s *byRanks) find(r int) *curve.Curve {
	for i, n := range s.ranks {
		if n == r {
			return s.curves[i]
		}
	}
	return nil
}

type point struct {
	ranks int
	x, y  float64
	row   int
}

func buildByRanks(pts []point) (byRanks, []float64, error) {
	var s byRanks
	groups := map[int][]point{}
	for _, p := range pts {
		if _, ok := groups[p.ranks]; !ok {
			s.ranks = append(s.ranks, p.ranks)
		}
		groups[p.ranks] = append(groups[p.ranks], p)
	}
	var loo []float64
	for _, r := range s.ranks {
		g := groups[r]
		sort.SliceStable(g, func(i, j int) bool { return g[i].x < g[j].x })
		x, y, rows := make([]float64, len(g)), make([]float64, len(g)), make([]int, len(g))
		for i, p := range g {
			x[i], y[i], rows[i] = p.x, p.y, p.row
		}
		c, err := curve.New(x, y, rows, true)
		if err != nil {
			return s, nil, fmt.Errorf("ranks %d: %w", r, err)
		}
		// Above the measured range a collective is bandwidth-bound: time
		// grows at least in proportion to the size, so the last segment is
		// extended in log-log with slope >= 1 instead of clamping (a clamp
		// would price a 1 GB message at the largest measured one's time).
		c.SetAbove(curve.LogLogAbove, 1)
		s.curves = append(s.curves, c)
		loo = c.LOO(loo)
	}
	return s, loo, nil
}

// Point is one measured collective.
type Point struct {
	Ranks   int
	Bytes   unit.Bytes // nccl-tests size(B); see the file comment
	Latency unit.Seconds
	Row     int // 1-based table row
}

// Table is one collective's latency by (ranks, bytes) for one
// implementation.
type Table struct {
	curve.Table
	Op cost.Category // cost.AllReduce, AllGather, ReduceScatter or AllToAll
	// Impl is the implementation measured: "nccl" (nccl-tests), "vllm",
	// "sglang", "trtllm" (framework all-reduce, which picks its own custom
	// kernel or NCCL), "oneshot", "twoshot".
	Impl string
	// Mode is "graph" (CUDA-graph captured), "eager", or "" when the source
	// does not say (nccl-tests without -G).
	Mode   string
	series byRanks
}

// NewTable builds a collective table named name (the Source.Table string).
func NewTable(name string, op cost.Category, impl, mode string, pts []Point) (*Table, error) {
	p := make([]point, len(pts))
	for i, q := range pts {
		if q.Ranks < 2 {
			return nil, curve.RowErrorf(q.Row, "ranks must be at least 2, got %d", q.Ranks)
		}
		if !(q.Bytes > 0) || math.IsInf(float64(q.Bytes), 0) {
			return nil, curve.RowErrorf(q.Row, "bytes must be positive, got %v", float64(q.Bytes))
		}
		if !(q.Latency > 0) || math.IsInf(float64(q.Latency), 0) {
			return nil, curve.RowErrorf(q.Row, "latency must be positive and finite, got %v", float64(q.Latency))
		}
		p[i] = point{ranks: q.Ranks, x: float64(q.Bytes), y: float64(q.Latency), row: q.Row}
	}
	s, loo, err := buildByRanks(p)
	if err != nil {
		return nil, err
	}
	t := &Table{Op: op, Impl: impl, Mode: mode, series: s}
	t.Init(name, sizeAxis("bytes"), nil, loo)
	return t, nil
}

// Lookup interpolates the table at (ranks, b); false when the rank count
// was not measured.
func (t *Table) Lookup(ranks int, b unit.Bytes) (cost.Estimate, bool) {
	c := t.series.find(ranks)
	if c == nil || !(b > 0) {
		return cost.Estimate{}, false
	}
	return estimate(&t.Table, c.At(float64(b))), true
}

// Coverage lists the measured rank counts with their size ranges and
// point counts.
func (t *Table) Coverage() (ranks []int, lo, hi []float64, n []int) {
	for i, r := range t.series.ranks {
		a, b := t.series.curves[i].Range()
		ranks, lo, hi, n = append(ranks, r), append(lo, a), append(hi, b), append(n, t.series.curves[i].Len())
	}
	return
}

// EPPoint is one measured expert-parallel dispatch or combine (DeepEP
// low-latency kernels) at a number of tokens per rank.
type EPPoint struct {
	Hidden, TopK, Experts int
	Ranks, TokensPerRank  int
	Latency               unit.Seconds
	Row                   int
}

// EPKey is what an EP dispatch/combine table was measured for.
type EPKey struct {
	Phase string // "dispatch" or "combine"
	Impl  string // "deepep_ll" or "deepep_normal"
}

// EPTable is EP dispatch or combine latency by tokens per rank for each
// measured (hidden, topk, experts, ranks). It keys on tokens, not bytes, so
// comm.Lookup's AllToAll (bytes per rank) does not consult it; Tables.EP
// does.
type EPTable struct {
	curve.Table
	Key    EPKey
	shapes [][3]int // (hidden, topk, experts) of each series set
	series []byRanks
}

// NewEPTable builds an EP dispatch/combine table.
func NewEPTable(name string, key EPKey, pts []EPPoint) (*EPTable, error) {
	t := &EPTable{Key: key}
	groups := map[[3]int][]point{}
	for _, q := range pts {
		if q.Ranks < 1 || q.TokensPerRank <= 0 || q.Hidden <= 0 || q.TopK <= 0 || q.Experts <= 0 {
			return nil, curve.RowErrorf(q.Row, "hidden, topk, experts, ranks and tokens_per_rank must be positive")
		}
		if !(q.Latency > 0) || math.IsInf(float64(q.Latency), 0) {
			return nil, curve.RowErrorf(q.Row, "latency must be positive and finite, got %v", float64(q.Latency))
		}
		k := [3]int{q.Hidden, q.TopK, q.Experts}
		if _, ok := groups[k]; !ok {
			t.shapes = append(t.shapes, k)
		}
		groups[k] = append(groups[k], point{ranks: q.Ranks, x: float64(q.TokensPerRank), y: float64(q.Latency), row: q.Row})
	}
	var loo []float64
	for _, k := range t.shapes {
		s, l, err := buildByRanks(groups[k])
		if err != nil {
			return nil, fmt.Errorf("hidden %d topk %d experts %d: %w", k[0], k[1], k[2], err)
		}
		t.series = append(t.series, s)
		loo = append(loo, l...)
	}
	t.Init(name, sizeAxis("tokens_per_rank"), nil, loo)
	return t, nil
}

// Shapes lists the measured (hidden, topk, experts) with their rank counts.
func (t *EPTable) Shapes() (shapes [][3]int, ranks [][]int) {
	for i, k := range t.shapes {
		shapes, ranks = append(shapes, k), append(ranks, t.series[i].ranks)
	}
	return
}

// Tables is a set of collective tables; it implements Lookup. The first
// table (in file order) that covers a query answers it.
type Tables struct {
	Colls []*Table
	EPs   []*EPTable
	// Graphs selects the CUDA-graph ("graph") rather than the "eager"
	// framework all-reduce tables; tables without a mode match both.
	Graphs bool
}

var _ Lookup = (*Tables)(nil)

// Empty reports whether the set holds no table.
func (t *Tables) Empty() bool { return t == nil || len(t.Colls)+len(t.EPs) == 0 }

func (t *Tables) modeOK(m string) bool {
	return m == "" || (m == "graph") == t.Graphs
}

// allReduceImpls lists, in order of preference, the table implementations
// that measure an Impl as an engine (Policy) runs it. Comm resolves Auto
// before asking (ChooseAllReduce), so queries come as NCCL, OneShot or
// TwoShot; a custom all-reduce is answered by a table of that exact kernel
// when the file has one, else by the serving engine's measured all-reduce
// entry point ("vllm": vLLM's custom_allreduce_perf, "sglang": SGLang's,
// whose custom kernel picks one- or two-shot by size itself), else vLLM's
// (the same kernel rule, policy.go). An "auto" table is a user's own
// measurement of the engine's choice.
var allReduceImpls = func() (out [len(policies)][len(implNames)][]string) {
	for p := range policies {
		engine := []string{policies[p].table}
		if Policy(p) != VLLMPolicy {
			engine = append(engine, policies[VLLMPolicy].table)
		}
		for _, impl := range []Impl{Auto, OneShot, TwoShot} {
			out[p][impl] = append([]string{implNames[impl]}, engine...)
		}
		out[p][NCCL] = []string{implNames[NCCL]}
	}
	return out
}()

func (t *Tables) find(op cost.Category, impl string, ranks int, b unit.Bytes) (cost.Estimate, bool) {
	for _, tb := range t.Colls {
		if tb.Op != op || tb.Impl != impl || !t.modeOK(tb.Mode) {
			continue
		}
		if e, ok := tb.Lookup(ranks, b); ok {
			return e, true
		}
	}
	return cost.Estimate{}, false
}

// AllReduce implements Lookup, for vLLM's policy.
func (t *Tables) AllReduce(impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool) {
	return t.AllReduceFor(VLLMPolicy, impl, ranks, b)
}

// AllReduceFor answers impl as the engine of policy p runs it.
func (t *Tables) AllReduceFor(p Policy, impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool) {
	if int(p) >= len(policies) || int(impl) >= len(implNames) {
		return cost.Estimate{}, false
	}
	for _, name := range allReduceImpls[p][impl] {
		if e, ok := t.find(cost.AllReduce, name, ranks, b); ok {
			return e, true
		}
	}
	return cost.Estimate{}, false
}

// AllReduceExact answers only from a table of exactly impl (a one-shot
// query from a "oneshot" table), never from the engine's measured entry
// point, which runs what the engine picks (Comm.AllReduce asks this when
// the engine would not pick impl).
func (t *Tables) AllReduceExact(impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool) {
	if int(impl) >= len(implNames) {
		return cost.Estimate{}, false
	}
	return t.find(cost.AllReduce, implNames[impl], ranks, b)
}

// AllGather implements Lookup; b is the whole gathered array.
func (t *Tables) AllGather(ranks int, b unit.Bytes) (cost.Estimate, bool) {
	return t.find(cost.AllGather, "nccl", ranks, b)
}

// ReduceScatter implements Lookup; b is the whole input array of one rank.
func (t *Tables) ReduceScatter(ranks int, b unit.Bytes) (cost.Estimate, bool) {
	return t.find(cost.ReduceScatter, "nccl", ranks, b)
}

// AllToAll implements Lookup from NCCL all-to-all tables; bytesPerRank is
// what one rank sends in total.
func (t *Tables) AllToAll(ranks int, bytesPerRank unit.Bytes) (cost.Estimate, bool) {
	return t.find(cost.AllToAll, "nccl", ranks, bytesPerRank)
}

// EP answers an expert-parallel dispatch or combine ("dispatch",
// "combine") from EP tables of the same hidden size, top-k and expert count.
func (t *Tables) EP(impl, phase string, ranks, tokensPerRank, hidden, topk, experts int) (cost.Estimate, bool) {
	for _, tb := range t.EPs {
		if tb.Key.Phase != phase || (impl != "" && tb.Key.Impl != impl) {
			continue
		}
		for i, k := range tb.shapes {
			if k != [3]int{hidden, topk, experts} {
				continue
			}
			if c := tb.series[i].find(ranks); c != nil && tokensPerRank > 0 {
				return estimate(&tb.Table, c.At(float64(tokensPerRank))), true
			}
		}
	}
	return cost.Estimate{}, false
}
