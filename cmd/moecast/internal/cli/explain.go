package cli

import (
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

// runExplain prints every op of one layer of each kind at (batch,
// context): shape, bytes, FLOPs, time, interval and source.
func runExplain(s *streams, sc *scenarios.Scenario, sm *sim.Sim, batch, context int, format string) error {
	ops, err := sm.Explain(batch, context)
	if err != nil {
		return sc.KeyError(err)
	}
	p, err := sm.Step(batch, context)
	if err != nil {
		return sc.KeyError(err)
	}
	if err := checkPointFinite(p); err != nil {
		return inputErrf("%s: %w", sc.File, err)
	}
	warnings := append(append([]string{}, sc.Warnings...), sc.ContextWarnings(context)...)
	if w := fitWarning(p); w != "" {
		warnings = append(warnings, w)
	}
	ex := &view.Explained{Scenario: sc, Batch: batch, Context: context, Point: p, Ops: ops, Warnings: warnings}
	return output{views: ex.Views()}.write(s, format)
}
