package sim

import "fmt"

// BreakEvenAcceptance is the per-position acceptance a (one value at every
// draft position) at which speculative decoding as s runs it is exactly as
// fast per token as no speculative decoding (none, the same deployment
// with Spec.Method none) at batch and context: below it speculative
// decoding is slower. It solves
//
//	Step_spec(batch, context) / TokensPerStep(a) = Step_none(batch, context)
//
// by bisection on a in [0, 1] (TokensPerStep rises with a; the verify and
// draft passes cost the same whatever is accepted). ok is false when it
// never pays (slower even with every draft accepted); a is 0 when it pays
// even with none accepted.
func BreakEvenAcceptance(s, none *Sim, batch, context int) (a float64, ok bool, err error) {
	if !s.cfg.Spec.Active() {
		return 0, false, fmt.Errorf("break-even acceptance: the scenario has no speculative decoding")
	}
	if none.cfg.Spec.Active() {
		return 0, false, fmt.Errorf("break-even acceptance: the reference runs speculative decoding")
	}
	ps, err := s.Step(batch, context)
	if err != nil {
		return 0, false, err
	}
	pn, err := none.Step(batch, context)
	if err != nil {
		return 0, false, err
	}
	ratio := float64(ps.Step.Time) / float64(pn.Step.Time) // tokens per step needed
	sp := Spec{Method: s.cfg.Spec.Method, DraftTokens: s.cfg.Spec.DraftTokens, Acceptance: []float64{0}}
	tps := func(a float64) float64 {
		sp.Acceptance[0] = a
		return sp.TokensPerStep()
	}
	switch {
	case !(ratio > 0):
		return 0, false, fmt.Errorf("break-even acceptance: step times %v and %v", ps.Step.Time, pn.Step.Time)
	case tps(1) < ratio:
		return 0, false, nil
	case tps(0) >= ratio:
		return 0, true, nil
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if tps(mid) < ratio {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, true, nil
}
