package view

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/validate"
)

// partitionTable lists partitions: n, then per metric MAPE, bias, median
// absolute error and the share within ±20 %.
func partitionTable(first string, ps []validate.Partition) *report.Table {
	t := &report.Table{Columns: []report.Column{{Name: first, Left: true}, {Name: "n"},
		{Name: "tpot_mape", Text: "%.1f"}, {Name: "tpot_bias", Text: "%+.1f"}, {Name: "tpot_median_abs", Text: "%.1f"}, {Name: "tpot_within_20", Text: "%.0f%%"},
		{Name: "ttft_mape", Text: "%.1f"}, {Name: "ttft_bias", Text: "%+.1f"}, {Name: "ttft_median_abs", Text: "%.1f"}, {Name: "ttft_within_20", Text: "%.0f%%"}}}
	for _, p := range ps {
		t.Add(p.Name, p.N, numOrNil(p.TPOTMAPE), numOrNil(p.TPOTBias), numOrNil(p.TPOTMedianAbs), numOrNil(p.TPOTWithin20*100),
			numOrNil(p.TTFTMAPE), numOrNil(p.TTFTBias), numOrNil(p.TTFTMedianAbs), numOrNil(p.TTFTWithin20*100))
	}
	return t
}

func skippedTable(sk []validate.SkipCount) *report.Table {
	t := &report.Table{Columns: []report.Column{{Name: "rows"}, {Name: "reason", Left: true}}}
	for _, s := range sk {
		t.Add(s.Count, s.Reason)
	}
	return t
}

// loadName is a row's load in words.
func loadName(r *validate.CorpusRow) string {
	if r.Concurrency > 0 {
		return fmt.Sprintf("C=%d", r.Concurrency)
	}
	if r.RequestRate > 0 {
		return fmt.Sprintf("%.3g req/s", r.RequestRate)
	}
	return "all at once"
}

// worstTable lists the worst points: where, the load, measured and
// predicted TTFT and TPOT (the scored statistic) and their errors.
func worstTable(rows []validate.CorpusRow) *report.Table {
	t := &report.Table{Columns: []report.Column{{Name: "row", Left: true}, {Name: "partition", Left: true}, {Name: "load", Left: true}, {Name: "in/out", Left: true},
		{Name: "ttft_meas_ms", Text: "%.1f"}, {Name: "ttft_pred_ms", Text: "%.1f"}, {Name: "ttft_err", Text: "%+.0f%%"},
		{Name: "tpot_meas_ms", Text: "%.2f"}, {Name: "tpot_pred_ms", Text: "%.2f"}, {Name: "tpot_err", Text: "%+.0f%%"}}}
	for i := range rows {
		r := &rows[i]
		tm, tp, _ := r.Headline("ttft")
		pm, pp, _ := r.Headline("tpot")
		t.Add(rowRef(r), r.GPU+" / "+r.Model+" / "+r.Engine+" / "+r.Checkpoint, loadName(r),
			fmt.Sprintf("%.0f/%.0f", r.InputTokens, r.OutputTokens),
			numOrNil(tm), numOrNil(tp), numOrNil(r.ErrorPct("ttft")), numOrNil(pm), numOrNil(pp), numOrNil(r.ErrorPct("tpot")))
	}
	return t
}

func rowRef(r *validate.CorpusRow) string {
	if r.Line > 1 {
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	return r.File
}

// CorpusRowsTable is one line per row (CSV): every figure measured and
// predicted, the errors, or the skip reason.
func CorpusRowsTable(card *validate.Scorecard) *report.Table {
	t := &report.Table{Columns: []report.Column{{Name: "entry", Left: true}, {Name: "file", Left: true}, {Name: "line"}, {Name: "id", Left: true},
		{Name: "gpu", Left: true}, {Name: "model", Left: true}, {Name: "engine", Left: true}, {Name: "checkpoint", Left: true},
		{Name: "concurrency"}, {Name: "request_rate"}, {Name: "input_tokens"}, {Name: "output_tokens"}, {Name: "requests"}}}
	for _, m := range []string{"ttft", "tpot", "e2el"} {
		for _, st := range []string{"mean", "median", "p90", "p99"} {
			t.Columns = append(t.Columns, report.Column{Name: "measured_" + st + "_" + m + "_ms"}, report.Column{Name: "predicted_" + st + "_" + m + "_ms"})
		}
	}
	t.Columns = append(t.Columns, report.Column{Name: "ttft_error_pct"}, report.Column{Name: "tpot_error_pct"}, report.Column{Name: "skip", Left: true})
	for i := range card.Rows {
		r := &card.Rows[i]
		cells := []any{r.Entry, r.File, r.Line, r.ID, r.GPU, r.Model, r.Engine, r.Checkpoint, r.Concurrency, numOrNil(r.RequestRate),
			r.InputTokens, r.OutputTokens, r.Requests}
		for _, m := range []string{"ttft", "tpot", "e2el"} {
			ms, ps := r.Measured[m], r.Predicted[m]
			cells = append(cells, numOrNil(ms.Mean), numOrNil(ps.Mean), numOrNil(ms.Median), numOrNil(ps.Median),
				numOrNil(ms.P90), numOrNil(ps.P90), numOrNil(ms.P99), numOrNil(ps.P99))
		}
		cells = append(cells, numOrNil(r.ErrorPct("ttft")), numOrNil(r.ErrorPct("tpot")), r.Skip)
		t.Add(cells...)
	}
	return t
}

// overallLine is the one-line summary.
func overallLine(card *validate.Scorecard) string {
	o := card.Overall
	return fmt.Sprintf("%d of %d rows scored: TPOT MAPE %s (bias %s, median |error| %s, n=%d), TTFT MAPE %s (bias %s, median |error| %s, n=%d)",
		card.Scored, card.Total, pct(o.TPOTMAPE), spct(o.TPOTBias), pct(o.TPOTMedianAbs), o.NTPOT,
		pct(o.TTFTMAPE), spct(o.TTFTBias), pct(o.TTFTMedianAbs), o.NTTFT)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", x)
}

func spct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// CorpusText writes the scorecard: the summary, the partitions, the
// skipped rows by reason and the worst points (the rows: --format csv).
func CorpusText(w io.Writer, res *CorpusResult) error {
	card := res.Card
	fmt.Fprintf(w, "corpus    %s (%d entries)\n", res.Manifest.File, len(res.Manifest.Entries))
	if res.Every > 1 {
		fmt.Fprintf(w, "subsample one scorable row in %d (--every)\n", res.Every)
	}
	fmt.Fprintf(w, "overall   %s\n", overallLine(card))
	fmt.Fprintln(w, "          errors: (predicted - measured) / measured of the mean (the median where only it is measured); bias > 0: predicted slower")
	for _, sec := range []struct {
		title string
		t     *report.Table
	}{
		{"By deployment (GPU / model / engine / checkpoint)", partitionTable("partition", card.Partitions)},
		{"By request shape", partitionTable("shape", card.ByShape)},
		{"By concurrency", partitionTable("load", card.ByConcurrency)},
		{"By source", partitionTable("source", card.BySource)},
		{"By mode", partitionTable("mode", card.ByMode)},
		{"Not scored, by reason", skippedTable(card.Skipped)},
		{"Worst points", worstTable(card.Worst)},
	} {
		fmt.Fprintf(w, "\n%s\n", sec.title)
		if err := sec.t.Render(w, report.Text); err != nil {
			return err
		}
	}
	for _, b := range res.Baselines {
		fmt.Fprintf(w, "\n%s: %s's own error on the same work (%s) against moecast's\n", b.Entry, baselineName(b), b.File)
		fmt.Fprintln(w, baselineLine(b))
	}
	for _, wn := range res.Warnings {
		fmt.Fprintln(w, "warning: "+wn)
	}
	return nil
}

func baselineName(b CorpusBaseline) string {
	if strings.HasPrefix(b.Entry, "llmservingsim/") {
		return "LLMServingSim"
	}
	return "the peer"
}

// baselineLine is moecast's result on a baseline's entry.
func baselineLine(b CorpusBaseline) string {
	r := b.Row
	if r == nil {
		return "moecast: no row"
	}
	if !r.Scored() {
		return "moecast: not scored: " + r.Skip
	}
	var parts []string
	for _, m := range []string{"ttft", "tpot", "e2el"} {
		ms, ps := r.Measured[m], r.Predicted[m]
		for _, s := range []struct {
			name       string
			meas, pred float64
		}{{"mean", ms.Mean, ps.Mean}, {"median", ms.Median, ps.Median}, {"p90", ms.P90, ps.P90}, {"p99", ms.P99, ps.P99}} {
			if !math.IsNaN(s.meas) && !math.IsNaN(s.pred) && s.meas > 0 {
				parts = append(parts, fmt.Sprintf("%s %s %+.1f%%", strings.ToUpper(m), s.name, (s.pred-s.meas)/s.meas*100))
			}
		}
	}
	return "moecast: " + strings.Join(parts, ", ")
}

type partitionJSON struct {
	Name          string   `json:"name"`
	N             int      `json:"n"`
	NTPOT         int      `json:"n_tpot"`
	NTTFT         int      `json:"n_ttft"`
	TPOTMAPE      *float64 `json:"tpot_mape"`
	TTFTMAPE      *float64 `json:"ttft_mape"`
	TPOTBias      *float64 `json:"tpot_bias"`
	TTFTBias      *float64 `json:"ttft_bias"`
	TPOTMedianAbs *float64 `json:"tpot_median_abs"`
	TTFTMedianAbs *float64 `json:"ttft_median_abs"`
	TPOTWithin20  *float64 `json:"tpot_within_20"`
	TTFTWithin20  *float64 `json:"ttft_within_20"`
}

func partitionJSONOf(p validate.Partition) partitionJSON {
	return partitionJSON{Name: p.Name, N: p.N, NTPOT: p.NTPOT, NTTFT: p.NTTFT, TPOTMAPE: finite(p.TPOTMAPE), TTFTMAPE: finite(p.TTFTMAPE),
		TPOTBias: finite(p.TPOTBias), TTFTBias: finite(p.TTFTBias), TPOTMedianAbs: finite(p.TPOTMedianAbs), TTFTMedianAbs: finite(p.TTFTMedianAbs),
		TPOTWithin20: finite(p.TPOTWithin20), TTFTWithin20: finite(p.TTFTWithin20)}
}

func partitionsJSON(ps []validate.Partition) []partitionJSON {
	out := []partitionJSON{}
	for _, p := range ps {
		out = append(out, partitionJSONOf(p))
	}
	return out
}

type statsJSON struct {
	Mean   *float64 `json:"mean"`
	Median *float64 `json:"median"`
	P90    *float64 `json:"p90"`
	P99    *float64 `json:"p99"`
}

type corpusRowJSON struct {
	Entry        string               `json:"entry"`
	Source       string               `json:"source,omitempty"`
	File         string               `json:"file"`
	Line         int                  `json:"line"`
	ID           string               `json:"id,omitempty"`
	GPU          string               `json:"gpu"`
	Model        string               `json:"model"`
	Engine       string               `json:"engine"`
	Checkpoint   string               `json:"checkpoint"`
	Mode         string               `json:"mode,omitempty"`
	Concurrency  int                  `json:"concurrency,omitempty"`
	RequestRate  *float64             `json:"request_rate,omitempty"`
	InputTokens  float64              `json:"input_tokens"`
	OutputTokens float64              `json:"output_tokens"`
	Requests     int                  `json:"requests,omitempty"`
	Measured     map[string]statsJSON `json:"measured"`
	Predicted    map[string]statsJSON `json:"predicted,omitempty"`
	TTFTErrorPct *float64             `json:"ttft_error_pct"`
	TPOTErrorPct *float64             `json:"tpot_error_pct"`
	Preemptions  int                  `json:"preemptions,omitempty"`
	Skip         string               `json:"skip,omitempty"`
}

func corpusRowJSONOf(r *validate.CorpusRow) corpusRowJSON {
	j := corpusRowJSON{Entry: r.Entry, Source: r.Source, File: r.File, Line: r.Line, ID: r.ID, GPU: r.GPU, Model: r.Model, Engine: r.Engine,
		Checkpoint: r.Checkpoint, Concurrency: r.Concurrency, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Requests: r.Requests,
		Mode: r.Mode, Preemptions: r.Preemptions, Measured: map[string]statsJSON{}, TTFTErrorPct: finite(r.ErrorPct("ttft")), TPOTErrorPct: finite(r.ErrorPct("tpot")), Skip: r.Skip}
	if r.RequestRate > 0 {
		j.RequestRate = finite(r.RequestRate)
	}
	sj := func(s validate.Stats) statsJSON {
		return statsJSON{Mean: finite(s.Mean), Median: finite(s.Median), P90: finite(s.P90), P99: finite(s.P99)}
	}
	for m, s := range r.Measured {
		j.Measured[m] = sj(s)
	}
	if r.Scored() {
		j.Predicted = map[string]statsJSON{}
		for m, s := range r.Predicted {
			j.Predicted[m] = sj(s)
		}
	}
	return j
}

type skipJSON struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

type baselineJSON struct {
	Entry   string `json:"entry"`
	File    string `json:"file"`
	Text    string `json:"text"`
	Moecast string `json:"moecast"`
}

type CorpusJSON struct {
	Corpus        string          `json:"corpus"`
	Total         int             `json:"total"`
	Scored        int             `json:"scored"`
	Every         int             `json:"subsample_every"`
	Overall       partitionJSON   `json:"overall"`
	Partitions    []partitionJSON `json:"partitions"`
	ByShape       []partitionJSON `json:"by_shape"`
	ByConcurrency []partitionJSON `json:"by_concurrency"`
	BySource      []partitionJSON `json:"by_source"`
	ByMode        []partitionJSON `json:"by_mode"`
	Skipped       []skipJSON      `json:"skipped"`
	Worst         []corpusRowJSON `json:"worst"`
	Baselines     []baselineJSON  `json:"baselines"`
	Rows          []corpusRowJSON `json:"rows"`
	Warnings      []string        `json:"warnings"`
}

func CorpusJSONOf(res *CorpusResult) CorpusJSON {
	card := res.Card
	j := CorpusJSON{Corpus: res.Manifest.File, Total: card.Total, Scored: card.Scored, Every: res.Every,
		Overall: partitionJSONOf(card.Overall), Partitions: partitionsJSON(card.Partitions), ByShape: partitionsJSON(card.ByShape),
		ByConcurrency: partitionsJSON(card.ByConcurrency), BySource: partitionsJSON(card.BySource), ByMode: partitionsJSON(card.ByMode),
		Skipped: []skipJSON{}, Worst: []corpusRowJSON{}, Baselines: []baselineJSON{}, Rows: []corpusRowJSON{}, Warnings: res.Warnings}
	if j.Warnings == nil {
		j.Warnings = []string{}
	}
	for _, s := range card.Skipped {
		j.Skipped = append(j.Skipped, skipJSON{Reason: s.Reason, Count: s.Count})
	}
	for i := range card.Worst {
		j.Worst = append(j.Worst, corpusRowJSONOf(&card.Worst[i]))
	}
	for i := range card.Rows {
		j.Rows = append(j.Rows, corpusRowJSONOf(&card.Rows[i]))
	}
	for _, b := range res.Baselines {
		j.Baselines = append(j.Baselines, baselineJSON{Entry: b.Entry, File: b.File, Text: b.Text, Moecast: baselineLine(b)})
	}
	return j
}

// CorpusPage is the HTML report: the summary, the partition tables with a
// chart of TPOT and TTFT MAPE per deployment, the skipped rows, the worst.
func CorpusPage(res *CorpusResult) *report.Page {
	card := res.Card
	pg := &report.Page{Title: "moecast validate corpus", Warnings: res.Warnings,
		Header: []report.Field{{Label: "corpus", Value: res.Manifest.File}, {Label: "overall", Value: overallLine(card)}}}
	c := &report.GroupedBars{Title: "MAPE by deployment", X: report.Axis{Label: "deployment"}, Y: report.Axis{Label: "MAPE", Unit: "%"}}
	tp, tt := report.Stack{Name: "TPOT"}, report.Stack{Name: "TTFT"}
	for _, p := range card.Partitions {
		c.Labels = append(c.Labels, p.Name)
		tp.Values = append(tp.Values, zeroNaN(p.TPOTMAPE))
		tt.Values = append(tt.Values, zeroNaN(p.TTFTMAPE))
	}
	c.Bars = []report.Stack{tp, tt}
	sec := report.Section{Title: "By deployment", Text: "n, MAPE, mean signed error (bias) and median absolute error, in %.",
		Tables: []report.Titled{{Caption: "By deployment", Table: (*report.Table)(partitionTable("partition", card.Partitions))}}}
	if len(c.Labels) > 0 {
		sec.Chart = c
	}
	pg.Sections = append(pg.Sections, sec,
		report.Section{Title: "By request shape and concurrency", Tables: []report.Titled{
			{Caption: "By request shape", Table: (*report.Table)(partitionTable("shape", card.ByShape))},
			{Caption: "By concurrency", Table: (*report.Table)(partitionTable("load", card.ByConcurrency))}}},
		report.Section{Title: "Not scored", Tables: []report.Titled{{Caption: "Rows by reason", Table: (*report.Table)(skippedTable(card.Skipped))}}},
		report.Section{Title: "Worst points", Tables: []report.Titled{{Caption: "Largest |error|", Table: (*report.Table)(worstTable(card.Worst))}}})
	return pg
}

func zeroNaN(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// mdTable renders t as a Markdown pipe table.
func mdTable(w io.Writer, t *report.Table) error {
	return (*report.Table)(t).Render(w, report.Markdown)
}

// CorpusMarkdown writes the scorecard as a Markdown document:
// docs/ACCURACY.md is this for the shipped corpus, kept in step by a test.
func CorpusMarkdown(w io.Writer, res *CorpusResult) error {
	card := res.Card
	o := card.Overall
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Accuracy of `moecast simulate`: the scorecard\n\n")
	p("<!-- Generated by `moecast validate corpus --max-rows %d --markdown docs/ACCURACY.md`; do not edit.\n", AccuracyMaxRows)
	p("     The test TestAccuracyDoc (cmd/moecast/internal/cli) keeps it in step: refresh with\n")
	p("     `go test ./cmd/moecast/internal/cli -run TestAccuracyDoc -update`. -->\n")
	p("<!-- overall: n=%d tpot_mape=%.2f ttft_mape=%.2f -->\n\n", o.N, o.TPOTMAPE, o.TTFTMAPE)
	p("moecast scores itself against public measurements of real deployments: the corpus shipped in\n")
	p("the binary (`validate/corpus`, built by `go generate ./validate/corpus` from\n")
	p("`../shared/data/serving`). Anyone can regenerate these tables with `moecast validate corpus`;\n")
	p("`--format json|csv` gives every row. The measurements are only compared, never fitted: every\n")
	p("constant in moecast comes from op-level measurements, engines' source or documented defaults.\n\n")
	p("## Overall\n\n")
	p("**%d of %d rows scored.** TPOT: MAPE **%s**, mean signed error %s, median absolute error %s, %s within ±20%% (n=%d). ",
		card.Scored, card.Total, pct(o.TPOTMAPE), spct(o.TPOTBias), pct(o.TPOTMedianAbs), pct(o.TPOTWithin20*100), o.NTPOT)
	p("TTFT: MAPE **%s**, mean signed error %s, median absolute error %s, %s within ±20%% (n=%d).\n\n",
		pct(o.TTFTMAPE), spct(o.TTFTBias), pct(o.TTFTMedianAbs), pct(o.TTFTWithin20*100), o.NTTFT)
	if res.Every > 1 {
		p("Rows simulated: one scorable row in %d, by position (`--max-rows %d` keeps the run under a minute on\n", res.Every, AccuracyMaxRows)
		p("two cores), and every row with a peer's own error on the same work (LLMServingSim's replays);\n")
		p("the others are counted below as not in the subsample.\n\n")
	}
	p("Errors are (predicted - measured) / measured of the mean, or of the median where a file holds\n")
	p("only the median (InferenceX); a positive bias means moecast predicts slower than measured.\n")
	shipped := strings.HasPrefix(res.Manifest.File, "embedded:")
	if !shipped {
		p("\n")
	} else {
		p("**Noise floor:** repeat measurements of one setup in the aiconfigurator data differ by a median\n")
		p("2.4%% in TPOT (p90 25%%) and 6%% in TTFT (p90 54%%) (../shared/data/serving/README.md); no score\n")
		p("can be read more finely than that.\n\n")
		p("**Disaggregated rows** (aiconfigurator `mode` disagg, vLLM and SGLang; partitions marked `disagg`):\n")
		p("each is a `[disagg]` scenario with the row's `prefill_*` and `decode_*` pools (experts over\n")
		p("`*_moe_ep_size` ranks). Rows with an empty `*_num_workers` (an older dump) are not scored: the\n")
		p("pools' sizes are not recorded, and aiconfigurator's own harness refuses them too\n")
		p("(`REQUIRED_DISAGG_FIELDS` of its predict_silicon_sample.py). The KV cache crosses the\n")
		p("system's NVLink preset (nvlink5 on B200, nvlink5-nvl72 on GB200/GB300, nvlink4 on H100):\n")
		p("aiconfigurator's disaggregated runs are single-system. Load: a closed loop at the client's\n")
		p("concurrency, `silicon_concurrency=` of `silicon_data_source`, which equals `decode_batch_size x\n")
		p("decode_num_workers x decode_attention_dp_size` (`batch_size` is empty on these rows), with 10 x C\n")
		p("requests. TRT-LLM rows, agg or disagg, stay unscored (no TRT-LLM engine); the unreliable-row\n")
		p("rules below apply to them as to the aggregated rows, with the pools in the layout.\n\n")
	}
	sections := []struct {
		title, text string
		t           *report.Table
	}{
		{"By deployment", "GPU / model / engine / checkpoint (the source's names). n rows; MAPE, bias (mean signed error) and median absolute error in %; the share of rows within ±20 %.", partitionTable("partition", card.Partitions)},
		{"By request shape", "Input and output length bands.", partitionTable("shape", card.ByShape)},
		{"By concurrency", "Closed-loop concurrency bands; open loop = a request rate or a replayed log.", partitionTable("load", card.ByConcurrency)},
		{"By source", "", partitionTable("source", card.BySource)},
		{"By mode", "", partitionTable("mode", card.ByMode)},
	}
	for _, sec := range sections {
		p("## %s\n\n", sec.title)
		if sec.text != "" {
			p("%s\n\n", sec.text)
		}
		if err := mdTable(w, sec.t); err != nil {
			return err
		}
		p("\n")
	}
	p("## What is not scored, and why\n\n")
	p("Every row of the corpus is counted. A row is not scored when its data are unreliable (first), when\n")
	p("moecast cannot express its deployment (the reason is the error its scenario gives when it loads, so\n")
	p("a row is scored as soon as moecast learns the model, GPU or engine), or when moecast cannot serve\n")
	p("the point. Rules for unreliable rows (`validate.ExcludeUnreliable`), applied to rows that record\n")
	p("their layout:\n\n")
	p("- **duplicate**: the same setup (model, GPU, engine and version, checkpoint, mode, layout, lengths,\n")
	p("  concurrency) with TTFT and TPOT within 0.01 ms of an earlier row: one measurement listed twice;\n")
	p("- **tp_size slip**: a row whose tp_size equals another row's tp_size x EP, with that row's TTFT and\n")
	p("  TPOT within 0.01 ms: the figures belong to the other layout (tp_size written as tp x ep);\n")
	p("- **another model's row**: the same setup and layout as an earlier row of another model name, with\n")
	p("  TTFT and TPOT within 0.01 ms: one measurement listed under both names (aiconfigurator's B200\n")
	p("  DeepSeek-V3 rows, SGLang and TRT-LLM, fp8 and nvfp4, repeat DeepSeek-R1's; two models cannot\n")
	p("  agree to 0.01 ms);\n")
	p("- **inconsistent**: against a row of the same setup at a quarter of the concurrency or less, TPOT\n")
	p("  below 0.8x and TTFT above 10x its: more requests in flight cannot decode faster, so requests\n")
	p("  queued at the client (the README's gpt-oss-120b H100 C=512 rows, whose client capped the run\n")
	p("  at 512 requests while the server ran $CONC: see below);\n")
	p("- **below the physical lower bound** (`validate.LowerBound`, with each row's figures): a mean TPOT\n")
	p("  below what the decode step must read from HBM at the GPU's peak bandwidth, per GPU: the\n")
	p("  non-expert weights of its shard, one token's top_k experts, and the KV cache (fp8, fp4 where the\n")
	p("  GPU has fp4 tensor cores) of the requests past their first token (Little's law: C / instances x\n")
	p("  D / (TTFT + D), D = (OSL-1) x TPOT) at context ISL + OSL/2, divided by 1 + the draft tokens; or a\n")
	p("  mean TTFT below the prompt's linear-layer FLOPs at the GPU's highest dense peak on the prefill\n")
	p("  instance. No engine can be faster: the row is not what its label says.\n\n")
	p("An entry the manifest marks `exclude` (\"unreliable: \" and its reason) is left out whole: a corpus\n")
	p("rule found its rows do not represent the engine. The shipped corpus's rule (validate/corpus/gen,\n")
	p("`beyondCapacity`), for closed loops of fixed lengths that record their duration: at most C prompts\n")
	p("are in the server at once, so a request waits for at most C x L prompt tokens of prefill; the\n")
	p("deployment's own runs at length L or longer sustained an input rate X (input tokens over duration,\n")
	p("decode included), so its TTFT is bounded by C x L / X (x d with attention DP over d ranks). A median\n")
	p("TTFT above twice that bound means the requests waited outside the engine (client, network or API\n")
	p("server), a delay of unknown size in every run of that server, and in the other deployments of the\n")
	p("same client sweep.\n\n")
	if err := mdTable(w, skippedTable(card.Skipped)); err != nil {
		return err
	}
	p("\n## Worst points\n\n")
	p("The %d rows with the largest |error| of TPOT or TTFT: where to look for a missing mechanism.\n\n", len(card.Worst))
	if err := mdTable(w, worstTable(card.Worst)); err != nil {
		return err
	}
	p("\n## How each source is mapped\n\n")
	for _, s := range res.Manifest.Sources {
		p("- **%s** (%s; %s): %s.\n", s.Name, s.Origin, s.License, s.Mapping)
	}
	if shipped {
		corpusMapping(p)
	}
	if len(res.Baselines) > 0 {
		p("\n## Request-log replay: LLMServingSim's examples\n\n")
		p("Each example's 300 requests are replayed (their arrivals and lengths) and scored per request;\n")
		p("TTFT is measured from the engine's queue time. LLMServingSim's own error on the same work\n")
		p("(its summary.txt, verbatim) beside moecast's:\n\n")
		for _, b := range res.Baselines {
			p("### %s\n\n", strings.TrimPrefix(b.Entry, "llmservingsim/"))
			p("%s\n\n", baselineLine(b))
			p("LLMServingSim (`%s`):\n\n```\n%s```\n\n", b.File, strings.TrimRight(b.Text, "\n")+"\n")
		}
	}
	if len(res.Warnings) > 0 {
		p("## Warnings\n\n")
		for _, wn := range res.Warnings {
			p("- %s\n", wn)
		}
	}
	return nil
}

// corpusMapping says how the shipped corpus's sources became scenarios,
// and every mapping decision validate/corpus/gen makes.
func corpusMapping(p func(string, ...any)) {
	p("\nEach aiconfigurator deployment becomes one scenario: `hardware.gpu` from `system`, `[parallel]`\n")
	p("tp = tp_size, dp = attention_dp_size (dp_attention when > 1), ep = moe_ep_size, `runtime.engine` from\n")
	p("`backend`; engine settings the rows do not record take moecast's defaults, except where the server's\n")
	p("command line is public: the MiniMax-M2.5 FP8 vLLM rows run by InferenceX's harness (the image their\n")
	p("`silicon_data_source` names) take its benchmark script's `--kv-cache-dtype`, `--gpu-memory-utilization`\n")
	p("and `--max-num-seqs` (`validate/corpus/gen/launch.go`; script and commit in each scenario's comment),\n")
	p("and rows of one layout run with different command lines are different deployments. InferenceX ran\n")
	p("DeepSeek-R1 fp8 on 8 B200s under SGLang v0.5.9 twice on 2026-03-25, plain and with MTP\n")
	p("(`dsr1_fp8_b200_mtp.sh`: EAGLE over the checkpoint's NextN layer, K = 2); the rows do not say which,\n")
	p("so a row whose figures are not those of the database dump's config (the plain one's points) is the\n")
	p("MTP run's, and its scenario carries `[speculative]` with the acceptance moecast documents for\n")
	p("DeepSeek-V3's MTP layer (0.85, measured on natural text: none is published for these random\n")
	p("prompts); Qwen3.5 fp8's MTP run (K = 3) has no published acceptance (bench/RESULTS-mtp.md).\n")
	p("The model config is the one of the row's checkpoint, chosen in this order (`validate/corpus/gen`, `modelConfig`):\n\n")
	p("- fp4: NVIDIA's -NVFP4 release of the model (gpt-oss: its own MXFP4 checkpoint); else NVIDIA's NVFP4\n")
	p("  release of an architecture twin: DeepSeek-R1 and DeepSeek-V3 take `nvidia/DeepSeek-V3.1-NVFP4`,\n")
	p("  whose config.json the generator checks equal to theirs on every key but the quantization and the\n")
	p("  build's provenance (experts, dense MLPs and o_proj NVFP4; the q and kv projections, the MTP layer\n")
	p("  and lm_head bf16; FP8 KV cache); else the row's quant mode applied to NVIDIA's FP8 ModelOpt release\n")
	p("  (Llama-3.1-70B: `nvidia/Llama-3.1-70B-Instruct-FP8` with quant_algo NVFP4, group 16, its exclude\n")
	p("  list and FP8 KV cache kept, written as `configs/derived--...-as-NVFP4`), as aiconfigurator prices\n")
	p("  a row from its quant modes on the model's architecture;\n")
	p("- fp8: a -FP8 release (the model's, or NVIDIA's -Instruct-FP8); else, for a release whose\n")
	p("  config.json is public but not among the shared configs, the model's own config with that\n")
	p("  release's quantization_config (Qwen3.5-397B: Qwen/Qwen3.5-397B-A17B-FP8 @ ea5b4f8, fp8 blocks of\n")
	p("  128 x 128, its 372 bf16 modules: routers, shared-expert gates, the Gated DeltaNet layers' conv1d,\n")
	p("  in_proj_a and in_proj_b, the vision tower, lm_head; written as `configs/derived--...-FP8`);\n")
	p("  else the model's own config;\n")
	p("- otherwise the model's own config. A checkpoint the chosen config does not hold (its routed\n")
	p("  experts, or dense MLP, of another width) is not scored, with both named.\n\n")
	p("SGLang's rows that do not record --mem-fraction-static take SGLang's own default, as its server\n")
	p("derives it from GPU memory, TP, DP attention and chunked_prefill_size (0.852 on a B200 at TP8,\n")
	p("0.821 before 0.5.3; far less with DP attention over many ranks, whose CUDA-graph padding it\n")
	p("reserves: 0.811 on 4 GB200s), and SGLang's KV pool is that share less the weights. The few rows\n")
	p("that \"cannot serve the point\" are DeepSeek-V3 fp8 decoding with DP attention over 4 GB200s\n")
	p("under SGLang: the weights fill that share and more, leaving no KV cache: the run must have used a\n")
	p("larger mem_fraction_static, which the rows do not record.\n\n")
	p("The layout is the row's, with one correction: the serving README's conversion slip, tp_size\n")
	p("written as tp x ep. Where a row's id names the layout it ran (`..._tp8_ep8_...`) and tp_size =\n")
	p("that tp x ep, or the id names none and tp_size (beyond one 8-GPU box) = moe_tp_size x moe_ep_size\n")
	p("with both above 1, the scenario runs the id's tp (moe_tp_size) with the row's ep on tp x dp GPUs\n")
	p("(B200/B300 DeepSeek-R1/V3 tp64-ep8 and tp16-ep4 rows, Qwen3.5 tp16-ep4). GB200's SGLang\n")
	p("DeepSeek-R1 rows record tp_size 72 with EP 1 and their ids say the same: that layout cannot run\n")
	p("(72 divides neither the 128 attention heads nor the experts), it is not the slip (EP 1), and the\n")
	p("layout that ran (most likely SGLang's --tp 72 world size with DP attention and wide EP over the\n")
	p("NVL72 domain) is not recorded, so they are not scored.\n\n")
	p("The gpt-oss-120b H100 vLLM rows measured 2025-12-05 and 2025-12-08 record concurrency 512, above\n")
	p("their config's 4-64: InferenceX's H100 docker script (`gptoss_fp4_h100_docker.sh`, d22bf9c until\n")
	p("4e135fd) ran its client with `--max-concurrency 512` and 10 x $CONC prompts against a server with\n")
	p("`--max-num-seqs=$CONC`, and `utils/process_result.py` records the client's cap as the row's\n")
	p("concurrency. Which $CONC each row ran, and so the server's limit and the number of requests, is not\n")
	p("recorded: those deployments are not scored (\"concurrency not recorded\"; `launch.clientConc`).\n\n")
	p("A second slip is vLLM's: every aggregated vLLM row with attention_dp_size > 1 records\n")
	p("attention_dp_size = tp_size = N and moe_ep_size = N x N, the shape of a TP-EP run (`vllm serve\n")
	p("--tensor-parallel-size N --enable-expert-parallel` on N GPUs) with its ep written as the DP size:\n")
	p("the rows whose ids name their layout say tpN_epN, others repeat exactly the figures of such rows\n")
	p("or of rows recorded as tpN dp1 epN, and their TPOT equals the N-GPU TP-EP run's at every\n")
	p("concurrency, which a DP deployment on N x N GPUs could not. Those scenarios run tpN epN on N GPUs\n")
	p("(B200/B300/H100 MiniMax-M2.5 tp2-dp2-ep4 and tp4-dp4-ep16, B200 Kimi-K2.5 tp4-dp4-ep16).\n\n")
	p("InferenceX's files name their layout (tp8; tep8 = TP8 with `--enable-expert-parallel`; dep8 =\n")
	p("attention DP8 with EP8) and the server arguments come from its sbatch scripts (GLM-5-FP8:\n")
	p("`--speculative-config.method mtp`, 1 token; Qwen3.5: `--enable-prefix-caching`, which random\n")
	p("prompts never hit, and `--language-model-only`; the parsers and `--download-dir` do not change\n")
	p("the engine's work); everything else is vLLM's default. GLM-5's MTP acceptance is not in the\n")
	p("result files; its scenario takes 0.3659, the first draft position's acceptance vLLM's spec-decode\n")
	p("counters measured for GLM-5-FP8 on 8 H200s with random-token prompts, greedy, on /v1/completions\n")
	p("(vllm-project/recipes @ ae68dd6 GLM/GLM5.md: 36.59%, 20.39%, 7.00% at K = 3), a measurement of\n")
	p("the draft, not fitted to these rows.\n")
	p("LLMServingSim's engine arguments come from its meta.json.\n")
}

// AccuracyMaxRows is the row cap docs/ACCURACY.md is generated with: above
// the shipped corpus's scorable rows (1,432), so the document scores every
// one (about 30 s on 2 cores). A subsample by position (400 rows before)
// stopped being representative once entries were split and merged by the
// launch scripts: its TTFT MAPE read 39.9% where the whole corpus scores
// 33.9%.
const AccuracyMaxRows = 2000
