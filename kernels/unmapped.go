package kernels

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
)

// Unmapped work: the kernels of a traced step that map to no op the model
// prices (a framework's glue: copies, index_add, casts, the rotary and
// residual arithmetic of an eager model). No roofline predicts them; a
// calibration made from a trace (`moecast calib from-trace`, table op
// "unmapped") measures them per layer at the step's token count, so that
// the calibrated model reproduces the traced step. Without such a table
// they cost nothing, as before.

// UnmappedPoint is one traced step's unmapped kernel time per layer at its
// token count.
type UnmappedPoint struct {
	Tokens  int
	Latency unit.Seconds
	Row     int
}

// UnmappedTable is unmapped time per layer by tokens: log-log between the
// measured token counts, the last segment extended linearly in tokens
// above (glue kernels scale with the tokens), clamped below.
type UnmappedTable struct {
	curve.Table
	series series1[struct{}]
}

// NewUnmappedTable builds an unmapped table.
func NewUnmappedTable(name string, pts []UnmappedPoint) (*UnmappedTable, error) {
	p := make([]pt1[struct{}], len(pts))
	for i, q := range pts {
		if q.Tokens <= 0 {
			return nil, curve.RowErrorf(q.Row, "tokens must be positive")
		}
		if err := checkLatency(q.Row, q.Latency); err != nil {
			return nil, err
		}
		p[i] = pt1[struct{}]{x: float64(q.Tokens), y: float64(q.Latency), row: q.Row}
	}
	s, loo, err := buildSeries1(p)
	if err != nil {
		return nil, err
	}
	for _, c := range s.curves {
		c.SetAbove(curve.LinearAbove, 0)
	}
	t := &UnmappedTable{series: s}
	t.Init(name, []curve.Axis{{Name: "tokens", Extrapolated: true, How: "last segment extended linearly in tokens"}}, kernelNotes, loo)
	return t, nil
}

// Lookup answers the unmapped time of one layer at n tokens.
func (t *UnmappedTable) Lookup(n int) (cost.Estimate, bool) {
	if len(t.series.curves) == 0 || n <= 0 {
		return cost.Estimate{}, false
	}
	r := t.series.curves[0].At(float64(n))
	if math.IsNaN(r.Y) || math.IsInf(r.Y, 0) {
		return cost.Estimate{}, false
	}
	return t.Estimate(r.Y, r.RowLo, r.RowHi, curve.FlagsOf(r.Clamp, curve.Inside)), true
}

// Unmapped is the unmapped time per layer at n tokens from the first
// unmapped table that answers.
func (t *Tables) Unmapped(n int) (cost.Estimate, bool) { return curve.First(t.Unmappeds, n) }

// HasUnmapped reports whether the costs' tables hold an unmapped table
// (sim then adds the per-layer "unmapped" op).
func (c *Costs) HasUnmapped() bool {
	t, ok := c.Tables.(*Tables)
	return ok && t != nil && len(t.Unmappeds) > 0
}

// Unmapped prices a layer's unmapped kernels at n tokens from the tables;
// zero (Source: no table) without one.
func (c *Costs) Unmapped(n int) cost.Estimate {
	if t, ok := c.Tables.(*Tables); ok && t != nil {
		if e, ok := t.Unmapped(n); ok {
			return e
		}
	}
	return cost.Estimate{Source: cost.Source{Kind: cost.Fixed, Formula: "no unmapped table: 0"}}
}
