package campaign

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// recordedLayers gives each point a latency of 20 us plus 0.3 us a token
// on this rank (figures of the H200 runs' order; the test checks the
// tables, not the GPU).
func recordedLayers(points []MoEPoint) []MoEResult {
	var out []MoEResult
	for _, p := range points {
		us := 20 + 0.3*float64(p.Tokens)/float64(p.Split.EP)
		out = append(out, MoEResult{Point: p, Experts: unit.Timing{Median: unit.Seconds(us * 1e-6), Min: unit.Seconds(us * 0.99e-6), Max: unit.Seconds(us * 1.01e-6)},
			GateUp: unit.Timing{Median: unit.Seconds(us * 0.5e-6)}, Touched: 8, WorkingSet: 1e9, GlueImage: "glue.sm_90.cubin", GEMMImage: "fp8moe.sm_90.cubin"})
	}
	return out
}

// TestMoEFP8AndMXFP4Tables: the moe_fp8 and moe_mxfp4 ops write one table
// per model, keyed as predict asks for block-fp8 and MXFP4 experts, and the
// lookups answer from them at the measured splits.
func TestMoEFP8AndMXFP4Tables(t *testing.T) {
	r := recorded()
	r.Outputs = append(r.Outputs, MoEFP8Output(recordedLayers(MoEFP8Points(Options{}))), MoEMXFP4Output(recordedLayers(MoEMXFP4Points(Options{}))))
	f, err := r.File(Options{Command: "moecast calib gpu --out h200.toml", Version: "devel"}, time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200.toml")
	require.NoError(t, f.Write(path))
	got, err := calib.Load(path)
	require.NoError(t, err)
	names := map[string]calib.Table{}
	for _, tb := range got.Tables {
		names[tb.Name] = tb
	}
	for _, n := range []string{"moe.moecast_fp8moe.fp8_block.e256.k8.h7168.i2048.uniform", "moe.moecast_fp8moe.fp8_block.e128.k8.h4096.i1536.uniform",
		"moe.moecast_fp8moe.fp8_block.e256.k8.h6144.i2048.uniform", "moe.moecast_w4a16.mxfp4.e128.k4.h2880.i2880.uniform",
		"moe.moecast_w4a16.mxfp4.e32.k4.h2880.i2880.uniform"} {
		tb, ok := names[n]
		require.True(t, ok, n)
		assert.Len(t, tb.Rows, len(fp8Tokens)*map[bool]int{true: 1, false: 2}[n == "moe.moecast_w4a16.mxfp4.e32.k4.h2880.i2880.uniform"], n)
		p := got.Effective(&tb)
		assert.Contains(t, p.Method, "latency = the median of 15 replays", n)
	}
	assert.Contains(t, got.Effective(ptr(names["moe.moecast_fp8moe.fp8_block.e256.k8.h7168.i2048.uniform"])).Method, "not Hopper's fp8 wgmma")
	assert.Contains(t, got.Effective(ptr(names["moe.moecast_w4a16.mxfp4.e128.k4.h2880.i2880.uniform"])).Method, "alpha 1.702, limit 7.0")

	kt := got.KernelTables()
	for _, q := range []struct {
		name                                 string
		w                                    dtype.Format
		experts, topk, hidden, inter, tp, ep int
		tokens                               int
		table                                string
	}{
		{"deepseek ep8", dtype.FP8Block128, 256, 8, 7168, 2048, 1, 8, 1024, "moe.moecast_fp8moe.fp8_block.e256.k8.h7168.i2048.uniform"},
		{"qwen3 tp4", dtype.FP8Block128, 128, 8, 4096, 1536, 4, 1, 128, "moe.moecast_fp8moe.fp8_block.e128.k8.h4096.i1536.uniform"},
		{"glm-5 tp8", dtype.FP8Block128, 256, 8, 6144, 2048, 8, 1, 4096, "moe.moecast_fp8moe.fp8_block.e256.k8.h6144.i2048.uniform"},
		{"gpt-oss-120b tp1", dtype.MXFP4, 128, 4, 2880, 2880, 1, 1, 16, "moe.moecast_w4a16.mxfp4.e128.k4.h2880.i2880.uniform"},
	} {
		e, ok := kt.MoE(kernels.MoEShape{Tokens: q.tokens, GlobalTokens: q.tokens, Hidden: q.hidden, Inter: q.inter / q.tp,
			Weight: q.w, Experts: q.experts, TopK: q.topk, MoETP: q.tp, EP: q.ep})
		require.True(t, ok, q.name)
		assert.InDelta(t, (20+0.3*float64(q.tokens)/float64(q.ep))*1e-6, float64(e.Time), 1e-12, q.name)
		assert.Contains(t, e.Source.Table, "#"+q.table, q.name)
	}
}

func ptr[T any](v T) *T { return &v }
