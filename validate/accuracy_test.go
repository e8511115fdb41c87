package validate

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// accRow is a scored row of deployment d with TPOT and TTFT errors (in %).
func accRow(d Deployment, tpotErr, ttftErr float64) CorpusRow {
	return CorpusRow{Deployment: d, Mode: d.Mode,
		Measured:  map[string]Stats{"tpot": {Mean: 10, Median: math.NaN()}, "ttft": {Mean: 100, Median: math.NaN()}},
		Predicted: map[string]Stats{"tpot": {Mean: 10 * (1 + tpotErr/100), Median: math.NaN()}, "ttft": {Mean: 100 * (1 + ttftErr/100), Median: math.NaN()}}}
}

func TestAccuracyLevelsAndFind(t *testing.T) {
	mm := Deployment{GPU: "b200-sxm", Engine: "vllm", Arch: "MiniMaxM2ForCausalLM", Weights: "fp8-b128", Mode: "agg"}
	mm4 := mm
	mm4.Weights = "nvfp4"
	ll := Deployment{GPU: "b200-sxm", Engine: "vllm", Arch: "LlamaForCausalLM", Weights: "fp8", Mode: "agg"}
	cu := Deployment{GPU: CustomGPU, Engine: "vllm", Arch: "LlamaForCausalLM", Weights: "bf16", Mode: "agg"}
	var rows []CorpusRow
	for range 5 {
		rows = append(rows, accRow(mm, -10, -20))
	}
	rows = append(rows, accRow(mm4, +10, +40), accRow(mm4, +10, +40)) // 2 rows: below AccuracyMinRows
	rows = append(rows, accRow(ll, +4, -8), accRow(cu, 0, +60))
	skipped := accRow(ll, +90, +90)
	skipped.Skip = "unreliable: duplicate"
	rows = append(rows, skipped, accRow(Deployment{}, +90, +90)) // neither counts

	tab := Accuracy("test", rows)
	require.Equal(t, 9, tab.Rows)
	find := func(level string, key Deployment) AccuracyGroup {
		for _, g := range tab.Groups {
			if g.Level == level && g.Key == key {
				return g
			}
		}
		t.Fatalf("no %s group %v", level, key)
		return AccuracyGroup{}
	}
	g := find(LevelDeployment, mm)
	require.Equal(t, 5, g.N)
	require.InDelta(t, 10, *g.TPOTMAPE, 1e-9)
	require.InDelta(t, -20, *g.TTFTBias, 1e-9)
	// The model level pools the two weight formats: 5 at -10/-20, 2 at +10/+40.
	g = find(LevelModel, Deployment{GPU: "b200-sxm", Engine: "vllm", Arch: "MiniMaxM2ForCausalLM", Mode: "agg"})
	require.Equal(t, 7, g.N)
	require.InDelta(t, (5*10+2*10)/7.0, *g.TPOTMAPE, 1e-2)
	require.InDelta(t, (5*-20+2*40)/7.0, *g.TTFTBias, 1e-2)
	// The custom GPU's row counts at the engine level only.
	g = find(LevelEngine, Deployment{Engine: "vllm", Mode: "agg"})
	require.Equal(t, 9, g.N)
	g = find(LevelGPU, Deployment{GPU: "b200-sxm", Engine: "vllm", Mode: "agg"})
	require.Equal(t, 8, g.N)
	for _, g := range tab.Groups {
		require.NotEqual(t, CustomGPU, g.Key.GPU, "a custom GPU keyed a %s group", g.Level)
	}

	// Find: the most specific level with AccuracyMinRows rows.
	got, ok := tab.Find(mm)
	require.True(t, ok)
	require.Equal(t, LevelDeployment, got.Level)
	got, _ = tab.Find(mm4) // 2 rows of its own: the model level's 7 answer
	require.Equal(t, LevelModel, got.Level)
	got, _ = tab.Find(ll) // 1 row of Llama: the GPU level's 8
	require.Equal(t, LevelGPU, got.Level)
	got, _ = tab.Find(Deployment{GPU: CustomGPU, Engine: "vllm", Arch: "MiniMaxM2ForCausalLM", Weights: "fp8-b128", Mode: "agg"})
	require.Equal(t, LevelEngine, got.Level, "a custom GPU matched another custom GPU's rows")
	_, ok = tab.Find(Deployment{GPU: "h100-sxm", Engine: "sglang", Arch: "X", Weights: "bf16", Mode: "agg"})
	require.False(t, ok, "no sglang rows at all: nothing to quote")
	// Fewer than AccuracyMinRows at every level: the largest group answers.
	small := Accuracy("small", []CorpusRow{accRow(ll, 1, 1), accRow(ll, 1, 1)})
	got, ok = small.Find(ll)
	require.True(t, ok)
	require.Equal(t, 2, got.N)
	require.Equal(t, LevelDeployment, got.Level)
}

func TestAccuracyJSONRoundTrip(t *testing.T) {
	d := Deployment{GPU: "h100-sxm", Engine: "sglang", Arch: "Qwen3ForCausalLM", Weights: "bf16", Mode: "agg"}
	rows := []CorpusRow{accRow(d, 5, -5)}
	noTTFT := accRow(d, 5, 0)
	noTTFT.Measured["ttft"] = Stats{Mean: math.NaN(), Median: math.NaN()}
	rows = append(rows, noTTFT)
	tab := Accuracy("round trip", rows)
	b, err := tab.JSON()
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(b), "]}\n"))
	require.Equal(t, len(tab.Groups)+2, strings.Count(string(b), "\n"), "one group a line")
	back, err := ReadAccuracy("t.json", b)
	require.NoError(t, err)
	require.Equal(t, tab, back)
	g, ok := back.Find(d)
	require.True(t, ok)
	require.Equal(t, 2, g.N)
	require.Equal(t, 1, g.NTTFT)
	require.Equal(t, 2, g.NTPOT)

	for _, bad := range []struct{ in, want string }{
		{`{"corpus":"x","rows_scored":1,"groups":[{"level":"planet","key":{},"n":1,"n_tpot":1,"n_ttft":1}]}`, "groups[0].level"},
		{`{"corpus":"x","rows_scored":1,"groups":[{"level":"engine","key":{},"n":1,"n_tpot":2,"n_ttft":1}]}`, "groups[0]: row counts"},
		{`{"corpus":"x","rows_scored":1,"groups":[{"level":"engine","key":{},"n":0,"n_tpot":0,"n_ttft":0}]}`, "groups[0]: row counts"},
		{`{"corpus":"x","rows":1}`, "unknown field"},
		{`{"corpus":`, "t.json"},
	} {
		_, err := ReadAccuracy("t.json", []byte(bad.in))
		require.ErrorContains(t, err, bad.want, bad.in)
	}
}
