package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot"
)

// TestTickEnds (issue 22 newcomer item): both ends of a numeric axis carry
// a labelled tick; nominal axes stay as they are.
func TestTickEnds(t *testing.T) {
	for _, tc := range []struct {
		name           string
		log            bool
		lo, hi         float64
		wantLo, wantHi float64
	}{
		{"linear 3.2 to 47.9 (major ticks every 20)", false, 3.2, 47.9, 0, 60},
		{"linear already on ticks", false, 0, 100, 0, 100},
		{"log 3.2 to 470", true, 3.2, 470, 2, 500},
		{"log 1 to 1000", true, 1, 1000, 1, 1000},
		{"log 0.013 to 0.9", true, 0.013, 0.9, 0.01, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plot.New()
			p.X.Min, p.X.Max = tc.lo, tc.hi
			if tc.log {
				p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
			}
			tickEnds(&p.X)
			assert.InDelta(t, tc.wantLo, p.X.Min, 1e-9)
			assert.InDelta(t, tc.wantHi, p.X.Max, 1e-9)
		})
	}
	p := plot.New()
	p.NominalX("1", "2", "4")
	lo, hi := p.X.Min, p.X.Max
	tickEnds(&p.X)
	assert.Equal(t, lo, p.X.Min)
	assert.Equal(t, hi, p.X.Max)
}

// TestBudgetLine: a stacked-bar chart with a budget draws it, dashed, and
// names it in the legend; the axis reaches it even above every bar.
func TestBudgetLine(t *testing.T) {
	c := &StackedBars{Title: "Memory per GPU", X: Axis{Label: "batch"}, Labels: []string{"1", "2"}, Y: Axis{Label: "memory", Unit: "GB"},
		Stacks: []Stack{{Name: "weights", Values: []float64{60, 60}}}, Budget: 135, BudgetName: "budget"}
	svg, err := SVG(c)
	assert.NoError(t, err)
	assert.Contains(t, string(svg), "stroke-dasharray")
	assert.Contains(t, string(svg), ">budget<")
	p, err := c.plot()
	assert.NoError(t, err)
	assert.GreaterOrEqual(t, p.Y.Max, 135.0)
}
