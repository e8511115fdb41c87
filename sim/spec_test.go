package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
)

func TestTokensPerStep(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want float64
	}{
		{"none", Spec{}, 1},
		{"none ignores K", Spec{Method: SpecNone, DraftTokens: 3, Acceptance: []float64{0.9}}, 1},
		{"iid closed form (1-a^(K+1))/(1-a)", Spec{Method: SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8}}, (1 - 0.8*0.8*0.8*0.8) / 0.2},
		{"per position 1+a1+a1a2+a1a2a3", Spec{Method: SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.45}}, 1 + 0.8 + 0.8*0.6 + 0.8*0.6*0.45},
		{"acceptance 0", Spec{Method: SpecMTP, DraftTokens: 4, Acceptance: []float64{0}}, 1},
		{"acceptance 1", Spec{Method: SpecNgram, DraftTokens: 4, Acceptance: []float64{1}}, 5},
		{"DeepSeek-V3 MTP depth 1 at 0.85", Spec{Method: SpecMTP, DraftTokens: 1, Acceptance: []float64{0.85}}, 1.85},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, tt.spec.TokensPerStep(), 1e-12, tt.name)
	}
}

func TestSpecAcceptanceZeroYieldsOneToken(t *testing.T) {
	for _, method := range []SpecMethod{SpecMTP, SpecEAGLE3, SpecNgram} {
		st := setup{name: "deepseek-v3", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 1, dp: 1, graphs: true,
			spec: Spec{Method: method, DraftTokens: 3, Acceptance: []float64{0}}}
		p, err := st.sim(t).Step(8, 2048)
		require.NoError(t, err)
		assert.Equal(t, 1.0, p.TokensPerStep, method.String())
		assert.Equal(t, p.Step.Time, p.TPOT, method.String())
	}
}

// TestSpecDraftCost: the verify step costs more than a plain step; MTP and
// EAGLE-3 add their draft passes on top of the verify step, ngram none.
func TestSpecDraftCost(t *testing.T) {
	base := setup{name: "deepseek-v3", preset: "deepseek-v3", gpu: "h200-sxm", fabric: "nvlink4", gpus: 8, tp: 8, ep: 1, dp: 1, graphs: true}
	at := func(spec Spec) (Point, []Op) {
		st := base
		st.spec = spec
		s := st.sim(t)
		p, err := s.Step(16, 2048)
		require.NoError(t, err)
		ops, err := s.Explain(16, 2048)
		require.NoError(t, err)
		return p, ops
	}
	plain, _ := at(Spec{})
	acc := []float64{0.7}
	ngram, ngramOps := at(Spec{Method: SpecNgram, DraftTokens: 3, Acceptance: acc})
	mtp, mtpOps := at(Spec{Method: SpecMTP, DraftTokens: 3, Acceptance: acc})
	eagle, eagleOps := at(Spec{Method: SpecEAGLE3, DraftTokens: 3, Acceptance: acc})
	assert.Greater(t, ngram.Step.Time, plain.Step.Time, "verify of 4 tokens per sequence costs more than 1")
	assert.Greater(t, mtp.Step.Time, ngram.Step.Time, "MTP drafts cost GPU time")
	assert.Greater(t, eagle.Step.Time, ngram.Step.Time, "EAGLE-3 drafts cost GPU time")
	// A one-layer draft pass costs less than the whole target pass.
	assert.Less(t, float64(mtp.Step.Time-ngram.Step.Time), float64(3*plain.Step.Time))
	count := func(ops []Op, prefix string) (passes map[string]float64) {
		passes = map[string]float64{}
		for _, o := range ops {
			if strings.HasPrefix(o.Layer, prefix) {
				passes[o.Layer] = o.Count
			}
		}
		return passes
	}
	assert.Empty(t, count(ngramOps, "mtp"))
	assert.Empty(t, count(ngramOps, "eagle"))
	assert.Equal(t, map[string]float64{"mtp pass 1": 1, "mtp pass 2..K": 2}, count(mtpOps, "mtp"))
	assert.Equal(t, map[string]float64{"eagle3 fc": 1, "eagle3 pass 1": 1, "eagle3 pass 2..K": 2}, count(eagleOps, "eagle3"))
	// The draft's MoE layer runs on the first pass at all 4 positions of each
	// of the 16 sequences, later passes at one token per sequence.
	for _, o := range mtpOps {
		if o.Name == "fused_moe (routed experts)" {
			want := map[string]string{"moe": "tokens=64 ", "mtp pass 1": "tokens=64 ", "mtp pass 2..K": "tokens=16 "}[o.Layer]
			assert.True(t, strings.HasPrefix(o.Shape, want), "%s: %s", o.Layer, o.Shape)
		}
	}
	assert.Zero(t, ngram.Breakdown[cost.AllToAll].Time)
}
