package validate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequestLogMatchesLLMServingSim reads the shipped LLMServingSim
// examples' request logs and requires their statistics to be the "vLLM"
// column of each example's summary.txt (LLMServingSim's own reading of
// the same log), to its 0.1 ms rounding: TTFT from the engine's queue
// time, TPOT without the first token, E2E ("Latency").
func TestRequestLogMatchesLLMServingSim(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("corpus", "llmservingsim", "*", "summary.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, summary := range dirs {
		dir := filepath.Dir(summary)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
			require.NoError(t, err)
			rs, err := readBenchBytes("requests.jsonl", log)
			require.NoError(t, err)
			require.Len(t, rs, 1)
			r := rs[0]
			assert.Len(t, r.Requests, 300)
			text, err := os.ReadFile(summary)
			require.NoError(t, err)
			checked := 0
			for _, line := range strings.Split(string(text), "\n") {
				f := strings.Fields(line)
				if len(f) != 5 {
					continue
				}
				metric := map[string]string{"TTFT": "ttft", "TPOT": "tpot", "Latency": "e2el"}[f[0]]
				if metric == "" {
					continue
				}
				want, err := strconv.ParseFloat(f[2], 64)
				require.NoError(t, err, line)
				st := r.Metrics[metric]
				got := map[string]float64{"Mean": st.Mean, "Median": st.Median, "P90": st.P90, "P99": st.P99}
				g, ok := got[f[1]]
				if !ok {
					continue // P95: not a statistic moecast reports
				}
				assert.InDelta(t, want, g, 0.051, "%s %s", f[0], f[1])
				checked++
			}
			assert.Equal(t, 12, checked, "TTFT, TPOT and Latency x mean, median, p90, p99")
		})
	}
}
