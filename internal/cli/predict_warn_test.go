package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutOfRange(t *testing.T) {
	tests := []struct{ note, want string }{
		{"", ""},
		{"source rows L2-resident (one layer replayed warm); floored at DRAM streaming time by the caller", ""},
		{"clamped: kv_len above the measured range", "clamped: kv_len above the measured range"},
		{"clamped: batch below the measured range; source rows L2-resident (x); extrapolated: tokens above the measured range (y)",
			"clamped: batch below the measured range; extrapolated: tokens above the measured range (y)"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, outOfRange(tc.note), tc.note)
	}
}

// The default scenario at batch 4096 all-gathers 1.34 GB of logits, above
// the embedded NCCL table's largest size: predict warns, in text and in
// JSON, naming the op, the table and the query; at batch 1-64 every query
// lies inside the measured ranges and there is no such warning.
func TestPredictWarnsOutsideMeasuredRange(t *testing.T) {
	code, out, errs := runCLI(t, "predict", "--batch", "1,4096")
	require.Equal(t, ExitOK, code, errs)
	var lines []string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, "extrapolated:") || strings.Contains(l, "clamped:") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 1, out)
	w := lines[0]
	assert.True(t, strings.HasPrefix(w, "warning: head "), w)
	assert.Contains(t, w, "table embedded:rtx-pro-6000-server#nccl.allgather rows ")
	assert.Contains(t, w, "extrapolated: bytes above the measured range")
	assert.Contains(t, w, "query 8 ranks, 1.34GB at batch 4096, context 2048")

	code, out, errs = runCLI(t, "predict", "--batch", "1,4096", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var pr predictJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	n := 0
	for _, w := range pr.Warnings {
		if strings.Contains(w, "extrapolated: bytes above the measured range") {
			n++
			assert.Contains(t, w, "nccl.allgather")
		}
	}
	assert.Equal(t, 1, n, pr.Warnings)

	code, out, errs = runCLI(t, "predict", "--batch", "1,8,64", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	for _, w := range pr.Warnings {
		assert.NotContains(t, w, "extrapolated:")
		assert.NotContains(t, w, "clamped:")
	}
}
