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

// TestMarlinMXFP4: the sm_90 Marlin MXFP4 MoE price (moe_marlin.go)
// against the perf database's H100 Marlin rows it was fitted to
// (testdata/perfdb_moe_marlin_h100.csv): the MXFP4 rows (896 experts,
// top-16) from 256 tokens up, where the fixed term is under a tenth of the
// layer, within 12% MAPE at every moe_tp; the fixed term within 15% of the
// median one-token intercept (latency - weights at the DRAM peak) of the
// int4 Marlin rows (384 experts, top-8); other architectures and formats
// are not priced by it.
func TestMarlinMXFP4(t *testing.T) {
	g, ok := LookupGPU("h100-sxm")
	require.True(t, ok)
	require.Equal(t, SM90, g.Arch)
	c := &Costs{GPU: g, Engine: "vllm"}
	rows := readTestCSV(t, "perfdb_moe_marlin_h100.csv")
	require.Greater(t, len(rows), 800)
	errs := map[int][]float64{}
	var intercepts []float64
	for _, r := range rows {
		tokens, h, inter, topk, experts, tp := r.atoi(t, 2), r.atoi(t, 3), r.atoi(t, 4), r.atoi(t, 5), r.atoi(t, 6), r.atoi(t, 7)
		lat := unit.Seconds(r.float(t, 10) * 1e-3)
		ws := r.float(t, 11)
		switch r.fields[1] {
		case "int4_wo":
			if tokens == 1 {
				intercepts = append(intercepts, float64(lat-unit.TransferTime(unit.Bytes(ws), g.MemBW)))
			}
			continue
		case "w4a16_mxfp4":
		default:
			t.Fatalf("row %d: moe_dtype %q", r.line, r.fields[1])
		}
		if tokens < 256 {
			continue
		}
		s := MoEShape{Tokens: tokens, Pairs: float64(tokens * topk), Hidden: h, Inter: inter / tp, Weight: dtype.MXFP4Marlin,
			Experts: experts, TopK: topk, MoETP: tp, EP: 1}
		s.ExpertsTouched = ws / (3 * float64(h) * float64(s.Inter) * s.Weight.BytesPerParam())
		e := c.MoE(s)
		assert.Contains(t, e.Source.Formula, "Marlin MXFP4", "row %d", r.line)
		d := float64(e.Time-lat) / float64(lat)
		if d < 0 {
			d = -d
		}
		errs[tp] = append(errs[tp], d)
	}
	require.Len(t, errs, 5)
	for tp, e := range errs {
		sum := 0.0
		for _, x := range e {
			sum += x
		}
		mape := sum / float64(len(e))
		t.Logf("moe_tp %d: %d rows, MAPE %.1f%%", tp, len(e), 100*mape)
		assert.Less(t, mape, 0.12, fmt.Sprintf("moe_tp %d", tp))
	}
	require.NotEmpty(t, intercepts)
	sort.Float64s(intercepts)
	med := intercepts[len(intercepts)/2]
	assert.InDelta(t, 1, float64(MarlinMXFP4Fixed)/med, 0.15, "fixed %v vs int4 one-token intercept %v", MarlinMXFP4Fixed, med)

	// the fraction of the peak grows with the width, clamped at the ends
	assert.Equal(t, MarlinMXFP4Eff(64), MarlinMXFP4Eff(192))
	assert.Equal(t, MarlinMXFP4Eff(8192), MarlinMXFP4Eff(3072))
	prev := 0.0
	for _, w := range []int{192, 300, 384, 768, 1000, 1536, 3072} {
		assert.Greater(t, MarlinMXFP4Eff(w), prev, "width %d", w)
		prev = MarlinMXFP4Eff(w)
	}

	// gpt-oss-120b TP2 (padded 3072 x 1536), 8192 tokens: compute-bound
	s := MoEShape{Tokens: 8192, Pairs: 8192 * 4, ExpertsTouched: 128, Hidden: 3072, Inter: 1536, Weight: dtype.MXFP4Marlin, Experts: 128, TopK: 4, MoETP: 2, EP: 1}
	e, ok := c.marlinMXFP4(s)
	require.True(t, ok)
	assert.Equal(t, "compute", e.Source.Bound)
	// not on other architectures, nor for other formats
	b, ok := LookupGPU("b200-sxm")
	require.True(t, ok)
	_, ok = (&Costs{GPU: b}).marlinMXFP4(s)
	assert.False(t, ok)
	s.Weight = dtype.MXFP4
	_, ok = c.marlinMXFP4(s)
	assert.False(t, ok)
}
