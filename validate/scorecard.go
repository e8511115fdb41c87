package validate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// CorpusRow is one measured record of a corpus, scored or skipped.
type CorpusRow struct {
	Entry  string // the corpus entry
	Source string // the entry's source ("aiconfigurator", ...)
	File   string
	Line   int
	ID     string
	// Partition keys: from the entry, else from the record.
	GPU, Model, Engine, Checkpoint string
	// Mode is "disagg" for a disaggregated deployment (prefill and
	// decode pools), else "" or "agg".
	Mode string
	// Deployment is the row's scenario as moecast reads it (its GPU
	// preset, engine, architecture, weights, mode): what Accuracy groups
	// by; zero when the scenario did not load.
	Deployment Deployment
	// The simulated load.
	Concurrency               int     // closed loop; 0 otherwise
	RequestRate               float64 // open loop or a replayed log's mean rate; 0 for a closed loop
	InputTokens, OutputTokens float64
	Requests                  int

	// Measured and Predicted hold "ttft", "tpot" and "e2el" (ms); a
	// statistic the record does not hold is NaN in both.
	Measured, Predicted map[string]Stats

	// Preemptions is how many requests the simulated engine preempted
	// (vLLM) or retracted (SGLang) on the row's run (serve.Result).
	Preemptions int

	// Skip is why the row was not scored ("" when it was).
	Skip string
}

// Scored says the row has a prediction.
func (r *CorpusRow) Scored() bool { return r.Skip == "" }

// Headline is the statistic a row's error is scored on: the mean where
// the record holds it, else the median (InferenceX's files hold only the
// median and p99), else NaN; with its name.
func (r *CorpusRow) Headline(metric string) (measured, predicted float64, stat string) {
	m, p := r.Measured[metric], r.Predicted[metric]
	switch {
	case !math.IsNaN(m.Mean):
		return m.Mean, p.Mean, "mean"
	case !math.IsNaN(m.Median):
		return m.Median, p.Median, "median"
	}
	return math.NaN(), math.NaN(), ""
}

// ErrorPct is the row's signed error of metric in percent of the
// measurement: (predicted - measured) / measured; NaN when unscored.
func (r *CorpusRow) ErrorPct(metric string) float64 {
	m, p, _ := r.Headline(metric)
	if r.Skip != "" || math.IsNaN(m) || math.IsNaN(p) || m <= 0 {
		return math.NaN()
	}
	return (p - m) / m * 100
}

// Partition is the score of a set of rows: n rows scored, and per metric
// the mean absolute % error (MAPE), the mean signed % error (bias: > 0
// predicts too slow) and the median absolute % error, over the rows that
// hold the metric.
type Partition struct {
	Name                         string
	N                            int
	NTTFT, NTPOT                 int
	TTFTMAPE, TPOTMAPE           float64
	TTFTBias, TPOTBias           float64
	TTFTMedianAbs, TPOTMedianAbs float64
	TTFTWithin20, TPOTWithin20   float64 // share of rows within ±20 %
}

// SkipCount is how many rows were skipped for one reason.
type SkipCount struct {
	Reason string
	Count  int
}

// Scorecard is a corpus scored: partitions by deployment (GPU x model x
// engine x checkpoint), by request shape and by concurrency band; the
// whole; every skipped row counted by reason; the rows; the worst points.
type Scorecard struct {
	Total, Scored int
	Overall       Partition
	Partitions    []Partition // GPU x model x engine x checkpoint
	ByShape       []Partition
	ByConcurrency []Partition
	BySource      []Partition
	ByMode        []Partition // agg (one engine) or disagg (prefill and decode pools)
	Skipped       []SkipCount
	Rows          []CorpusRow
	Worst         []CorpusRow // the largest |error| of TPOT or TTFT, worst first
}

// WorstN is how many worst points a Scorecard lists.
const WorstN = 15

// Score scores rows (in their order; the scorecard keeps it).
func Score(rows []CorpusRow) *Scorecard {
	sc := &Scorecard{Total: len(rows), Rows: rows}
	skips := map[string]int{}
	var scored []*CorpusRow
	for i := range rows {
		r := &rows[i]
		if !r.Scored() {
			skips[r.Skip]++
			continue
		}
		scored = append(scored, r)
	}
	sc.Scored = len(scored)
	sc.Overall = partition("overall", scored)
	sc.Partitions = partitionBy(scored, func(r *CorpusRow) string {
		k := []string{r.GPU, r.Model, r.Engine, r.Checkpoint}
		if r.Mode == "disagg" {
			k = append(k, "disagg")
		}
		return strings.Join(k, " / ")
	})
	sc.ByShape = partitionBy(scored, shapeBand)
	sc.ByConcurrency = partitionBy(scored, concurrencyBand)
	slices.SortStableFunc(sc.ByConcurrency, func(a, b Partition) int {
		return slices.Index(concurrencyBands, a.Name) - slices.Index(concurrencyBands, b.Name)
	})
	sc.BySource = partitionBy(scored, func(r *CorpusRow) string { return r.Source })
	sc.ByMode = partitionBy(scored, func(r *CorpusRow) string {
		if r.Mode == "disagg" {
			return "disagg"
		}
		return "agg"
	})
	for reason, n := range skips {
		sc.Skipped = append(sc.Skipped, SkipCount{Reason: reason, Count: n})
	}
	slices.SortFunc(sc.Skipped, func(a, b SkipCount) int {
		return cmp.Or(b.Count-a.Count, strings.Compare(a.Reason, b.Reason))
	})
	worst := slices.Clone(scored)
	key := func(r *CorpusRow) float64 {
		w := 0.0
		for _, m := range []string{"tpot", "ttft"} {
			if e := math.Abs(r.ErrorPct(m)); !math.IsNaN(e) {
				w = math.Max(w, e)
			}
		}
		return w
	}
	sort.SliceStable(worst, func(a, b int) bool { return key(worst[a]) > key(worst[b]) })
	for i := 0; i < len(worst) && i < WorstN; i++ {
		sc.Worst = append(sc.Worst, *worst[i])
	}
	return sc
}

func partitionBy(rows []*CorpusRow, name func(*CorpusRow) string) []Partition {
	groups := map[string][]*CorpusRow{}
	var names []string
	for _, r := range rows {
		n := name(r)
		if groups[n] == nil {
			names = append(names, n)
		}
		groups[n] = append(groups[n], r)
	}
	sort.Strings(names)
	out := make([]Partition, len(names))
	for i, n := range names {
		out[i] = partition(n, groups[n])
	}
	return out
}

func partition(name string, rows []*CorpusRow) Partition {
	p := Partition{Name: name, N: len(rows)}
	p.NTTFT, p.TTFTMAPE, p.TTFTBias, p.TTFTMedianAbs, p.TTFTWithin20 = errStats(rows, "ttft")
	p.NTPOT, p.TPOTMAPE, p.TPOTBias, p.TPOTMedianAbs, p.TPOTWithin20 = errStats(rows, "tpot")
	return p
}

func errStats(rows []*CorpusRow, metric string) (n int, mape, bias, medAbs, within20 float64) {
	var abs []float64
	sum, sumAbs, in := 0.0, 0.0, 0
	for _, r := range rows {
		e := r.ErrorPct(metric)
		if math.IsNaN(e) {
			continue
		}
		abs = append(abs, math.Abs(e))
		sum += e
		sumAbs += math.Abs(e)
		if math.Abs(e) <= 20 {
			in++
		}
	}
	n = len(abs)
	if n == 0 {
		return 0, math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	sort.Float64s(abs)
	med := abs[n/2]
	if n%2 == 0 {
		med = (abs[n/2-1] + abs[n/2]) / 2
	}
	return n, sumAbs / float64(n), sum / float64(n), med, float64(in) / float64(n)
}

// shapeBand names a row's request shape: its input and output length
// bands.
func shapeBand(r *CorpusRow) string {
	in := "in <=1k"
	switch {
	case r.InputTokens > 16384:
		in = "in >16k"
	case r.InputTokens > 4096:
		in = "in 4k-16k"
	case r.InputTokens > 1024:
		in = "in 1k-4k"
	}
	out := "out <=256"
	switch {
	case r.OutputTokens > 1024:
		out = "out >1k"
	case r.OutputTokens > 256:
		out = "out 256-1k"
	}
	return in + ", " + out
}

// concurrencyBands are concurrencyBand's names in order.
var concurrencyBands = []string{"C 1-4", "C 5-16", "C 17-64", "C 65-256", "C >256", "open loop"}

// concurrencyBand names a row's load: a closed loop's concurrency band,
// or "open loop" (a rate or a replayed log).
func concurrencyBand(r *CorpusRow) string {
	c := r.Concurrency
	switch {
	case c == 0:
		return "open loop"
	case c <= 4:
		return "C 1-4"
	case c <= 16:
		return "C 5-16"
	case c <= 64:
		return "C 17-64"
	case c <= 256:
		return "C 65-256"
	}
	return "C >256"
}

// Exclusion rules for measured records that are not independent,
// consistent measurements (the serving README's known quirks). Figures
// compare within figureTol ms.
const figureTol = 0.01

// Exclusion reasons, as the scorecard counts them.
const (
	ExcludeDuplicate    = "unreliable: duplicate (the same setup and figures, within 0.01 ms, as an earlier row)"
	ExcludeTPSlip       = "unreliable: tp_size slip (tp_size = another row's tp x ep, with that row's exact figures)"
	ExcludeOtherModel   = "unreliable: another model's row (the same setup, layout and figures, within 0.01 ms, as an earlier row of another model name: one measurement listed under both)"
	ExcludeInconsistent = "unreliable: inconsistent (TPOT below 0.8 x and TTFT above 10 x the same setup's at a quarter of the concurrency or less: requests queued at the client, not in flight)"
)

// ExcludeUnreliable returns, for each record, the rule that excludes it
// ("" to keep it). Only records with a layout (Layout.GPU set) are judged:
//   - duplicate: the same setup (model, GPU, engine, checkpoint, mode,
//     layout, lengths, concurrency) and TTFT and TPOT within 0.01 ms of an
//     earlier record, whatever the engine version each names (two engine
//     builds cannot agree to 0.01 ms on both figures: the aiconfigurator
//     Qwen3.5 B200 rows list one measurement as "nightly-dev-20260216-d3bae71e"
//     and again as "nightly-dev"), where a record whose client is
//     known (RangeRatio set: InferenceX's harness) comes before those
//     whose client is not, whatever their order (one measurement listed by
//     two collections is scored with the client that measured it);
//   - tp_size slip: the same setup but a tp_size equal to another
//     record's tp_size x EP, with that record's TTFT and TPOT within
//     0.01 ms (the figures belong to the other layout);
//   - another model's row: the same setup and layout but another model
//     name, with TTFT and TPOT within 0.01 ms of an earlier record (the
//     aiconfigurator B200 rows of DeepSeek-V3 repeat R1's figures: two
//     models cannot agree to 0.01 ms);
//   - inconsistent: against a record of the same setup (any engine
//     version) at a quarter of the concurrency or less, a mean TPOT below 0.8 x its and a mean TTFT
//     above 10 x its: more requests in flight cannot decode faster, so the
//     requests waited at the client (the README's gpt-oss-120b H100 C=512
//     rows: TTFT of minutes, TPOT below C=64's).
func ExcludeUnreliable(recs []BenchResult) []string {
	out := make([]string, len(recs))
	setup := func(r *BenchResult, withLayout, withConc bool) string {
		l := r.Layout
		// No engine version: a series compares across engine versions
		// (some rows lack it), and one measurement listed under two
		// version strings is still one measurement.
		version := ""
		k := fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%g|%g", r.Family, r.Model, l.GPU, r.Backend, version, l.Precision,
			l.Extra["gemm_quant_mode"]+"/"+l.Extra["moe_quant_mode"], l.Mode, r.InputTokens, r.OutputTokens)
		if withLayout {
			k += fmt.Sprintf("|%d|%d|%d|%d|%d|%s", l.TP, l.PP, l.DP, l.MoETP, l.EP, disaggKey(l))
		}
		if withConc {
			k += fmt.Sprintf("|%d", r.Concurrency)
		}
		return k
	}
	ttft := func(r *BenchResult) float64 { return r.Metrics["ttft"].Mean }
	tpot := func(r *BenchResult) float64 { return r.Metrics["tpot"].Mean }
	same := func(a, b *BenchResult) bool {
		return math.Abs(ttft(a)-ttft(b)) <= figureTol && math.Abs(tpot(a)-tpot(b)) <= figureTol
	}
	// Duplicates and slips: among records of one setup (layout aside).
	bySetup := map[string][]int{}
	for i := range recs {
		if recs[i].Layout.GPU == "" || math.IsNaN(ttft(&recs[i])) || math.IsNaN(tpot(&recs[i])) {
			continue
		}
		k := setup(&recs[i], false, true)
		bySetup[k] = append(bySetup[k], i)
	}
	for _, idx := range bySetup {
		// The copy whose client is known (a harness validate recognises:
		// RangeRatio set) is the one scored; the others are its duplicates.
		sort.SliceStable(idx, func(a, b int) bool { return recs[idx[a]].RangeRatio > 0 && !(recs[idx[b]].RangeRatio > 0) })
		for a, i := range idx {
			ri := &recs[i]
			for _, j := range idx[:a] {
				rj := &recs[j]
				if out[j] != "" || !same(ri, rj) {
					continue
				}
				if setup(ri, true, true) == setup(rj, true, true) {
					out[i] = ExcludeDuplicate
					break
				}
			}
			if out[i] != "" {
				continue
			}
			for _, j := range idx {
				rj := &recs[j]
				if j == i || !same(ri, rj) || rj.Layout.EP <= 1 {
					continue
				}
				if ri.Layout.TP == rj.Layout.TP*rj.Layout.EP && ri.Layout.TP != rj.Layout.TP {
					out[i] = ExcludeTPSlip
					break
				}
			}
		}
	}
	// Another model's rows: the same setup and layout under another name.
	byOther := map[string][]int{}
	for i := range recs {
		if out[i] != "" || recs[i].Layout.GPU == "" || math.IsNaN(ttft(&recs[i])) || math.IsNaN(tpot(&recs[i])) {
			continue
		}
		m := recs[i].Model
		recs[i].Model = ""
		k := setup(&recs[i], true, true)
		recs[i].Model = m
		for _, j := range byOther[k] {
			if recs[j].Model != m && same(&recs[i], &recs[j]) {
				out[i] = ExcludeOtherModel
				break
			}
		}
		if out[i] == "" {
			byOther[k] = append(byOther[k], i)
		}
	}
	// Inconsistent rows: along each setup's concurrency series.
	series := map[string][]int{}
	for i := range recs {
		if out[i] == ExcludeTPSlip || recs[i].Layout.GPU == "" || !(tpot(&recs[i]) > 0) || recs[i].Concurrency <= 0 {
			continue
		}
		k := setup(&recs[i], true, false)
		series[k] = append(series[k], i)
	}
	for _, idx := range series {
		for _, i := range idx {
			if out[i] != "" {
				continue
			}
			for _, j := range idx {
				if recs[j].Concurrency*4 <= recs[i].Concurrency && tpot(&recs[i]) < 0.8*tpot(&recs[j]) && ttft(&recs[i]) > 10*ttft(&recs[j]) {
					out[i] = ExcludeInconsistent
					break
				}
			}
		}
	}
	return out
}

// disaggKey is the prefill and decode pools of a disaggregated layout.
func disaggKey(l Layout) string {
	if l.Mode != "disagg" {
		return ""
	}
	var b strings.Builder
	for _, k := range []string{"prefill_num_workers", "prefill_tp_size", "prefill_attention_dp_size", "prefill_moe_ep_size",
		"decode_num_workers", "decode_tp_size", "decode_attention_dp_size", "decode_moe_ep_size", "prefill_batch_size", "decode_batch_size"} {
		b.WriteString(l.Extra[k] + ",")
	}
	return b.String()
}
