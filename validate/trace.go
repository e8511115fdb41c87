package validate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
	"github.com/moecast/moecast/trace"
)

// This file holds a prediction against a torch.profiler trace, step by
// step and op by op.
//
// Step time. A step's measured time is its GPU busy time (the union of its
// kernel intervals): the step model prices GPU work, and GPU idle inside
// the step (host-bound scheduling, profiler overhead) is reported apart
// (Step.Idle) rather than counted as a miss of any op.
//
// Mapping kernels to ops. Each kernel of the step carries the category and
// op label of the trace rule that classified it (trace/rules.toml). Within a
// category:
//   - gemm: the kernels and the predicted GEMM ops are grouped by how often
//     they run per step (24 for a per-layer op of a 24-layer model, 1 for
//     lm_head); within a group they are paired by size order, the longest
//     kernel with the op predicted longest (a layer's projections all run
//     once per layer, so count alone cannot tell them apart);
//   - elementwise and moe: op labels map to predicted op names by
//     labelRules (norm kernels to the norm ops, routing kernels to router
//     top-k, ...); a moe kernel that no rule names (the expert GEMMs and
//     their glue) goes to the category's largest op (fused_moe);
//   - attention, sampling and the collectives: every kernel of the
//     category goes to the category's predicted ops, pooled;
//   - anything else (memcpy, inductor glue, unclassified) maps to no op and
//     is listed as left out of the prediction; predicted ops with no kernel
//     are listed as missing from the trace.
//
// Counts. An op's count is the kernels the trace ran for it in the step;
// its predicted count is occurrences x kernels per occurrence (the
// estimate's Kernels, at least 1). Mean time per occurrence: the measured
// total over the measured occurrences, against the predicted time of one
// occurrence. For an op of one kernel per occurrence that ran at most 10%
// more kernels than predicted, the measured occurrences are its kernel
// count; otherwise they are the model's (its layers), since the trace does
// not say which kernels make one occurrence.

// Options configure Compare.
type Options struct {
	// Batch is used for steps whose annotation gives no batch; 0 means
	// such steps are an error.
	Batch int
	// Context is the context length of every sequence, tokens.
	Context int
	// ContextFromTrace, when set, takes the context of a step from its
	// annotation where it gives one (vLLM's generation_N(sq..skK..): K
	// keys over N sequences, rounded), and Context otherwise.
	ContextFromTrace bool
	// Kind keeps only the steps of one kind; trace.KindUnknown compares
	// every prefill, mixed and decode step.
	Kind trace.StepKind
	// PrefillTokens is the new tokens of the prefill requests of a prefill
	// or mixed step whose annotation does not give them (summed over the
	// requests); 0 means such steps are an error.
	PrefillTokens int
}

// Mix is what a step's annotation (or the flags) says it runs: Prefills
// requests of PrefillTokens new tokens in all on top of Prefix tokens
// already cached in all, and Decodes decode requests.
type Mix struct {
	Prefills, PrefillTokens, Prefix int
	Decodes                         int
	// Tokens is the new tokens of every request of the step where the
	// annotation gives them in all but not their split (SGLang's
	// step[MIXED bs=N toks=M]: M = prefill tokens + one per decode, N =
	// prefill requests + decodes); 0 otherwise.
	Tokens int
	// Assumed is set when the split was not given (an SGLang MIXED step
	// without --prefill-tokens) and one prefill request was assumed.
	Assumed bool
}

var (
	// vLLM: execute_[N_]context_P(...)_generation_D(...); in the detailed
	// form the parentheses hold sq<query tokens>sk<keys>sqsq..sqsk.., in
	// the simple one <query tokens>_<sum of squares>.
	reVLLMMix    = regexp.MustCompile(`^execute_(?:\d+_)?context_(\d+)\(([^)]*)\)_generation_(\d+)\(([^)]*)\)`)
	reVLLMSqSk   = regexp.MustCompile(`^sq(\d+)sk(\d+)`)
	reVLLMSimple = regexp.MustCompile(`^(\d+)`)
	// SGLang: step[EXTEND bs=N toks=M], step[DECODE bs=N]
	reSGLangMix = regexp.MustCompile(`^step\[([A-Z_]+)(?:\s+bs=(\d+))?(?:[^\]]*?\btoks=(\d+))?`)
)

// MixOf reads a step annotation: ok is false when the label gives no
// request counts. Tokens it does not give are -1.
func MixOf(label string) (m Mix, ok bool) {
	if x := reVLLMMix.FindStringSubmatch(label); x != nil {
		m = Mix{Prefills: atoi(x[1]), Decodes: atoi(x[3]), PrefillTokens: -1, Prefix: -1}
		if y := reVLLMSqSk.FindStringSubmatch(x[2]); y != nil {
			m.PrefillTokens, m.Prefix = atoi(y[1]), max(atoi(y[2])-atoi(y[1]), 0)
		} else if y := reVLLMSimple.FindStringSubmatch(x[2]); y != nil {
			m.PrefillTokens, m.Prefix = atoi(y[1]), 0
		}
		if m.Prefills == 0 {
			m.PrefillTokens, m.Prefix = 0, 0
		}
		return m, true
	}
	if x := reSGLangMix.FindStringSubmatch(label); x != nil && x[2] != "" {
		n := atoi(x[2])
		switch x[1] {
		case "DECODE", "TARGET_VERIFY", "DRAFT_EXTEND":
			return Mix{Decodes: n}, true
		case "EXTEND", "PREFILL":
			m = Mix{Prefills: n, PrefillTokens: -1, Prefix: -1}
			if x[3] != "" {
				m.PrefillTokens = atoi(x[3])
			}
			return m, true
		case "MIXED":
			// SGLang's mix_with_running (python/sglang/srt/managers/
			// schedule_batch.py @ fd3907e) appends the running decodes to
			// the prefill batch as one-token extends: extend_lens gets a 1
			// and extend_num_tokens 1 per decode, so bs counts prefill
			// requests and decodes, toks prefill tokens and decodes. The
			// split is resolved in seqsOf.
			m = Mix{Prefills: 1, Decodes: max(n-1, 0), PrefillTokens: -1, Prefix: -1}
			if x[3] != "" {
				m.Tokens = atoi(x[3])
			}
			return m, true
		}
	}
	return Mix{}, false
}

// seqsOf builds the step's batch for sim.StepBatch: the prefill tokens
// split evenly over the prefill requests (the annotation gives their sum),
// each on an even share of the prefix, and the decodes at context.
func seqsOf(st *trace.StepResult, opts Options, context int) (Mix, []sim.Seq, error) {
	m, ok := MixOf(st.Label)
	if !ok {
		switch st.Kind {
		case trace.KindDecode:
			m = Mix{Decodes: st.Batch}
		case trace.KindPrefill:
			m = Mix{Prefills: max(st.Batch, 1), PrefillTokens: -1, Prefix: -1}
		default:
			m = Mix{Decodes: st.Batch, PrefillTokens: -1, Prefix: -1, Prefills: 1}
		}
	}
	if st.Kind == trace.KindDecode && m.Decodes <= 0 {
		m.Decodes = opts.Batch
	}
	if m.Tokens > 0 {
		var err error
		if m, err = splitMixed(m, opts.PrefillTokens); err != nil {
			return m, nil, fmt.Errorf("step %d (%s): %w", st.Index, st.Label, err)
		}
	}
	if m.Prefills > 0 && m.PrefillTokens < 0 {
		m.PrefillTokens = opts.PrefillTokens
		if m.PrefillTokens <= 0 {
			return m, nil, fmt.Errorf("step %d (%s) names no prefill tokens: give --prefill-tokens", st.Index, st.Label)
		}
	}
	if m.Prefix < 0 {
		m.Prefix = 0
	}
	if m.Prefills > 0 && m.PrefillTokens < m.Prefills {
		return m, nil, fmt.Errorf("step %d (%s): %d prefill tokens for %d prefill requests", st.Index, st.Label, m.PrefillTokens, m.Prefills)
	}
	if m.Decodes+m.Prefills <= 0 {
		return m, nil, fmt.Errorf("step %d (%s) names no batch size: give --batch", st.Index, st.Label)
	}
	if m.Decodes+m.Prefills > sim.MaxBatchSize {
		return m, nil, fmt.Errorf("step %d (%s): %d requests exceed the limit of %d", st.Index, st.Label, m.Decodes+m.Prefills, sim.MaxBatchSize)
	}
	seqs := make([]sim.Seq, 0, m.Prefills+m.Decodes)
	for i := range m.Prefills {
		q := m.PrefillTokens / m.Prefills
		if i < m.PrefillTokens%m.Prefills {
			q++
		}
		c := m.Prefix / m.Prefills
		if i < m.Prefix%m.Prefills {
			c++
		}
		seqs = append(seqs, sim.Seq{Query: q, Context: c, Prefill: true})
	}
	for range m.Decodes {
		seqs = append(seqs, sim.Seq{Query: 1, Context: context})
	}
	return m, seqs, nil
}

// splitMixed resolves an SGLang MIXED step's split from its requests
// (N = prefill requests + decodes) and tokens (M = prefill tokens +
// decodes): with T prefill tokens given, D = M - T decodes and P = N - D
// prefill requests; without, one prefill request is assumed (P = 1, D =
// N - 1, T = M - D; SGLang chunks one request at a time, but may add
// short new ones beside it). Only attention depends on the split: GEMMs,
// MoE and elementwise ops run the M tokens either way.
func splitMixed(m Mix, prefillTokens int) (Mix, error) {
	n := m.Prefills + m.Decodes
	if m.Tokens < n {
		return m, fmt.Errorf("toks=%d is less than bs=%d: each request of a MIXED step runs at least one token", m.Tokens, n)
	}
	if prefillTokens > 0 {
		d := m.Tokens - prefillTokens
		p := n - d
		if d < 0 || p < 1 || prefillTokens < p {
			return m, fmt.Errorf("--prefill-tokens %d does not fit bs=%d toks=%d: it leaves %d decodes (toks less the prefill tokens) and %d prefill requests (bs less the decodes)", prefillTokens, n, m.Tokens, d, p)
		}
		m.Prefills, m.Decodes, m.PrefillTokens = p, d, prefillTokens
		return m, nil
	}
	m.Prefills, m.Decodes = 1, n-1
	m.PrefillTokens, m.Assumed = m.Tokens-m.Decodes, true
	return m, nil
}

// vllmGen matches the decode part of a vLLM step annotation:
// generation_<N>(sq<Q>sk<K>...): N requests, K keys in all.
var vllmGen = regexp.MustCompile(`generation_(\d+)\(sq\d+sk(\d+)`)

// ContextOf is the mean context per sequence a step annotation gives
// (vLLM: the keys of the decode requests over their count), or 0.
func ContextOf(label string) int {
	m := vllmGen.FindStringSubmatch(label)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	k, _ := strconv.Atoi(m[2])
	if n <= 0 || k <= 0 {
		return 0
	}
	return int(math.Round(float64(k) / float64(n)))
}

// Rank is the trace of one rank, as ReadTraces (or trace.AnalyzeFiles)
// read it.
type Rank struct {
	File   string
	Rank   int
	Result *trace.Result
	// Meta holds the trace's top-level fields; Collectives its collective
	// kernels in start order. ReadTraces fills both; nil without.
	Meta        *trace.Meta
	Collectives []CollectiveKernel
}

// CategoryCompare is one category of one step.
type CategoryCompare struct {
	Measured  unit.Seconds // summed kernel time (busy, concurrent streams in full)
	Exposed   unit.Seconds // time only this category ran
	Predicted unit.Seconds
}

// OpCompare is one predicted op (or a pool of ops that share kernels)
// against the trace's kernels mapped to it.
type OpCompare struct {
	Op       string // the predicted op's name, "+"-joined when pooled
	Category cost.Category
	// Count is the kernels of the step mapped to the op; PredictedCount
	// the kernels predicted per step.
	Count          int
	PredictedCount float64
	// Measured and Predicted are the mean time per occurrence;
	// MeasuredTotal and PredictedTotal the step's totals.
	Measured, Predicted           unit.Seconds
	MeasuredTotal, PredictedTotal unit.Seconds
	Source                        string   // the prediction's source (table rows or roofline)
	Kernels                       []string // the kernel names mapped to it
	// Shapes are the per-rank shapes of the pooled predicted ops (as
	// `predict --explain` prints them), one per op; Occurrences is their
	// summed occurrences per step.
	Shapes      []string
	Occurrences float64
	// PredictedEach and OccurrencesEach are each pooled predicted op's
	// time per occurrence and occurrences per step, parallel to Shapes;
	// OpsEach their names.
	PredictedEach   []unit.Seconds
	OccurrencesEach []float64
	OpsEach         []string
	// Bytes are the bytes one kernel of each pooled predicted op moves
	// (its estimate's bytes per kernel), parallel to Shapes.
	Bytes []unit.Bytes
}

// OpPart is one predicted op of a pooled op: its name and shape, its
// occurrences per step and its predicted time per occurrence.
type OpPart struct {
	Op          string
	Shape       string
	Occurrences float64
	Predicted   unit.Seconds
}

// Parts are the predicted ops of an attention pool of different ops (a
// mixed step's: the chunks' and the decodes' attention, whose kernels the
// trace does not tell apart), in the prediction's order; nil for any other
// op.
func (o *OpCompare) Parts() []OpPart {
	if o.Category != cost.Attention || len(o.OpsEach) < 2 || len(o.Shapes) != len(o.OpsEach) || len(o.PredictedEach) != len(o.OpsEach) || len(o.OccurrencesEach) != len(o.OpsEach) {
		return nil
	}
	one := true
	for _, n := range o.OpsEach[1:] {
		one = one && n == o.OpsEach[0]
	}
	if one {
		return nil
	}
	ps := make([]OpPart, len(o.OpsEach))
	for i := range ps {
		ps[i] = OpPart{Op: o.OpsEach[i], Shape: o.Shapes[i], Occurrences: o.OccurrencesEach[i], Predicted: o.PredictedEach[i]}
	}
	return ps
}

// Miss is the op's absolute miss, measured - predicted, over the step.
func (o *OpCompare) Miss() unit.Seconds { return o.MeasuredTotal - o.PredictedTotal }

// Kernel is a kernel that maps to no predicted op.
type Kernel struct {
	Name     string
	Category cost.Category
	Op       string
	Count    int
	Total    unit.Seconds
}

// Step is one step of one rank against its prediction.
type Step struct {
	File  string
	Rank  int
	Index int
	Kind  trace.StepKind
	Label string
	// Batch is the requests of the step (Decodes + Prefills); Context the
	// decodes' context (0 without decodes); PrefillTokens and Prefix the
	// prefill requests' new and cached tokens, summed; Tokens the tokens
	// the model runs (decodes and prefill tokens).
	Batch, Context                                   int
	Decodes, Prefills, PrefillTokens, Prefix, Tokens int
	Measured                                         unit.Seconds // busy
	Wall                                             unit.Seconds
	Idle                                             unit.Seconds
	// Predicted is the predicted GPU busy time: the step's time less
	// PredictedLaunch, the host launch time of an eager step (kernels
	// waiting on the host), which a trace shows as idle.
	Predicted       unit.Seconds
	PredictedLaunch unit.Seconds
	// Categories has every category measured or predicted.
	Categories [cost.NumCategories]CategoryCompare
	Ops        []OpCompare // ops with kernels, largest absolute miss first
	Missing    []OpCompare // predicted ops with no kernel in the trace, by predicted time
	LeftOut    []Kernel    // kernels mapped to no op, by time
}

// Unmapped is the time of the step's kernels that map to no predicted op
// (a framework's glue: copies, index_add, casts): the left-out kernels, and
// those mapped to the "unmapped" op a trace calibration adds.
func (s *Step) Unmapped() unit.Seconds {
	var t unit.Seconds
	for _, k := range s.LeftOut {
		t += k.Total
	}
	for _, o := range s.Ops {
		if o.Op == sim.UnmappedOp {
			t += o.MeasuredTotal
		}
	}
	return t
}

// ErrorPct is the step's error, (predicted - measured) / measured x 100.
func (s *Step) ErrorPct() float64 { return pct(s.Predicted, s.Measured) }

func pct(pred, meas unit.Seconds) float64 {
	if meas <= 0 {
		return 0
	}
	return float64((pred - meas) / meas * 100)
}

// Split is one collective category across ranks for one step index: the
// shortest rank's time is taken as the transfer, the rest of each rank's
// time as waiting for the slowest rank.
type Split struct {
	Index    int
	Category cost.Category
	Ranks    int
	Transfer unit.Seconds // the shortest rank's summed time of the category
	MaxWait  unit.Seconds // the longest rank's time less Transfer
	MeanWait unit.Seconds // the mean over ranks of time less Transfer
	MinRank  int
	MaxRank  int
}

// Report is the comparison of every compared step of the traces.
type Report struct {
	Files  []string
	Steps  []Step
	Splits []Split
	// Spreads are the collectives' start-time spreads across ranks
	// (from the ranks' Collectives; none with one rank).
	Spreads []Spread
	// Imbalance is the routing model's prediction of the MoE load of the
	// busiest expert-parallel rank against the mean rank, at the first
	// step's batch; nil without expert parallelism.
	Imbalance *Imbalance
	// MedianErrorPct is the median over steps of ErrorPct; WorstCategory
	// the category with the largest summed absolute miss.
	MedianErrorPct float64
	WorstCategory  cost.Category
	WorstMiss      unit.Seconds
	Warnings       []string
	// OtherGPU is CheckTrace's evidence of a trace recorded on another GPU
	// ("" when none); it is also a warning.
	OtherGPU string
}

// InputError is a trace that cannot be compared with the scenario: no
// decode step, a step without a batch, a model that does not match. It
// names the file.
type InputError struct {
	File string
	Msg  string
}

func (e *InputError) Error() string { return e.File + ": " + e.Msg }

// Compare predicts every decode step of the ranks with sm and compares.
func Compare(sm *sim.Sim, cfg *sim.Config, ranks []Rank, opts Options) (*Report, error) {
	rep := &Report{}
	if opts.Context <= 0 {
		return nil, errors.New("validate: context must be positive")
	}
	m, err := CheckTrace(cfg, ranks)
	if err != nil {
		return nil, err
	}
	if rep.OtherGPU = m.GPU; m.GPU != "" {
		rep.Warnings = append(rep.Warnings, "the trace was "+m.GPU+": the comparison holds one GPU's kernels against another's prediction")
	}
	for _, rk := range ranks {
		rep.Files = append(rep.Files, rk.File)
		n, assumed := 0, 0
		for i := range rk.Result.Steps {
			st := &rk.Result.Steps[i]
			if !compared(st.Kind, opts.Kind) {
				continue
			}
			n++
			context := opts.Context
			if c := ContextOf(st.Label); opts.ContextFromTrace && c > 0 {
				context = c
			}
			mix, seqs, err := seqsOf(st, opts, context)
			if err != nil {
				return nil, &InputError{rk.File, err.Error()}
			}
			if err := checkModel(cfg.Model, st); err != nil {
				return nil, &InputError{rk.File, endsEarly(rk.Result) + err.Error()}
			}
			s, err := compareStep(sm, st, seqs, mix, context)
			if err != nil {
				return nil, fmt.Errorf("%s: step %d: %w", rk.File, st.Index, err)
			}
			s.File, s.Rank = rk.File, rk.Rank
			rep.Steps = append(rep.Steps, s)
			if mix.Assumed {
				assumed++
			}
		}
		if assumed > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %d SGLang MIXED steps priced as one prefill request beside bs-1 decodes: "+
				"their annotation gives requests (bs) and tokens (toks) in all, each decode counted as a one-token extend, not the split; "+
				"--prefill-tokens T gives it (toks-T decodes, bs less those prefill requests). Only attention depends on the split", rk.File, assumed))
		}
		if n == 0 {
			want := "prefill, mixed or decode"
			if opts.Kind != trace.KindUnknown {
				want = opts.Kind.String()
			}
			if f := rk.Result.Fault; f != nil {
				return nil, &InputError{rk.File, fmt.Sprintf("the file ends early, at byte %d (event %d: %s), before any %s step: it was cut short (%d steps read before the end)", f.Offset, f.Index, f.Msg, want, len(rk.Result.Steps))}
			}
			return nil, &InputError{rk.File, fmt.Sprintf("no %s step found (%d steps from %s, none of kind %s; --step selects the step annotations, --step-kind the kind)", want, len(rk.Result.Steps), rk.Result.Source, want)}
		}
	}
	rep.Splits = splits(ranks)
	rep.Spreads = Spreads(ranks)
	rep.Imbalance = imbalance(cfg, rep.Steps)
	rep.summarize()
	return rep, nil
}

// compared reports whether a step of kind k is compared under --step-kind
// want (KindUnknown: every prefill, mixed and decode step).
func compared(k, want trace.StepKind) bool {
	if want == trace.KindUnknown {
		return k == trace.KindDecode || k == trace.KindPrefill || k == trace.KindMixed
	}
	return k == want
}

func (r *Report) summarize() {
	errs := make([]float64, len(r.Steps))
	var miss [cost.NumCategories]unit.Seconds
	for i := range r.Steps {
		s := &r.Steps[i]
		errs[i] = s.ErrorPct()
		for c := range cost.Idle {
			if c == cost.Launch {
				continue // host time, not busy time
			}
			miss[c] += unit.Seconds(math.Abs(float64(s.Categories[c].Measured - s.Categories[c].Predicted)))
		}
	}
	sort.Float64s(errs)
	if len(errs) > 0 {
		r.MedianErrorPct = trace.Quantile(errs, 0.5)
	}
	for c := range cost.Idle {
		if miss[c] > r.WorstMiss {
			r.WorstCategory, r.WorstMiss = c, miss[c]
		}
	}
}

// endsEarly is "the file ends early at byte N, so its last step may be
// cut short; " for a trace read up to a fault, else "".
func endsEarly(r *trace.Result) string {
	if r.Fault == nil {
		return ""
	}
	return fmt.Sprintf("the file ends early, at byte %d (event %d: %s), so its last step may be cut short; ", r.Fault.Offset, r.Fault.Index, r.Fault.Msg)
}

// checkModel refuses a trace whose per-layer kernels do not fit the
// model: the longest per-layer GEMM, attention or MoE kernels of a step run
// a number of times per step that is neither a multiple nor a divisor of
// the model's layer count, or the scenario's model is MoE (or dense) and
// the trace has no (or has) MoE kernels.
func checkModel(m *model.Config, st *trace.StepResult) error {
	layers := m.Layers
	var top *trace.StepKernel
	hasMoE := false
	for i := range st.Kernels {
		k := &st.Kernels[i]
		switch k.Category {
		case cost.MoE:
			hasMoE = true
			// A kernel a MoE rule names runs a fixed number of times per
			// layer; one the MoE layer's scope moved here (a loop over
			// the experts a step routes to) a data-dependent number.
			if !moeRuleOps()[k.Op] {
				continue
			}
		case cost.GEMM, cost.Attention:
		default:
			continue
		}
		if k.Count > 1 && (top == nil || k.Total > top.Total) {
			top = k
		}
	}
	isMoE := m.MoE.Experts > 1
	switch {
	case isMoE && !hasMoE:
		return fmt.Errorf("the scenario's model %s is MoE (%d experts) but step %d of the trace runs no MoE kernel: a trace of another model?", m.Name, m.MoE.Experts, st.Index)
	case !isMoE && hasMoE:
		return fmt.Errorf("the scenario's model %s is dense but step %d of the trace runs MoE kernels: a trace of another model?", m.Name, st.Index)
	}
	if top != nil && layers > 0 && !fitsLayers(top.Count, layers, m.MoELayers(), layers-m.MoELayers()) {
		return fmt.Errorf("the scenario's model %s has %d layers (%d MoE) but the step's longest per-layer kernel (%s, %s) runs %d times per step: a trace of another model?",
			m.Name, layers, m.MoELayers(), short(top.Name), top.Category, top.Count)
	}
	return nil
}

// moeRuleOps are the op labels of the default rules of category moe.
var moeRuleOps = sync.OnceValue(func() map[string]bool {
	ops := map[string]bool{}
	for _, r := range trace.DefaultRules().List() {
		if r.Category == cost.MoE {
			ops[r.Op] = true
		}
	}
	return ops
})

// fitsLayers reports whether a kernel that runs n times per step can be a
// per-layer kernel of a model with these layer counts: n is a multiple or
// a divisor of the layers, of the MoE layers or (when there are at least
// two) of the dense layers.
func fitsLayers(n int, layers ...int) bool {
	for i, l := range layers {
		if l <= 0 || (i == 2 && l < 2) {
			continue
		}
		if n%l == 0 || l%n == 0 {
			return true
		}
	}
	return false
}

func short(name string) string {
	if len(name) > 60 {
		return name[:57] + "..."
	}
	return name
}

// predOp is a predicted op with its per-step figures.
type predOp struct {
	name    string
	cat     cost.Category
	occ     float64 // occurrences per step
	kernels float64 // kernels per step
	total   unit.Seconds
	source  string
	count   float64 // op.Count, per-step occurrences (for GEMM grouping)
	per     unit.Seconds
	shape   string
	bytes   unit.Bytes // per kernel
}

// labelRules map trace op labels to predicted op names within a category.
var labelRules = []struct {
	cat   cost.Category
	label *regexp.Regexp
	name  *regexp.Regexp
}{
	{cost.Elementwise, regexp.MustCompile(`^norm$`), regexp.MustCompile(`(?i)norm`)},
	{cost.Elementwise, regexp.MustCompile(`^rotary$`), regexp.MustCompile(`(?i)rotary|rope`)},
	{cost.Elementwise, regexp.MustCompile(`^kv_cache_write$`), regexp.MustCompile(`(?i)kv.?cache`)},
	{cost.Elementwise, regexp.MustCompile(`^activation$`), regexp.MustCompile(`(?i)act|silu|swiglu|gelu`)},
	{cost.MoE, regexp.MustCompile(`^(routing|torch_topk)$`), regexp.MustCompile(`(?i)top-?k|router`)},
}

// pooled are the categories whose kernels all go to the category's ops.
func pooled(c cost.Category) bool {
	return c == cost.Attention || c == cost.Sampling || c.IsCollective()
}

func compareStep(sm *sim.Sim, st *trace.StepResult, seqs []sim.Seq, mix Mix, context int) (Step, error) {
	s := Step{Index: st.Index, Kind: st.Kind, Label: st.Label, Batch: mix.Decodes + mix.Prefills, Context: context,
		Decodes: mix.Decodes, Prefills: mix.Prefills, PrefillTokens: mix.PrefillTokens, Prefix: mix.Prefix,
		Measured: st.Busy, Wall: st.Wall, Idle: st.Idle}
	if mix.Decodes == 0 {
		s.Context = 0
	}
	var pt sim.BatchResult
	if err := sm.StepBatch(seqs, &pt); err != nil {
		return s, err
	}
	ops, err := sm.ExplainBatch(seqs)
	if err != nil {
		return s, err
	}
	s.Tokens = pt.Tokens
	// The measured step is GPU busy time; the host launch time the model
	// predicts for an eager step (kernels waiting on the host) shows in a
	// trace as GPU idle, so it is held apart, as the measured idle is.
	s.PredictedLaunch = pt.Breakdown[cost.Launch].Time
	s.Predicted = pt.Step.Time - s.PredictedLaunch
	for c := range cost.NumCategories {
		s.Categories[c] = CategoryCompare{Measured: st.ByCategory[c], Exposed: st.Exposed[c], Predicted: pt.Breakdown[c].Time}
	}
	var preds []predOp
	for _, o := range ops {
		k := math.Max(1, math.Round(o.Estimate.Kernels))
		preds = append(preds, predOp{name: opName(o), cat: o.Category, occ: o.Count, kernels: o.Count * k,
			total: unit.Seconds(o.Count) * o.Estimate.Time, source: o.Estimate.Source.Describe(),
			count: o.Count, per: o.Estimate.Time, shape: o.Shape, bytes: o.Estimate.Bytes / unit.Bytes(k)})
	}
	// groups: key -> kernels and predicted ops
	type group struct {
		preds   []int
		kernels []int
	}
	groups := map[string]*group{}
	var order []string
	get := func(key string) *group {
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			order = append(order, key)
		}
		return g
	}
	predKey := make([]string, len(preds))
	// Named ops: those a label rule can reach, keyed by rule.
	for i, p := range preds {
		switch {
		case pooled(p.cat):
			predKey[i] = "cat:" + p.cat.String()
		case p.cat == cost.GEMM:
			predKey[i] = "" // assigned below
		default:
			predKey[i] = "op:" + p.name
			for ri, r := range labelRules {
				if r.cat == p.cat && r.name.MatchString(p.name) {
					predKey[i] = fmt.Sprintf("rule:%d", ri)
					break
				}
			}
		}
		if predKey[i] != "" {
			get(predKey[i]).preds = append(get(predKey[i]).preds, i)
		}
	}
	// The largest MoE op not reached by a rule takes the MoE kernels no rule names.
	mainMoE := ""
	var mainT unit.Seconds = -1
	for i, p := range preds {
		if p.cat == cost.MoE && strings.HasPrefix(predKey[i], "op:") && p.total > mainT {
			mainMoE, mainT = predKey[i], p.total
		}
	}
	var gemmKernels []int
	for ki := range st.Kernels {
		k := &st.Kernels[ki]
		key := ""
		switch {
		case pooled(k.Category):
			key = "cat:" + k.Category.String()
		case k.Category == cost.GEMM:
			gemmKernels = append(gemmKernels, ki)
			continue
		default:
			for ri, r := range labelRules {
				if r.cat == k.Category && r.label.MatchString(k.Op) {
					key = fmt.Sprintf("rule:%d", ri)
					break
				}
			}
			if key == "" && k.Category == cost.MoE {
				key = mainMoE
			}
		}
		if key == "" || groups[key] == nil {
			// the per-layer unmapped op of a trace calibration takes the
			// kernels no other op does
			if g := groups["op:"+sim.UnmappedOp]; g != nil {
				g.kernels = append(g.kernels, ki)
				continue
			}
			s.LeftOut = append(s.LeftOut, Kernel{k.Name, k.Category, k.Op, k.Count, k.Total})
			continue
		}
		groups[key].kernels = append(groups[key].kernels, ki)
	}
	// GEMMs: by count class, paired by size order.
	byCount := map[int][]int{}
	for i, p := range preds {
		if p.cat == cost.GEMM {
			c := int(math.Round(p.count))
			byCount[c] = append(byCount[c], i)
		}
	}
	kByCount := map[int][]int{}
	for _, ki := range gemmKernels {
		kByCount[st.Kernels[ki].Count] = append(kByCount[st.Kernels[ki].Count], ki)
	}
	counts := make([]int, 0, len(byCount))
	for c := range byCount {
		counts = append(counts, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	for _, c := range counts {
		ps := byCount[c]
		sort.SliceStable(ps, func(a, b int) bool { return preds[ps[a]].per > preds[ps[b]].per })
		ks := kByCount[c]
		sort.SliceStable(ks, func(a, b int) bool { return st.Kernels[ks[a]].Total > st.Kernels[ks[b]].Total })
		// Fewer kernels than ops (one kernel name serving two ops of the
		// class, counted in another class): each kernel goes to the op
		// predicted nearest its time (log ratio), longest kernel first;
		// otherwise by size order.
		pair := make([]int, len(ps))
		for j := range pair {
			pair[j] = -1
			if len(ks) >= len(ps) {
				pair[j] = j
			}
		}
		if len(ks) < len(ps) {
			for kj, ki := range ks {
				mean := float64(st.Kernels[ki].Total) / float64(max(c, 1))
				best, bd := -1, math.Inf(1)
				for j, pi := range ps {
					if pair[j] >= 0 || preds[pi].per <= 0 || mean <= 0 {
						continue
					}
					if d := math.Abs(math.Log(mean / float64(preds[pi].per))); d < bd {
						best, bd = j, d
					}
				}
				if best >= 0 {
					pair[best] = kj
				}
			}
		}
		used := make([]bool, len(ks))
		for j, pi := range ps {
			key := "gemm:" + preds[pi].name
			g := get(key)
			g.preds = append(g.preds, pi)
			if pair[j] >= 0 {
				g.kernels = append(g.kernels, ks[pair[j]])
				used[pair[j]] = true
			}
		}
		// the kernels no op of the class took stay for the pool below
		var rest []int
		for kj, ki := range ks {
			if !used[kj] {
				rest = append(rest, ki)
			}
		}
		if len(rest) > 0 {
			kByCount[c] = rest
		} else {
			delete(kByCount, c)
		}
	}
	// GEMM kernels that no count class paired (one kernel serving several
	// ops of different shapes, a count the model does not have) are pooled
	// with the GEMM ops that got no kernel.
	var restK []int
	for _, ks := range kByCount {
		restK = append(restK, ks...)
	}
	sort.Ints(restK)
	if len(restK) > 0 {
		var restP []int
		for _, key := range order {
			if g := groups[key]; strings.HasPrefix(key, "gemm:") && len(g.kernels) == 0 {
				restP = append(restP, g.preds...)
				g.preds = nil
			}
		}
		if len(restP) == 0 {
			for _, ki := range restK {
				k := &st.Kernels[ki]
				s.LeftOut = append(s.LeftOut, Kernel{k.Name, k.Category, k.Op, k.Count, k.Total})
			}
		} else {
			g := get("gemm:(pooled)")
			g.preds, g.kernels = restP, restK
		}
	}
	for _, key := range order {
		g := groups[key]
		if len(g.preds) == 0 {
			continue
		}
		oc := OpCompare{Category: preds[g.preds[0]].cat}
		var names, sources []string
		var occ float64
		for _, pi := range g.preds {
			p := &preds[pi]
			if !contains(names, p.name) {
				names = append(names, p.name)
			}
			if !contains(sources, p.source) {
				sources = append(sources, p.source)
			}
			occ += p.occ
			oc.Shapes = append(oc.Shapes, p.shape)
			oc.PredictedEach = append(oc.PredictedEach, p.per)
			oc.OccurrencesEach = append(oc.OccurrencesEach, p.occ)
			oc.OpsEach = append(oc.OpsEach, p.name)
			oc.Bytes = append(oc.Bytes, p.bytes)
			oc.PredictedCount += p.kernels
			oc.PredictedTotal += p.total
		}
		oc.Op, oc.Source, oc.Occurrences = strings.Join(names, " + "), strings.Join(sources, "; "), occ
		if occ > 0 {
			oc.Predicted = oc.PredictedTotal / unit.Seconds(occ)
		}
		for _, ki := range g.kernels {
			k := &st.Kernels[ki]
			oc.Count += k.Count
			oc.MeasuredTotal += k.Total
			oc.Kernels = append(oc.Kernels, k.Name)
		}
		if oc.Count == 0 {
			s.Missing = append(s.Missing, oc)
			continue
		}
		// Occurrences in the trace: its kernel count for an op of one
		// kernel per occurrence (a collective that ran 122 times where 123
		// were predicted); the model's occurrences for an op of several
		// kernels, or one whose kernels outnumber its occurrences (five
		// routing kernels per layer for one top-k op), since the trace
		// does not show which kernels make one occurrence.
		measOcc := occ
		if oc.PredictedCount == occ && float64(oc.Count) <= 1.1*occ {
			measOcc = float64(oc.Count)
		}
		if measOcc > 0 {
			oc.Measured = oc.MeasuredTotal / unit.Seconds(measOcc)
		}
		s.Ops = append(s.Ops, oc)
	}
	sort.SliceStable(s.Ops, func(a, b int) bool {
		return math.Abs(float64(s.Ops[a].Miss())) > math.Abs(float64(s.Ops[b].Miss()))
	})
	sort.SliceStable(s.Missing, func(a, b int) bool { return s.Missing[a].PredictedTotal > s.Missing[b].PredictedTotal })
	sort.SliceStable(s.LeftOut, func(a, b int) bool { return s.LeftOut[a].Total > s.LeftOut[b].Total })
	return s, nil
}

func opName(o sim.Op) string {
	switch o.Layer {
	case "", "moe", "dense", "embed", "head":
		return o.Name
	}
	return o.Layer + " " + o.Name
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// splits pairs the decode steps of the ranks by their position among each
// rank's decode steps and splits each collective category's time.
func splits(ranks []Rank) []Split {
	if len(ranks) < 2 {
		return nil
	}
	decode := make([][]*trace.StepResult, len(ranks))
	n := -1
	for i, rk := range ranks {
		for j := range rk.Result.Steps {
			if rk.Result.Steps[j].Kind == trace.KindDecode {
				decode[i] = append(decode[i], &rk.Result.Steps[j])
			}
		}
		if n < 0 || len(decode[i]) < n {
			n = len(decode[i])
		}
	}
	var out []Split
	for j := 0; j < n; j++ {
		for c := range cost.NumCategories {
			if !c.IsCollective() {
				continue
			}
			sp := Split{Index: j, Category: c, Ranks: len(ranks), Transfer: -1}
			var sum unit.Seconds
			var maxT unit.Seconds = -1
			any := false
			for i, rk := range ranks {
				t := decode[i][j].ByCategory[c]
				any = any || t > 0
				sum += t
				if sp.Transfer < 0 || t < sp.Transfer {
					sp.Transfer, sp.MinRank = t, rk.Rank
				}
				if t > maxT {
					maxT, sp.MaxRank = t, rk.Rank
				}
			}
			if !any {
				continue
			}
			sp.MaxWait = maxT - sp.Transfer
			sp.MeanWait = sum/unit.Seconds(len(ranks)) - sp.Transfer
			out = append(out, sp)
		}
	}
	return out
}

// SplitMedians summarizes splits per category: the median over steps of
// Transfer, MaxWait and MeanWait. Index holds the number of steps; MinRank
// and MaxRank are those of the step of median MaxWait.
func SplitMedians(splits []Split) []Split {
	var out []Split
	for c := range cost.NumCategories {
		var tr, mw, mean []float64
		var of []Split
		for _, sp := range splits {
			if sp.Category == c {
				tr = append(tr, float64(sp.Transfer))
				mw = append(mw, float64(sp.MaxWait))
				mean = append(mean, float64(sp.MeanWait))
				of = append(of, sp)
			}
		}
		if len(of) == 0 {
			continue
		}
		sort.SliceStable(of, func(a, b int) bool { return of[a].MaxWait < of[b].MaxWait })
		mid := of[(len(of)-1)/2]
		sort.Float64s(tr)
		sort.Float64s(mw)
		sort.Float64s(mean)
		out = append(out, Split{Index: len(of), Category: c, Ranks: mid.Ranks,
			Transfer: unit.Seconds(trace.Quantile(tr, 0.5)), MaxWait: unit.Seconds(trace.Quantile(mw, 0.5)),
			MeanWait: unit.Seconds(trace.Quantile(mean, 0.5)), MinRank: mid.MinRank, MaxRank: mid.MaxRank})
	}
	return out
}

// Imbalance is the routing model's (sim, uniform routing) MoE load of the
// busiest expert-parallel rank against an average rank, per MoE layer: the
// time a rank waits at the next collective for the busiest one comes from
// this difference. Pairs are token-expert pairs (the compute), Touched the
// distinct experts read (the weight traffic).
type Imbalance struct {
	EP                   int
	Tokens               int     // tokens entering the MoE layer
	Pairs, MeanPairs     float64 // busiest rank, average rank (T·k/EP)
	Touched, MeanTouched float64 // busiest rank, average rank (E(1-(1-k/E)^T)/EP)
}

var reMoELoad = regexp.MustCompile(`^tokens=(\d+) pairs=([0-9.]+) experts=([0-9.]+) of`)

func imbalance(cfg *sim.Config, steps []Step) *Imbalance {
	m := cfg.Model
	ep := cfg.Layout.EP
	if ep <= 1 || m.MoE.Experts <= 0 || len(steps) == 0 {
		return nil
	}
	for _, o := range steps[0].Ops {
		for _, sh := range o.Shapes {
			x := reMoELoad.FindStringSubmatch(sh)
			if x == nil {
				continue
			}
			t, _ := strconv.Atoi(x[1])
			pairs, _ := strconv.ParseFloat(x[2], 64)
			touched, _ := strconv.ParseFloat(x[3], 64)
			return &Imbalance{EP: ep, Tokens: t, Pairs: pairs, MeanPairs: float64(t*m.MoE.TopK) / float64(ep),
				Touched: touched, MeanTouched: kernels.UniformDistinctExperts(float64(t), m.MoE.Experts, m.MoE.TopK) / float64(ep)}
		}
	}
	return nil
}
