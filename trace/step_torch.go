package trace

import (
	"regexp"
	"strings"
)

// reTorchStep is the annotation torch.profiler's schedule writes per step.
var reTorchStep = regexp.MustCompile(`^ProfilerStep#\d+$`)

// profilerStep delimits steps by torch.profiler's ProfilerStep#N (the
// lowest precedence: engines' own annotations nest inside it or wrap it).
type profilerStep struct{}

func (profilerStep) match(name string) (stepInfo, bool) {
	if !strings.HasPrefix(name, "ProfilerStep#") || !reTorchStep.MatchString(name) {
		return stepInfo{}, false
	}
	return stepInfo{family: famTorch, delim: profilerStep{}}, true
}

func (profilerStep) extends(string) bool      { return false }
func (profilerStep) label(name string) string { return name }
