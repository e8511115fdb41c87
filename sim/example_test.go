package sim_test

import (
	"fmt"

	"github.com/moecast/moecast/sim"
)

// Per-position conditional acceptances of three drafted tokens: a sequence
// gains 1 + 0.8 + 0.8·0.6 + 0.8·0.6·0.45 tokens per verify step.
func ExampleSpec_TokensPerStep() {
	s := sim.Spec{Method: sim.SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.45}}
	fmt.Printf("%.3f tokens per step\n", s.TokensPerStep())
	iid := sim.Spec{Method: sim.SpecMTP, DraftTokens: 1, Acceptance: []float64{0.85}}
	fmt.Printf("%.2f tokens per step\n", iid.TokensPerStep())
	// Output:
	// 2.496 tokens per step
	// 1.85 tokens per step
}
