package cli

import (
	"encoding/json"

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
			v := r6(a)
			out[i] = &v
		}
	}
	return out, nil
}

// breakEvenJSON is the JSON value of break_even_acceptance: the number,
// null when speculative decoding never pays, absent (nil) without it.
func (pr *prediction) breakEvenJSON(i int) json.RawMessage {
	if pr.breakEven == nil {
		return nil
	}
	if pr.breakEven[i] == nil {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(*pr.breakEven[i])
	return b
}

// breakEvenCell is the table cell of break_even_acceptance (nil: "-").
func (pr *prediction) breakEvenCell(i int) any {
	if pr.breakEven[i] == nil {
		return nil
	}
	return *pr.breakEven[i]
}
