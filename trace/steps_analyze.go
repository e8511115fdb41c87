package trace

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// Options configure the step analysis of one trace.
type Options struct {
	Rules *Rules         // classification rules; nil: DefaultRules
	Step  *regexp.Regexp // --step: the only step annotations (user_annotation names); nil: built-in families
	Kind  StepKind       // keep only steps of this kind; KindUnknown keeps all
	// Gap is the idle time that separates two steps when a trace has neither
	// step annotations nor graph launches. Zero means DefaultGap.
	Gap unit.Seconds
}

// DefaultGap separates gap-delimited steps: 1 ms of GPU idle. Decode steps of
// a served model are separated by scheduler and sampling work on the CPU of
// that order, while kernels inside an eager step rarely leave the GPU idle
// for a whole millisecond. It is a heuristic: set Options.Gap (--gap) when it
// does not fit.
const DefaultGap = 1 * unit.Millisecond

// StepResult is the breakdown of one step. Spans are unit.Seconds.
//
//   - Wall: from the step's first kernel start to its last kernel end, widened
//     to the span of its gpu_user_annotation when the trace has one (the
//     GPU-time twin Kineto writes of the CPU annotation, matched through
//     "External id").
//   - Busy: the measure of the union of the step's kernel intervals (kernels,
//     memcpy and memset) over all streams.
//   - Idle: Wall - Busy.
//   - ByCategory[c]: the summed durations of the step's kernels of category c.
//     Kernels on concurrent streams each count in full, so the sum over
//     categories can exceed Busy. ByCategory[Idle] = Idle.
//   - Exposed[c]: the measure of the time in which at least one kernel of
//     category c runs and no kernel of any other category runs. Time in
//     which two categories overlap is exposed for neither (it counts in
//     Busy only), so sum(Exposed) <= Busy. Exposed[Idle] = Idle.
type StepResult struct {
	Index int // position among the steps of the trace, from 0, before --kind filtering
	Kind  StepKind
	Batch int    // requests in the step, from its annotation; 0 when unknown
	Label string // the annotation name (or "graph launch N" / "gap step N")
	Start Time   // first kernel start (or GPU annotation start)
	Wall  unit.Seconds
	Busy  unit.Seconds
	Idle  unit.Seconds
	// KernelEvents counts the kernel, memcpy and memset events attributed
	// to the step.
	KernelEvents int
	// Kernels keeps the identity of the step's kernels: one entry per
	// kernel name and category, by total time, longest first. Their totals
	// add up to the sum of ByCategory over the non-idle categories.
	Kernels []StepKernel

	ByCategory [cost.NumCategories]unit.Seconds
	Exposed    [cost.NumCategories]unit.Seconds
}

// StepKernel is one kernel of one step: a name, the category and op its
// events were attributed to, how many ran in the step and their summed
// durations (concurrent streams count in full). Name is interned: it shares
// storage with KernelStat.Name and the Reader's other copies. A kernel whose
// events fall in two categories (an NCCL kernel whose collective args name
// different collectives) has one entry per category.
type StepKernel struct {
	Name     string
	Category cost.Category
	Op       string // the op label of the rule that matched the name ("unclassified" when none did)
	Count    int
	Total    unit.Seconds
}

// KernelStat aggregates the events of one kernel name over the whole trace.
type KernelStat struct {
	Name        string
	Class       Class
	Count       int
	Total       unit.Seconds
	Collectives []CollectiveSize // distinct collective args seen (NCCL kernels of recent PyTorch)
}

// CollectiveSize is one distinct set of collective args of a kernel, as
// recent PyTorch writes them on NCCL kernel events ("Collective name",
// "In msg nelems", "Out msg nelems", "dtype", "Group size").
type CollectiveSize struct {
	Collective   string
	InMsgNelems  int64
	OutMsgNelems int64
	DType        string
	GroupSize    int32
	Count        int
}

// maxCollectiveSizes bounds the distinct sizes kept per kernel name.
const maxCollectiveSizes = 64

// Result is the analysis of one trace (one rank).
type Result struct {
	Source  StepSource
	Steps   []StepResult // in time order, after --kind filtering
	Kernels []KernelStat // every kernel name, by total time, longest first

	Events      int64        // events consumed
	KernelCount int64        // kernel, memcpy and memset events
	Outside     int          // kernel events attributed to no step
	OutsideTime unit.Seconds // their summed duration
	Devices     int          // distinct GPU devices (pid of kernel events)
	// StepUnmatched is set when Options.Step matched no annotation read
	// before the first GPU launch, so steps came from graph launches or
	// idle gaps instead (with a warning; FileOptions.Strict makes it an
	// error).
	StepUnmatched bool
	// FarKernels counts the device events that start far from their launch
	// (more than maxBeforeLaunch before it or maxAfterLaunch after it): a
	// time outside the trace's span, so malformed and left out of every
	// sum; FarOffset is the byte offset of the first.
	FarKernels int
	FarOffset  int64

	// Fault is the fatal fault that ended the read before the end of the
	// file (a file cut short: io.ErrUnexpectedEOF), with its byte offset
	// and event index; nil when the file was read to its end. The steps
	// are those read before it, the last possibly cut.
	Fault *Error

	Warnings []string
}

// Unclassified returns the kernels no rule matched, by total time.
func (r *Result) Unclassified() []KernelStat {
	var out []KernelStat
	for _, k := range r.Kernels {
		if !k.Class.Matched {
			out = append(out, k)
		}
	}
	return out
}

// kspan is one kernel interval buffered in its step.
type kspan struct {
	ts, end Time
	dur     unit.Seconds // as written: end-ts loses precision at trace-sized instants
	cat     cost.Category
	kid     int32 // the kernel name's record: analyzer.kernelList[kid]
}

// stepAcc accumulates one step while its kernels arrive.
type stepAcc struct {
	meta    stepMeta
	spans   []kspan
	done    bool
	res     StepResult
	hasK    bool
	kmin    Time
	kmax    Time
	gpuSpan bool
	gmin    Time
	gmax    Time
	kern    []StepKernel    // the step's kernels, in first-seen order
	kslot   map[int64]int32 // kernel id << 8 | category -> index in kern
}

// addKernel counts one event of kernel rec (attributed to cat) in the step.
// The record remembers its last step and slot, so consecutive events of a
// kernel in one step (the common case) take no map lookup.
func (s *stepAcc) addKernel(rec *kernelRec, cat cost.Category, dur unit.Seconds) {
	if rec.lastStep == s && s.kern[rec.lastSlot].Category == cat {
		k := &s.kern[rec.lastSlot]
		k.Count++
		k.Total += dur
		return
	}
	key := int64(rec.id)<<8 | int64(cat)
	slot, ok := s.kslot[key]
	if !ok {
		if s.kslot == nil {
			s.kslot = map[int64]int32{}
		}
		slot = int32(len(s.kern))
		s.kslot[key] = slot
		s.kern = append(s.kern, StepKernel{Name: rec.Name, Category: cat, Op: rec.Class.Op})
	}
	k := &s.kern[slot]
	k.Count++
	k.Total += dur
	rec.lastStep, rec.lastSlot = s, slot
}

// kernelRec is the analyzer's record of one kernel name.
type kernelRec struct {
	KernelStat
	id       int32
	lastStep *stepAcc // the step of the name's last event, with its slot there
	lastSlot int32
}

// analyzer consumes the events of one trace in a single pass and builds its
// steps. Memory: a small record per step; one map entry per kernel launch
// whose kernel has not arrived yet and one per graph launch (correlation id
// -> step); a bitset of the launch correlation ids (8 KiB per 65,536); the
// kernels read before their launch (usually one); the kernel-name table; and
// the kernel intervals (32 bytes each) of the steps still open: a step is
// closed once kernels of a step two places later arrive, or at the end.
// Nothing grows with the number of events beyond the per-step records,
// which include one StepKernel per distinct kernel (and category) of the
// step.
type analyzer struct {
	opts  Options
	cls   *Classifier
	match stepMatcher

	anns    []annot
	frozen  bool
	family  int
	table   *stepTable
	steps   []*stepAcc
	extStep map[int64]int // External id of a kept CPU annotation -> step
	// correlation id of a launch -> step: a kernel launch's entry goes when
	// its kernel arrives (one GPU event per launch), a graph launch's stays
	// (all the replayed kernels carry its correlation).
	corrStep  map[int64]launchAt
	corrGraph map[int64]launchAt
	gpuAnn    map[int64][2]Time
	late      int

	// graph-launch and gap modes (only without step annotations)
	graphStep map[int64]launchAt // correlation of a graph launch -> step
	gaps      []*stepAcc         // gap-delimited steps of the kernels no graph launch claims
	gapEnd    Time

	launched corrSet              // correlation ids of the launches read
	moe      moeScopes            // CPU scopes of MoE layers (moe_scope.go)
	moeCorr  corrSet              // correlation ids of the launches inside one
	pending  map[int64][]pendingK // kernels read before their launch

	open []int // steps with buffered kernels, ascending

	launchName map[string]bool
	kernels    map[string]*kernelRec
	// folded counts, in one record, the kernels of names past
	// MaxKernelNames; foldedNames is their event count.
	folded      *kernelRec
	foldedNames int
	kernelList  []*kernelRec // by id
	devices     map[int64]bool
	res         Result
	lateK       int
	total       int // steps with GPU work, before --kind filtering
}

// newAnalyzer returns an analyzer for one trace.
func newAnalyzer(opts Options) *analyzer {
	if opts.Gap <= 0 {
		opts.Gap = DefaultGap
	}
	rules := opts.Rules
	if rules == nil {
		rules = DefaultRules()
	}
	return &analyzer{
		opts:       opts,
		cls:        NewClassifier(rules),
		match:      stepMatcher{user: opts.Step},
		extStep:    map[int64]int{},
		corrStep:   map[int64]launchAt{},
		corrGraph:  map[int64]launchAt{},
		gpuAnn:     map[int64][2]Time{},
		graphStep:  map[int64]launchAt{},
		pending:    map[int64][]pendingK{},
		launchName: map[string]bool{},
		kernels:    map[string]*kernelRec{},
		devices:    map[int64]bool{},
	}
}

// Add consumes one event. Events may come in any order within these
// constraints: a step annotation before the launches it encloses, and the
// family of steps (engine, runner, ProfilerStep) known by the first launch
// (Kineto writes all CPU events first; a writer that interleaves steps works
// when each step's annotation precedes its launches); a kernel read before
// its launch waits for it (pendingWindow).
func (a *analyzer) Add(ev *Event) {
	a.res.Events++
	switch ev.Cat {
	case CatCPUOp:
		if ev.Ph == PhaseComplete && isMoEScope(ev.Name) {
			a.moe.add(ev.Pid, ev.Tid, ev.TS, ev.End())
		}
	case CatUserAnnotation:
		if ev.Ph != PhaseComplete {
			return
		}
		if isMoEScope(ev.Name) {
			a.moe.add(ev.Pid, ev.Tid, ev.TS, ev.End())
			return
		}
		info := a.match.match(ev.Name)
		if info.family == famNone {
			return
		}
		an := annot{name: ev.Name, pid: ev.Pid, tid: ev.Tid, ts: ev.TS, end: ev.End(), extID: ev.ExternalID, info: info, index: ev.Index}
		if a.frozen {
			a.addLate(an)
			return
		}
		a.anns = append(a.anns, an)
	case CatGPUUserAnnotation:
		if ev.Ph != PhaseComplete || ev.ExternalID == 0 {
			return
		}
		if a.match.match(ev.Name).family == famNone {
			return
		}
		span, ok := a.gpuAnn[ev.ExternalID]
		if !ok {
			span = [2]Time{ev.TS, ev.End()}
		}
		span[0], span[1] = min(span[0], ev.TS), max(span[1], ev.End())
		a.gpuAnn[ev.ExternalID] = span
	case CatRuntime, CatDriver:
		a.freeze()
		a.addLaunch(ev)
	case CatKernel, CatMemcpy, CatMemset:
		if ev.Ph != PhaseComplete {
			return
		}
		a.freeze()
		a.addKernel(ev)
	}
}

// freeze builds the step table from the annotations seen so far; it runs at
// the first runtime or kernel event.
func (a *analyzer) freeze() {
	if a.frozen {
		return
	}
	a.frozen = true
	metas, fam := buildSteps(a.anns)
	a.family = fam
	a.anns = nil
	if len(metas) == 0 {
		return
	}
	a.res.Source = SourceAnnotation
	a.table = newStepTable(metas)
	for i, m := range metas {
		a.steps = append(a.steps, &stepAcc{meta: m})
		for _, id := range m.extIDs {
			if id != 0 {
				a.extStep[id] = i
			}
		}
	}
}

// addLate adds a step annotation read after the first launch (writers that
// interleave steps: annotation, launches, kernels, next annotation). One of
// the family already chosen joins the step it nests in (or, for a runner
// scope other than "preprocess", the step it follows on its thread), else
// it starts a new step; one of another family, or any when the trace had no
// step annotation before its first launch, is counted and ignored.
func (a *analyzer) addLate(an annot) {
	if a.table == nil || an.info.family != a.family {
		a.late++
		return
	}
	k := threadKey{an.pid, an.tid}
	w := a.table.byThread[k]
	i := sort.Search(len(w), func(i int) bool { return w[i].ts > an.ts }) - 1
	if i >= 0 && (an.ts <= w[i].end || an.info.delim.extends(an.name)) {
		id := w[i].id
		w[i].end = max(w[i].end, an.end)
		m := &a.steps[id].meta
		m.end = max(m.end, an.end)
		if m.kind == KindUnknown {
			m.kind = an.info.kind
		}
		if m.batch == 0 {
			m.batch = an.info.batch
		}
		if an.extID != 0 {
			a.extStep[an.extID] = id
		}
		return
	}
	id := len(a.steps)
	m := stepMeta{label: an.info.delim.label(an.name), pid: an.pid, tid: an.tid, ts: an.ts, end: an.end, kind: an.info.kind, batch: an.info.batch}
	a.steps = append(a.steps, &stepAcc{meta: m})
	if _, ok := a.table.byThread[k]; !ok {
		a.table.byPid[an.pid] = append(a.table.byPid[an.pid], k)
	}
	w = append(w, stepWindow{})
	copy(w[i+2:], w[i+1:])
	w[i+1] = stepWindow{id: id, ts: an.ts, end: an.end}
	a.table.byThread[k] = w
	if an.extID != 0 {
		a.extStep[an.extID] = id
	}
}

// isLaunch reports whether a runtime/driver call can start GPU work
// (kernel, graph, memcpy, memset launches), cached per name.
func (a *analyzer) isLaunch(name string) bool {
	v, ok := a.launchName[name]
	if !ok {
		v = strings.Contains(name, "Launch") || strings.Contains(name, "emcpy") || strings.Contains(name, "emset")
		a.launchName[name] = v
	}
	return v
}

func (a *analyzer) addLaunch(ev *Event) {
	if ev.Ph != PhaseComplete || ev.Correlation == 0 || !a.isLaunch(ev.Name) {
		return
	}
	a.launched.add(ev.Correlation)
	if a.moe.holds(ev.Pid, ev.Tid, ev.TS) {
		a.moeCorr.add(ev.Correlation)
	}
	if a.table != nil {
		if id := a.table.lookup(ev.Pid, ev.Tid, ev.TS); id >= 0 {
			if isGraphLaunch(ev.Name) {
				a.corrGraph[ev.Correlation] = launchAt{id, ev.TS}
			} else {
				a.corrStep[ev.Correlation] = launchAt{id, ev.TS}
			}
		}
	} else if isGraphLaunch(ev.Name) {
		a.addGraphStep(ev)
	}
	// kernels that came before their launch in the file
	if p, ok := a.pending[ev.Correlation]; ok {
		delete(a.pending, ev.Correlation)
		for _, k := range p {
			a.route(ev.Correlation, k.span, k.offset)
		}
	}
}

// pendingK is a kernel whose launch has not been read yet.
type pendingK struct {
	span   kspan
	index  int64 // event index, for eviction
	offset int64 // byte offset, for a malformed-event warning
}

// Pending kernels wait for their launch at most pendingWindow events (B200
// traces write each GPU activity just before its runtime call); after that
// they are routed as if the launch had no step.
const pendingWindow = 1 << 20

func (a *analyzer) addKernel(ev *Event) {
	a.res.KernelCount++
	if !a.devices[ev.Pid] {
		a.devices[ev.Pid] = true
	}
	ks := a.kernelStat(ev)
	cat := ks.Class.Category
	if ev.Collective != "" && !cat.IsCollective() {
		if c, ok := collectiveCategory(ev.Collective); ok {
			cat = c
		}
	}
	k := kspan{ts: ev.TS, end: ev.End(), dur: ev.Dur, cat: cat, kid: ks.id}
	if !a.launched.has(ev.Correlation) && ev.Correlation != 0 {
		// the kernel's launch is still to come
		a.pending[ev.Correlation] = append(a.pending[ev.Correlation], pendingK{span: k, index: ev.Index, offset: ev.Offset})
		if a.res.KernelCount%(1<<14) == 0 {
			a.evict(ev.Index - pendingWindow)
		}
		return
	}
	a.route(ev.Correlation, k, ev.Offset)
}

// evict routes the pending kernels read before event index limit, in the
// order they were read (not the map's random order: gap steps take kernels
// in time order, so the result would change from run to run).
func (a *analyzer) evict(limit int64) {
	type due struct {
		corr int64
		k    pendingK
	}
	var ks []due
	for corr, p := range a.pending {
		if len(p) > 0 && p[0].index < limit {
			delete(a.pending, corr)
			for _, k := range p {
				ks = append(ks, due{corr, k})
			}
		}
	}
	slices.SortFunc(ks, func(x, y due) int { return cmp.Compare(x.k.index, y.k.index) })
	for _, d := range ks {
		a.route(d.corr, d.k.span, d.k.offset)
	}
}

// launchAt is the step of a launch and when it ran on the CPU.
type launchAt struct {
	step int
	ts   Time
}

// A kernel runs after its launch: one that starts more than maxBeforeLaunch
// before it (beyond CPU/GPU clock skew) or more than maxAfterLaunch after it
// (beyond any queue of GPU work) carries a time far outside the trace's
// span, and is malformed rather than stretched into its step's wall time.
const (
	maxBeforeLaunch unit.Seconds = 1
	maxAfterLaunch  unit.Seconds = 600
)

// farFromLaunch reports whether kernel k cannot belong to launch l in time;
// such a kernel is counted as malformed (Result.FarKernels) and dropped
// from the kernel statistics.
func (a *analyzer) farFromLaunch(l launchAt, k kspan, offset int64) bool {
	if d := k.ts.Sub(l.ts); d >= -maxBeforeLaunch && d <= maxAfterLaunch {
		return false
	}
	if a.res.FarKernels == 0 {
		a.res.FarOffset = offset
	}
	a.res.FarKernels++
	a.res.KernelCount--
	rec := a.kernelList[k.kid]
	rec.Count--
	rec.Total -= k.dur
	return true
}

// route sends a kernel to its step: through its launch's step in annotation
// mode, its graph launch in graph mode, else the gap steps.
func (a *analyzer) route(corr int64, k kspan, offset int64) {
	dur := k.dur
	if corr != 0 && a.moeCorr.has(corr) {
		k.cat = inMoE(k.cat)
	}
	if a.table != nil {
		if l, ok := a.corrStep[corr]; ok {
			delete(a.corrStep, corr)
			if !a.farFromLaunch(l, k, offset) {
				a.addToStep(l.step, k, dur)
			}
			return
		}
		if l, ok := a.corrGraph[corr]; ok {
			if !a.farFromLaunch(l, k, offset) {
				a.addToStep(l.step, k, dur)
			}
			return
		}
		a.res.Outside++
		a.res.OutsideTime += dur
		return
	}
	if l, ok := a.graphStep[corr]; ok {
		if !a.farFromLaunch(l, k, offset) {
			a.addToStep(l.step, k, dur)
		}
		return
	}
	a.addToGap(k)
}

// MaxKernelNames bounds the distinct kernel names an analyzer keeps and
// classifies: a serving engine's trace holds a few hundred (157 in the
// testdata traces); kernels of further names count in one record.
const MaxKernelNames = 1 << 16

const foldedKernelName = "(kernels of names past the distinct-name limit)"

// kernelStat counts the kernel in its name's record, classifying the name
// the first time it is seen (one map lookup per kernel event).
func (a *analyzer) kernelStat(ev *Event) *kernelRec {
	ks := a.kernels[ev.Name]
	if ks == nil {
		if len(a.kernels) >= MaxKernelNames {
			// Past the cap every new name counts in one record, unclassified,
			// so a trace of unique names cannot grow the tables (or the
			// classification time) without bound.
			a.foldedNames++
			if a.folded == nil {
				a.folded = &kernelRec{KernelStat: KernelStat{Name: foldedKernelName, Class: Class{Category: cost.Other, Op: "unclassified", Rule: -1}}, id: int32(len(a.kernelList))}
				a.kernelList = append(a.kernelList, a.folded)
			}
			ks = a.folded
			ks.Count++
			ks.Total += ev.Dur
			return ks
		}
		ks = &kernelRec{KernelStat: KernelStat{Name: ev.Name, Class: a.cls.Classify(ev.Name)}, id: int32(len(a.kernelList))}
		a.kernels[ev.Name] = ks
		a.kernelList = append(a.kernelList, ks)
	}
	ks.Count++
	ks.Total += ev.Dur
	if ev.Collective != "" || ev.InMsgNelems != 0 {
		addCollective(ks, ev)
	}
	return ks
}

func addCollective(ks *kernelRec, ev *Event) {
	for i := range ks.Collectives {
		c := &ks.Collectives[i]
		if c.Collective == ev.Collective && c.InMsgNelems == ev.InMsgNelems && c.OutMsgNelems == ev.OutMsgNelems && c.DType == ev.DType && c.GroupSize == ev.GroupSize {
			c.Count++
			return
		}
	}
	if len(ks.Collectives) < maxCollectiveSizes {
		ks.Collectives = append(ks.Collectives, CollectiveSize{Collective: ev.Collective, InMsgNelems: ev.InMsgNelems, OutMsgNelems: ev.OutMsgNelems, DType: ev.DType, GroupSize: ev.GroupSize, Count: 1})
	}
}

// addToStep buffers a kernel in step id and closes the steps that ended.
func (a *analyzer) addToStep(id int, k kspan, dur unit.Seconds) {
	s := a.steps[id]
	if !s.hasK {
		s.hasK, s.kmin, s.kmax = true, k.ts, k.end
	}
	s.kmin, s.kmax = min(s.kmin, k.ts), max(s.kmax, k.end)
	s.res.KernelEvents++
	s.addKernel(a.kernelList[k.kid], k.cat, dur)
	if s.done {
		// A kernel that arrives after its step was closed: its time is added
		// to the category and to busy time, without overlap analysis.
		a.lateK++
		s.res.ByCategory[k.cat] += dur
		s.res.Busy += dur
		return
	}
	if len(s.spans) == 0 {
		a.open = append(a.open, id)
		sort.Ints(a.open)
	}
	s.spans = append(s.spans, k)
	// close the steps two or more places before id
	n := 0
	for _, o := range a.open {
		if o < id-1 {
			a.close(o)
			continue
		}
		a.open[n] = o
		n++
	}
	a.open = a.open[:n]
}

// close computes a step's busy, per-category and exposed times from its
// buffered kernels and releases them.
func (a *analyzer) close(id int) {
	s := a.steps[id]
	if s.done {
		return
	}
	s.done = true
	breakdown(s.spans, &s.res)
	s.spans = nil
}

// breakdown fills Busy, ByCategory and Exposed of r from the kernel spans
// (a sweep over the sorted interval ends).
func breakdown(spans []kspan, r *StepResult) {
	type edge struct {
		t   Time
		d   int8 // +1 start, -1 end
		cat cost.Category
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, k := range spans {
		r.ByCategory[k.cat] += k.dur
		edges = append(edges, edge{k.ts, +1, k.cat}, edge{k.end, -1, k.cat})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].d < edges[j].d // ends before starts at the same instant
	})
	var active [cost.NumCategories]int
	nact, ncat := 0, 0 // active kernels, active categories
	var prev Time
	for _, e := range edges {
		if nact > 0 && e.t > prev {
			dt := e.t.Sub(prev)
			r.Busy += dt
			if ncat == 1 {
				for c := range active {
					if active[c] > 0 {
						r.Exposed[c] += dt
						break
					}
				}
			}
		}
		prev = e.t
		if e.d > 0 {
			if active[e.cat] == 0 {
				ncat++
			}
			active[e.cat]++
			nact++
		} else {
			active[e.cat]--
			if active[e.cat] == 0 {
				ncat--
			}
			nact--
		}
	}
}

// Finish closes the open steps, applies the GPU annotation spans and the
// --kind filter, and returns the result. The analyzer must not be used
// afterwards.
func (a *analyzer) Finish() *Result {
	a.freeze()
	a.evict(1 << 62)
	for _, id := range a.open {
		a.close(id)
	}
	a.open = nil
	for id, span := range a.gpuAnn {
		if sid, ok := a.extStep[id]; ok {
			s := a.steps[sid]
			if !s.gpuSpan {
				s.gpuSpan, s.gmin, s.gmax = true, span[0], span[1]
			}
			s.gmin, s.gmax = min(s.gmin, span[0]), max(s.gmax, span[1])
		}
	}
	steps := a.steps
	if a.table == nil {
		a.closeLastGap()
		graphK := false
		for _, s := range a.steps {
			graphK = graphK || s.hasK
		}
		if graphK {
			a.res.Source = SourceGraph
			for _, g := range a.gaps {
				a.res.Outside += g.res.KernelEvents
				for _, d := range g.res.ByCategory {
					a.res.OutsideTime += d
				}
			}
		} else {
			a.res.Source = SourceGaps
			steps = a.gaps
		}
	}
	empty := 0
	for _, s := range steps {
		if !s.hasK && !s.gpuSpan {
			empty++
			continue
		}
		r := s.res
		r.Index = a.total
		a.total++
		r.Kind, r.Batch, r.Label = s.meta.kind, s.meta.batch, s.meta.label
		lo, hi := s.kmin, s.kmax
		if !s.hasK {
			lo, hi = s.gmin, s.gmax
		}
		if s.gpuSpan {
			lo, hi = min(lo, s.gmin), max(hi, s.gmax)
		}
		r.Start, r.Wall = lo, hi.Sub(lo)
		r.Busy = min(r.Busy, r.Wall) // late kernels add to busy without overlap analysis
		r.Idle = max(r.Wall-r.Busy, 0)
		r.ByCategory[cost.Idle], r.Exposed[cost.Idle] = r.Idle, r.Idle
		r.Kernels = sortStepKernels(s.kern)
		s.kern, s.kslot = nil, nil
		if a.opts.Kind != KindUnknown && r.Kind != a.opts.Kind {
			continue
		}
		a.res.Steps = append(a.res.Steps, r)
	}
	for _, k := range a.kernelList {
		a.res.Kernels = append(a.res.Kernels, k.KernelStat)
	}
	sort.Slice(a.res.Kernels, func(i, j int) bool {
		ki, kj := &a.res.Kernels[i], &a.res.Kernels[j]
		if ki.Total != kj.Total {
			return ki.Total > kj.Total
		}
		return ki.Name < kj.Name
	})
	a.res.Devices = len(a.devices)
	a.warnings(empty)
	return &a.res
}

// sortStepKernels orders a step's kernels by total time, longest first,
// then by name and category.
func sortStepKernels(ks []StepKernel) []StepKernel {
	slices.SortFunc(ks, func(x, y StepKernel) int {
		if c := cmp.Compare(y.Total, x.Total); c != 0 {
			return c
		}
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return cmp.Compare(x.Category, y.Category)
	})
	return ks
}

func (a *analyzer) warnings(empty int) {
	w := &a.res.Warnings
	if a.foldedNames > 0 {
		*w = append(*w, fmt.Sprintf("more than %d distinct kernel names (a serving engine's trace holds a few hundred): %d kernel events of names past the first %d are counted together as %q, unclassified",
			MaxKernelNames, a.foldedNames, MaxKernelNames, foldedKernelName))
	}
	if a.res.FarKernels > 0 {
		*w = append(*w, fmt.Sprintf("skipped %d malformed kernel events that start more than %.0f s before or %.0f s after their launch, a time outside the trace's span (the first at byte %d)",
			a.res.FarKernels, float64(maxBeforeLaunch), float64(maxAfterLaunch), a.res.FarOffset))
	}
	if a.opts.Step != nil && a.res.Source != SourceAnnotation {
		a.res.StepUnmatched = true
		*w = append(*w, fmt.Sprintf("--step %q matches no step annotation: steps are delimited by %s instead", a.opts.Step, a.res.Source))
	}
	if a.res.KernelCount == 0 {
		*w = append(*w, "no kernel events: the trace holds no GPU activity (was CUDA/ROCm activity profiled?)")
	}
	if a.late > 0 {
		*w = append(*w, fmt.Sprintf("%d step annotations came after the first GPU launch in the file and were ignored (another family than the steps', or none before it)", a.late))
	}
	if empty > 0 && a.res.Source == SourceAnnotation {
		*w = append(*w, fmt.Sprintf("%d step annotations enclose no GPU work and were dropped", empty))
	}
	if a.lateK > 0 {
		*w = append(*w, fmt.Sprintf("%d kernels arrived after their step was closed: counted in their category and busy time without overlap analysis", a.lateK))
	}
	if a.res.Outside > 0 && a.res.Source != SourceGaps {
		*w = append(*w, fmt.Sprintf("%d kernel events (%.3f ms) fall outside every step", a.res.Outside, a.res.OutsideTime.Ms()))
	}
	if a.res.Devices > 1 {
		*w = append(*w, fmt.Sprintf("kernels on %d devices in one file: busy time is the union over all of them", a.res.Devices))
	}
	if a.res.KernelCount > 0 && len(a.res.Steps) == 0 {
		if a.opts.Kind != KindUnknown && a.total > 0 {
			*w = append(*w, fmt.Sprintf("no %s steps (of %d steps)", a.opts.Kind, a.total))
		} else {
			*w = append(*w, "no steps found")
		}
	}
}

// corrSet is a set of correlation ids: a sparse bitset in 64 Ki-id chunks
// (CUPTI and roctracer number correlations densely from a per-process
// start, so a trace touches few chunks: 8 KiB per 65,536 launches).
type corrSet struct {
	chunks map[int64]*[1024]uint64
}

func (s *corrSet) add(id int64) {
	if s.chunks == nil {
		s.chunks = map[int64]*[1024]uint64{}
	}
	c := s.chunks[id>>16]
	if c == nil {
		c = new([1024]uint64)
		s.chunks[id>>16] = c
	}
	b := id & 0xffff
	c[b>>6] |= 1 << (b & 63)
}

func (s *corrSet) has(id int64) bool {
	c := s.chunks[id>>16]
	if c == nil {
		return false
	}
	b := id & 0xffff
	return c[b>>6]&(1<<(b&63)) != 0
}
