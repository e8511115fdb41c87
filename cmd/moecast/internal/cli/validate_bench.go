package cli

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/validate"
)

// validateBenchOptions are the inputs of `moecast validate bench`.
type validateBenchOptions struct {
	Inputs    []string
	Scenario  string
	Format    string
	FailAbove float64 // percent; 0 = never fail
	HTML      string  // --html FILE; "" = none
}

func newValidateBenchCmd(s *streams) *cobra.Command {
	opts := &validateBenchOptions{}
	cmd := &cobra.Command{
		Use:   "bench RESULT.json... --scenario S",
		Short: "Compare vllm bench serve / SGLang bench_serving results with moecast simulate",
		Long: `Read benchmark result files — vllm bench serve --save-result JSON (one object
per file) or SGLang bench_serving --output-file JSONL (one object per line) —
take each run's load (max_concurrency, or request_rate with its burstiness),
request count and mean input/output lengths from the file, run
moecast simulate on the same workload with the scenario's box, model and
engine, and print measured against predicted for TTFT, TPOT, ITL and E2E
(mean, median, p90, p99: those the file holds) and the throughputs, with
the error in percent. Unknown keys are ignored.

--fail-above PCT exits 1 when any mean, or a throughput, is further off
than PCT percent (for use in a pipeline).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Inputs = args
			return runValidateBench(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Scenario, "scenario", "", "scenario file or shipped name (required)")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.Float64Var(&opts.FailAbove, "fail-above", 0, "exit 1 when a mean or a throughput is off by more than this many percent (0: never)")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	return cmd
}

// benchCase is one result object with its simulated point.
type benchCase struct {
	res  validate.BenchResult
	pt   simPoint
	rows []validate.BenchRow
}

func runValidateBench(s *streams, opts *validateBenchOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Scenario == "" {
		return inputErrf("validate bench: --scenario is required (a scenario file or a shipped name: %s)", strings.Join(scenarios.Names(), ", "))
	}
	if math.IsNaN(opts.FailAbove) || math.IsInf(opts.FailAbove, 0) || opts.FailAbove < 0 {
		return inputErrf("validate bench: --fail-above: want a percentage >= 0, got %g", opts.FailAbove)
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	cases, warnings, err := computeValidateBench(s, opts)
	if err != nil {
		return err
	}
	if opts.HTML != "" {
		if err := writeHTML(s, opts.HTML, validateBenchPage(opts.Scenario, cases, warnings)); err != nil {
			return err
		}
	}
	return renderValidateBench(s, opts, cases, warnings)
}

// computeValidateBench reads the result files and simulates each run's
// workload; the warnings are collapsed.
func computeValidateBench(s *streams, opts *validateBenchOptions) ([]benchCase, []string, error) {
	var results []validate.BenchResult
	for _, path := range opts.Inputs {
		rs, err := readBenchFile(s, path)
		if err != nil {
			return nil, nil, err
		}
		if len(rs) == 0 {
			return nil, nil, inputErrf("%s: no benchmark result in the file", path)
		}
		results = append(results, rs...)
	}
	var cases []benchCase
	var warnings []string
	for _, r := range results {
		for _, w := range r.Warnings {
			warnings = append(warnings, r.Name()+": "+w)
		}
	}
	for _, r := range results {
		sc, err := scenarios.Open(opts.Scenario)
		if err != nil {
			return nil, nil, inputErr(err)
		}
		p, w, err := benchWorkload(sc, r)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, w...)
		sm, err := sc.Sim()
		if err != nil {
			return nil, nil, inputErr(err)
		}
		cfg, err := sc.ServeConfig(sm, p)
		if err != nil {
			return nil, nil, inputErr(err)
		}
		sn := &simulation{sc: sc, points: []simPoint{{at: p, cfg: cfg}}}
		if err := runSimulation(sn, sm, nil); err != nil {
			return nil, nil, err
		}
		bc := benchCase{res: r, pt: sn.points[0]}
		switch {
		case bc.pt.unservable != "":
			warnings = append(warnings, benchName(r)+": the scenario cannot serve this workload: "+bc.pt.unservable)
		case bc.pt.res != nil:
			for _, w := range bc.pt.res.Warnings() {
				warnings = append(warnings, benchName(r)+": "+w)
			}
			bc.rows = validate.CompareBench(r, bc.pt.res)
		}
		if len(cases) == 0 {
			warnings = append(warnings, sc.Warnings...)
		}
		cases = append(cases, bc)
	}
	return cases, collapseWarnings(warnings), nil
}

// renderValidateBench prints the comparison and applies --fail-above.
func renderValidateBench(s *streams, opts *validateBenchOptions, cases []benchCase, warnings []string) error {
	var err error
	switch opts.Format {
	case formatJSON:
		err = writeJSON(s.Out, benchJSONOf(opts.Scenario, cases, warnings))
	case formatCSV:
		for _, w := range warnings {
			fmt.Fprintln(s.Err, "warning: "+w)
		}
		err = benchTable(cases, true).render(s.Out, formatCSV)
	default:
		err = benchText(s.Out, s.Err, opts.Scenario, cases, warnings)
	}
	if err != nil {
		return err
	}
	if opts.FailAbove > 0 {
		for _, c := range cases {
			if worst, row, ok := validate.WorstMeanErrorPct(c.rows); ok && math.Abs(worst) > opts.FailAbove {
				return fmt.Errorf("validate bench: %s: %s is off by %+.1f%% (more than --fail-above %g%%)",
					benchName(c.res), rowName(row), worst, opts.FailAbove)
			}
			if c.pt.res == nil {
				return fmt.Errorf("validate bench: %s: no prediction to hold against --fail-above (the scenario cannot serve it)", benchName(c.res))
			}
		}
	}
	return nil
}

// readBenchFile reads one result file or directory ("-" is standard
// input) with the format the registry detects.
func readBenchFile(s *streams, path string) ([]validate.BenchResult, error) {
	var rs []validate.BenchResult
	var err error
	if path == "-" {
		rs, err = validate.ReadBench("stdin", s.In)
	} else {
		rs, err = validate.ReadBenchPath(path)
	}
	if err != nil {
		return nil, inputErr(err)
	}
	return rs, nil
}

// benchWorkload sets the scenario's serving workload to the benchmark's and
// returns the point to simulate. Warnings say what had to be assumed.
func benchWorkload(sc *scenarios.Scenario, r validate.BenchResult) (scenarios.ServePoint, []string, error) {
	v := &sc.Serving
	var w []string
	if len(r.Requests) > 0 {
		// A request log: its own arrivals and lengths, replayed.
		tr := make([]serve.TraceRequest, len(r.Requests))
		for i, q := range r.Requests {
			tr[i] = serve.TraceRequest{Arrival: q.Arrival, InputTokens: q.InputTokens, OutputTokens: q.OutputTokens}
			for _, n := range []int{q.InputTokens, q.OutputTokens} {
				if err := scenarios.CheckTokens(n); err != nil {
					return scenarios.ServePoint{}, nil, inputErrf("%s: request %d: length %v", benchName(r), i+1, err)
				}
			}
		}
		if len(tr) > scenarios.MaxRequests {
			return scenarios.ServePoint{}, nil, inputErrf("%s: %d requests is more than moecast simulates (%d)", benchName(r), len(tr), scenarios.MaxRequests)
		}
		v.SetReplay(tr)
		return scenarios.ServePoint{Replay: true}, w, nil
	}
	n := r.NumPrompts
	if n <= 0 {
		n = r.Completed + r.Failed
	}
	if n > scenarios.MaxRequests {
		return scenarios.ServePoint{}, nil, inputErrf("%s: num_prompts: %d requests is more than moecast simulates (%d)", benchName(r), n, scenarios.MaxRequests)
	}
	v.Requests = n
	v.InputTokens = int(math.Round(r.InputTokens))
	v.OutputTokens = int(math.Round(r.OutputTokens))
	if err := scenarios.CheckTokens(v.InputTokens); err != nil {
		return scenarios.ServePoint{}, nil, inputErrf("%s: input length: %v", benchName(r), err)
	}
	if err := scenarios.CheckTokens(v.OutputTokens); err != nil {
		return scenarios.ServePoint{}, nil, inputErrf("%s: output length: %v", benchName(r), err)
	}
	if r.RangeRatio >= 1 {
		return scenarios.ServePoint{}, nil, inputErrf("%s: random_range_ratio: %g, want [0, 1)", benchName(r), r.RangeRatio)
	}
	v.RangeRatio = r.RangeRatio
	if r.RangeRatio == 0 && strings.HasPrefix(r.Family, "vllm") {
		w = append(w, benchName(r)+": the file does not record --random-range-ratio; fixed lengths assumed at the means")
	}
	if r.Burstiness > 0 { // +Inf: evenly spaced arrivals (GuideLLM's constant rate)
		v.Burstiness = r.Burstiness
	}
	var p scenarios.ServePoint
	switch {
	case r.Concurrency > 0:
		p.Concurrency = r.Concurrency
		if !math.IsInf(r.RequestRate, 1) {
			w = append(w, fmt.Sprintf("%s: request rate %g/s under max_concurrency %d: simulated as the closed loop only", benchName(r), r.RequestRate, r.Concurrency))
		}
	case math.IsInf(r.RequestRate, 1):
		// Every request sent at t = 0 with no limit: a closed loop as wide
		// as the run.
		p.Concurrency = n
	default:
		p.RequestRate = r.RequestRate
	}
	if p.Concurrency > 0 {
		v.Concurrency, v.RequestRate = []int{p.Concurrency}, nil
	} else {
		v.Concurrency, v.RequestRate = nil, []float64{p.RequestRate}
	}
	if b := strings.ToLower(r.Backend); b != "" {
		engine := sc.Serving.Engine
		for _, e := range serve.Engines() {
			if strings.HasPrefix(b, e.String()) && e != engine {
				w = append(w, fmt.Sprintf("%s: the benchmark ran against backend %q but the scenario simulates engine %s (runtime.engine)", benchName(r), r.Backend, engine))
				break
			}
		}
	}
	if r.AcceptanceLength > 0 && sc.Config.Spec.Method == 0 {
		w = append(w, fmt.Sprintf("%s: the run used speculative decoding (mean acceptance length %.2f) but the scenario has none", benchName(r), r.AcceptanceLength))
	}
	return p, w, nil
}

// benchName names a result in messages: the file, and the line for a
// file of many records.
func benchName(r validate.BenchResult) string { return r.Name() }

func rowName(r validate.BenchRow) string {
	if r.Stat == "" {
		return r.Metric
	}
	return r.Stat + " " + r.Metric
}

// finite is a pointer to x rounded as every JSON number is (r6), or nil
// (JSON null) when x is not finite.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	x = r6(x)
	return &x
}

type benchRowJSON struct {
	Metric    string   `json:"metric"`
	Stat      string   `json:"stat,omitempty"`
	Unit      string   `json:"unit"`
	Measured  *float64 `json:"measured"`
	Predicted *float64 `json:"predicted"`
	ErrorPct  *float64 `json:"error_pct"`
}

type benchCaseJSON struct {
	File              string         `json:"file"`
	Line              int            `json:"line"`
	Family            string         `json:"family"`
	Concurrency       int            `json:"concurrency,omitempty"`
	RequestRate       *float64       `json:"request_rate,omitempty"`
	Replay            bool           `json:"replay,omitempty"`
	Requests          int            `json:"requests"`
	InputTokens       int            `json:"input_tokens"`
	OutputTokens      int            `json:"output_tokens"`
	Unservable        string         `json:"unservable,omitempty"`
	Rows              []benchRowJSON `json:"rows"`
	WorstMeanErrorPct *float64       `json:"worst_mean_error_pct"`
}

type benchJSON struct {
	Scenario string          `json:"scenario"`
	Results  []benchCaseJSON `json:"results"`
	Warnings []string        `json:"warnings"`
}

func benchJSONOf(scenario string, cases []benchCase, warnings []string) benchJSON {
	out := benchJSON{Scenario: scenario, Results: []benchCaseJSON{}, Warnings: warnings}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, c := range cases {
		j := benchCaseJSON{File: c.res.File, Line: c.res.Line, Family: c.res.Family, Concurrency: c.pt.at.Concurrency,
			Requests: c.pt.cfg.Workload.Requests, InputTokens: c.pt.cfg.Workload.InputTokens,
			OutputTokens: c.pt.cfg.Workload.OutputTokens, Unservable: c.pt.unservable, Rows: []benchRowJSON{}}
		if c.pt.at.RequestRate > 0 {
			j.RequestRate = finite(c.pt.at.RequestRate)
		}
		if c.pt.at.Replay {
			j.Replay = true
			if c.pt.res != nil {
				j.RequestRate = finite(c.pt.res.RequestRate)
			}
		}
		for _, r := range c.rows {
			j.Rows = append(j.Rows, benchRowJSON{Metric: r.Metric, Stat: r.Stat, Unit: r.Unit,
				Measured: finite(r.Measured), Predicted: finite(r.Predicted), ErrorPct: finite(r.ErrorPct())})
		}
		if worst, _, ok := validate.WorstMeanErrorPct(c.rows); ok {
			j.WorstMeanErrorPct = finite(worst)
		}
		out.Results = append(out.Results, j)
	}
	return out
}

// benchTable is one row per figure; full adds the file columns (CSV).
func benchTable(cases []benchCase, full bool) *table {
	t := &table{Columns: []column{{Name: "metric", Left: true}, {Name: "stat", Left: true}, {Name: "unit", Left: true},
		{Name: "measured", Text: "%.2f"}, {Name: "predicted", Text: "%.2f"}, {Name: "error_pct", Text: "%+.1f"}}}
	if full {
		t.Columns = append([]column{{Name: "file", Left: true}, {Name: "line"}}, t.Columns...)
	}
	for _, c := range cases {
		for _, r := range c.rows {
			cells := []any{r.Metric, r.Stat, r.Unit, numOrNil(r.Measured), numOrNil(r.Predicted), numOrNil(r.ErrorPct())}
			if full {
				cells = append([]any{c.res.File, c.res.Line}, cells...)
			}
			t.add(cells...)
		}
	}
	return t
}

// numOrNil is x, or nil (an empty cell) when x is not finite.
func numOrNil(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

func benchText(out, errw io.Writer, scenario string, cases []benchCase, warnings []string) error {
	fmt.Fprintf(out, "scenario  %s\n", scenario)
	for _, c := range cases {
		load := fmt.Sprintf("concurrency %d", c.pt.at.Concurrency)
		switch {
		case c.pt.at.Replay:
			load = fmt.Sprintf("its %d requests replayed (arrivals and lengths)", len(c.res.Requests))
		case c.pt.at.RequestRate > 0:
			load = fmt.Sprintf("request rate %g/s", c.pt.at.RequestRate)
		}
		fmt.Fprintf(out, "\n%s (%s): %s, %d requests, %d in / %d out tokens\n", benchName(c.res), c.res.Family, load,
			c.pt.cfg.Workload.Requests, c.pt.cfg.Workload.InputTokens, c.pt.cfg.Workload.OutputTokens)
		if c.pt.unservable != "" {
			fmt.Fprintln(out, "  no prediction: "+c.pt.unservable)
			continue
		}
		if err := benchTable([]benchCase{c}, false).render(out, formatText); err != nil {
			return err
		}
		if worst, row, ok := validate.WorstMeanErrorPct(c.rows); ok {
			fmt.Fprintf(out, "worst mean or throughput: %s %+.1f%%\n", rowName(row), worst)
		}
	}
	for _, w := range warnings {
		fmt.Fprintln(errw, "warning: "+w)
	}
	return nil
}
