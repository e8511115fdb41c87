package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
)

// The default scenario at batch 4096 all-gathers 1.34 GB of logits, above
// the embedded NCCL table's largest size, and asks the MLA module table
// for a batch above its measured range: predict warns, in text and in
// JSON, naming the op, the table and the query (the MLA warnings were
// lost while the floor's note replaced the table's); at batch 1-64 every
// query lies inside the measured ranges and there is no such warning.
func TestPredictWarnsOutsideMeasuredRange(t *testing.T) {
	code, out, errs := runCLI(t, "predict", "--batch", "1,4096")
	require.Equal(t, ExitOK, code, errs)
	var lines []string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, "extrapolated:") || strings.Contains(l, "clamped:") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 3, out)
	for _, w := range lines[:2] {
		assert.Contains(t, w, "mla decode attention: table embedded:rtx-pro-6000-server#mla.vllm-0.24.0.bf16.kv-bf16 rows ")
		assert.Contains(t, w, "clamped: batch above the measured range; query batch=4096 ctx=2048")
	}
	w := lines[2]
	assert.True(t, strings.HasPrefix(w, "warning: head "), w)
	assert.Contains(t, w, "table embedded:rtx-pro-6000-server#nccl.allgather rows ")
	assert.Contains(t, w, "extrapolated: bytes above the measured range")
	assert.Contains(t, w, "query 8 ranks, 1.34GB at batch 4096, context 2048")

	code, out, errs = runCLI(t, "predict", "--batch", "1,4096", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var pr view.PredictJSON
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

// TestPredictWarnsMLAModuleOutOfRange: the MLA module table answers the
// whole module; at a context above its measured kv_len range the query is
// clamped, and predict says so for the attention op, also at a batch
// where the result is floored at DRAM streaming time (whose note replaces
// the table's: the warning came from note words and was lost there).
func TestPredictWarnsMLAModuleOutOfRange(t *testing.T) {
	code, out, errs := runCLI(t, "predict", "--batch", "1,512", "--context", "200000", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var pr view.PredictJSON
	require.NoError(t, json.Unmarshal([]byte(out), &pr))
	var mla []string
	for _, w := range pr.Warnings {
		if strings.Contains(w, "#mla.") {
			mla = append(mla, w)
		}
	}
	require.Len(t, mla, 2, pr.Warnings) // dense and MoE layers
	for _, w := range mla {
		assert.Contains(t, w, "mla decode attention: table embedded:rtx-pro-6000-server#mla.")
		assert.Contains(t, w, "clamped: kv_len above the measured range")
		assert.Contains(t, w, "at batch 512 (also hit at batch 1)", "batch 512 is floored and still warns")
	}
}
