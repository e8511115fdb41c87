package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
)

// rank builds the analysis of one rank with one 10 ms decode step and the
// given unclassified kernels (name -> total ms).
func rank(r int, file string, unclassified map[string]float64) trace.FileResult {
	st := trace.StepResult{Kind: trace.KindDecode, Batch: 8, Label: "s", Wall: 10 * unit.Millisecond, Busy: 8 * unit.Millisecond, Idle: 2 * unit.Millisecond}
	st.ByCategory[cost.AllReduce] = 3 * unit.Millisecond
	st.ByCategory[cost.Idle] = 2 * unit.Millisecond
	res := &trace.Result{Steps: []trace.StepResult{st}, Warnings: []string{"w"}}
	for n, ms := range unclassified {
		res.Kernels = append(res.Kernels, trace.KernelStat{Name: n, Count: 2, Total: unit.Seconds(ms) * unit.Millisecond,
			Class: trace.Class{Category: cost.Other, Op: "unclassified", Rule: -1}})
	}
	return trace.FileResult{File: file, Rank: r, Result: res, Summary: trace.Summarize(res.Steps)}
}

// The cross-rank aggregation: steps counted over ranks, warnings prefixed
// with their file, unclassified kernels summed over ranks by name and
// ordered by total time, then name.
func TestTraceSummaryAggregatesRanks(t *testing.T) {
	rep := NewTraceSummary([]trace.FileResult{
		rank(0, "r0.json", map[string]float64{"a": 1, "b": 4}),
		rank(1, "r1.json", map[string]float64{"a": 2, "c": 3}),
	})
	assert.Equal(t, 2, rep.Steps())
	assert.Equal(t, []string{"r0.json", "r1.json"}, rep.Files)
	assert.Equal(t, []string{"r0.json: w", "r1.json: w"}, rep.Warnings)
	assert.Equal(t, []UnclassifiedKernel{{"b", 2, 4}, {"a", 4, 3}, {"c", 2, 3}}, rep.Unclassified)
	require.Len(t, rep.Ranks, 2)
	assert.InDelta(t, 10, rep.Ranks[1].Steps[0].WallMs, 1e-12)
	assert.InDelta(t, 0.3, rep.Ranks[0].Summary.Share["allreduce"], 1e-12)
	_, hasLaunch := rep.Ranks[0].Summary.Share["launch"]
	assert.False(t, hasLaunch, "launch is a predicted-only category")

	var b bytes.Buffer
	require.NoError(t, rep.Render(&b, JSON))
	var back map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	for _, k := range []string{"files", "ranks", "unclassified", "warnings"} {
		assert.Contains(t, back, k)
	}
	b.Reset()
	require.NoError(t, rep.Render(&b, CSV))
	assert.Contains(t, b.String(), "rank,file,index,kind,batch,label,wall_ms,busy_ms,idle_ms,")
	assert.Contains(t, b.String(), "\n1,r1.json,0,decode,8,s,10,8,2,")
}
