package campaign

import (
	"github.com/moecast/moecast/internal/unit"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
)

func findShape(t *testing.T, sh []GEMMShape, dt string, n, k int) GEMMShape {
	t.Helper()
	for _, s := range sh {
		if s.Dtype == dt && s.N == n && s.K == k {
			return s
		}
	}
	t.Fatalf("no %s n=%d k=%d in the gemm shapes", dt, n, k)
	return GEMMShape{}
}

func TestGEMMShapes(t *testing.T) {
	sh, err := gemmShapes(GEMMTPs)
	require.NoError(t, err)
	tests := []struct {
		dt   string
		n, k int
		use  string
	}{
		// Kimi-K2.5 (MLA, 64 heads, q_lora 1536, kv_lora 512, rope 64, nope 128, v 128; bf16 attention)
		{"bf16", 2112, 7168, "kimi-k2.5 tp1 fused_qkv_a_proj"}, // q_a 1536 + kv_a 576, replicated
		{"bf16", 1536, 7168, "kimi-k2.5 tp1 q_a_proj"},
		{"bf16", 576, 7168, "kimi-k2.5 tp1 kv_a_proj_with_mqa"},
		{"bf16", 64 * 192 / 8, 1536, "kimi-k2.5 tp8 q_b_proj"},
		{"bf16", 64 * 256 / 8, 512, "kimi-k2.5 tp8 kv_b_proj"},
		{"bf16", 7168, 64 * 128 / 8, "kimi-k2.5 tp8 o_proj"},
		{"bf16", 2 * 2048 / 8, 7168, "kimi-k2.5 tp8 shared_expert.gate_up_proj"},
		{"bf16", 7168, 2048 / 8, "kimi-k2.5 tp8 shared_expert.down_proj"},
		{"bf16", 2 * 18432 / 8, 7168, "kimi-k2.5 tp8 gate_up_proj"},
		{"bf16", 163840 / 8, 7168, "kimi-k2.5 tp8 lm_head"},
		{"bf16", 384, 7168, "kimi-k2.5 tp1 gate"},
		// DeepSeek-V3: 128 heads, fp8 128x128-block projections, bf16 lm_head
		{"fp8-b128", 128 * 192, 1536, "deepseek-v3 tp1 q_b_proj"},
		{"fp8-b128", 7168, 128 * 128 / 8, "deepseek-v3 tp8 o_proj"},
		{"fp8-b128", 2112, 7168, "deepseek-v3 tp1 fused_qkv_a_proj"},
		{"bf16", 129280 / 8, 7168, "deepseek-v3 tp8 lm_head"},
		{"bf16", 7168, 14336, "deepseek-v3 tp1 eh_proj"},
		// Qwen3-235B-A22B: 64 q heads, 4 kv heads of 128; gpt-oss-120b: 64 q, 8 kv of 64, hidden 2880
		{"bf16", (16 + 2*1) * 128, 4096, "qwen3-235b-a22b tp4 qkv_proj"},
		{"bf16", 4096, 64 * 128 / 4, "qwen3-235b-a22b tp4 o_proj"},
		{"bf16", (8 + 2*1) * 64, 2880, "gpt-oss-120b tp8 qkv_proj"},
		{"bf16", 2880, 64 * 64, "gpt-oss-120b tp1 o_proj"},
	}
	for _, tt := range tests {
		s := findShape(t, sh, tt.dt, tt.n, tt.k)
		assert.Contains(t, s.Uses, tt.use, "%s n=%d k=%d", tt.dt, tt.n, tt.k)
	}
	for _, s := range sh {
		_, ok := gemmKinds[s.Dtype]
		assert.True(t, ok, "%+v", s)
		assert.False(t, s.N == 512 && s.K == 128, "absorbed W_UK (a per-head batch) is no table row: %+v", s)
		for _, u := range s.Uses {
			assert.NotContains(t, u, "indexer")
		}
	}
	steps, err := gemmOp{}.Steps(Options{})
	require.NoError(t, err)
	assert.Equal(t, len(sh), steps)
	quick, err := gemmShapes(quickGEMMTPs)
	require.NoError(t, err)
	steps, err = gemmOp{}.Steps(Options{Quick: true})
	require.NoError(t, err)
	assert.Equal(t, len(quick), steps)
	assert.Less(t, len(quick), len(sh))
	t.Logf("%d shapes (%d under --quick)", len(sh), len(quick))
}

// syntheticGEMM is a campaign's gemm output as an H200 could give it: each
// latency above the physical floor (weights at 4.3 TB/s, FLOPs at 700
// TFLOP/s, plus 3 us).
func syntheticGEMM(t *testing.T, ms []int) *gemmRun {
	sh, err := gemmShapes(GEMMTPs)
	require.NoError(t, err)
	run := &gemmRun{TPs: GEMMTPs, Library: "cuBLASLt 13.1.0 (cudart 13000) from /x/libcublasLt.so.13",
		Checks: []string{"bf16 m=24 n=256 k=512: within tolerance"}}
	for _, s := range sh {
		eb := 2.0
		if s.Dtype != "bf16" {
			eb = 1
		}
		for _, m := range ms {
			lat := max(float64(s.N)*float64(s.K)*eb/4.3e12, 2*float64(m)*float64(s.N)*float64(s.K)/700e12) + 3e-6
			runM := m
			if s.Dtype == "fp8-b128" && m < 4 {
				runM = 4
			}
			run.Results = append(run.Results, gemmResult{Shape: s, M: m, RunM: runM, Timing: unit.Timing{Median: unit.Seconds(lat), Min: unit.Seconds(lat * 0.98), Max: unit.Seconds(lat * 1.03), Eager: unit.Seconds(lat + 5e-6)}})
		}
	}
	return run
}

func gemmFile(t *testing.T, run *gemmRun) *calib.File {
	t.Helper()
	r := recorded()
	r.Outputs = append(r.Outputs, gemmOutput(run))
	f, err := r.File(Options{Command: "moecast calib gpu --ops gemm --out h200.toml", Version: "devel"}, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200.toml")
	require.NoError(t, f.Write(path))
	got, err := calib.Load(path) // the loader's plausibility floors pass
	require.NoError(t, err)
	return got
}

func TestGEMMFileWrittenAndLoaded(t *testing.T) {
	run := syntheticGEMM(t, fullTokens)
	got := gemmFile(t, run)
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name)
		if tb.Op != "gemm" {
			continue
		}
		assert.Equal(t, []string{"n", "k", "m", "latency_us"}, tb.Columns)
		p := got.Effective(&tb)
		assert.Equal(t, "flushed", p.Cache)
		assert.Equal(t, "cuda-graph", p.Launch)
		assert.Contains(t, p.Kernel, "cuBLASLt 13.1.0")
		assert.Contains(t, p.Method, "weights rotated over copies totalling 256 MiB")
		assert.Contains(t, p.Method, "at TP 1, 2, 4, 8")
		assert.Contains(t, p.Method, "checked: bf16 m=24 n=256 k=512")
		if tb.Keys.Dtype == "fp8-b128" {
			assert.Contains(t, p.Method, "quantization kernel")
			assert.Contains(t, p.Method, "hold the time at m rounded up: m=1 ran as m=4, m=2 ran as m=4")
		} else {
			assert.NotContains(t, p.Method, "rounded up")
		}
	}
	assert.Subset(t, names, []string{"gemm.cublaslt.bf16", "gemm.cublaslt.fp8-b128"})
	assert.NotContains(t, got.Provenance.Method, "gemm: bf16/fp8 dense GEMMs", "gemm is measured now")

	// A lookup at a measured point gives the measured value back.
	r := run.Results[0]
	f := dtype.BF16Weights
	e, ok := got.KernelTables().GEMM(kernels.GEMMShape{M: r.M, N: r.Shape.N, K: r.Shape.K, Weight: f})
	require.True(t, ok)
	assert.InDelta(t, float64(r.Timing.Median), float64(e.Time), 1e-12)
	assert.Contains(t, e.Source.Table, "#gemm.cublaslt.bf16")
	// Between measured m: interpolated, no clamp note.
	e, ok = got.KernelTables().GEMM(kernels.GEMMShape{M: 3, N: r.Shape.N, K: r.Shape.K, Weight: f})
	require.True(t, ok)
	assert.Nil(t, e.Source.Range)
	// An unmeasured (n, k), or another dtype, is not answered.
	_, ok = got.KernelTables().GEMM(kernels.GEMMShape{M: 8, N: 12345, K: 7168, Weight: f})
	assert.False(t, ok)
	_, ok = got.KernelTables().GEMM(kernels.GEMMShape{M: 8, N: r.Shape.N, K: r.Shape.K, Weight: dtype.INT4G32})
	assert.False(t, ok)

	out := gemmOutput(run)
	assert.Len(t, out.Report.Rows, len(run.Results))
	assert.Contains(t, strings.Join(out.Lines, "\n"), "within tolerance")
}

func TestGEMMSkippedDtype(t *testing.T) {
	run := syntheticGEMM(t, quickTokens)
	var keep []gemmResult
	for _, r := range run.Results {
		if r.Shape.Dtype == "bf16" {
			keep = append(keep, r)
		}
	}
	run.Results, run.Skipped = keep, []string{"fp8-b128: cuBLASLt has no algorithm for this matmul here"}
	out := gemmOutput(run)
	require.Len(t, out.Tables, 1)
	assert.Equal(t, "bf16", out.Tables[0].Keys.Dtype)
	assert.Contains(t, strings.Join(out.Method, "; "), "gemm not measured: fp8-b128")
}

// TestGEMMAnswersSim: a file written from a (synthetic) gemm run answers
// every dense GEMM sim prices for the gemm models on h200-sxm, at every
// TP the op measures and with DP attention: decode steps and a prefill
// chunk, from the gemm tables (MLA's per-head absorbed W_UK/W_UV batches
// excepted: the roofline prices them).
func TestGEMMAnswersSim(t *testing.T) {
	got := gemmFile(t, syntheticGEMM(t, fullTokens))
	g, ok := kernels.LookupGPU("h200-sxm")
	require.True(t, ok)
	fab, ok := comm.LookupFabric("nvlink4")
	require.True(t, ok)
	for _, name := range gemmModels {
		m, err := model.Preset(name)
		require.NoError(t, err)
		var layouts []model.Layout
		for _, tp := range GEMMTPs {
			if splits(m, tp) {
				layouts = append(layouts, model.Layout{TP: tp, EP: tp, DP: 1})
			}
		}
		layouts = append(layouts, model.Layout{TP: 8, EP: 8, DP: 1, DPAttention: true}) // attention TP 1, MLP TP 8
		for _, l := range layouts {
			gpus := l.TP * l.DP
			s, err := sim.New(sim.Config{Model: m, KVCache: dtype.KVBF16, GPU: g, GPUs: gpus, Fabric: fab, Layout: l,
				Graphs: true, AllReduce: comm.Auto, GPUMemoryUtilization: 0.9, KernelTables: got.KernelTables()})
			require.NoError(t, err, "%s %+v", name, l)
			var ops []sim.Op
			for _, b := range []int{1, 8, 64} {
				o, err := s.Explain(b, 2048)
				require.NoError(t, err)
				ops = append(ops, o...)
			}
			o, err := s.ExplainBatch([]sim.Seq{{Query: 1024, Context: 512, Prefill: true}, {Query: 1, Context: 4096}})
			require.NoError(t, err)
			ops = append(ops, o...)
			checked := 0
			for _, op := range ops {
				if op.Category != cost.GEMM || strings.Contains(op.Shape, "heads (bmm)") || strings.HasPrefix(op.Name, "indexer") {
					continue
				}
				checked++
				assert.Contains(t, op.Estimate.Source.Table, "#gemm.cublaslt.", "%s %+v: %s %s answered by %v", name, l, op.Name, op.Shape, op.Estimate.Source)
			}
			assert.Greater(t, checked, 4, "%s %+v", name, l)
			t.Logf("%s %+v: %d GEMM ops answered from the gemm tables", name, l, checked)
		}
	}
}

// TestGEMMRunWithoutGPU: the op fails with an error NoCUBLASLt recognises.
func TestGEMMRunWithoutGPU(t *testing.T) {
	if err := cuda.InitCUBLASLt(); !cuda.NoCUBLASLt(err) {
		t.Skipf("cuBLASLt is usable here (%v)", err)
	}
	_, err := gemmOp{}.Run(&Env{Options: Options{Quick: true}})
	require.Error(t, err)
	assert.True(t, cuda.NoCUBLASLt(err), "%v", err)
	assert.True(t, slices.Contains(Ops, opGEMM))
}
