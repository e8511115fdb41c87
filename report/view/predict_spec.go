package view

import (
	"encoding/json"
)

// breakEvenJSON is the JSON value of break_even_acceptance: the number,
// null when speculative decoding never pays, absent (nil) without it.
func (pr *Prediction) breakEvenJSON(i int) json.RawMessage {
	if pr.BreakEven == nil {
		return nil
	}
	if pr.BreakEven[i] == nil {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(*pr.BreakEven[i])
	return b
}

// breakEvenCell is the table cell of break_even_acceptance (nil: "-").
func (pr *Prediction) breakEvenCell(i int) any {
	if pr.BreakEven[i] == nil {
		return nil
	}
	return *pr.BreakEven[i]
}
