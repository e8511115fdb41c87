package validate

import (
	"math"
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompareBench(t *testing.T) {
	m := readFixture(t, "vllm-c16.json")[0]
	p := &serve.Result{
		TTFT:                 serve.Stats{Mean: 500 * unit.Millisecond, Median: 400 * unit.Millisecond, P99: 900 * unit.Millisecond},
		TPOT:                 serve.Stats{Mean: 10 * unit.Millisecond},
		ITL:                  serve.Stats{Mean: 11 * unit.Millisecond},
		E2EL:                 serve.Stats{Mean: 12000 * unit.Millisecond},
		RequestThroughput:    1.0,
		OutputThroughput:     1400,
		TotalTokenThroughput: 2800,
	}
	rows := CompareBench(m, p)
	byKey := map[string]BenchRow{}
	for _, r := range rows {
		byKey[r.Metric+"/"+r.Stat] = r
	}
	_, hasP90 := byKey["ttft/p90"]
	assert.False(t, hasP90, "the file holds no p90: no row")
	ttft := byKey["ttft/mean"]
	assert.InDelta(t, 412.5, ttft.Measured, 1e-9)
	assert.InDelta(t, 500, ttft.Predicted, 1e-9)
	assert.InDelta(t, (500-412.5)/412.5*100, ttft.ErrorPct(), 1e-9)
	worst, row, ok := WorstMeanErrorPct(rows)
	require.True(t, ok)
	// request_throughput: (1.0 - 1.3333333) / 1.3333333 = -25%, larger
	// than ttft's +21.2% and tpot's -11.7%.
	assert.Equal(t, "request_throughput", row.Metric)
	assert.InDelta(t, -25, worst, 1e-4)

	p.Overloaded = true
	for _, r := range CompareBench(m, p) {
		if r.Unit == "ms" {
			assert.True(t, math.IsNaN(r.Predicted), "overloaded: no latency prediction for %s/%s", r.Metric, r.Stat)
		}
	}
}
