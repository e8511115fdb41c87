package kernels

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// gemmRow is one row of testdata/perfdb_gemm_decode.csv: a dense GEMM at a
// decode size timed by aiconfigurator's collector on the engine's own
// kernel (testdata/README.md).
type gemmRow struct {
	system, engine, dtype string
	m, n, k               int
	latency               unit.Seconds
}

func readGEMMPerfdb(t *testing.T) []gemmRow {
	t.Helper()
	rows := readTestCSV(t, "perfdb_gemm_decode.csv")
	out := make([]gemmRow, 0, len(rows))
	for _, r := range rows {
		f := r.fields
		out = append(out, gemmRow{f[0], f[1], f[4], r.atoi(t, 5), r.atoi(t, 6), r.atoi(t, 7), unit.Seconds(r.float(t, 8) * 1e-3)})
	}
	return out
}

var perfdbGEMMFormat = map[string]dtype.Format{"bfloat16": dtype.BF16Weights, "fp8": dtype.FP8Tensor, "nvfp4": dtype.NVFP4}

// medianRelErr is the median of (model - measured)/measured over rows.
func medianRelErr(c *Costs, rows []gemmRow) float64 {
	errs := make([]float64, len(rows))
	for i, r := range rows {
		e := c.GEMM(GEMMShape{M: r.m, N: r.n, K: r.k, Weight: perfdbGEMMFormat[r.dtype]})
		errs[i] = float64(e.Time-r.latency) / float64(r.latency)
	}
	sort.Float64s(errs)
	return errs[len(errs)/2]
}

// TestQuantGEMMAgainstPerfdb holds the dense GEMM roofline against the
// perf database's GEMM rows of each engine and GPU: at decode sizes (M
// 1-64, N and K 2048-51200) with the architecture's QuantGEMM the median
// error of every group is within 10%, and with the bf16 GEMM's streaming
// figures (DefaultQuantGEMM) the Blackwell fp8/nvfp4 groups come out at
// least 12% fast; compute-bound (M = 8192, N and K 4096-16384: 9 rows a
// group, the figures being medians over all engines' rows) the
// architecture's measured compute fractions (QuantGEMMComputeFor) are within 20%, the bf16 GEMM's EffComputeGEMM at
// least 10% fast on fp8/nvfp4 (B200: 30-40%). bf16 GEMMs are priced the same either way.
func TestQuantGEMMAgainstPerfdb(t *testing.T) {
	groups := map[string][]gemmRow{}
	for _, r := range readGEMMPerfdb(t) {
		regime := "decode"
		if r.m >= 4096 {
			regime = "compute"
		}
		key := fmt.Sprintf("%s/%s/%s/%s", r.system, r.engine, r.dtype, regime)
		groups[key] = append(groups[key], r)
	}
	require.Len(t, groups, 14, "systems x engines x dtypes x regimes in the test data")
	presets := map[string]string{"b200_sxm": "b200-sxm", "h100_sxm": "h100-sxm"}
	for key, rows := range groups {
		t.Run(key, func(t *testing.T) {
			r0 := rows[0]
			compute := r0.m >= 4096
			g := gpu(t, presets[r0.system])
			arch := newCosts(g, true)
			if compute {
				c, ok := QuantGEMMComputeFor(g.Arch)
				require.True(t, ok)
				q := &arch.Eff.QuantGEMM
				q.FP8.Compute, q.FP8Block.Compute, q.FP4.Compute = c.FP8, c.FP8Block, c.FP4
			}
			flat := newCosts(g, true)
			flat.Eff.QuantGEMM = DefaultQuantGEMM()
			got, old := medianRelErr(arch, rows), medianRelErr(flat, rows)
			t.Logf("%d rows: median error %+.1f%% (arch QuantGEMM), %+.1f%% (default)", len(rows), 100*got, 100*old)
			tol := 0.10
			if compute {
				tol = 0.20
			}
			assert.InDelta(t, 0, got, tol, "median error with the architecture's QuantGEMM")
			switch {
			case r0.dtype == "bfloat16":
				assert.Equal(t, old, got, "bf16 GEMMs do not take QuantGEMM")
				assert.InDelta(t, 0, got, tol)
			case compute:
				assert.Less(t, old, -0.10, "the bf16 GEMM's compute efficiency prices quantized GEMMs fast")
			case g.Arch == SM100:
				assert.Less(t, old, -0.12, "the bf16 GEMM's streaming figures price Blackwell's quantized GEMMs fast")
			}
		})
	}
}

// TestQuantGEMMFamilies: each weight format takes its family's figures;
// bf16 and weight-only formats take none.
func TestQuantGEMMFamilies(t *testing.T) {
	q := QuantGEMMSM100
	for _, tc := range []struct {
		f    dtype.Format
		want QuantGEMMCost
		ok   bool
	}{
		{dtype.FP8Tensor, q.FP8, true},
		{dtype.FP8Block128, q.FP8Block, true},
		{dtype.MXFP8, q.FP8Block, true},
		{dtype.NVFP4, q.FP4, true},
		{dtype.BF16Weights, QuantGEMMCost{}, false},
		{dtype.INT4G32, QuantGEMMCost{}, false},
		{dtype.NVFP4A16, QuantGEMMCost{}, false},
	} {
		got, ok := q.For(tc.f)
		assert.Equal(t, tc.ok, ok, tc.f.Name)
		assert.Equal(t, tc.want, got, tc.f.Name)
	}
	// A B200 fp8 GEMM is its fixed cost plus its bytes at 0.70 of the
	// DRAM bandwidth; an RTX PRO 6000 (sm_120, no perf database rows)
	// keeps the default.
	s := GEMMShape{M: 4, N: 8192, K: 8192, Weight: dtype.FP8Tensor}
	b200 := gpu(t, "b200-sxm")
	want := QuantGEMMSM100.FP8.Fixed + unit.TransferTime(GEMMBytes(s), b200.MemBW*unit.BytesPerSecond(QuantGEMMSM100.FP8.Mem))
	assert.InDelta(t, float64(want), float64(newCosts(b200, true).GEMM(s).Time), 1e-12)
	rtx := gpu(t, "rtx-pro-6000-server")
	want = StreamKernelLatency + SmallKernelLatency + unit.TransferTime(GEMMBytes(s), rtx.MemBW*unit.BytesPerSecond(EffMem))
	assert.InDelta(t, float64(want), float64(newCosts(rtx, true).GEMM(s).Time), 1e-12)
}
