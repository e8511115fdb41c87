package view

import (
	"math"
	"strings"
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

// TestDisaggBest: the best deployment is taken over agg and disagg by the
// agg best's rule (without a target the most tokens/s per GPU; with one
// the fewest GPUs), the best line and verdict name the xPyD point when it
// wins and the agg best stays when it does not, and a disagg point on the
// front joins the front table.
func TestDisaggBest(t *testing.T) {
	gpu, ok := kernels.LookupGPU("h200-sxm")
	require.True(t, ok)
	cand := plan.Candidate{Config: sim.Config{GPU: gpu, GPUs: 8, Layout: model.Layout{TP: 8, DP: 1, EP: 1}}}
	agg := plan.Point{Candidate: 0, Concurrency: 64, Metrics: plan.Metrics{PerUser: 30, OutputTokensPerSecond: 800},
		PerGPU: 100, Verdict: plan.OnFront, DominatedBy: -1}
	xpyd := func(perGPU float64, units, gpus int, meets, front bool) DisaggPoint {
		return DisaggPoint{Prefill: &cand, Decode: &cand, X: 1, Y: 1, Concurrency: 64, GPUs: 16, PerGPU: perGPU,
			Metrics: plan.Metrics{PerUser: 25, OutputTokensPerSecond: perGPU * 16}, MeetsSLO: meets, OnFront: front,
			Units: units, TotalGPUs: gpus}
	}
	for _, tc := range []struct {
		name     string
		target   float64
		aggGPUs  int
		disagg   []DisaggPoint
		wantBest bool
		verdict  string
	}{
		{"disagg more per GPU", 0, 8, []DisaggPoint{xpyd(120, 0, 0, true, true)}, true, "disaggregation pays: 1P(TP8)+1D(TP8) is the best"},
		{"agg more per GPU", 0, 8, []DisaggPoint{xpyd(80, 0, 0, true, false)}, false, "disaggregation does not pay: agg dominates all 1"},
		{"disagg misses the SLOs", 0, 8, []DisaggPoint{xpyd(500, 0, 0, false, false)}, false, "none of the 1 disaggregated points meets the SLOs"},
		{"target: fewer GPUs", 4000, 40, []DisaggPoint{xpyd(90, 2, 32, true, false)}, true, "is the best deployment over agg and disagg"},
		{"target: more GPUs", 4000, 40, []DisaggPoint{xpyd(130, 3, 48, true, true)}, false, "the agg best stays the best"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &plan.Result{Candidates: []plan.Candidate{cand}, Points: []plan.Point{agg}, Front: []int{0},
				Best: &plan.Best{Point: 0, Replicas: tc.aggGPUs / 8, GPUs: tc.aggGPUs, TargetOutputTokensPerSecond: tc.target, WithinMaxGPUs: true}}
			pl := &Planned{Result: res, Disagg: tc.disagg}
			pl.Plan.Disagg = true
			pl.Plan.TargetOutputTokensPerS = tc.target
			d := pl.DisaggBest()
			assert.Equal(t, tc.wantBest, d != nil)
			line := pl.bestLine()
			if tc.wantBest {
				assert.Contains(t, line, "1P(TP8)+1D(TP8) (disaggregated")
				assert.Contains(t, line, "agg best h200-sxm x8 TP8")
			} else {
				assert.Contains(t, line, "h200-sxm x8 TP8 kv")
				assert.NotContains(t, line, "disaggregated")
			}
			assert.Contains(t, pl.disaggFront(), tc.verdict)
			rows := pl.pointRows(res.Front, false)
			var b strings.Builder
			require.NoError(t, rows.Render(&b, report.Text))
			if tc.disagg[0].OnFront {
				assert.Contains(t, b.String(), "front (disagg)")
			} else {
				assert.NotContains(t, b.String(), "disagg")
			}
			assert.Equal(t, !tc.wantBest, strings.Contains(b.String(), "front (best)"), "the agg point is marked best only when it is")
		})
	}
}
