package campaign

import (
	"github.com/moecast/moecast/internal/unit"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrefillPoints(t *testing.T) {
	tests := []struct {
		name   string
		o      Options
		chunks []int
	}{
		{"full", Options{}, fullPrefillChunks},
		{"quick", Options{Quick: true}, quickPrefillChunks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts := prefillPoints(tt.o)
			require.NotEmpty(t, pts)
			type series struct{ qk, v, w, h, kv int }
			first := map[series]map[int]bool{} // chunks measured at the first prefix
			for _, p := range pts {
				s := series{p.QKDim, p.VDim, p.Window, p.Heads, p.KVHeads}
				if first[s] == nil {
					first[s] = map[int]bool{}
				}
				if p.Prefix == 0 {
					first[s][p.Chunk] = true
				} else {
					assert.LessOrEqual(t, p.gpuCase(0).FLOPs(), maxPrefillFLOPs, "%+v: over the FLOP bound", p)
				}
				assert.Equal(t, p.MLA, p.QKDim != p.VDim)
				assert.True(t, p.Window == 0 || p.QKDim == 64, "only gpt-oss (d64) has a window")
			}
			for s, c := range first {
				assert.Len(t, c, len(tt.chunks), "series %+v: every chunk at prefix 0", s)
			}
			// every GQA split, gpt-oss's again with its window, every MLA head count
			assert.Len(t, first, len(gqaSplits())+4+len(MLAHeads()))
		})
	}
}

func TestPrefillOutput(t *testing.T) {
	var res []prefillResult
	for i, p := range prefillPoints(Options{Quick: true}) {
		res = append(res, prefillResult{Point: p, Timing: unit.Timing{Median: unit.Seconds(float64(i+1) * 1e-5), Min: unit.Seconds(1e-5), Max: unit.Seconds(2e-5)}, FLOPsPerSec: 1e14})
	}
	out := prefillOutput(res)
	names := []string{}
	rows := 0
	for _, tb := range out.Tables {
		require.NoError(t, tb.Validate(), tb.Name)
		names = append(names, tb.Name)
		rows += len(tb.Rows)
		assert.Contains(t, tb.Provenance.Method, "causal")
	}
	assert.Equal(t, []string{"prefill.moecast.d64.kv-bf16", "prefill.moecast.d64.w128.kv-bf16", "prefill.moecast.d128.kv-bf16",
		"prefill.moecast.q192-v128.kv-bf16"}, names)
	assert.Equal(t, len(res), rows)
	require.Len(t, out.Lines, 1)
	assert.Contains(t, out.Lines[0], "prefill")
	assert.Len(t, out.Report.Rows, len(res))
}
