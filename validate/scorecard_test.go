package validate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// row is a scored row with mean TTFT and TPOT measured and predicted.
func row(gpu string, conc int, ttftM, ttftP, tpotM, tpotP float64) CorpusRow {
	return CorpusRow{GPU: gpu, Model: "m", Engine: "vllm", Checkpoint: "fp8", Concurrency: conc, InputTokens: 1024, OutputTokens: 1024,
		Measured:  map[string]Stats{"ttft": {Mean: ttftM, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}, "tpot": {Mean: tpotM, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}},
		Predicted: map[string]Stats{"ttft": {Mean: ttftP, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}, "tpot": {Mean: tpotP, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}}}
}

func TestScore(t *testing.T) {
	rows := []CorpusRow{
		row("a", 4, 100, 110, 10, 9),     // ttft +10, tpot -10
		row("a", 64, 100, 130, 10, 10.5), // ttft +30, tpot +5
		row("b", 512, 100, 50, 10, 14),   // ttft -50, tpot +40
		{GPU: "c", Skip: "cannot express: x"},
		{GPU: "c", Skip: "cannot express: x"},
		{GPU: "c", Skip: "unreliable: y"},
	}
	sc := Score(rows)
	assert.Equal(t, 6, sc.Total)
	assert.Equal(t, 3, sc.Scored)
	o := sc.Overall
	assert.Equal(t, 3, o.NTTFT)
	assert.InDelta(t, 30, o.TTFTMAPE, 1e-9, "(10+30+50)/3")
	assert.InDelta(t, -10.0/3, o.TTFTBias, 1e-9, "(10+30-50)/3")
	assert.InDelta(t, 30, o.TTFTMedianAbs, 1e-9)
	assert.InDelta(t, 55.0/3, o.TPOTMAPE, 1e-9, "(10+5+40)/3")
	assert.InDelta(t, 35.0/3, o.TPOTBias, 1e-9)
	assert.InDelta(t, 1.0/3, o.TTFTWithin20, 1e-9)
	require.Len(t, sc.Partitions, 2)
	assert.Equal(t, "a / m / vllm / fp8", sc.Partitions[0].Name)
	assert.Equal(t, 2, sc.Partitions[0].N)
	assert.InDelta(t, 20, sc.Partitions[0].TTFTMAPE, 1e-9)
	assert.Equal(t, []SkipCount{{"cannot express: x", 2}, {"unreliable: y", 1}}, sc.Skipped)
	var bands []string
	for _, p := range sc.ByConcurrency {
		bands = append(bands, p.Name)
	}
	assert.Equal(t, []string{"C 1-4", "C 17-64", "C >256"}, bands, "in band order")
	require.NotEmpty(t, sc.Worst)
	assert.Equal(t, "b", sc.Worst[0].GPU, "the -50% TTFT / +40% TPOT row is worst")
}

func TestHeadlineFallsBackToMedian(t *testing.T) {
	r := CorpusRow{Measured: map[string]Stats{"ttft": {Mean: math.NaN(), Median: 200, P90: math.NaN(), P99: 400}},
		Predicted: map[string]Stats{"ttft": {Mean: math.NaN(), Median: 250, P90: math.NaN(), P99: 300}}}
	m, p, stat := r.Headline("ttft")
	assert.Equal(t, "median", stat)
	assert.Equal(t, 200.0, m)
	assert.Equal(t, 250.0, p)
	assert.InDelta(t, 25, r.ErrorPct("ttft"), 1e-9)
	assert.True(t, math.IsNaN(r.ErrorPct("tpot")), "not measured")
	r.Skip = "x"
	assert.True(t, math.IsNaN(r.ErrorPct("ttft")), "unscored")
}

func TestBands(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in, out     float64
		conc        int
		shape, load string
	}{
		{"short", 1000, 200, 1, "in <=1k, out <=256", "C 1-4"},
		{"mid", 2048, 1024, 16, "in 1k-4k, out 256-1k", "C 5-16"},
		{"long", 8192, 8192, 64, "in 4k-16k, out >1k", "C 17-64"},
		{"huge", 32768, 128, 256, "in >16k, out <=256", "C 65-256"},
		{"open", 1024, 1024, 0, "in <=1k, out 256-1k", "open loop"},
		{"wide", 1024, 1024, 4096, "in <=1k, out 256-1k", "C >256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &CorpusRow{InputTokens: tc.in, OutputTokens: tc.out, Concurrency: tc.conc}
			assert.Equal(t, tc.shape, shapeBand(r))
			assert.Equal(t, tc.load, concurrencyBand(r))
		})
	}
}

// rec is an aiconfigurator-like record.
func rec(tp, ep, conc int, version string, ttft, tpot float64) BenchResult {
	r := newResult("f.csv", 1, "aiconfigurator")
	r.Model, r.Backend, r.Concurrency, r.InputTokens, r.OutputTokens = "m", "vllm", conc, 1024, 1024
	r.Layout = Layout{GPU: "h100_sxm", TP: tp, EP: ep, PP: 1, DP: 1, Mode: "agg", Precision: "fp8", Extra: map[string]string{"backend_version": version}}
	r.Metrics["ttft"] = Stats{Mean: ttft, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}
	r.Metrics["tpot"] = Stats{Mean: tpot, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}
	return r
}

func TestExcludeUnreliable(t *testing.T) {
	recs := []BenchResult{
		rec(4, 4, 16, "1", 100, 10),      // 0: kept
		rec(4, 4, 16, "1", 100.004, 10),  // 1: duplicate of 0
		rec(16, 1, 16, "1", 100.002, 10), // 2: tp_size slip (16 = 4 x 4, the same figures)
		rec(4, 4, 16, "1", 120, 10),      // 3: same setup, other figures: a repeat, kept
		rec(4, 4, 2, "1", 50, 8),         // 4: kept
		rec(4, 4, 512, "", 30000, 5),     // 5: inconsistent against 4 (TPOT 5 < 0.8 x 8, TTFT > 10 x 50), any version
		rec(4, 4, 64, "1", 300, 6.3),     // 6: TPOT below but TTFT not 10x: kept
		{Layout: Layout{}, Metrics: map[string]Stats{"ttft": NoStats(), "tpot": NoStats()}}, // 7: no layout: not judged
		renamed(rec(4, 4, 16, "1", 120.005, 10), "m2"),                                      // 8: 3's figures under another model
		renamed(rec(4, 4, 16, "1", 130, 10), "m2"),                                          // 9: another model, other figures: kept
		renamed(rec(8, 8, 16, "1", 120, 10), "m2"),                                          // 10: 3's figures but another layout: kept
		rec(4, 4, 16, "1-nightly", 100.003, 10),                                             // 11: 0's figures under another version string: duplicate
		rec(4, 4, 16, "2", 140, 10),                                                         // 12: another version, other figures: kept
	}
	got := ExcludeUnreliable(recs)
	assert.Equal(t, []string{"", ExcludeDuplicate, ExcludeTPSlip, "", "", ExcludeInconsistent, "", "", ExcludeOtherModel, "", "", ExcludeDuplicate, ""}, got)
}

func renamed(r BenchResult, model string) BenchResult {
	r.Model = model
	return r
}

// TestExcludeDuplicateKeepsKnownClient: of one measurement listed twice,
// the copy whose client is known is scored, even when it comes second.
func TestExcludeDuplicateKeepsKnownClient(t *testing.T) {
	known := rec(4, 4, 16, "1", 100.004, 10)
	known.RangeRatio = 0.8
	recs := []BenchResult{rec(4, 4, 16, "1", 100, 10), known, rec(4, 4, 16, "1", 100.002, 10)}
	assert.Equal(t, []string{ExcludeDuplicate, "", ExcludeDuplicate}, ExcludeUnreliable(recs))
	// Without a known client the earlier copy stays.
	recs[1].RangeRatio = 0
	assert.Equal(t, []string{"", ExcludeDuplicate, ExcludeDuplicate}, ExcludeUnreliable(recs))
}
