package curve

import (
	"fmt"
	"math"
	"sort"
)

// Grid is y(a, b) measured on curves over b, one curve per measured a (for
// example one KV-length curve per batch size). A query interpolates each of
// the two curves that bracket a at b, then interpolates between them in a
// (log-log when the grid is log-scaled). The curves need not share their b
// points.
type Grid struct {
	a      []float64
	ta     []float64
	curves []*Curve
	log    bool
}

// GridResult is one interpolated grid value.
type GridResult struct {
	Y            float64
	RowLo, RowHi int
	ClampA       Clamp // a outside the measured a values
	ClampB       Clamp // b outside a curve's measured range (either curve used)
}

// NewGrid builds a grid from curves measured at a (strictly increasing).
func NewGrid(a []float64, curves []*Curve, logScale bool) (*Grid, error) {
	if len(a) == 0 || len(a) != len(curves) {
		return nil, fmt.Errorf("curve: grid with %d a values and %d curves", len(a), len(curves))
	}
	g := &Grid{a: append([]float64(nil), a...), curves: append([]*Curve(nil), curves...), log: logScale, ta: make([]float64, len(a))}
	for i, v := range a {
		if i > 0 && !(v > a[i-1]) {
			return nil, fmt.Errorf("curve: grid a values not strictly increasing (%g after %g)", v, a[i-1])
		}
		if logScale && v <= 0 {
			return nil, fmt.Errorf("curve: log grid needs positive a, got %g", v)
		}
		if logScale {
			g.ta[i] = math.Log(v)
		} else {
			g.ta[i] = v
		}
	}
	return g, nil
}

// A returns the measured a values (shared, do not modify).
func (g *Grid) A() []float64 { return g.a }

// Curve returns the curve measured at the i-th a.
func (g *Grid) Curve(i int) *Curve { return g.curves[i] }

// At interpolates y at (a, b). It never allocates.
func (g *Grid) At(a, b float64) GridResult {
	n := len(g.a)
	var r GridResult
	switch {
	case a <= g.a[0]:
		if a < g.a[0] {
			r.ClampA = Below
		}
		return g.one(0, b, r)
	case a >= g.a[n-1]:
		if a > g.a[n-1] {
			r.ClampA = Above
		}
		return g.one(n-1, b, r)
	}
	i := sort.SearchFloat64s(g.a, a)
	if g.a[i] == a {
		return g.one(i, b, r)
	}
	lo, hi := g.curves[i-1].At(b), g.curves[i].At(b)
	ta := a
	if g.log {
		ta = math.Log(a)
	}
	t := (ta - g.ta[i-1]) / (g.ta[i] - g.ta[i-1])
	if g.log {
		r.Y = math.Exp(math.Log(lo.Y) + t*(math.Log(hi.Y)-math.Log(lo.Y)))
	} else {
		r.Y = lo.Y + t*(hi.Y-lo.Y)
	}
	ylo, yhi := math.Min(lo.Y, hi.Y), math.Max(lo.Y, hi.Y)
	r.Y = math.Min(math.Max(r.Y, ylo), yhi)
	r.RowLo, r.RowHi = min(lo.RowLo, hi.RowLo), max(lo.RowHi, hi.RowHi)
	r.ClampB = lo.Clamp
	if r.ClampB == Inside {
		r.ClampB = hi.Clamp
	}
	return r
}

func (g *Grid) one(i int, b float64, r GridResult) GridResult {
	c := g.curves[i].At(b)
	r.Y, r.RowLo, r.RowHi, r.ClampB = c.Y, c.RowLo, c.RowHi, c.Clamp
	return r
}

// LOO appends the leave-one-out errors of the grid: along b within each
// curve, and along a for every point of an interior curve whose b lies
// inside both neighbouring curves' ranges (predicted from the neighbours,
// which do not contain the point).
func (g *Grid) LOO(dst []float64) []float64 {
	for _, c := range g.curves {
		dst = c.LOO(dst)
	}
	for i := 1; i+1 < len(g.a); i++ {
		prev, next := g.curves[i-1], g.curves[i+1]
		t := (g.ta[i] - g.ta[i-1]) / (g.ta[i+1] - g.ta[i-1])
		for k, b := range g.curves[i].x {
			p, n := prev.At(b), next.At(b)
			if p.Clamp != Inside || n.Clamp != Inside {
				continue
			}
			var pred float64
			if g.log {
				pred = math.Exp(math.Log(p.Y) + t*(math.Log(n.Y)-math.Log(p.Y)))
			} else {
				pred = p.Y + t*(n.Y-p.Y)
			}
			y := g.curves[i].y[k]
			dst = append(dst, math.Abs(pred-y)/math.Abs(y))
		}
	}
	return dst
}
