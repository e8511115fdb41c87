package calib

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Calibration source policy (issue 21): an op table measured on the engine
// itself (the perf database's rows for vLLM or SGLang) outranks moecast's
// own proxy kernels (`calib gpu`'s tables) for that engine; the proxy
// tables fill the gaps (shapes, splits and ops the engine rows lack) and
// price the user's own box. Where both measured the same point, the
// proxy's bias against the engine row is measured and written into the
// proxy table's corrections (ProxyBiasPrefix), which `calib show` prints.

// ProxyBiasPrefix starts the correction line Prefer adds to a proxy table
// that shares measured points with an engine table.
const ProxyBiasPrefix = "proxy bias vs engine table "

// Prefer merges an engine-measured file and a proxy file for one GPU:
// every table of both stays (none replaces another), the engine's first,
// so a lookup that an engine table covers is answered by it and one it
// does not cover falls through to the proxy's. Each proxy table whose
// points meet an engine table of the same op (ProxyBias) gets its bias
// in its corrections.
func Prefer(name string, engine, proxy *File) (*File, error) {
	out, err := prefer(name, engine, proxy, true)
	if err != nil {
		return nil, err
	}
	return out.assemble(false)
}

// prefer is Prefer's merged file, not yet checked and built (assemble);
// bias: measure the proxy tables' bias (ProxyBias; EmbeddedTables, which
// reads the engine tables' rows on first use, leaves it to Embedded).
func prefer(name string, engine, proxy *File, bias bool) (*File, error) {
	var tables []Table
	seen := map[string]bool{}
	for _, f := range []*File{engine, proxy} {
		if f == nil {
			continue
		}
		for i := range f.Tables {
			t := f.Tables[i]
			t.Provenance = f.Effective(&f.Tables[i])
			if seen[t.Name] {
				return nil, fmt.Errorf("%s: table %q of %s is also in %s", name, t.Name, f.Name, engine.Name)
			}
			seen[t.Name] = true
			if f == proxy && engine != nil && bias {
				t.Provenance.Corrections = append(slices.Clone(t.Provenance.Corrections), ProxyBias(&t, engine.Tables)...)
			}
			tables = append(tables, t)
		}
	}
	out := &File{Schema: Schema, Tables: tables, Name: name}
	gpu := ""
	for i, t := range tables {
		if i == 0 {
			gpu = t.Provenance.GPU
		} else if gpu != t.Provenance.GPU {
			gpu = ""
			break
		}
	}
	out.Provenance.GPU = gpu
	return out, nil
}

// biasKeyCols are the columns that place a point: every column but the
// latencies and the per-row L2 marks.
func biasKeyCols(t *Table) (keys []string, lat int, scale float64) {
	lat = -1
	for j, c := range t.Columns {
		switch {
		case strings.HasPrefix(c, "latency_"):
			if lat < 0 {
				lat, scale = j, latencyScaleUs(c)
			}
		case strings.HasPrefix(c, "inplace_latency_"), c == "working_set_bytes", c == "l2_resident":
		default:
			keys = append(keys, c)
		}
	}
	return keys, lat, scale
}

func latencyScaleUs(col string) float64 {
	switch strings.TrimPrefix(col, "latency_") {
	case "ms":
		return 1e3
	case "s":
		return 1e6
	}
	return 1
}

// sameShape reports whether an engine table e measured the op of proxy
// table p for the same model shape: same op and keys, except the MoE
// routing distribution (the proxy routes uniformly, the perf database
// "balanced"; both read every expert from S = experts/topk tokens on).
func sameShape(p, e *Table) bool {
	if p.Op != e.Op {
		return false
	}
	pk, ek := p.Keys, e.Keys
	if p.Op == "moe" {
		if ek.Distribution != "balanced" && ek.Distribution != "uniform" {
			return false
		}
		pk.Distribution, ek.Distribution = "", ""
	}
	return pk == ek
}

// BiasPoint is one point that a proxy table and an engine table of the
// same shape both measured (BiasPoints).
type BiasPoint struct {
	Cols   []string  // the placing columns (shared by the points of one table pair)
	Values []float64 // their values at this point
	// Proxy and Engine are the two latencies in microseconds.
	Proxy, Engine float64
}

// Ratio is the proxy's time over the engine's at the point.
func (b BiasPoint) Ratio() float64 { return b.Proxy / b.Engine }

// At is the value of column c at the point (NaN when c is not a column).
func (b BiasPoint) At(c string) float64 {
	if i := slices.Index(b.Cols, c); i >= 0 {
		return b.Values[i]
	}
	return math.NaN()
}

// BiasPair is a proxy table's comparison with one engine table of the
// same shape: the points both measured, in the proxy table's row order.
type BiasPair struct {
	Engine *Table
	Points []BiasPoint
}

// BiasPoints compares proxy table p with every engine table of the same
// shape (sameShape: the MoE routing distribution aside) at the points
// both measured, equal in every placing column; engine tables with no
// common point are left out.
func BiasPoints(p *Table, engine []Table) []BiasPair {
	pkeys, plat, pscale := biasKeyCols(p)
	if plat < 0 {
		return nil
	}
	var out []BiasPair
	for i := range engine {
		e := &engine[i]
		if !sameShape(p, e) {
			continue
		}
		ekeys, elat, escale := biasKeyCols(e)
		if elat < 0 || !slices.Equal(pkeys, ekeys) {
			continue
		}
		at := map[string]float64{}
		for _, r := range e.Rows {
			at[pointKey(r, e.Columns, ekeys)] = r[elat] * escale
		}
		pair := BiasPair{Engine: e}
		for _, r := range p.Rows {
			ev, ok := at[pointKey(r, p.Columns, pkeys)]
			if !ok || ev <= 0 {
				continue
			}
			v := make([]float64, len(pkeys))
			for j, c := range pkeys {
				v[j] = r[slices.Index(p.Columns, c)]
			}
			pair.Points = append(pair.Points, BiasPoint{Cols: pkeys, Values: v, Proxy: r[plat] * pscale, Engine: ev})
		}
		if len(pair.Points) > 0 {
			out = append(out, pair)
		}
	}
	return out
}

// ProxyBias compares proxy table p with every engine table of the same
// shape at the points both measured (BiasPoints) and returns one line per
// engine table met: the proxy's latency relative to the engine row,
// (proxy/engine - 1), as median and range over the common points, and for
// MoE over the points at 128 tokens or more (from there every expert is
// read under either routing; below, the routings read different experts).
// Nothing when no point is common.
func ProxyBias(p *Table, engine []Table) []string {
	var out []string
	for _, pair := range BiasPoints(p, engine) {
		// MoE series (moe_tp, ep) summarised apart at >= 128 tokens
		var seriesCols []string
		if p.Op == "moe" {
			seriesCols = slices.DeleteFunc(slices.Clone(pair.Points[0].Cols), func(c string) bool { return c == "tokens" })
		}
		var all []float64
		big := map[string][]float64{}
		var order []string
		for _, pt := range pair.Points {
			d := pt.Ratio() - 1
			all = append(all, d)
			if p.Op == "moe" && pt.At("tokens") >= 128 {
				k := SeriesName(pt, seriesCols)
				if _, ok := big[k]; !ok {
					order = append(order, k)
				}
				big[k] = append(big[k], d)
			}
		}
		line := fmt.Sprintf("%s%s: proxy/engine - 1 over %d common points: %s", ProxyBiasPrefix, pair.Engine.Name, len(all), biasSummary(all))
		for _, k := range order {
			line += fmt.Sprintf("; %s at >= 128 tokens (%d points): %s", k, len(big[k]), biasSummary(big[k]))
		}
		out = append(out, line+" (negative: the proxy is faster; the engine table answers where it covers a query)")
	}
	return out
}

// SeriesName names a point's series by the values of cols: "moe_tp=1 ep=8".
func SeriesName(pt BiasPoint, cols []string) string {
	var sk []string
	for _, c := range cols {
		sk = append(sk, c+"="+strconv.FormatFloat(pt.At(c), 'g', -1, 64))
	}
	return strings.Join(sk, " ")
}

func pointKey(r []float64, cols, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strconv.FormatFloat(r[slices.Index(cols, k)], 'g', -1, 64))
		b.WriteByte(',')
	}
	return b.String()
}

func biasSummary(d []float64) string {
	s := slices.Clone(d)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	pct := func(x float64) string { return strconv.FormatFloat(math.Round(1000*x)/10, 'f', 1, 64) + "%" }
	return fmt.Sprintf("median %s, range %s .. %s", pct(med), pct(s[0]), pct(s[len(s)-1]))
}
