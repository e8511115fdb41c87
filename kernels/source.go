package kernels

// The calibration source policy (issue 21), in one place: which of the
// kernel tables that cover a query answers it, and the words that say why
// (cost.Source.Policy).
//
// Tables are in three classes, in this order of rank (Tables.Rank puts
// each op's tables in it; calib.Select calls it):
//
//  1. the user's own calibration (a file the user passed: `calib gpu` on
//     their box, `calib import`, `calib from-trace`), in the user's stack
//     order (a later file first);
//  2. tables measured on a serving engine's own kernels (the perf
//     database's rows for vLLM or SGLang) built into moecast;
//  3. moecast's proxy kernels built into moecast (`calib gpu` on the
//     GPU): they fill the shapes, splits and ops the engine rows lack.
//
// Within a class the first table that covers the query answers, except
// that a table of the scenario's engine (Costs.Engine) answers before
// another engine's table of the same class: a vLLM row does not price an
// SGLang run where SGLang's own row covers the shape. Among an engine's
// embedded tables a newer version ranks first: the scenario does not
// state its engine's version, so the newest measured is the closest (the
// embedded calibrations hold the perf database's newest version of each
// table today).
//
// The proxy's measured bias against the engine rows, where both measured
// the same point, is in each proxy table's corrections (calib.ProxyBias)
// and in bench/RESULTS-proxy-bias.md.

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/moecast/moecast/internal/cost"
)

// Origin is where a kernel table's rows were measured, as the source
// policy ranks it. The zero Origin is an embedded proxy table.
type Origin struct {
	// Engine is the serving engine whose own kernels the table measured
	// ("vllm", "sglang": the perf database's rows, a trace of the engine),
	// "" for moecast's proxy kernels (calib gpu).
	Engine        string
	EngineVersion string
	// User marks a table of a calibration the user passed (not built into
	// moecast): it outranks the embedded tables.
	User bool
	// why holds the Source.Policy words of each way the table is chosen,
	// built once (SetOrigin): a lookup does not allocate.
	why [numWhy]string
}

// The ways the policy chooses a table.
const (
	whyUser     = iota // the user's calibration
	whyOwn             // the scenario's engine's own table
	whyEngine          // an engine's table, the scenario's engine unknown
	whyOther           // another engine's table: none of the scenario's engine covers the shape
	whyProxy           // moecast's proxy kernels: no engine table covers the shape
	whyCovering        // prefill: the table that covers a cached prefix an engine table clamps
	numWhy
)

// SetOrigin sets the table's origin and the words of its Source.Policy;
// label names its rows ("perfdb vllm 0.24.0 moe rows", "calib gpu moe
// rows").
func (o *Origin) SetOrigin(engine, version string, user bool, label string) {
	*o = Origin{Engine: engine, EngineVersion: version, User: user}
	o.why = [numWhy]string{
		whyUser:     label + " (the user's calibration: outranks the embedded tables)",
		whyOwn:      label + " (measured on the scenario's engine: outranks the proxy kernels)",
		whyEngine:   label + " (engine-measured: outranks the proxy kernels)",
		whyOther:    label + " (another engine's measured kernels: no table of the scenario's engine covers this shape; outranks the proxy kernels)",
		whyProxy:    label + " (moecast's proxy kernels: no engine-measured table covers this shape)",
		whyCovering: label + " (covers the cached prefix that the engine-measured table clamps; see the note)",
	}
}

func (o *Origin) origin() *Origin { return o }

// whyFor is the Policy of o's answer chosen as the first that covers a
// query of a run on engine (not in another engine's table's stead).
func (o *Origin) whyFor(engine string) string {
	switch {
	case o.User:
		return o.why[whyUser]
	case o.Engine == "":
		return o.why[whyProxy]
	case engine == "":
		return o.why[whyEngine]
	case o.Engine == engine:
		return o.why[whyOwn]
	}
	return o.why[whyOther]
}

// yields reports whether o's answer gives way to a later table of the
// same class measured on engine: o is another engine's table.
func (o *Origin) yields(engine string) bool {
	return engine != "" && o.Engine != "" && o.Engine != engine
}

// origined is a ranked kernel table.
type origined interface{ origin() *Origin }

// choose answers q from ts (in policy order) by look: the first table
// that covers q, unless it is another engine's table and a later table of
// its class measured on engine covers q too. Its Source.Policy says why.
func choose[T origined, Q any](ts []T, q Q, engine string, look func(T, Q) (cost.Estimate, bool)) (cost.Estimate, bool) {
	for i, t := range ts {
		e, ok := look(t, q)
		if !ok {
			continue
		}
		o := t.origin()
		if o.yields(engine) {
			for _, u := range ts[i+1:] {
				uo := u.origin()
				if uo.User != o.User || uo.Engine != engine {
					continue
				}
				if ue, ok := look(u, q); ok {
					ue.Source.Policy = uo.whyFor(engine)
					return ue, true
				}
			}
		}
		e.Source.Policy = o.whyFor(engine)
		return e, true
	}
	return cost.Estimate{}, false
}

// pick is the table choose answers q from and its Source.Policy, with
// covers reporting whether a table's look answers q; ok is false when no
// table does.
func pick[T origined, Q any](ts []T, q Q, engine string, covers func(T, Q) bool) (_ T, policy string, ok bool) {
	for i, t := range ts {
		if !covers(t, q) {
			continue
		}
		o := t.origin()
		if o.yields(engine) {
			for _, u := range ts[i+1:] {
				uo := u.origin()
				if uo.User != o.User || uo.Engine != engine {
					continue
				}
				if covers(u, q) {
					return u, uo.whyFor(engine), true
				}
			}
		}
		return t, o.whyFor(engine), true
	}
	var none T
	return none, "", false
}

// rank puts ts in policy order, stably: the user's tables, then the
// embedded engine-measured ones, then the embedded proxy ones. Among the
// embedded tables of one engine a newer version goes first (the scenario
// states no version: the newest measured is the closest to what it runs).
func rank[T origined](ts []T) {
	class := func(t T) int {
		switch o := t.origin(); {
		case o.User:
			return 0
		case o.Engine != "":
			return 1
		}
		return 2
	}
	out := make([]T, 0, len(ts))
	for c := range 3 {
		n := len(out)
		for _, t := range ts {
			if class(t) == c {
				out = append(out, t)
			}
		}
		if c == 1 {
			newestFirst(out[n:])
		}
	}
	copy(ts, out)
}

// newestFirst reorders each engine's tables among the places they hold
// in ts by version, newest first (stably); the places of the engines
// stay as they are.
func newestFirst[T origined](ts []T) {
	done := map[string]bool{}
	for _, t := range ts {
		e := t.origin().Engine
		if done[e] {
			continue
		}
		done[e] = true
		var at []int
		var mine []T
		for i, u := range ts {
			if u.origin().Engine == e {
				at, mine = append(at, i), append(mine, u)
			}
		}
		slices.SortStableFunc(mine, func(a, b T) int {
			return -compareVersions(a.origin().EngineVersion, b.origin().EngineVersion)
		})
		for j, i := range at {
			ts[i] = mine[j]
		}
	}
}

// compareVersions orders dotted versions ("0.24.0" after "0.5.14"): part
// by part, numerically where both parts are numbers, else as strings.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y string
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.Atoi(x)
		ny, ey := strconv.Atoi(y)
		switch {
		case ex == nil && ey == nil:
			if c := cmp.Compare(nx, ny); c != 0 {
				return c
			}
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return 0
}

// Rank puts each op's tables in the source policy's order (user,
// engine-measured, proxy; stable within a class). calib.Select calls it
// on the tables it selects; lookups take the tables in that order. It
// also indexes the MoE tables by the keys a query must match (an
// embedded calibration holds hundreds), so that a MoE lookup tries only
// the tables of its model's shape; change MoEs only through Rank after.
func (t *Tables) Rank() {
	rank(t.GEMMs)
	rank(t.MoEs)
	rank(t.MLAs)
	rank(t.GQAs)
	rank(t.Prefills)
	rank(t.GDNs)
	t.moeIndex = map[moeIndexKey][]*MoETable{}
	for _, tb := range t.MoEs {
		k := moeIndexKey{tb.Key.Quant, tb.Key.Experts, tb.Key.TopK, tb.Key.Hidden, tb.Key.Inter}
		t.moeIndex[k] = append(t.moeIndex[k], tb)
	}
	t.skewed = map[*MoETable]map[string]*MoETable{}
	for _, ts := range t.moeIndex {
		linkSkewed(t.skewed, ts)
	}
	t.picks = new(sync.Map)
	t.gqaIndex = map[GQAKey][]*GQATable{}
	for _, tb := range t.GQAs {
		t.gqaIndex[tb.Key] = append(t.gqaIndex[tb.Key], tb)
	}
}

// linkSkewed records in links, for each balanced table of ts (one key),
// the power-law tables of its origin (engine, version, user or embedded):
// the perf database measures each MoE shape under balanced and power-law
// routing side by side, so a balanced table chosen by the source policy
// reads its own power-law sibling when the query asks for skewed routing
// (MoEShape.Routing). The links are the ranked set's (Tables.skewed): the
// tables themselves are shared by every selection of a cached calibration.
func linkSkewed(links map[*MoETable]map[string]*MoETable, ts []*MoETable) {
	for _, b := range ts {
		if b.Key.Distribution != "balanced" {
			continue
		}
		for _, u := range ts {
			d := u.Key.Distribution
			if !strings.HasPrefix(d, "power_law_") || u.Origin.Engine != b.Origin.Engine ||
				u.Origin.EngineVersion != b.Origin.EngineVersion || u.Origin.User != b.Origin.User {
				continue
			}
			m := links[b]
			if m == nil {
				m = map[string]*MoETable{}
				links[b] = m
			}
			if m[d] == nil {
				m[d] = u
			}
		}
	}
}

// moeIndexKey is what MoETable.Lookup matches exactly before its series:
// quant, experts, topk, hidden and the unsplit expert width.
type moeIndexKey struct {
	quant                        string
	experts, topk, hidden, inter int
}

// gqaTables is the GQA tables that may answer s, in policy order: those
// of its head dim and KV dtype (what GQATable.Lookup matches exactly
// first) when the set is indexed (Rank), else all.
func (t *Tables) gqaTables(s GQAShape) []*GQATable {
	if t.gqaIndex == nil {
		return t.GQAs
	}
	return t.gqaIndex[GQAKey{HeadDim: s.HeadDim, KV: s.KV.String()}]
}

// moeTables is the MoE tables that may answer s, in policy order: those
// of its keys when the set is indexed (Rank), else all.
func (t *Tables) moeTables(s MoEShape) []*MoETable {
	if t.moeIndex == nil {
		return t.MoEs
	}
	return t.moeIndex[moeIndexKey{MoEQuant(s.Weight), s.Experts, s.TopK, s.Hidden, s.Inter * max(1, s.MoETP)}]
}
