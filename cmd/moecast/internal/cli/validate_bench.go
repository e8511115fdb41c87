package cli

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
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

func newValidateBenchCmd(s *streams, runF func(*validateBenchOptions) error) *cobra.Command {
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
			if runF != nil {
				return runF(opts)
			}
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
	in, err := validateBenchInputOf(s, opts)
	if err != nil {
		return err
	}
	var inputs []string
	if opts.HTML != "" {
		sc, err := scenarios.Open(in.Scenario)
		if err != nil {
			return err // *scenarios.InputError
		}
		inputs = scenarioInputs(sc)
		if err := checkHTMLInputs(opts.HTML, inputs); err != nil {
			return err
		}
	}
	cases, warnings, err := computeValidateBench(in)
	if err != nil {
		return err
	}
	b := &view.Bench{Scenario: opts.Scenario, Cases: cases, Warnings: warnings}
	if err := (output{html: opts.HTML, views: b.Views(), inputs: inputs}).write(s, opts.Format); err != nil {
		return err
	}
	return checkFailAbove(opts, cases)
}

// validateBenchInput is what `validate bench` computes from: the scenario
// (opened afresh for each result, whose workload it takes) and the
// results read from the files.
type validateBenchInput struct {
	Scenario string // a file or a shipped scenario's name
	Results  []validate.BenchResult
}

// validateBenchInputOf reads the result files ("-" is standard input).
func validateBenchInputOf(s *streams, opts *validateBenchOptions) (validateBenchInput, error) {
	in := validateBenchInput{Scenario: opts.Scenario}
	for _, path := range opts.Inputs {
		rs, err := readBenchFile(s, path)
		if err != nil {
			return in, err
		}
		if len(rs) == 0 {
			return in, inputErrf("%s: no benchmark result in the file", path)
		}
		in.Results = append(in.Results, rs...)
	}
	return in, nil
}

// computeValidateBench simulates each result's workload on the scenario
// and compares; the warnings are collapsed.
func computeValidateBench(in validateBenchInput) ([]view.BenchCase, []string, error) {
	results := in.Results
	var cases []view.BenchCase
	var warnings []string
	for _, r := range results {
		for _, w := range r.Warnings {
			warnings = append(warnings, r.Name()+": "+w)
		}
	}
	for _, r := range results {
		sc, err := scenarios.Open(in.Scenario)
		if err != nil {
			return nil, nil, err // *scenarios.InputError
		}
		p, w, err := benchWorkload(sc, r)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, w...)
		sm, err := sc.Sim()
		if err != nil {
			return nil, nil, err
		}
		cfg, err := sc.ServeConfig(sm, p)
		if err != nil {
			return nil, nil, err
		}
		sn := &view.Simulation{Scenario: sc, Points: []view.SimPoint{{At: p, Config: cfg}}}
		if err := runSimulation(sn, sm, nil); err != nil {
			return nil, nil, err
		}
		bc := view.BenchCase{Result: r, Point: sn.Points[0]}
		switch {
		case bc.Point.Unservable != "":
			warnings = append(warnings, view.BenchName(r)+": the scenario cannot serve this workload: "+bc.Point.Unservable)
		case bc.Point.Result != nil:
			for _, w := range bc.Point.Result.Warnings() {
				warnings = append(warnings, view.BenchName(r)+": "+w)
			}
			bc.Rows = validate.CompareBench(r, bc.Point.Result)
		}
		if len(cases) == 0 {
			warnings = append(warnings, sc.Warnings...)
		}
		cases = append(cases, bc)
	}
	return cases, collapseWarnings(warnings), nil
}

// checkFailAbove applies --fail-above to the comparison printed.
func checkFailAbove(opts *validateBenchOptions, cases []view.BenchCase) error {
	if opts.FailAbove > 0 {
		for _, c := range cases {
			if worst, row, ok := validate.WorstMeanErrorPct(c.Rows); ok && math.Abs(worst) > opts.FailAbove {
				return fmt.Errorf("validate bench: %s: %s is off by %+.1f%% (more than --fail-above %g%%)",
					view.BenchName(c.Result), view.RowName(row), worst, opts.FailAbove)
			}
			if c.Point.Result == nil {
				return fmt.Errorf("validate bench: %s: no prediction to hold against --fail-above (the scenario cannot serve it)", view.BenchName(c.Result))
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
		return nil, err // *validate.ReadError
	}
	return rs, nil
}

// benchWorkload sets the scenario's serving workload to the benchmark's and
// returns the point to simulate. Warnings say what had to be assumed.
func benchWorkload(sc *scenarios.Scenario, r validate.BenchResult) (scenarios.ServePoint, []string, error) {
	v := &sc.Serving
	var w []string
	if v.EngineVersion == "" {
		// The engine version the result records (aiconfigurator's
		// backend_version), unless the scenario names one: the
		// version-dependent defaults follow it (serve.AsyncDefault).
		v.EngineVersion = r.Layout.Extra["backend_version"]
	}
	if len(r.Requests) > 0 {
		// A request log: its own arrivals and lengths, replayed.
		tr := make([]serve.TraceRequest, len(r.Requests))
		for i, q := range r.Requests {
			tr[i] = serve.TraceRequest{Arrival: q.Arrival, InputTokens: q.InputTokens, OutputTokens: q.OutputTokens}
			for _, n := range []int{q.InputTokens, q.OutputTokens} {
				if err := scenarios.CheckTokens(n); err != nil {
					return scenarios.ServePoint{}, nil, inputErrf("%s: request %d: length %v", view.BenchName(r), i+1, err)
				}
			}
		}
		if len(tr) > scenarios.MaxRequests {
			return scenarios.ServePoint{}, nil, inputErrf("%s: %d requests is more than moecast simulates (%d)", view.BenchName(r), len(tr), scenarios.MaxRequests)
		}
		v.SetReplay(tr)
		return scenarios.ServePoint{Replay: true}, w, nil
	}
	n := r.NumPrompts
	if n <= 0 {
		n = r.Completed + r.Failed
	}
	if n > scenarios.MaxRequests {
		return scenarios.ServePoint{}, nil, inputErrf("%s: num_prompts: %d requests is more than moecast simulates (%d)", view.BenchName(r), n, scenarios.MaxRequests)
	}
	v.Requests = n
	in := r.InputTokens
	if r.ServerInputScale > 1 && !v.ClientTokens {
		// The server saw more tokens than the client counted
		// (validate's clientTokenizerMismatch): it prefilled these.
		in = r.InputTokens * r.ServerInputScale
	}
	var err error
	if v.InputTokens, err = benchTokens(in); err != nil {
		if in != r.InputTokens {
			return scenarios.ServePoint{}, nil, inputErrf("%s: input length: the server's %g x the client's %g tokens exceeds the limit of %d tokens",
				view.BenchName(r), r.ServerInputScale, r.InputTokens, sim.MaxContext/4)
		}
		return scenarios.ServePoint{}, nil, inputErrf("%s: input length: %v", view.BenchName(r), err)
	}
	if in != r.InputTokens {
		w = append(w, fmt.Sprintf("%s: the server tokenised the prompts into %g x the client's %g input tokens: %d simulated",
			view.BenchName(r), r.ServerInputScale, r.InputTokens, v.InputTokens))
	}
	if v.OutputTokens, err = benchTokens(r.OutputTokens); err != nil {
		return scenarios.ServePoint{}, nil, inputErrf("%s: output length: %v", view.BenchName(r), err)
	}
	if r.MaxNumBatchedTokens > 0 && v.MaxNumBatchedTokens == 0 && !v.NoDeployBudget {
		// The deployment's budget, known from who deployed it
		// (validate's aicGeneratorBudget), where the scenario gives none.
		v.MaxNumBatchedTokens = r.MaxNumBatchedTokens
	}
	if r.RangeRatio >= 1 && !(r.RangeStyle == serve.RangeBelow && r.RangeRatio == 1) {
		return scenarios.ServePoint{}, nil, inputErrf("%s: random_range_ratio: %g, want [0, 1)", view.BenchName(r), r.RangeRatio)
	}
	v.RangeRatio, v.RangeStyle = r.RangeRatio, r.RangeStyle
	if r.RangeRatio == 0 && strings.HasPrefix(r.Family, "vllm") {
		w = append(w, view.BenchName(r)+": the file does not record --random-range-ratio; fixed lengths assumed at the means")
	}
	if r.Burstiness > 0 { // +Inf: evenly spaced arrivals (GuideLLM's constant rate)
		v.Burstiness = r.Burstiness
	}
	var p scenarios.ServePoint
	switch {
	case r.Concurrency > 0:
		p.Concurrency = r.Concurrency
		if !math.IsInf(r.RequestRate, 1) {
			w = append(w, fmt.Sprintf("%s: request rate %g/s under max_concurrency %d: simulated as the closed loop only", view.BenchName(r), r.RequestRate, r.Concurrency))
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
				w = append(w, fmt.Sprintf("%s: the benchmark ran against backend %q but the scenario simulates engine %s (runtime.engine)", view.BenchName(r), r.Backend, engine))
				break
			}
		}
	}
	if r.AcceptanceLength > 0 && sc.Config.Spec.Method == 0 {
		w = append(w, fmt.Sprintf("%s: the run used speculative decoding (mean acceptance length %.2f) but the scenario has none", view.BenchName(r), r.AcceptanceLength))
	}
	return p, w, nil
}

// benchTokens is a result's mean length x rounded to whole tokens, checked
// (scenarios.CheckTokens) before the conversion: a length beyond what an
// int holds is refused as recorded, not wrapped.
func benchTokens(x float64) (int, error) {
	if lim := float64(sim.MaxContext / 4); !(x <= lim) {
		return 0, fmt.Errorf("%g exceeds the limit of %d tokens", x, sim.MaxContext/4)
	}
	n := int(math.Round(x))
	return n, scenarios.CheckTokens(n)
}
