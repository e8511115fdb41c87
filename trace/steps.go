package trace

import (
	"regexp"
	"sort"
	"strconv"
)

// StepKind says what a step computes, as far as its annotation tells.
type StepKind uint8

const (
	KindUnknown StepKind = iota
	KindDecode           // only decode tokens (vLLM context_0; SGLang DECODE)
	KindPrefill          // only prompt tokens (vLLM generation_0; SGLang EXTEND)
	KindMixed            // both (vLLM context_N>0 and generation_M>0; SGLang MIXED)
)

var kindNames = [...]string{"unknown", "decode", "prefill", "mixed"}

func (k StepKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseStepKind maps "decode", "prefill", "mixed" or "unknown" to a kind.
func ParseStepKind(s string) (StepKind, bool) {
	for i, n := range kindNames {
		if n == s {
			return StepKind(i), true
		}
	}
	return 0, false
}

// StepSource says how steps were delimited.
type StepSource uint8

const (
	SourceAnnotation StepSource = iota // step annotations (user_annotation), kernels attributed by correlation
	SourceGraph                        // one step per CUDA/HIP graph launch
	SourceGaps                         // GPU idle gaps longer than Options.Gap
)

func (s StepSource) String() string {
	switch s {
	case SourceAnnotation:
		return "annotations"
	case SourceGraph:
		return "graph launches"
	}
	return "idle gaps"
}

// Step-annotation families, by precedence: when a trace holds annotations of
// several families, only the highest one present delimits steps (the others
// are nested in it or wrap several of it).
const (
	famNone   = iota
	famTorch  // ProfilerStep#N (torch.profiler schedule): step_torch.go
	famRunner // vLLM "gpu_model_runner: *" scopes (grouped from one "preprocess" to the next): step_vllm.go
	famEngine // vLLM execute_*context_*generation_* (step_vllm.go), SGLang step[...] (step_sglang.go)
	famUser   // --step REGEX: step_user.go
)

// A delimiter recognises the step annotations (user_annotation names) of one
// engine or tool. Each lives in its own file (step_<name>.go); adding one is
// that file and its entry in builtinDelimiters. Traces without annotations
// fall back to the delimiters that read GPU and runtime events instead: one
// step per graph launch (step_graph.go), else idle gaps (step_gap.go).
type delimiter interface {
	// match reports what an annotation name says about its step (family,
	// kind, batch); ok is false when the name is not one of its steps.
	match(name string) (info stepInfo, ok bool)
	// extends reports whether an annotation that follows a step on the same
	// thread, outside it, still belongs to that step rather than starting
	// one (vLLM's runner scopes run from one "preprocess" to the next).
	extends(name string) bool
	// label names the step that an annotation starts.
	label(name string) string
}

// builtinDelimiters are tried in order; the first match wins.
var builtinDelimiters = [...]delimiter{vllmEngine{}, sglangStep{}, vllmRunner{}, profilerStep{}}

// stepInfo is what an annotation name says about its step.
type stepInfo struct {
	family int
	kind   StepKind
	batch  int
	delim  delimiter // nil when family is famNone
}

// stepMatcher recognises step annotations.
type stepMatcher struct {
	user *regexp.Regexp // --step; when set, the only family
}

// match classifies an annotation name; family famNone means "not a step".
func (m *stepMatcher) match(name string) stepInfo {
	if m.user != nil {
		info, _ := userStep{m.user}.match(name)
		return info
	}
	return parseStepName(name)
}

// parseStepName recognises the built-in step annotations and reads their
// kind and batch.
func parseStepName(name string) stepInfo {
	for _, d := range builtinDelimiters {
		if info, ok := d.match(name); ok {
			return info
		}
	}
	return stepInfo{}
}

// maxCount bounds the request counts read from annotations.
const maxCount = 1 << 30

// count reads a request count; 0 when absent, malformed or absurd.
func count(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxCount {
		return 0
	}
	return n
}

// annot is one step annotation as read (CPU side).
type annot struct {
	name     string
	pid, tid int64
	ts, end  Time
	extID    int64
	info     stepInfo
	index    int64 // event index, for ordering ties
}

// stepWindow is one step delimited on the CPU: the launches on its thread
// (or, failing that, of its process) inside [ts, end] belong to it.
type stepWindow struct {
	id      int // index into the analyzer's step list
	ts, end Time
}

// threadKey names a CPU thread.
type threadKey struct{ pid, tid int64 }

// stepTable is the frozen set of CPU step windows, per thread and sorted.
type stepTable struct {
	byThread map[threadKey][]stepWindow
	byPid    map[int64][]threadKey
}

// buildSteps turns the collected annotations into steps: it keeps the
// highest family present, groups vLLM runner scopes (a step runs from one
// "gpu_model_runner: preprocess" to the next), and merges nested
// annotations of the kept family into the outermost one, whose kind and
// batch are taken from the outermost annotation that states them. It
// returns one stepMeta per step, ordered by start time, and a map from each
// kept annotation's External id to its step.
func buildSteps(anns []annot) (steps []stepMeta, family int) {
	for i := range anns {
		family = max(family, anns[i].info.family)
	}
	if family == famNone {
		return nil, famNone
	}
	kept := make([]annot, 0, len(anns))
	for _, a := range anns {
		if a.info.family == family {
			kept = append(kept, a)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := &kept[i], &kept[j]
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		if a.tid != b.tid {
			return a.tid < b.tid
		}
		if a.ts != b.ts {
			return a.ts < b.ts
		}
		return a.end > b.end // the outer one first
	})
	var cur *stepMeta
	for i := range kept {
		a := &kept[i]
		sameThread := cur != nil && cur.pid == a.pid && cur.tid == a.tid
		switch {
		case sameThread && a.info.delim.extends(a.name):
			// a sibling scope of the current step (vLLM runner scopes)
			cur.end = max(cur.end, a.end)
		case sameThread && a.ts < cur.end:
			// nested in (or overlapping) the current step
			cur.end = max(cur.end, a.end)
			if cur.kind == KindUnknown {
				cur.kind = a.info.kind
			}
			if cur.batch == 0 {
				cur.batch = a.info.batch
			}
		default:
			steps = append(steps, stepMeta{
				label: a.info.delim.label(a.name), pid: a.pid, tid: a.tid, ts: a.ts, end: a.end,
				kind: a.info.kind, batch: a.info.batch,
			})
			cur = &steps[len(steps)-1]
		}
		cur.extIDs = append(cur.extIDs, a.extID)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].ts < steps[j].ts })
	return steps, family
}

// stepMeta is a step's identity before its kernels are known.
type stepMeta struct {
	label    string
	pid, tid int64
	ts, end  Time // CPU window
	kind     StepKind
	batch    int
	extIDs   []int64
}

// newStepTable indexes the CPU windows of steps for lookups by launch.
func newStepTable(steps []stepMeta) *stepTable {
	t := &stepTable{byThread: map[threadKey][]stepWindow{}, byPid: map[int64][]threadKey{}}
	for i, s := range steps {
		k := threadKey{s.pid, s.tid}
		if _, ok := t.byThread[k]; !ok {
			t.byPid[s.pid] = append(t.byPid[s.pid], k)
		}
		t.byThread[k] = append(t.byThread[k], stepWindow{id: i, ts: s.ts, end: s.end})
	}
	for k, w := range t.byThread {
		sort.Slice(w, func(i, j int) bool { return w[i].ts < w[j].ts })
		t.byThread[k] = w
	}
	return t
}

// lookup returns the step whose CPU window holds a launch at ts on thread
// (pid, tid): first on the same thread, else on another thread of the same
// process (e.g. DDP backward kernels launched from the autograd thread
// inside a ProfilerStep of the main thread); -1 when none.
func (t *stepTable) lookup(pid, tid int64, ts Time) int {
	if id := findWindow(t.byThread[threadKey{pid, tid}], ts); id >= 0 {
		return id
	}
	for _, k := range t.byPid[pid] {
		if k.tid == tid {
			continue
		}
		if id := findWindow(t.byThread[k], ts); id >= 0 {
			return id
		}
	}
	return -1
}

// findWindow binary-searches sorted, disjoint windows for one holding ts.
func findWindow(w []stepWindow, ts Time) int {
	i := sort.Search(len(w), func(i int) bool { return w[i].ts > ts }) - 1
	if i >= 0 && ts <= w[i].end {
		return w[i].id
	}
	return -1
}
