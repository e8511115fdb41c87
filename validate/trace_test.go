package validate_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/trace"
	"github.com/moecast/moecast/trace/tracegen"
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
	_, err := compare(t, gptOssScen, validate.Options{Context: 1024, Kind: trace.KindDecode}, traceData+"tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz")
	var ie *validate.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, err.Error(), "no decode step")
}

// The TraceLens vLLM mixed step (gpt-oss-20b on MI300X): 9 prefill
// requests of 8155 new tokens on 275 cached and 37 decodes, priced through
// sim.StepBatch at the annotation's mix; every kernel is in an op or left out.
func TestCompareMixedStep(t *testing.T) {
	rep, err := compare(t, gptOssScen, validate.Options{Context: 1024, ContextFromTrace: true}, traceData+"tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz")
	require.NoError(t, err)
	require.Len(t, rep.Steps, 1)
	st := rep.Steps[0]
	assert.Equal(t, trace.KindMixed, st.Kind)
	assert.Equal(t, [6]int{9, 8155, 275, 37, 8192, 932}, [6]int{st.Prefills, st.PrefillTokens, st.Prefix, st.Decodes, st.Tokens, st.Context})
	var sum unit.Seconds
	names := map[string]bool{}
	for _, o := range st.Ops {
		sum += o.MeasuredTotal
		names[o.Op] = true
	}
	for _, k := range st.LeftOut {
		sum += k.Total
	}
	var kern unit.Seconds
	for c := range cost.Idle {
		kern += st.Categories[c].Measured
	}
	assert.InEpsilon(t, float64(kern), float64(sum), 1e-9, "every kernel in an op or left out")
	for _, op := range []string{"fused_moe (routed experts)", "qkv_proj", "o_proj", "lm_head", "router top-k"} {
		assert.True(t, names[op], "op %s compared (ops: %v)", op, names)
	}
	assert.Less(t, float64(st.Unmapped()), 0.01*float64(st.Measured), "glue is under 1%% of the step")
	// --step-kind prefill finds none in this trace
	_, err = compare(t, gptOssScen, validate.Options{Context: 1024, Kind: trace.KindPrefill}, traceData+"tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no prefill step found")
}

func TestMixOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		label string
		want  validate.Mix
		ok    bool
	}{
		{"vllm detailed mixed", "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)",
			validate.Mix{Prefills: 9, PrefillTokens: 8155, Prefix: 275, Decodes: 37}, true},
		{"vllm detailed decode", "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
			validate.Mix{Decodes: 32}, true},
		{"vllm simple prefill (B200 trace)", "execute_context_1(888_788544)_generation_0(0)",
			validate.Mix{Prefills: 1, PrefillTokens: 888}, true},
		{"sglang extend", "step[EXTEND bs=2 toks=4096]", validate.Mix{Prefills: 2, PrefillTokens: 4096, Prefix: -1}, true},
		{"sglang extend without tokens", "step[EXTEND bs=2]", validate.Mix{Prefills: 2, PrefillTokens: -1, Prefix: -1}, true},
		{"sglang decode", "step[DECODE bs=32]", validate.Mix{Decodes: 32}, true},
		{"runner scope", "gpu_model_runner step", validate.Mix{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := validate.MixOf(tc.label)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
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

// Two ranks of a generated Kimi-K2.5-like TP8 EP8 decode (trace/tracegen)
// against the Kimi-K2.5 TP8 scenario: every step compared, the collectives
// split across ranks, and the routing model's imbalance reported.
func TestCompareTwoRanks(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for r := range 2 {
		cfg := tracegen.DefaultConfig()
		cfg.Rank, cfg.Steps, cfg.PythonEvents = r, 2, 10
		cfg.Device = "NVIDIA RTX PRO 6000 Blackwell Server Edition" // the scenario's GPU
		p := filepath.Join(dir, fmt.Sprintf("rank%d.json", r))
		f, err := os.Create(p)
		require.NoError(t, err)
		_, err = tracegen.Write(f, cfg)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		files = append(files, p)
	}
	ranks, err := validate.ReadTraces(files, trace.FileOptions{})
	require.NoError(t, err)
	sc, err := scenarios.Embedded("kimi-k2.5-rtx-pro-6000-pcie-tp8")
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	rep, err := validate.Compare(sm, &sc.Config, ranks, validate.Options{Context: 2048})
	require.NoError(t, err)
	assert.Len(t, rep.Steps, 4)
	assert.Equal(t, []int{0, 0, 1, 1}, []int{rep.Steps[0].Rank, rep.Steps[1].Rank, rep.Steps[2].Rank, rep.Steps[3].Rank})
	require.NotEmpty(t, rep.Spreads)
	assert.Equal(t, cost.AllReduce, rep.Spreads[0].Category)
	// 122 all-reduces per step (one per attention and MLP of 61 layers), 2 steps
	assert.Equal(t, 244, rep.Spreads[0].Collectives)
	require.NotEmpty(t, rep.Splits)
	for _, sp := range rep.Splits {
		assert.GreaterOrEqual(t, sp.MaxWait, sp.MeanWait)
		assert.GreaterOrEqual(t, float64(sp.MeanWait), 0.0)
	}
	im := rep.Imbalance
	require.NotNil(t, im)
	assert.Equal(t, 8, im.EP)
	assert.Equal(t, 32, im.Tokens)
	assert.InDelta(t, 32.0, im.MeanPairs, 1e-9, "32 tokens x top-8 / EP8")
	assert.Greater(t, im.Pairs, im.MeanPairs)
	assert.Greater(t, im.Touched, im.MeanTouched)
}

// A decode step whose annotation gives no batch needs --batch.
func TestCompareStepWithoutBatch(t *testing.T) {
	_, ranks := load(t, gptOssScen, vllmGptOss)
	res := *ranks[0].Result
	res.Steps = append(res.Steps[:0:0], res.Steps...)
	res.Steps[0].Batch, res.Steps[0].Label = 0, "graph launch 0"
	ranks[0].Result = &res
	sc, err := scenarios.Load(gptOssScen)
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	_, err = validate.Compare(sm, &sc.Config, ranks, validate.Options{Context: 1024})
	var ie *validate.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, err.Error(), vllmGptOss+": step 0 (graph launch 0) names no batch size: give --batch")
	rep, err := validate.Compare(sm, &sc.Config, ranks, validate.Options{Context: 1024, Batch: 32})
	require.NoError(t, err)
	assert.Equal(t, 32, rep.Steps[0].Batch)
}

// Calibration from the generated TP8 ranks: the all-reduce and all-gather
// tables (NCCL kernels: impl nccl) and the MoE layer (int4_wo: the name MoE
// lookups match for Kimi-K2.5's int4-g32 experts).
func TestCalibrationCollectives(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for r := range 2 {
		cfg := tracegen.DefaultConfig()
		cfg.Rank, cfg.Steps, cfg.PythonEvents = r, 2, 10
		cfg.Device = "NVIDIA RTX PRO 6000 Blackwell Server Edition" // the scenario's GPU
		p := filepath.Join(dir, fmt.Sprintf("rank%d.json", r))
		f, err := os.Create(p)
		require.NoError(t, err)
		_, err = tracegen.Write(f, cfg)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		files = append(files, p)
	}
	ranks, err := validate.ReadTraces(files, trace.FileOptions{})
	require.NoError(t, err)
	sc, err := scenarios.Embedded("kimi-k2.5-rtx-pro-6000-pcie-tp8")
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	rep, err := validate.Compare(sm, &sc.Config, ranks, validate.Options{Context: 2048})
	require.NoError(t, err)
	f, err := validate.Calibration(&sc.Config, rep, validate.FromTraceOptions{Date: "2026-12-01", Command: "test"})
	require.NoError(t, err)
	byName := map[string][][]float64{}
	for _, tb := range f.Tables {
		byName[tb.Name] = tb.Rows
	}
	require.Contains(t, byName, "allreduce.trace.nccl")
	require.Contains(t, byName, "allgather.trace.nccl")
	require.Contains(t, byName, "moe.trace.int4_wo.uniform")
	ar := byName["allreduce.trace.nccl"]
	require.Len(t, ar, 1, "one point: every step and rank at the same size, averaged")
	assert.Equal(t, 8.0, ar[0][0], "ranks")
	// 32 tokens x hidden 7168 x bf16, as the op's shape prints it (4 digits)
	assert.InDelta(t, 32*7168*2, ar[0][1], 0.001*32*7168*2)
	assert.Equal(t, "rtx-pro-6000-server", f.Provenance.GPU)
	assert.Equal(t, 8, f.Provenance.GPUCount)
	assert.NotEmpty(t, f.Provenance.Fabric)
}
