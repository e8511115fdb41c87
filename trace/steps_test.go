package trace

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

const tol = 1e-9 // µs; fixture times are exact binary fractions

func TestParseStepName(t *testing.T) {
	tests := []struct {
		name   string
		family int
		kind   StepKind
		batch  int
	}{
		{"execute_context_0(0)_generation_32(32)", famEngine, KindDecode, 32},
		{"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)", famEngine, KindDecode, 32},
		{"execute_context_1(888_788544)_generation_0(0)", famEngine, KindPrefill, 1},
		{"execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)", famEngine, KindMixed, 46},
		{"step[DECODE bs=32]", famEngine, KindDecode, 32},
		{"step[EXTEND bs=15 toks=15360]", famEngine, KindPrefill, 15},
		{"step[MIXED bs=8 toks=900]", famEngine, KindMixed, 8},
		{"gpu_model_runner: forward", famRunner, KindUnknown, 0},
		{"ProfilerStep#12", famTorch, KindUnknown, 0},
		{"ProfilerStep#x", famNone, KindUnknown, 0},
		{"execute_model", famNone, KindUnknown, 0},
		{"nccl:all_reduce", famNone, KindUnknown, 0},
		{"capture_32_FULL", famNone, KindUnknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseStepName(tt.name)
			assert.Equal(t, tt.family, got.family)
			assert.Equal(t, tt.kind, got.kind)
			assert.Equal(t, tt.batch, got.batch)
		})
	}
}

func TestUserStepRegexNamedGroups(t *testing.T) {
	m := stepMatcher{user: regexp.MustCompile(`^iter (?P<kind>\w+) n=(?P<batch>\d+)$`)}
	got := m.match("iter decode n=48")
	assert.Equal(t, famUser, got.family)
	assert.Equal(t, KindDecode, got.kind)
	assert.Equal(t, 48, got.batch)
	assert.Equal(t, famNone, m.match("step[DECODE bs=32]").family, "--step replaces the built-in families")
}

// events builds fixtures. Times in µs.
func ann(name string, pid, tid int64, ts, dur float64, ext int64) Event {
	return Event{Ph: PhaseComplete, Cat: CatUserAnnotation, Name: name, Pid: pid, Tid: tid, TS: timeFromMicros(ts), Dur: secondsFromMicros(dur), ExternalID: ext}
}

func gpuAnn(name string, ts, dur float64, ext int64) Event {
	return Event{Ph: PhaseComplete, Cat: CatGPUUserAnnotation, Name: name, Pid: 0, Tid: 7, TS: timeFromMicros(ts), Dur: secondsFromMicros(dur), ExternalID: ext}
}

func launch(name string, pid, tid int64, ts float64, corr int64) Event {
	return Event{Ph: PhaseComplete, Cat: CatRuntime, Name: name, Pid: pid, Tid: tid, TS: timeFromMicros(ts), Dur: secondsFromMicros(2), Correlation: corr}
}

func kern(name string, stream int64, ts, dur float64, corr int64) Event {
	return Event{Ph: PhaseComplete, Cat: CatKernel, Name: name, Pid: 0, Tid: stream, TS: timeFromMicros(ts), Dur: secondsFromMicros(dur), Correlation: corr}
}

func run(t *testing.T, opts Options, evs ...Event) *Result {
	t.Helper()
	a := newAnalyzer(opts)
	for i := range evs {
		evs[i].Index = int64(i)
		a.Add(&evs[i])
	}
	return a.Finish()
}

// A CUDA-graph replay: one cudaGraphLaunch inside the step annotation, its
// kernels run after the annotation has ended on the CPU and carry the
// launch's correlation id. They must land in the step.
func TestGraphKernelsAttributedThroughLaunch(t *testing.T) {
	res := run(t, Options{},
		ann("execute_context_0(0)_generation_8(8)", 1, 1, 0, 100, 11),
		launch("cudaGraphLaunch", 1, 1, 50, 500),
		kern("nvjet_tst_a", 7, 1000, 30, 500),
		kern("fused_moe_kernel", 7, 1030, 50, 500),
		kern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", 7, 1090, 10, 500),
	)
	require.Len(t, res.Steps, 1)
	s := res.Steps[0]
	assert.Equal(t, KindDecode, s.Kind)
	assert.Equal(t, 8, s.Batch)
	assert.Equal(t, 3, s.KernelEvents)
	assert.InDelta(t, 100, s.Wall.Us(), tol) // 1000 .. 1100
	assert.InDelta(t, 90, s.Busy.Us(), tol)
	assert.InDelta(t, 10, s.Idle.Us(), tol)
	assert.InDelta(t, 30, s.ByCategory[cost.GEMM].Us(), tol)
	assert.InDelta(t, 50, s.ByCategory[cost.MoE].Us(), tol)
	assert.InDelta(t, 10, s.ByCategory[cost.AllReduce].Us(), tol)
	assert.Equal(t, 0, res.Outside)
	assert.Equal(t, SourceAnnotation, res.Source)
}

// B200 traces write each GPU activity just before its runtime call; a
// kernel read before its launch waits for it.
func TestKernelBeforeLaunch(t *testing.T) {
	res := run(t, Options{},
		ann("step[DECODE bs=4]", 1, 1, 0, 100, 1),
		kern("nvjet_x", 7, 10, 5, 21),
		launch("cudaLaunchKernel", 1, 1, 5, 21),
		kern("nvjet_x", 7, 200, 5, 22), // launched outside the step
		launch("cudaLaunchKernel", 1, 1, 150, 22),
	)
	require.Len(t, res.Steps, 1)
	assert.Equal(t, 1, res.Steps[0].KernelEvents)
	assert.Equal(t, 1, res.Outside)
	assert.InDelta(t, 5, res.OutsideTime.Us(), tol)
}

// DDP backward kernels are launched from the autograd thread, outside the
// ProfilerStep annotation's thread but inside its time window.
func TestLaunchOnOtherThreadOfProcess(t *testing.T) {
	res := run(t, Options{},
		ann("ProfilerStep#4", 1, 1, 0, 100, 1),
		launch("cudaLaunchKernel", 1, 2, 50, 30),
		launch("cudaLaunchKernel", 9, 9, 50, 31), // another process: not in the step
		kern("at::native::vectorized_elementwise_kernel", 7, 60, 5, 30),
		kern("at::native::vectorized_elementwise_kernel", 7, 70, 5, 31),
	)
	require.Len(t, res.Steps, 1)
	assert.Equal(t, 1, res.Steps[0].KernelEvents)
	assert.Equal(t, 1, res.Outside)
}

// Nested annotations of the kept family merge into the outermost one (SGLang
// trace: execute_* around step[DECODE bs=32]); lower families (ProfilerStep,
// gpu_model_runner scopes) are ignored when an engine annotation exists.
func TestNestedAnnotationsOneStep(t *testing.T) {
	res := run(t, Options{},
		ann("ProfilerStep#1", 1, 1, 0, 1000, 1),
		ann("execute_context_0(0)_generation_32(32)", 1, 1, 10, 500, 2),
		ann("step[DECODE bs=32]", 1, 1, 20, 400, 3),
		ann("gpu_model_runner: forward", 1, 1, 30, 100, 4),
		ann("execute_context_0(0)_generation_31(31)", 1, 1, 600, 300, 5),
		launch("cudaLaunchKernel", 1, 1, 40, 10),
		launch("cudaLaunchKernel", 1, 1, 700, 11),
		launch("cudaLaunchKernel", 1, 1, 950, 12), // in ProfilerStep only: outside
		kern("nvjet_a", 7, 100, 10, 10),
		kern("nvjet_a", 7, 800, 10, 11),
		kern("nvjet_a", 7, 960, 10, 12),
	)
	require.Len(t, res.Steps, 2)
	assert.Equal(t, "execute_context_0(0)_generation_32(32)", res.Steps[0].Label)
	assert.Equal(t, 32, res.Steps[0].Batch)
	assert.Equal(t, 31, res.Steps[1].Batch)
	assert.Equal(t, 1, res.Outside)
}

// vLLM runner scopes without an execute_* annotation: one step from each
// "preprocess" to the scope before the next one.
func TestRunnerScopesGrouped(t *testing.T) {
	res := run(t, Options{},
		ann("gpu_model_runner: preprocess", 1, 1, 0, 10, 1),
		ann("gpu_model_runner: forward", 1, 1, 12, 20, 2),
		ann("gpu_model_runner: sample", 1, 1, 40, 5, 3),
		ann("gpu_model_runner: preprocess", 1, 1, 100, 10, 4),
		ann("gpu_model_runner: forward", 1, 1, 112, 20, 5),
		launch("cudaLaunchKernel", 1, 1, 35, 10), // between forward and sample: still step 0
		launch("cudaLaunchKernel", 1, 1, 115, 11),
		kern("nvjet_a", 7, 50, 10, 10),
		kern("nvjet_a", 7, 150, 10, 11),
	)
	require.Len(t, res.Steps, 2)
	assert.Equal(t, 1, res.Steps[0].KernelEvents)
	assert.Equal(t, 1, res.Steps[1].KernelEvents)
	assert.Equal(t, 0, res.Outside)
}

// Overlap on two streams: exposed time is time when only one category runs.
//
//	stream 7: gemm [0,40)            moe [60,100)
//	stream 9:          allreduce [30,70)
//
// busy = [0,100) = 100; exposed gemm = [0,30) = 30, allreduce = [40,60) = 20,
// moe = [70,100) = 30; overlaps [30,40) and [60,70) are exposed for none.
func TestBreakdownOverlap(t *testing.T) {
	var r StepResult
	breakdown([]kspan{
		sp(0, 40, cost.GEMM), sp(60, 100, cost.MoE), sp(30, 70, cost.AllReduce),
	}, &r)
	assert.InDelta(t, 100, r.Busy.Us(), tol)
	assert.InDelta(t, 40, r.ByCategory[cost.GEMM].Us(), tol)
	assert.InDelta(t, 40, r.ByCategory[cost.AllReduce].Us(), tol)
	assert.InDelta(t, 30, r.Exposed[cost.GEMM].Us(), tol)
	assert.InDelta(t, 20, r.Exposed[cost.AllReduce].Us(), tol)
	assert.InDelta(t, 30, r.Exposed[cost.MoE].Us(), tol)
	// same-category overlap is exposed for that category, and counted once in busy
	var r2 StepResult
	breakdown([]kspan{sp(0, 10, cost.GEMM), sp(5, 20, cost.GEMM), sp(30, 40, cost.Elementwise)}, &r2)
	assert.InDelta(t, 30, r2.Busy.Us(), tol)
	assert.InDelta(t, 25, r2.ByCategory[cost.GEMM].Us(), tol)
	assert.InDelta(t, 20, r2.Exposed[cost.GEMM].Us(), tol)
	assert.InDelta(t, 10, r2.Exposed[cost.Elementwise].Us(), tol)
}

// Invariants on every step: sum(exposed of kernel categories) <= busy <=
// wall, idle = wall - busy.
func TestBreakdownInvariants(t *testing.T) {
	spans := []kspan{}
	cats := []cost.Category{cost.GEMM, cost.MoE, cost.AllReduce, cost.Elementwise, cost.Attention}
	x := uint64(12345)
	for i := 0; i < 500; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		ts := timeFromMicros(float64(x>>40) / 1000)
		d := secondsFromMicros(float64((x>>20)&0xfff) / 100)
		spans = append(spans, kspan{ts: ts, end: ts.Add(d), dur: d, cat: cats[i%len(cats)]})
	}
	var r StepResult
	breakdown(spans, &r)
	var exp unit.Seconds
	for c := range cost.NumCategories {
		exp += r.Exposed[c]
		assert.LessOrEqual(t, r.Exposed[c].Us(), r.ByCategory[c].Us()+1e-6, "category %v", c)
	}
	assert.LessOrEqual(t, exp.Us(), r.Busy.Us()+1e-6)
}

// The GPU annotation (matched by External id) widens the wall time.
func TestGPUAnnotationWidensWall(t *testing.T) {
	res := run(t, Options{},
		ann("step[DECODE bs=2]", 1, 1, 0, 100, 77),
		launch("cudaLaunchKernel", 1, 1, 10, 5),
		kern("nvjet_a", 7, 100, 10, 5),
		gpuAnn("step[DECODE bs=2]", 95, 30, 77),
	)
	require.Len(t, res.Steps, 1)
	assert.InDelta(t, 30, res.Steps[0].Wall.Us(), tol)
	assert.InDelta(t, 20, res.Steps[0].Idle.Us(), tol)
	assert.InDelta(t, 20, res.Steps[0].ByCategory[cost.Idle].Us(), tol)
}

func TestKindFilter(t *testing.T) {
	evs := []Event{
		ann("step[EXTEND bs=2 toks=100]", 1, 1, 0, 100, 1),
		ann("step[DECODE bs=2]", 1, 1, 200, 100, 2),
		launch("cudaLaunchKernel", 1, 1, 10, 5),
		launch("cudaLaunchKernel", 1, 1, 210, 6),
		kern("nvjet_a", 7, 100, 10, 5),
		kern("nvjet_a", 7, 300, 10, 6),
	}
	all := run(t, Options{}, append([]Event(nil), evs...)...)
	assert.Len(t, all.Steps, 2)
	dec := run(t, Options{Kind: KindDecode}, append([]Event(nil), evs...)...)
	require.Len(t, dec.Steps, 1)
	assert.Equal(t, KindDecode, dec.Steps[0].Kind)
	assert.Equal(t, 1, dec.Steps[0].Index, "index counts all steps, before filtering")
	none := run(t, Options{Kind: KindMixed}, append([]Event(nil), evs...)...)
	assert.Empty(t, none.Steps)
	assert.Contains(t, none.Warnings, "no mixed steps (of 2 steps)")
}

// Without annotations: one step per graph launch; eager kernels are outside.
func TestGraphLaunchSteps(t *testing.T) {
	res := run(t, Options{},
		launch("hipGraphLaunch", 1, 1, 0, 10),
		launch("hipLaunchKernel", 1, 1, 5, 11),
		launch("hipGraphLaunch", 1, 1, 100, 12),
		kern("Cijk_a", 7, 10, 10, 10),
		kern("Cijk_a", 7, 20, 10, 10),
		kern("at::native::x", 7, 40, 10, 11),
		kern("Cijk_a", 7, 110, 10, 12),
	)
	assert.Equal(t, SourceGraph, res.Source)
	require.Len(t, res.Steps, 2)
	assert.Equal(t, 2, res.Steps[0].KernelEvents)
	assert.Equal(t, 1, res.Steps[1].KernelEvents)
	assert.Equal(t, 1, res.Outside)
}

// Without annotations or graphs: steps split at idle gaps longer than Gap.
func TestGapSteps(t *testing.T) {
	res := run(t, Options{Gap: secondsFromMicros(50)},
		launch("cudaLaunchKernel", 1, 1, 0, 1),
		launch("cudaLaunchKernel", 1, 1, 1, 2),
		launch("cudaLaunchKernel", 1, 1, 2, 3),
		kern("nvjet_a", 7, 10, 10, 1),
		kern("nvjet_a", 7, 40, 10, 2),  // 20 µs gap: same step
		kern("nvjet_a", 7, 200, 10, 3), // 150 µs gap: new step
	)
	assert.Equal(t, SourceGaps, res.Source)
	require.Len(t, res.Steps, 2)
	assert.InDelta(t, 40, res.Steps[0].Wall.Us(), tol)
	assert.InDelta(t, 20, res.Steps[0].Busy.Us(), tol)
	assert.Equal(t, 1, res.Steps[1].KernelEvents)
}

// Many steps: steps are closed as later ones receive kernels, so the kernel
// buffers do not grow with the trace; results match a full computation.
func TestManyStepsClosedProgressively(t *testing.T) {
	var evs []Event
	const n = 200
	for i := 0; i < n; i++ {
		base := float64(i) * 1000
		evs = append(evs, ann("step[DECODE bs=1]", 1, 1, base, 100, int64(i+1)))
	}
	for i := 0; i < n; i++ {
		base := float64(i) * 1000
		corr := int64(1000 + i)
		evs = append(evs, launch("cudaGraphLaunch", 1, 1, base+10, corr),
			kern("nvjet_a", 7, base+200, 50, corr),
			kern("ncclDevKernel_AllReduce_x", 7, base+260, 40, corr))
	}
	a := newAnalyzer(Options{})
	maxOpen := 0
	for i := range evs {
		evs[i].Index = int64(i)
		a.Add(&evs[i])
		maxOpen = max(maxOpen, len(a.open))
	}
	res := a.Finish()
	require.Len(t, res.Steps, n)
	assert.LessOrEqual(t, maxOpen, 2)
	for _, s := range res.Steps {
		assert.InDelta(t, 100, s.Wall.Us(), tol)
		assert.InDelta(t, 90, s.Busy.Us(), tol)
		assert.InDelta(t, 40, s.Exposed[cost.AllReduce].Us(), tol)
	}
}

// Writers that interleave steps (annotation, launch, kernels, next
// annotation, ...) get every step; nested and sibling annotations read late
// join their step.
func TestInterleavedSteps(t *testing.T) {
	res := run(t, Options{},
		ann("execute_context_0(0)_generation_4(4)", 1, 1, 0, 100, 1),
		launch("cudaGraphLaunch", 1, 1, 10, 5),
		kern("nvjet_a", 7, 20, 10, 5),
		ann("execute_context_0(0)_generation_5(5)", 1, 1, 200, 100, 2),
		ann("step[DECODE bs=5]", 1, 1, 210, 50, 3), // nested: same step
		launch("cudaGraphLaunch", 1, 1, 220, 6),
		kern("nvjet_a", 7, 230, 10, 6),
		ann("execute_context_0(0)_generation_6(6)", 1, 1, 400, 100, 4),
		launch("cudaGraphLaunch", 1, 1, 410, 7),
		kern("nvjet_a", 7, 430, 10, 7),
		gpuAnn("execute_context_0(0)_generation_6(6)", 425, 20, 4),
	)
	require.Len(t, res.Steps, 3)
	assert.Equal(t, []int{4, 5, 6}, []int{res.Steps[0].Batch, res.Steps[1].Batch, res.Steps[2].Batch})
	assert.Equal(t, 0, res.Outside)
	assert.InDelta(t, 20, res.Steps[2].Wall.Us(), tol)
	assert.Empty(t, res.Warnings)

	runner := run(t, Options{},
		ann("gpu_model_runner: preprocess", 1, 1, 0, 10, 1),
		launch("cudaLaunchKernel", 1, 1, 5, 5),
		kern("nvjet_a", 7, 6, 1, 5),
		ann("gpu_model_runner: forward", 1, 1, 20, 10, 2),
		launch("cudaLaunchKernel", 1, 1, 25, 6),
		kern("nvjet_a", 7, 26, 1, 6),
		ann("gpu_model_runner: preprocess", 1, 1, 100, 10, 3),
		launch("cudaLaunchKernel", 1, 1, 105, 7),
		kern("nvjet_a", 7, 106, 1, 7),
	)
	require.Len(t, runner.Steps, 2)
	assert.Equal(t, 2, runner.Steps[0].KernelEvents)
	assert.Equal(t, 1, runner.Steps[1].KernelEvents)
}

func TestWarnings(t *testing.T) {
	res := run(t, Options{})
	assert.Contains(t, res.Warnings[0], "no kernel events")

	late := run(t, Options{},
		ann("step[DECODE bs=1]", 1, 1, 0, 100, 1),
		launch("cudaLaunchKernel", 1, 1, 10, 5),
		ann("ProfilerStep#2", 1, 1, 200, 100, 2),
		kern("nvjet_a", 7, 20, 10, 5),
	)
	assert.Contains(t, late.Warnings[0], "1 step annotations came after the first GPU launch")
}

// Collective args on kernels (recent PyTorch) are kept per distinct size,
// and re-categorise an NCCL kernel whose name carries no collective.
func TestCollectiveArgs(t *testing.T) {
	k1 := kern("ncclDevKernel_Generic_4(x)", 7, 10, 10, 5)
	k1.Collective, k1.InMsgNelems, k1.OutMsgNelems, k1.DType, k1.GroupSize = "allreduce", 6637568, 6637568, "Float", 2
	k2 := k1
	k2.TS, k2.Correlation = 30, 6
	res := run(t, Options{},
		ann("ProfilerStep#1", 1, 1, 0, 100, 1),
		launch("cudaLaunchKernel", 1, 1, 10, 5),
		launch("cudaLaunchKernel", 1, 1, 20, 6),
		k1, k2,
	)
	require.Len(t, res.Steps, 1)
	assert.InDelta(t, 20, res.Steps[0].ByCategory[cost.AllReduce].Us(), tol)
	require.Len(t, res.Kernels, 1)
	require.Len(t, res.Kernels[0].Collectives, 1)
	assert.Equal(t, CollectiveSize{Collective: "allreduce", InMsgNelems: 6637568, OutMsgNelems: 6637568, DType: "Float", GroupSize: 2, Count: 2}, res.Kernels[0].Collectives[0])
}

// sp is a kernel span from ts to end (µs).
func sp(ts, end float64, cat cost.Category) kspan {
	return kspan{ts: timeFromMicros(ts), end: timeFromMicros(end), dur: secondsFromMicros(end - ts), cat: cat}
}

// Steps keep kernel identity: one entry per kernel name (and category) with
// its count, total, category and the op label of its rule, longest first.
func TestStepKernels(t *testing.T) {
	res := run(t, Options{},
		ann("execute_context_0(0)_generation_8(8)", 1, 1, 0, 100, 11),
		launch("cudaGraphLaunch", 1, 1, 50, 500),
		kern("nvjet_tst_a", 7, 1000, 30, 500),
		kern("fused_moe_kernel", 7, 1030, 50, 500),
		kern("nvjet_tst_a", 7, 1080, 10, 500),
		kern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", 7, 1090, 10, 500),
		kern("unknown_kernel_x", 7, 1100, 5, 500),
	)
	require.Len(t, res.Steps, 1)
	got := res.Steps[0].Kernels
	want := []StepKernel{
		{Name: "fused_moe_kernel", Category: cost.MoE, Op: "triton_fused_moe", Count: 1, Total: secondsFromMicros(50)},
		{Name: "nvjet_tst_a", Category: cost.GEMM, Op: "cublas_nvjet", Count: 2, Total: secondsFromMicros(30) + secondsFromMicros(10)},
		{Name: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", Category: cost.AllReduce, Op: "nccl", Count: 1, Total: secondsFromMicros(10)},
		{Name: "unknown_kernel_x", Category: cost.Other, Op: "unclassified", Count: 1, Total: secondsFromMicros(5)},
	}
	assert.Equal(t, want, got)
}

// An NCCL kernel whose collective args name two collectives counts once
// per category it was attributed to; events in two steps count in each.
func TestStepKernelsSplitByCategoryAndStep(t *testing.T) {
	ag := kern("ncclDevKernel_Generic_x", 7, 10, 4, 1)
	ag.Collective = "allgather"
	ar := kern("ncclDevKernel_Generic_x", 7, 20, 6, 2)
	ar.Collective = "allreduce"
	ar2 := kern("ncclDevKernel_Generic_x", 7, 220, 6, 3)
	ar2.Collective = "allreduce"
	res := run(t, Options{},
		ann("step[DECODE bs=4]", 1, 1, 0, 100, 1),
		ann("step[DECODE bs=4]", 1, 1, 200, 100, 2),
		launch("cudaLaunchKernel", 1, 1, 5, 1),
		launch("cudaLaunchKernel", 1, 1, 6, 2),
		launch("cudaLaunchKernel", 1, 1, 205, 3),
		ag, ar, ar2,
	)
	require.Len(t, res.Steps, 2)
	s0 := res.Steps[0].Kernels
	require.Len(t, s0, 2)
	assert.Equal(t, cost.AllReduce, s0[0].Category)
	assert.Equal(t, cost.AllGather, s0[1].Category)
	require.Len(t, res.Steps[1].Kernels, 1)
	assert.Equal(t, 1, res.Steps[1].Kernels[0].Count)
	assert.Equal(t, cost.AllReduce, res.Steps[1].Kernels[0].Category)
}

// --step that matches no annotation says so instead of silently falling
// back to graph launches or idle gaps.
func TestStepRegexMatchesNothing(t *testing.T) {
	evs := []Event{
		ann("execute_context_0(0)_generation_8(8)", 1, 1, 0, 100, 11),
		launch("cudaLaunchKernel", 1, 1, 50, 500),
		kern("nvjet_tst_a", 7, 60, 30, 500),
	}
	res := run(t, Options{Step: regexp.MustCompile(`^no_such_step$`)}, evs...)
	assert.True(t, res.StepUnmatched)
	assert.Equal(t, SourceGaps, res.Source)
	require.NotEmpty(t, res.Warnings)
	assert.Contains(t, res.Warnings[0], `--step "^no_such_step$" matches no step annotation: steps are delimited by idle gaps instead`)

	res = run(t, Options{Step: regexp.MustCompile(`^execute_`)}, evs...)
	assert.False(t, res.StepUnmatched)
	assert.Equal(t, SourceAnnotation, res.Source)
	res = run(t, Options{}, evs...)
	assert.False(t, res.StepUnmatched, "only an explicit --step can fail to match")
}

// A kernel that starts far from its launch (a time outside the trace's
// span: ts 0 in a trace at epoch-sized instants) is malformed: counted,
// left out of its step and of the kernel statistics, never an epoch-sized
// step.
func TestKernelFarFromLaunch(t *testing.T) {
	const t0 = 1.7e15 // µs since 1970
	res := run(t, Options{},
		ann("step[DECODE bs=4]", 1, 1, t0, 100, 1),
		launch("cudaLaunchKernel", 1, 1, t0+5, 21),
		launch("cudaLaunchKernel", 1, 1, t0+6, 22),
		launch("cudaLaunchKernel", 1, 1, t0+7, 23),
		kern("nvjet_x", 7, t0+10, 5, 21),
		kern("nvjet_x", 7, 0, 5, 22),         // ts far before its launch
		kern("nvjet_x", 7, t0+20e9, 5, 23),   // 20,000 s after it
		kern("nvjet_x", 7, t0+900e3, 5, 999), // no launch: outside, not judged
	)
	require.Len(t, res.Steps, 1)
	assert.Equal(t, 2, res.FarKernels)
	assert.Equal(t, 1, res.Steps[0].KernelEvents)
	assert.InDelta(t, 5, res.Steps[0].Wall.Us(), 1e-3)
	assert.EqualValues(t, 2, res.KernelCount)
	require.Len(t, res.Kernels, 1)
	assert.Equal(t, 2, res.Kernels[0].Count)
	require.NotEmpty(t, res.Warnings)
	assert.Contains(t, res.Warnings[0], "skipped 2 malformed kernel events that start more than")
}
