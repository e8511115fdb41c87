package validate_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/trace"
	"github.com/moecast/moecast/validate"
)

const (
	traceData   = "../trace/testdata/"
	vllmGptOss  = traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"
	sglangQwen3 = traceData + "tracelens_sglang_Qwen3-8B_decode.json.gz"
	gptOssScen  = "testdata/gpt-oss-20b-mi300x-tp1.toml"
)

func load(t *testing.T, scen string, files ...string) (*scenarios.Scenario, []validate.Rank) {
	t.Helper()
	sc, err := scenarios.Load(scen)
	require.NoError(t, err)
	var ranks []validate.Rank
	for _, fr := range trace.AnalyzeFiles(files, trace.FileOptions{}) {
		require.NoError(t, fr.Err)
		ranks = append(ranks, validate.Rank{File: fr.File, Rank: fr.Rank, Result: fr.Result})
	}
	return sc, ranks
}

func compare(t *testing.T, scen string, opts validate.Options, files ...string) (*validate.Report, error) {
	sc, ranks := load(t, scen, files...)
	sm, err := sc.Sim()
	require.NoError(t, err)
	return validate.Compare(sm, &sc.Config, ranks, opts)
}

// Every kernel of a step is accounted for exactly once (in an op or left
// out), and the predicted ops (matched or missing) add up to the predicted
// step: the comparison neither drops nor double counts time.
func TestCompareAccountsForEveryKernel(t *testing.T) {
	rep, err := compare(t, gptOssScen, validate.Options{Context: 1024, ContextFromTrace: true}, vllmGptOss)
	require.NoError(t, err)
	require.Len(t, rep.Steps, 1)
	st := rep.Steps[0]
	var kernels, mapped, pred unit.Seconds
	for c := range cost.Idle {
		kernels += st.Categories[c].Measured
	}
	for _, o := range st.Ops {
		mapped += o.MeasuredTotal
		pred += o.PredictedTotal
	}
	for _, k := range st.LeftOut {
		mapped += k.Total
	}
	for _, o := range st.Missing {
		pred += o.PredictedTotal
	}
	assert.InDelta(t, kernels.Us(), mapped.Us(), 1e-6*kernels.Us(), "kernel time %v, accounted %v", kernels, mapped)
	assert.InDelta(t, st.Predicted.Us(), pred.Us(), 1e-6*st.Predicted.Us(), "predicted step %v, ops %v", st.Predicted, pred)
	// vLLM's annotation generation_32(sq32sk55086...): 55086 keys over 32 requests.
	assert.Equal(t, 32, st.Batch)
	assert.Equal(t, 1721, st.Context)
	assert.InDelta(t, float64((st.Predicted-st.Measured)/st.Measured*100), st.ErrorPct(), 1e-9)
}

// The ops of gpt-oss-20b found in the trace, with their counts: 49 norms
// (two per layer and the final one), 24 of each per-layer GEMM, one lm_head.
func TestCompareOpCounts(t *testing.T) {
	rep, err := compare(t, gptOssScen, validate.Options{Context: 1024}, vllmGptOss)
	require.NoError(t, err)
	got := map[string][2]float64{}
	for _, o := range rep.Steps[0].Ops {
		got[o.Op] = [2]float64{float64(o.Count), o.PredictedCount}
	}
	for _, tc := range []struct {
		op        string
		count     float64
		predicted float64
	}{
		{"input_layernorm + post_attention_layernorm + final norm", 49, 49},
		{"qkv_proj", 24, 24},
		{"o_proj", 24, 24},
		{"router (gate)", 24, 24},
		{"lm_head", 1, 1},
		{"rotary_emb", 24, 24},
	} {
		assert.Equal(t, [2]float64{tc.count, tc.predicted}, got[tc.op], "op %s (all: %v)", tc.op, got)
	}
	// Largest absolute miss first.
	ops := rep.Steps[0].Ops
	for i := 1; i < len(ops); i++ {
		assert.GreaterOrEqual(t, math.Abs(float64(ops[i-1].Miss())), math.Abs(float64(ops[i].Miss())))
	}
	assert.Equal(t, cost.MoE, rep.WorstCategory)
}

// A trace of another model is refused with a message naming the file.
func TestCompareRefusesAnotherModel(t *testing.T) {
	_, err := compare(t, gptOssScen, validate.Options{Context: 1024}, sglangQwen3)
	var ie *validate.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, err.Error(), sglangQwen3)
	assert.Contains(t, err.Error(), "MoE")
}

func TestCompareNoDecodeStep(t *testing.T) {
	_, err := compare(t, gptOssScen, validate.Options{Context: 1024}, traceData+"tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz")
	var ie *validate.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, err.Error(), "no decode step")
}

func TestContextOf(t *testing.T) {
	for _, tc := range []struct {
		label string
		want  int
	}{
		{"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)", 1721},
		{"execute_context_0(0)_generation_32(32)", 0},
		{"step[DECODE bs=32]", 0},
	} {
		assert.Equal(t, tc.want, validate.ContextOf(tc.label), tc.label)
	}
}

// gpt-oss-120b has 36 layers; the trace is of the 24-layer gpt-oss-20b.
func TestCompareRefusesLayerCount(t *testing.T) {
	sc, err := scenarios.Embedded("gpt-oss-120b-h200-tp1")
	require.NoError(t, err)
	_, ranks := load(t, gptOssScen, vllmGptOss)
	sm, err := sc.Sim()
	require.NoError(t, err)
	_, err = validate.Compare(sm, &sc.Config, ranks, validate.Options{Context: 1024})
	var ie *validate.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, err.Error(), "has 36 layers")
	assert.Contains(t, err.Error(), "runs 24 times per step")
}
