package cli

import (
	"sync"

	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
	"github.com/moecast/moecast/validate/corpus"
)

// shippedAccuracy is the shipped corpus's accuracy summary
// (validate/corpus/accuracy.json), read once; nil if it does not read,
// which TestShippedAccuracy rules out for a built binary.
var shippedAccuracy = sync.OnceValue(func() *validate.AccuracyTable {
	t, err := validate.ReadAccuracy("validate/corpus/accuracy.json", corpus.AccuracyJSON)
	if err != nil {
		return nil
	}
	return t
})

// accuracyOf is what the shipped corpus measured of moecast's error on
// deployments like scenario sc's (simulate's "accuracy" line); nil when
// the summary is missing.
func accuracyOf(sc *scenarios.Scenario) *view.Accuracy {
	t := shippedAccuracy()
	if t == nil {
		return nil
	}
	a := &view.Accuracy{Deployment: view.DeploymentOf(sc)}
	a.Group, a.Found = t.Find(a.Deployment)
	return a
}
