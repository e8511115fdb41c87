package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// A mechanism is one serving behaviour moecast models that can be turned
// off to measure its effect on accuracy (`moecast validate corpus
// --without NAME`): off sets the scenario as if the mechanism were not
// modelled (the behaviour before it was added).
type mechanism struct {
	doc string
	off func(s *Scenario)
}

var mechanisms = map[string]mechanism{
	"front-end": {"the API server: requests tokenised one at a time before the engine sees them (runtime.tokenize_us_per_token = 0)",
		func(s *Scenario) { zero := 0.0; s.Serving.TokenizeTime = &zero }},
	"capture-size": {"the engine's CUDA-graph capture size: decode steps above it priced eagerly (off: every decode step replays a graph)",
		func(s *Scenario) { s.Config.CaptureSize = 0 }},
}

// Mechanisms lists the names TurnOff takes, sorted, each with what turning
// it off means.
func Mechanisms() []string {
	out := make([]string, 0, len(mechanisms))
	for k, m := range mechanisms {
		out = append(out, k+": "+m.doc)
	}
	sort.Strings(out)
	return out
}

// TurnOff turns the named mechanism off in s; call it before s.Sim(). An
// unknown name is an error naming the known ones.
func (s *Scenario) TurnOff(name string) error {
	m, ok := mechanisms[name]
	if !ok {
		names := make([]string, 0, len(mechanisms))
		for k := range mechanisms {
			names = append(names, k)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown mechanism %q (want one of %s)", name, strings.Join(names, ", "))
	}
	m.off(s)
	return nil
}
