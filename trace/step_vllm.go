package trace

import (
	"regexp"
	"strings"
)

// vLLM's step annotations (the simple form by default, the detailed form
// with detailed_trace_annotation: vllm-project/vllm `vllm/config/profiler.py`
// @ 04b0229; the detailed form is in AMD-AGI/TraceLens @ 171dd74
// tests/traces/inference/vllm_*/graph_execution.json.gz):
//
//	simple:    execute_context_{nctx}({ctx_tokens})_generation_{ngen}({gen_tokens})
//	detailed:  execute_{ntok}_context_{nctx}(...)_generation_{ngen}(...)
//
// and, below them in precedence, the "gpu_model_runner: *" scopes of the V1
// model runner, which together make one step from one "preprocess" scope to
// the next.
var reVLLMStep = regexp.MustCompile(`^execute_(?:\d+_)?context_(\d+)\(.*\)_generation_(\d+)\(.*\)$`)

const runnerPrefix = "gpu_model_runner: "

// vllmEngine delimits steps by vLLM's execute_*context_*generation_*
// annotations: context_0 is pure decode with batch = generation count,
// generation_0 is prefill with batch = context count, both > 0 is mixed
// with batch = their sum.
type vllmEngine struct{}

func (vllmEngine) match(name string) (stepInfo, bool) {
	if !strings.HasPrefix(name, "execute_") {
		return stepInfo{}, false
	}
	sub := reVLLMStep.FindStringSubmatch(name)
	if sub == nil {
		return stepInfo{}, false
	}
	nctx, ngen := count(sub[1]), count(sub[2])
	info := stepInfo{family: famEngine, batch: nctx + ngen, delim: vllmEngine{}}
	switch {
	case nctx == 0 && ngen > 0:
		info.kind = KindDecode
	case ngen == 0 && nctx > 0:
		info.kind = KindPrefill
	case nctx > 0 && ngen > 0:
		info.kind = KindMixed
	}
	return info, true
}

func (vllmEngine) extends(string) bool      { return false }
func (vllmEngine) label(name string) string { return name }

// vllmRunner delimits steps by the model runner's scopes: a step runs from
// one "gpu_model_runner: preprocess" to the next; kind and batch unknown.
type vllmRunner struct{}

func (vllmRunner) match(name string) (stepInfo, bool) {
	if !strings.HasPrefix(name, runnerPrefix) {
		return stepInfo{}, false
	}
	return stepInfo{family: famRunner, delim: vllmRunner{}}, true
}

func (vllmRunner) extends(name string) bool { return !strings.HasSuffix(name, "preprocess") }
func (vllmRunner) label(string) string      { return "gpu_model_runner step" }
