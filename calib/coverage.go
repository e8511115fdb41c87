package calib

import (
	"fmt"
	"strings"
)

// Coverage is what one table measures, for `moecast calib show`.
type Coverage struct {
	Name       string
	Op         string
	Keys       string // the fixed keys, "dtype=int4_wo experts=384 ..."
	Rows       int
	LOO        float64 // p90 relative leave-one-out error
	LOOPoints  int     // interior points it was computed over
	Series     []SeriesCoverage
	L2Resident int // rows marked l2_resident = 1
	Provenance Provenance
}

// SeriesCoverage is one measured series: its fixed axis values and the
// range of its interpolated axes.
type SeriesCoverage struct {
	Key    string // "moe_tp=1 ep=8", "ranks=8"
	Points int
	Axes   []AxisRange
}

// AxisRange is the measured range of one axis within a series.
type AxisRange struct {
	Name     string
	Lo, Hi   float64
	Distinct int
}

func keysString(k Keys) string {
	var parts []string
	k.eachSet(
		func(name, v string) { parts = append(parts, name+"="+v) },
		func(name string, v int) { parts = append(parts, fmt.Sprintf("%s=%d", name, v)) })
	return strings.Join(parts, " ")
}

// Coverage reports, per table, its series, axis ranges, row count and
// leave-one-out error, with its effective provenance.
func (f *File) Coverage() []Coverage {
	var out []Coverage
	for i := range f.Tables {
		t := &f.Tables[i]
		c := Coverage{Name: t.Name, Op: t.Op, Keys: keysString(t.Keys), Rows: len(t.Rows), Provenance: f.Effective(t)}
		if t.loo != nil {
			c.LOO, c.LOOPoints = t.loo.LOOError()
		}
		if l2 := t.Column("l2_resident"); l2 != nil {
			for _, v := range l2 {
				if v == 1 {
					c.L2Resident++
				}
			}
		}
		var lay series
		if def, ok := opFor(t.Op); ok {
			lay = def.series
		}
		keyCols := make([][]float64, len(lay.keys))
		for j, k := range lay.keys {
			keyCols[j] = t.Column(k)
		}
		axisCols := make([][]float64, len(lay.axes))
		for j, a := range lay.axes {
			axisCols[j] = t.Column(a)
		}
		groups := map[string][]int{}
		var order []string
		for r := range t.Rows {
			var kp []string
			for j, k := range lay.keys {
				kp = append(kp, fmt.Sprintf("%s=%s", k, formatNumber(keyCols[j][r])))
			}
			key := strings.Join(kp, " ")
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], r)
		}
		for _, key := range order {
			rows := groups[key]
			sc := SeriesCoverage{Key: key, Points: len(rows)}
			for j, a := range lay.axes {
				ar := AxisRange{Name: a, Lo: axisCols[j][rows[0]], Hi: axisCols[j][rows[0]]}
				distinct := map[float64]bool{}
				for _, r := range rows {
					v := axisCols[j][r]
					ar.Lo, ar.Hi = min(ar.Lo, v), max(ar.Hi, v)
					distinct[v] = true
				}
				ar.Distinct = len(distinct)
				sc.Axes = append(sc.Axes, ar)
			}
			c.Series = append(c.Series, sc)
		}
		out = append(out, c)
	}
	return out
}

// Rows counts the rows of every table of f.
func (f *File) Rows() int {
	n := 0
	for _, t := range f.Tables {
		n += len(t.Rows)
	}
	return n
}
