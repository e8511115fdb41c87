package cli

import (
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/scenarios"
)

// servingRefine is the seam where `moecast plan` takes its second stage:
// an Evaluator that runs the serving simulation (`moecast simulate`) on
// the points near the screen's front (plan.Options.Refine). It returns nil
// while the serving adapter is not wired in: plan then screens with the
// decode-step model alone and says so (Result.Evaluator, and a warning
// when a TTFT objective is given).
func servingRefine(sc *scenarios.Scenario) (plan.Evaluator, error) {
	_ = sc
	return nil, nil
}
