// Package curve interpolates measured op costs: a Curve is y(x) measured at
// a few points (latency against bytes, tokens or KV length), interpolated
// piecewise-linearly in log-log space (latency against size is close to a
// power law piecewise) or in linear space, with gonum's interp.PiecewiseLinear.
//
// Rules every calibration table follows (docs/calibration.md):
//   - exact on measured points: At(x_i) returns y_i bit for bit;
//   - bounded between neighbours: for x_i < x < x_{i+1}, y lies between y_i
//     and y_{i+1} (linear interpolation of log y in log x is monotone on a
//     segment);
//   - clamped outside the measured range: the end value is returned and
//     Clamp says on which side; above the range a curve may instead
//     extrapolate its last segment (SetAbove), Clamp still saying Above;
//   - leave-one-out error: each interior point is predicted from its two
//     neighbours without itself; |pred - y| / y over all interior points is
//     the table's interpolation error, summarised by its 90th percentile.
//
// Lookups (At) do not allocate: everything is precomputed by New.
package curve

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"gonum.org/v1/gonum/interp"
)

// Clamp says whether a query left the measured range.
type Clamp int8

const (
	Inside Clamp = 0
	Below  Clamp = -1 // query below the smallest measured x: first point used
	Above  Clamp = 1  // query above the largest measured x: last point used
)

// Curve is a measured series y(x) with strictly increasing x.
type Curve struct {
	x, y   []float64 // measured values
	tx, ty []float64 // transformed (log or identity) values
	rows   []int     // table row (1-based) of each point
	log    bool
	pl     interp.PiecewiseLinear // over (tx, ty); unused when len(x) == 1
	above  Extrap                 // what a query above the measured range gets
	minSl  float64                // lower bound of the extrapolation slope
}

// Extrap says what a query above the largest measured x gets.
type Extrap int8

const (
	// ClampAbove returns the last measured value (the default).
	ClampAbove Extrap = iota
	// LogLogAbove extends the last segment in log-log space, its slope
	// (d log y / d log x) raised to at least the curve's minimum slope; a
	// one-point curve uses the minimum slope. With minimum slope 1 the
	// result is never below y_n x / x_n: for a collective, the time of the
	// bytes at the last measured point's bandwidth.
	LogLogAbove
	// LinearAbove extends the last segment linearly in (x, y), its slope
	// raised to at least the minimum slope (>= 0: never decreasing); a
	// one-point curve uses the minimum slope.
	LinearAbove
)

// SetAbove chooses the extrapolation above the measured range (see Extrap).
// It is set once after New, before the curve is shared.
func (c *Curve) SetAbove(e Extrap, minSlope float64) {
	c.above, c.minSl = e, minSlope
}

// Extrapolates reports whether a query above the range is extrapolated
// rather than clamped.
func (c *Curve) Extrapolates() bool { return c.above != ClampAbove }

// Result is one interpolated value and the table rows it came from.
type Result struct {
	Y            float64
	RowLo, RowHi int // rows of the points used (equal on a measured point)
	Clamp        Clamp
}

// New builds a curve over the points (x[i], y[i]) whose table rows are
// rows[i]. x must be strictly increasing; with logScale both x and y must
// be positive. One point is allowed (the curve is then constant and every
// other x is clamped).
func New(x, y []float64, rows []int, logScale bool) (*Curve, error) {
	n := len(x)
	if n == 0 {
		return nil, errors.New("curve: no points")
	}
	if len(y) != n || len(rows) != n {
		return nil, fmt.Errorf("curve: %d x values, %d y values, %d rows", n, len(y), len(rows))
	}
	c := &Curve{
		x: append([]float64(nil), x...), y: append([]float64(nil), y...),
		rows: append([]int(nil), rows...), log: logScale,
		tx: make([]float64, n), ty: make([]float64, n),
	}
	for i := range n {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("curve: %w", RowErrorf(rows[i], "point %d is not finite: x=%g y=%g", i, x[i], y[i]))
		}
		if i > 0 && !(x[i] > x[i-1]) {
			return nil, fmt.Errorf("curve: %w", RowErrorf(rows[i], "x not strictly increasing (%g after %g)", x[i], x[i-1]))
		}
		if logScale && (x[i] <= 0 || y[i] <= 0) {
			return nil, fmt.Errorf("curve: %w", RowErrorf(rows[i], "log scale needs positive values, got x=%g y=%g", x[i], y[i]))
		}
		c.tx[i], c.ty[i] = c.fwd(x[i]), c.fwd(y[i])
	}
	if n >= 2 {
		if err := c.pl.Fit(c.tx, c.ty); err != nil {
			return nil, fmt.Errorf("curve: %w", err)
		}
	}
	return c, nil
}

func (c *Curve) fwd(v float64) float64 {
	if c.log {
		return math.Log(v)
	}
	return v
}

func (c *Curve) inv(v float64) float64 {
	if c.log {
		return math.Exp(v)
	}
	return v
}

// Len is the number of measured points.
func (c *Curve) Len() int { return len(c.x) }

// Range is the smallest and largest measured x.
func (c *Curve) Range() (lo, hi float64) { return c.x[0], c.x[len(c.x)-1] }

// Points returns the measured x values (shared, do not modify).
func (c *Curve) Points() []float64 { return c.x }

// At interpolates y at x. It never allocates.
func (c *Curve) At(x float64) Result {
	n := len(c.x)
	if x <= c.x[0] {
		r := Result{Y: c.y[0], RowLo: c.rows[0], RowHi: c.rows[0]}
		if x < c.x[0] {
			r.Clamp = Below
		}
		return r
	}
	if x >= c.x[n-1] {
		r := Result{Y: c.y[n-1], RowLo: c.rows[n-1], RowHi: c.rows[n-1]}
		if x > c.x[n-1] {
			r.Clamp = Above
			c.extrapolate(x, &r)
		}
		return r
	}
	i := sort.SearchFloat64s(c.x, x) // first index with c.x[i] >= x; 1 <= i <= n-1
	if c.x[i] == x {
		return Result{Y: c.y[i], RowLo: c.rows[i], RowHi: c.rows[i]}
	}
	y := c.inv(c.pl.Predict(c.fwd(x)))
	// Guard the bound against rounding in exp/log.
	lo, hi := c.y[i-1], c.y[i]
	if lo > hi {
		lo, hi = hi, lo
	}
	y = math.Min(math.Max(y, lo), hi)
	return Result{Y: y, RowLo: c.rows[i-1], RowHi: c.rows[i]}
}

// extrapolate sets r.Y above the measured range per c.above.
func (c *Curve) extrapolate(x float64, r *Result) {
	n := len(c.x)
	switch c.above {
	case LogLogAbove:
		if !(x > 0) || c.x[n-1] <= 0 || c.y[n-1] <= 0 {
			return
		}
		sl := c.minSl
		if n >= 2 && c.x[n-2] > 0 && c.y[n-2] > 0 {
			seg := (math.Log(c.y[n-1]) - math.Log(c.y[n-2])) / (math.Log(c.x[n-1]) - math.Log(c.x[n-2]))
			sl = math.Max(sl, seg)
			r.RowLo = c.rows[n-2]
		}
		r.Y = c.y[n-1] * math.Exp(sl*(math.Log(x)-math.Log(c.x[n-1])))
	case LinearAbove:
		sl := c.minSl
		if n >= 2 {
			sl = math.Max(sl, (c.y[n-1]-c.y[n-2])/(c.x[n-1]-c.x[n-2]))
			r.RowLo = c.rows[n-2]
		}
		r.Y = c.y[n-1] + sl*(x-c.x[n-1])
	}
}

// LOO appends to dst the relative leave-one-out error |pred - y| / |y| of
// every interior point, pred being the interpolation between its two
// neighbours in the curve's scale. End points are skipped: without them the
// query would be a clamp, not an interpolation.
func (c *Curve) LOO(dst []float64) []float64 {
	for i := 1; i+1 < len(c.x); i++ {
		t := (c.tx[i] - c.tx[i-1]) / (c.tx[i+1] - c.tx[i-1])
		pred := c.inv(c.ty[i-1] + t*(c.ty[i+1]-c.ty[i-1]))
		dst = append(dst, math.Abs(pred-c.y[i])/math.Abs(c.y[i]))
	}
	return dst
}

// P90 is the 90th percentile (nearest rank) of errs, or 0 when errs is
// empty. errs is not modified.
func P90(errs []float64) float64 {
	if len(errs) == 0 {
		return 0
	}
	s := append([]float64(nil), errs...)
	k := int(math.Ceil(0.9*float64(len(s)))) - 1
	if k < 0 {
		k = 0
	}
	return nth(s, k)
}

// nth is s[k] after sort.Float64s(s), found by selection rather than a
// sort (a table's first use took its P90 over thousands of leave-one-out
// errors, a fifth of building an embedded GQA table): Hoare's FIND
// (CACM 4(7), 1961) with a median-of-three pivot, following only the part
// that holds rank k; parts of at most 16 values, and what is left past a
// depth of 2 log2 n + 8, are sorted. The k-th value is the same whatever
// the order ties end in, except between -0 and +0, which compare equal:
// with a NaN or a -0 in s it sorts s as P90 always did. s is reordered.
func nth(s []float64, k int) float64 {
	for _, v := range s {
		if v != v || (v == 0 && math.Signbit(v)) {
			sort.Float64s(s)
			return s[k]
		}
	}
	lo, hi := 0, len(s)-1
	for depth := 2*bits.Len(uint(len(s))) + 8; hi > lo; depth-- {
		if depth <= 0 || hi-lo < 16 {
			sort.Float64s(s[lo : hi+1])
			return s[k]
		}
		m := lo + (hi-lo)/2
		if s[m] < s[lo] {
			s[m], s[lo] = s[lo], s[m]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[m] {
			s[hi], s[m] = s[m], s[hi]
		}
		p := s[m]
		// s[lo] <= p <= s[hi] stop both scans at the ends
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// s[lo..j] <= p <= s[i..hi]; s[j+1..i-1] (if any) equal p
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}
