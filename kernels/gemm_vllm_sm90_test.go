package kernels

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// TestComputeGEMMVLLMSM90: EffComputeGEMMVLLMSM90 is the median compute
// fraction of vLLM's bf16 GEMM rows at M, N, K >= 4096 on H100 and H200
// (testdata/perfdb_gemm_bf16_sm90.csv); a vLLM step's compute-bound bf16
// GEMM is priced within 5% of those rows at the median, and the same GEMM
// on another engine (SGLang, or none named) at the architecture's
// EffComputeGEMM, 0.77/0.70 times as long.
func TestComputeGEMMVLLMSM90(t *testing.T) {
	rows := readTestCSV(t, "perfdb_gemm_bf16_sm90.csv")
	require.Greater(t, len(rows), 2999)
	gpus := map[string]GPU{}
	for _, n := range []string{"h100-sxm", "h200-sxm"} {
		g, ok := LookupGPU(n)
		require.True(t, ok, n)
		gpus[n] = g
	}
	var effs, errs []float64
	for _, r := range rows {
		m, n, k, ms := r.atoi(t, 2), r.atoi(t, 3), r.atoi(t, 4), r.float(t, 5)
		g := gpus[map[string]string{"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm"}[r.fields[0]]]
		require.Equal(t, SM90, g.Arch, "row %d: %s", r.line, r.fields[0])
		lat := unit.Seconds(ms * 1e-3)
		s := GEMMShape{M: m, N: n, K: k, Weight: dtype.BF16Weights}
		effs = append(effs, float64(GEMMFLOPs(s))/float64(lat)/float64(g.PeakFor(dtype.BF16)))
		c := &Costs{GPU: g, Engine: "vllm"}
		errs = append(errs, float64(c.GEMM(s).Time-lat)/float64(lat))
	}
	median := func(x []float64) float64 { sort.Float64s(x); return x[len(x)/2] }
	assert.InDelta(t, EffComputeGEMMVLLMSM90, median(effs), 0.01, "the rows' median compute fraction")
	assert.InDelta(t, 0, median(errs), 0.05, "vLLM's GEMMs priced against its rows")

	g := gpus["h100-sxm"]
	s := GEMMShape{M: 4096, N: 25600, K: 5120, Weight: dtype.BF16Weights}
	v := (&Costs{GPU: g, Engine: "vllm"}).GEMM(s).Time
	for _, eng := range []string{"sglang", ""} {
		o := (&Costs{GPU: g, Engine: eng}).GEMM(s).Time
		assert.InDelta(t, EffComputeGEMMVLLMSM90/EffComputeGEMM, float64(o/v), 0.02, "engine %q", eng)
	}
	// A quantized GEMM keeps its own compute fraction.
	q := GEMMShape{M: 4096, N: 25600, K: 5120, Weight: dtype.FP8Tensor}
	assert.Equal(t, (&Costs{GPU: g, Engine: "sglang"}).GEMM(q).Time, (&Costs{GPU: g, Engine: "vllm"}).GEMM(q).Time)
	// Another architecture has no vLLM figure of its own.
	b, ok := LookupGPU("b200-sxm")
	require.True(t, ok)
	assert.Equal(t, (&Costs{GPU: b, Engine: "sglang"}).GEMM(s).Time, (&Costs{GPU: b, Engine: "vllm"}).GEMM(s).Time)
}
