package view

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/sim"
)

// TestParetoOnePricing (newcomer item): when the search refines, the
// Pareto chart draws only points of the front's pricing (the serving
// simulation), and its caption says how many screened points it left out,
// so that no screened point appears to beat the front.
func TestParetoOnePricing(t *testing.T) {
	gpu, ok := kernels.LookupGPU("h200-sxm")
	require.True(t, ok)
	cand := plan.Candidate{Config: sim.Config{GPU: gpu, GPUs: 8, Layout: model.Layout{TP: 8, DP: 1, EP: 1}}}
	pt := func(perGPU, perUser float64, v plan.Verdict, refined bool) plan.Point {
		return plan.Point{Candidate: 0, Concurrency: 1, Metrics: plan.Metrics{PerUser: perUser, OutputTokensPerSecond: perGPU * 8},
			PerGPU: perGPU, Verdict: v, DominatedBy: -1, Refined: refined}
	}
	for _, tc := range []struct {
		name   string
		points []plan.Point
		others int
		note   string
	}{
		{"refined front, 2 screened points beating it", []plan.Point{pt(100, 50, plan.OnFront, true), pt(50, 20, plan.Dominated, true),
			pt(900, 900, plan.Screened, false), pt(800, 800, plan.Screened, false)}, 1, "the 2 points priced only by the screen"},
		{"screen only", []plan.Point{pt(100, 50, plan.OnFront, false), pt(50, 20, plan.Dominated, false)}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &plan.Result{Candidates: []plan.Candidate{cand}, Points: tc.points, Front: []int{0}}
			c := paretoChart(&Planned{Result: res}).(*report.Pareto)
			assert.Len(t, c.Others, tc.others)
			for _, o := range c.Others {
				assert.Less(t, o.Y, 200.0, "a screened point drawn: %+v", o)
			}
			text := paretoText(res)
			if tc.note == "" {
				assert.NotContains(t, text, "priced only by the screen")
			} else {
				assert.Contains(t, text, tc.note)
			}
		})
	}
}

func TestSimNumNeverNaN(t *testing.T) {
	assert.Nil(t, simNum(math.NaN()))
	assert.Nil(t, simNum(math.Inf(1)))
	assert.Nil(t, simCell(true, math.Inf(-1)))
	assert.Equal(t, 1.5, *simNum(1.5))
}
