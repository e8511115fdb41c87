package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
	"github.com/moecast/moecast/validate"
	"github.com/moecast/moecast/validate/corpus"
)

// validateCorpusOptions are the inputs of `moecast validate corpus`.
type validateCorpusOptions struct {
	Corpus string // DIR or MANIFEST; "" = the shipped corpus
	Format string
	HTML   string
	// Every keeps one scorable record in Every (a deterministic subsample
	// by position); 1 = all. MaxRows > 0 sets Every to the smallest that
	// keeps at most MaxRows.
	Every    int
	MaxRows  int
	Markdown string // --markdown FILE: the scorecard as docs/ACCURACY.md
	// AccuracyJSON is --accuracy-json FILE: the per-deployment accuracy
	// summary (validate.AccuracyTable) simulate quotes.
	AccuracyJSON string
	// Without and With name modelled mechanisms to turn off or on in every
	// scenario (scenarios.Scenario.SetMechanism).
	Without, With []string
}

func newValidateCorpusCmd(s *streams, runF func(*validateCorpusOptions) error) *cobra.Command {
	opts := &validateCorpusOptions{}
	cmd := &cobra.Command{
		Use:   "corpus [DIR|MANIFEST]",
		Short: "Score moecast simulate against a corpus of measured serving results (the shipped one by default)",
		Long: `Read a corpus manifest (TOML: entries, each a scenario and the measured results
for it in any format validate bench reads), simulate every measured point on
its scenario, and report the accuracy: per row measured and predicted TTFT
and TPOT (mean; median, p90, p99 where measured) with their errors; per
partition (GPU x model x engine x checkpoint; request shape; concurrency
band) n, MAPE, mean signed error and median absolute error; every row not
scored, counted by reason (a model, GPU, engine or feature moecast cannot
express, a point it cannot serve, a row excluded as unreliable by a stated
rule); and the worst points.

Without an argument it runs the corpus shipped in the binary, built from
public measurements (docs/ACCURACY.md is its output). DIR is a directory
holding manifest.toml. Entries run in parallel on every core. Accuracy
never makes the command fail; unusable input exits 2.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Corpus = args[0]
			}
			if c.Flags().Changed("every") && c.Flags().Changed("max-rows") {
				return inputErrf("validate corpus: give --every or --max-rows, not both")
			}
			if runF != nil {
				return runF(opts)
			}
			return runValidateCorpus(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv (csv: one line per row)")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report to FILE")
	f.IntVar(&opts.Every, "every", 1, "score one row in N (a deterministic subsample by position; skipped rows are still counted; rows with a peer's baseline are always scored)")
	f.IntVar(&opts.MaxRows, "max-rows", 0, "score at most N rows: one in ceil(scorable/N), as --every (0: all)")
	f.StringSliceVar(&opts.Without, "without", nil, "turn these modelled mechanisms off (comma-separated) to measure each one's effect: "+strings.Join(scenarios.Mechanisms(), "; "))
	f.StringSliceVar(&opts.With, "with", nil, "turn these mechanisms on (comma-separated; names as --without)")
	f.StringVar(&opts.Markdown, "markdown", "", "also write the scorecard as a Markdown document to FILE (docs/ACCURACY.md is this for the shipped corpus)")
	f.StringVar(&opts.AccuracyJSON, "accuracy-json", "", "also write moecast's error per deployment (GPU, engine, architecture, weights, mode) and per broader group as JSON to FILE (validate/corpus/accuracy.json is this for the shipped corpus: simulate quotes it)")
	return cmd
}

func runValidateCorpus(s *streams, opts *validateCorpusOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	if opts.Every < 1 {
		return inputErrf("validate corpus: --every: want 1 or more, got %d", opts.Every)
	}
	if opts.MaxRows < 0 {
		return inputErrf("validate corpus: --max-rows: want 0 (all) or more, got %d", opts.MaxRows)
	}
	for _, o := range [][2]string{{"--markdown", opts.Markdown}, {"--accuracy-json", opts.AccuracyJSON}} {
		if o[1] != "" {
			if err := atomicfile.CheckOutput(o[1]); err != nil {
				return fmt.Errorf("%s: %w", o[0], err) // an *atomicfile.OutputError
			}
		}
	}
	in, err := corpusInputOf(opts)
	if err != nil {
		return err
	}
	in.Outputs = map[string]string{}
	for flag, p := range map[string]string{"--markdown": opts.Markdown, "--html": opts.HTML, "--accuracy-json": opts.AccuracyJSON} {
		if p != "" {
			in.Outputs[flag] = p
		}
	}
	if err := checkCorpusOutputs(in.Outputs, corpusFiles(in.Manifest)); err != nil {
		return err
	}
	res, err := scoreCorpus(in)
	if err != nil {
		return err
	}
	if opts.Markdown != "" {
		if err := atomicfile.Write(opts.Markdown, 0o644, func(w io.Writer) error { return view.CorpusMarkdown(w, res) }); err != nil {
			return err
		}
	}
	if opts.AccuracyJSON != "" {
		label := "the shipped corpus (validate/corpus)"
		if opts.Corpus != "" {
			label = "the corpus " + opts.Corpus
		}
		if res.Every > 1 {
			label += fmt.Sprintf(", one scorable row in %d", res.Every)
		}
		if len(opts.Without)+len(opts.With) > 0 {
			label += fmt.Sprintf(", mechanisms off %v on %v", opts.Without, opts.With)
		}
		b, err := validate.Accuracy(label, res.Card.Rows).JSON()
		if err != nil {
			return err
		}
		if err := atomicfile.Write(opts.AccuracyJSON, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
	}
	return output{html: opts.HTML, views: res.Views()}.write(s, opts.Format)
}

// corpusInput is what `validate corpus` scores: the manifest, the
// subsample (Every, or MaxRows when > 0) and the mechanisms turned on
// (true) or off in every scenario.
type corpusInput struct {
	Manifest   *scenarios.Manifest
	Every      int
	MaxRows    int
	Mechanisms map[string]bool
	// Outputs are the files the command writes, by flag ("--markdown":
	// PATH): none may be a file the corpus reads, the entries' model
	// configs included (checked once the scenarios are read, before
	// the simulations).
	Outputs map[string]string
}

// corpusFiles are the files on disk the manifest names: itself and each
// entry's scenario, results and baseline (none for the shipped corpus).
func corpusFiles(m *scenarios.Manifest) []string {
	if m.Root == "" {
		return nil
	}
	out := []string{m.File}
	on := func(p string) string { return filepath.Join(m.Root, filepath.FromSlash(m.Path(p))) }
	for _, e := range m.Entries {
		if e.Scenario != "" {
			out = append(out, on(e.Scenario))
		}
		for _, r := range e.Results {
			out = append(out, on(r))
		}
		if e.Baseline != "" {
			out = append(out, on(e.Baseline))
		}
	}
	return out
}

// checkCorpusOutputs refuses an output (flag: path) that is one of inputs.
func checkCorpusOutputs(outputs map[string]string, inputs []string) error {
	flags := []string{"--markdown", "--html", "--accuracy-json"}
	for i, flag := range flags {
		if p, ok := outputs[flag]; ok {
			if err := atomicfile.CheckOutput(p, inputs...); err != nil {
				return fmt.Errorf("%s %w", flag, err) // an *atomicfile.OutputError
			}
			for _, prev := range flags[:i] {
				if q, ok := outputs[prev]; ok && sameFile(p, q) {
					return inputErrf("validate corpus: %s and %s name the same file %s: each output needs its own", prev, flag, p)
				}
			}
		}
	}
	return nil
}

// corpusInputOf reads the manifest and checks the mechanism flags.
func corpusInputOf(opts *validateCorpusOptions) (corpusInput, error) {
	m, err := openCorpus(opts.Corpus)
	if err != nil {
		return corpusInput{}, err
	}
	set := map[string]bool{}
	for _, l := range []struct {
		flag  string
		names []string
		on    bool
	}{{"--without", opts.Without, false}, {"--with", opts.With, true}} {
		for _, name := range l.names {
			if err := (&scenarios.Scenario{}).SetMechanism(name, l.on); err != nil {
				return corpusInput{}, inputErrf("validate corpus: %s: %v", l.flag, err)
			}
			if prev, ok := set[name]; ok && prev != l.on {
				return corpusInput{}, inputErrf("validate corpus: %s is in both --with and --without", name)
			}
			set[name] = l.on
		}
	}
	return corpusInput{Manifest: m, Every: opts.Every, MaxRows: opts.MaxRows, Mechanisms: set}, nil
}

// openCorpus reads the manifest: the shipped corpus for "", DIR/manifest.toml
// for a directory, else the manifest file.
func openCorpus(arg string) (*scenarios.Manifest, error) {
	var (
		m   *scenarios.Manifest
		err error
	)
	switch st, serr := infile.Stat(arg); {
	case arg == "":
		m, err = scenarios.ReadManifest(corpus.FS, corpus.Manifest)
		if m != nil {
			m.File = "embedded:" + corpus.Manifest
		}
	case serr != nil:
		return nil, fmt.Errorf("validate corpus: %w", serr) // an *infile.Error: "ARG: cause"
	case st.IsDir():
		m, err = scenarios.ReadManifest(os.DirFS(arg), "manifest.toml")
		if m != nil {
			m.File, m.Root = filepath.Join(arg, "manifest.toml"), arg
		}
	default:
		m, err = scenarios.ReadManifest(os.DirFS(filepath.Dir(arg)), filepath.Base(arg))
		if m != nil {
			m.File, m.Root = arg, filepath.Dir(arg)
		}
	}
	if err != nil {
		return nil, err // *scenarios.InputError
	}
	// The reader of each entry's format exists (the manifest reader
	// checks the other keys, but the formats are validate's).
	for i, e := range m.Entries {
		if f, ok := validate.FormatByName(e.Format); e.Format != "" && (!ok || f.Read == nil) {
			return nil, inputErrf("%s:%d: entry[%d].format: unknown result format %q (want one of %s)",
				m.File, e.Line, i+1, e.Format, strings.Join(validate.FormatNames(), ", "))
		}
	}
	return m, nil
}

// excludePrefix heads the skip reason of the rows of a manifest entry
// with `exclude` (a corpus rule's finding that the measured rows do not
// represent the engine), as validate's own exclusion rules head theirs.
const excludePrefix = "unreliable: "

// corpusJob is one record of one entry to simulate.
type corpusJob struct {
	entry int
	rec   validate.BenchResult
	skip  string
}

// scoreCorpus reads every entry, excludes unreliable records, simulates
// the rest in parallel and scores them.
func scoreCorpus(in corpusInput) (*view.CorpusResult, error) {
	m, every, maxRows, mechanisms := in.Manifest, in.Every, in.MaxRows, in.Mechanisms
	var jobs []corpusJob
	var recs []validate.BenchResult
	for i, e := range m.Entries {
		var got []validate.BenchResult
		var readErr error
		for _, p := range e.Results {
			var rs []validate.BenchResult
			var err error
			if e.Format != "" {
				var data []byte
				if data, err = fs.ReadFile(m.FS, m.Path(p)); err == nil {
					rs, err = validate.ReadBenchAs(e.Format, m.Path(p), data)
				}
			} else {
				rs, err = validate.ReadBenchFS(m.FS, m.Path(p))
			}
			if err != nil {
				readErr = err
				break
			}
			got = append(got, rs...)
		}
		if readErr != nil {
			// The entry's rows are unknown: it counts as one.
			jobs = append(jobs, corpusJob{entry: i, rec: validate.BenchResult{File: m.Path(e.Results[0]), Line: 1},
				skip: "unreadable results: " + reasonOf(readErr)})
			recs = append(recs, validate.BenchResult{})
			continue
		}
		for _, r := range got {
			jobs = append(jobs, corpusJob{entry: i, rec: r})
			recs = append(recs, r)
		}
	}
	for i, why := range validate.ExcludeUnreliable(recs) {
		if why != "" && jobs[i].skip == "" {
			jobs[i].skip = why
		}
	}
	// Entries that cannot be expressed, and the scenarios of the others.
	type loaded struct {
		sc   *scenarios.Scenario
		sim  simHandle
		skip string
	}
	ents := make([]loaded, len(m.Entries))
	for i, e := range m.Entries {
		if e.Exclude != "" { // unreliable data first, whatever moecast can do
			ents[i].skip = excludePrefix + e.Exclude
			continue
		}
		if e.Skip != "" {
			ents[i].skip = "cannot express: " + e.Skip
			continue
		}
		sc, err := m.Scenario(e)
		if err != nil {
			ents[i].skip = "cannot express: " + reasonOf(err)
			continue
		}
		for name, on := range mechanisms {
			_ = sc.SetMechanism(name, on) // names checked by the caller
		}
		if why := checkpointMismatch(sc, e.Checkpoint); why != "" {
			ents[i].skip = "cannot express: " + why
			continue
		}
		sm, err := sc.Sim()
		if err != nil {
			ents[i].skip = "cannot express: " + reasonOf(err)
			continue
		}
		h := simHandle{sm: sm}
		if sc.Disagg != nil {
			if h.psm, h.dsm, err = sc.DisaggSims(); err != nil {
				ents[i].skip = "cannot express: " + reasonOf(err)
				continue
			}
		}
		ents[i] = loaded{sc: sc, sim: h}
	}
	if len(in.Outputs) > 0 {
		var read []string
		for _, ld := range ents {
			if ld.sc != nil {
				read = append(read, ld.sc.InputFiles()...)
			}
		}
		if err := checkCorpusOutputs(in.Outputs, read); err != nil {
			return nil, err
		}
	}
	// Rows below their deployment's physical lower bound (validate.LowerBound).
	for i := range jobs {
		if ld := &ents[jobs[i].entry]; jobs[i].skip == "" && ld.skip == "" && ld.sc != nil {
			jobs[i].skip = belowBound(ld.sc, &jobs[i].rec)
		}
	}
	if maxRows > 0 {
		n := 0
		for i := range jobs {
			if jobs[i].skip == "" && ents[jobs[i].entry].skip == "" && m.Entries[jobs[i].entry].Baseline == "" {
				n++
			}
		}
		every = max(1, (n+maxRows-1)/maxRows)
	}
	res := &view.CorpusResult{Manifest: m, Every: every}
	rows := make([]validate.CorpusRow, len(jobs))
	eligible := 0
	var todo []int
	for i := range jobs {
		j := &jobs[i]
		e := m.Entries[j.entry]
		rows[i] = corpusRowOf(e, j.rec)
		switch {
		case j.skip != "": // unreliable data first, whatever moecast can do
			rows[i].Skip = j.skip
		case ents[j.entry].skip != "":
			rows[i].Skip = ents[j.entry].skip
		case e.Baseline != "":
			// A peer's own error on the same work is shown beside
			// moecast's: always scored, outside the subsample.
			todo = append(todo, i)
		default:
			if eligible%every != 0 {
				rows[i].Skip = fmt.Sprintf("not in the subsample (--every %d)", every)
			} else {
				todo = append(todo, i)
			}
			eligible++
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	warns := make([][]string, len(jobs))
	for range min(len(todo), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(todo) {
					return
				}
				i := todo[k]
				ld := &ents[jobs[i].entry]
				warns[i] = simulateCorpusRow(ld.sc, ld.sim, jobs[i].rec, &rows[i])
			}
		}()
	}
	wg.Wait()
	res.Card = validate.Score(rows)
	var all []string
	for _, w := range warns {
		all = append(all, w...)
	}
	res.Warnings = collapseWarnings(all)
	for i, e := range m.Entries {
		if e.Baseline == "" {
			continue
		}
		b := view.CorpusBaseline{Entry: e.Name, File: e.Baseline}
		data, err := fs.ReadFile(m.FS, m.Path(e.Baseline))
		if err != nil {
			b.Text = "unreadable: " + reasonOf(err)
		} else {
			b.Text = string(data)
		}
		for k := range jobs {
			if jobs[k].entry == i {
				b.Row = &res.Card.Rows[k]
				break
			}
		}
		res.Baselines = append(res.Baselines, b)
	}
	return res, nil
}

// belowBound is validate.BelowBound for record r on scenario sc: the
// decode pool's instance (the only one when aggregated) and the prefill
// pool's GPUs.
func belowBound(sc *scenarios.Scenario, r *validate.BenchResult) string {
	if lim := float64(sim.MaxContext / 4); !(r.InputTokens <= lim && r.OutputTokens <= lim) {
		return "" // lengths moecast does not simulate: benchWorkload says so
	}
	in := validate.BoundInput{Decode: sc.Config, DecodeInstances: 1, PrefillGPUs: sc.Config.GPUs,
		ISL: r.InputTokens, OSL: r.OutputTokens, TTFTms: r.Metrics["ttft"].Mean, TPOTms: r.Metrics["tpot"].Mean}
	if d := sc.Disagg; d != nil {
		in.Decode.Layout, in.Decode.GPUs, in.DecodeInstances = d.Decode.Layout, d.Decode.GPUs, d.Decode.Workers
		in.PrefillGPUs = d.Prefill.GPUs
	}
	if r.Concurrency > 0 && math.IsInf(r.RequestRate, 1) {
		in.Concurrency = r.Concurrency
	}
	return validate.BelowBound(in, validate.LowerBound(in))
}

// simHandle is the entry's simulator, shared by its rows (a sim.Sim is
// safe for concurrent use: simulate's parallel points share one).
// psm and dsm are a disaggregated entry's prefill and decode pools' (nil
// otherwise).
type simHandle struct{ sm, psm, dsm *sim.Sim }

// corpusRowOf is the row of record r of entry e, before simulation.
func corpusRowOf(e scenarios.ManifestEntry, r validate.BenchResult) validate.CorpusRow {
	row := validate.CorpusRow{Entry: e.Name, Source: e.Source, File: r.File, Line: r.Line, ID: r.ID,
		GPU: e.GPU, Model: e.Model, Engine: e.Engine, Checkpoint: e.Checkpoint,
		Mode:        r.Layout.Mode,
		Concurrency: r.Concurrency, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Requests: r.NumPrompts,
		Measured: map[string]validate.Stats{}, Predicted: map[string]validate.Stats{}}
	if row.GPU == "" {
		row.GPU = r.Layout.GPU
	}
	if row.Model == "" {
		row.Model = r.Model
	}
	if row.Engine == "" {
		row.Engine = r.Backend
	}
	if row.Checkpoint == "" {
		row.Checkpoint = r.Layout.Precision
	}
	if r.Concurrency == 0 && !math.IsInf(r.RequestRate, 1) {
		row.RequestRate = r.RequestRate
	}
	for _, m := range []string{"ttft", "tpot", "e2el"} {
		st, ok := r.Metrics[m]
		if !ok {
			st = validate.NoStats()
		}
		row.Measured[m] = st
		row.Predicted[m] = validate.NoStats()
	}
	return row
}

// simulateCorpusRow simulates record r on a copy of the entry's scenario
// and fills the row's predictions, or its Skip. It returns the warnings.
func simulateCorpusRow(base *scenarios.Scenario, h simHandle, r validate.BenchResult, row *validate.CorpusRow) []string {
	sc := *base // the Serving of each row is its own
	p, w, err := benchWorkload(&sc, r)
	if err != nil {
		row.Skip = "cannot simulate the load: " + reasonOf(err)
		return nil
	}
	cfg, err := sc.ServeConfig(h.sm, p)
	if err != nil {
		row.Skip = "cannot simulate the load: " + reasonOf(err)
		return nil
	}
	if sc.Disagg != nil {
		if err := sc.DisaggConfig(&cfg, h.psm, h.dsm); err != nil {
			row.Skip = "cannot simulate the load: " + reasonOf(err)
			return nil
		}
	}
	sn := &view.Simulation{Scenario: &sc, PrefillSim: h.psm, DecodeSim: h.dsm}
	pt := view.SimPoint{At: p, Config: cfg}
	if err := runSimPoint(sn, h.sm, &pt); err != nil {
		row.Skip = "cannot simulate: " + reasonOf(err)
		return nil
	}
	switch {
	case pt.Unservable != "":
		row.Skip = "cannot serve the point: " + reasonOf(errors.New(pt.Unservable))
		return nil
	case pt.Result.Overloaded:
		row.Skip = "cannot serve the point: the offered rate is beyond the predicted capacity"
		return nil
	}
	row.Deployment = view.DeploymentOf(&sc)
	row.Requests = cfg.Workload.Requests
	row.Preemptions = pt.Result.Preemptions
	if p.Replay {
		row.RequestRate = pt.Result.RequestRate
	}
	pred := map[string]serve.Stats{"ttft": pt.Result.TTFT, "tpot": pt.Result.TPOT, "e2el": pt.Result.E2EL}
	for m, st := range pred {
		meas := row.Measured[m]
		keep := func(measured float64, v float64) float64 {
			if math.IsNaN(measured) {
				return math.NaN()
			}
			return v
		}
		row.Predicted[m] = validate.Stats{Mean: keep(meas.Mean, st.Mean.Ms()), Median: keep(meas.Median, st.Median.Ms()),
			P90: keep(meas.P90, st.P90.Ms()), P99: keep(meas.P99, st.P99.Ms())}
	}
	return stripRecordNames(w)
}

// stripRecordNames drops the "file:line: " of benchWorkload's warnings so
// that the same remark on many rows collapses into one.
func stripRecordNames(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = leadingPath.ReplaceAllString(w, "")
	}
	return out
}

// leadingPath matches the "path:line: " prefixes of an error message.
var leadingPath = regexp.MustCompile(`^(?:(?:embedded:)?(?:[^\s:]*/[^\s:]*|[^\s:/]+\.(?:toml|json|jsonl|csv|txt))(?::\d+)*: )+`)

// lists matches a parenthesised list of alternatives in a message.
var lists = regexp.MustCompile(` ?\((?:have|supported|want one of|known|presets)[^)]*\)|; supported: .*$|; have: .*$`)

// reasonOf is an error as a skip reason: without the file and line (the
// same reason on many files counts once) and without lists of the
// alternatives.
func reasonOf(err error) string {
	s := leadingPath.ReplaceAllString(err.Error(), "")
	s = innerPath.ReplaceAllString(s, "")
	s = namedPath.ReplaceAllString(s, "the model config")
	s = lists.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}

// innerPath is a "path:line: " inside a message; namedPath a path named
// in its words.
var (
	innerPath = regexp.MustCompile(`(?:embedded:)?[^\s:]*/[^\s:]*(?::\d+)*: `)
	namedPath = regexp.MustCompile(`[^\s:]*/[^\s:]*\.json`)
)

// checkpointMismatch says why the scenario's model does not hold the
// checkpoint the measurement ran: the bits of its routed experts (dense
// MLP for a dense model) against the checkpoint's name. "" when they
// agree or the checkpoint is not named.
func checkpointMismatch(sc *scenarios.Scenario, ckpt string) string {
	want := checkpointBits(ckpt)
	m := sc.Config.Model
	if want == 0 || m == nil {
		return ""
	}
	f := m.Quant.DenseMLP
	what := "dense MLP"
	if m.MoE.Experts > 0 {
		f, what = m.Quant.RoutedExperts, "routed experts"
	}
	if f.Bits == 0 || math.Abs(f.Bits-float64(want)) < 0.5 {
		return ""
	}
	return fmt.Sprintf("checkpoint %s (%d-bit weights): the model config gives the %s as %s", ckpt, want, what, f.Name)
}

// checkpointBits is the weight width a checkpoint's name says; 0 when it
// says none.
func checkpointBits(ckpt string) int {
	c := strings.ToLower(ckpt)
	switch {
	case c == "":
		return 0
	case strings.Contains(c, "fp4") || strings.Contains(c, "int4") || strings.Contains(c, "w4"):
		return 4
	case strings.Contains(c, "fp8") || strings.Contains(c, "int8") || strings.Contains(c, "w8"):
		return 8
	case strings.Contains(c, "bf16") || strings.Contains(c, "fp16") || c == "bfloat16" || c == "float16":
		return 16
	}
	return 0
}
