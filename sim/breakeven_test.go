package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBreakEvenAcceptance: at the break-even acceptance speculative
// decoding's TPOT equals the plain step; the verify step's cost does not
// depend on the acceptance (which the solve relies on).
func TestBreakEvenAcceptance(t *testing.T) {
	base := kimiRTX.config(t)
	for _, sp := range []Spec{
		{Method: SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.7}},
		{Method: SpecNgram, DraftTokens: 4, Acceptance: []float64{0.5}},
	} {
		cfg := base
		cfg.Spec = sp
		s, err := New(cfg)
		require.NoError(t, err)
		none, err := New(base)
		require.NoError(t, err)
		cfg.Spec.Acceptance = []float64{0.2}
		s2, err := New(cfg)
		require.NoError(t, err)
		for _, b := range []int{1, 16, 256} {
			p1, err := s.Step(b, 4096)
			require.NoError(t, err)
			p2, err := s2.Step(b, 4096)
			require.NoError(t, err)
			assert.Equal(t, p1.Step.Time, p2.Step.Time, "verify cost independent of acceptance")
			a, ok, err := BreakEvenAcceptance(s, none, b, 4096)
			require.NoError(t, err)
			if !ok {
				continue
			}
			pn, err := none.Step(b, 4096)
			require.NoError(t, err)
			at := Spec{Method: sp.Method, DraftTokens: sp.DraftTokens, Acceptance: []float64{a}}
			assert.InEpsilon(t, float64(pn.Step.Time), float64(p1.Step.Time)/at.TokensPerStep(), 1e-9, "%s batch %d: a = %g", sp.Method, b, a)
		}
	}
	_, _, err := BreakEvenAcceptance(mustNew(t, base), mustNew(t, base), 1, 1)
	assert.Error(t, err, "no speculative decoding")
}

func mustNew(t *testing.T, c Config) *Sim {
	s, err := New(c)
	require.NoError(t, err)
	return s
}
