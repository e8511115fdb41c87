package cli

import (
	"errors"

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

// errServingSweep is what `sweep --serving` answers while the serving
// adapter is not wired in: the seam is computeSweep's apply, which runs
// predict's step at each point; with --serving it is to run the serving
// simulation of the variant's scenario (scenarios.Scenario for the
// combination) instead, and return its points.
var errServingSweep = errors.New("sweep --serving: the serving simulation is not wired into sweep in this build; run without --serving for predict at each point")
