package cli

import (
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// breakEvens is break_even_acceptance for each point of a scenario with
// speculative decoding (sim.BreakEvenAcceptance against the same
// deployment without it): nil for a point where it never pays; nil slice
// without speculative decoding.
func breakEvens(sc *scenarios.Scenario, sm *sim.Sim, points []sim.Point) ([]*float64, error) {
	if !sc.Config.Spec.Active() {
		return nil, nil
	}
	cfg := sc.Config
	cfg.Spec = sim.Spec{}
	none, err := sim.New(cfg)
	if err != nil {
		return nil, sc.KeyError(err)
	}
	out := make([]*float64, len(points))
	for i, p := range points {
		a, ok, err := sim.BreakEvenAcceptance(sm, none, p.Batch, p.Context)
		if err != nil {
			return nil, sc.KeyError(err)
		}
		if ok {
			v := view.Round6(a)
			out[i] = &v
		}
	}
	return out, nil
}
