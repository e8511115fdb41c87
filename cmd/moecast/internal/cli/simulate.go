package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
	"github.com/moecast/moecast/validate"
)

// simulateOptions are the inputs of `moecast simulate`.
type simulateOptions struct {
	Scenario     string    // file path or shipped scenario name; "" = embedded default
	Concurrency  []int     // --concurrency; nil = the scenario's
	RequestRate  []float64 // --request-rate; nil = the scenario's
	InputTokens  int       // --input-tokens; 0 = the scenario's
	OutputTokens int       // --output-tokens; 0 = the scenario's
	Requests     int       // --requests; 0 = the scenario's
	Seed         *uint64   // --seed; nil = the scenario's
	Calibration  string    // --calibration, as predict's; "" = the scenario's hardware.calibration
	Workload     string    // --workload FILE: a request log to replay; "" = the scenario's
	// Prefix caching: --no-prefix-cache, --system-prompt-tokens,
	// --prefix-hit-rate (nil = the scenario's).
	NoPrefixCache bool
	SystemPrompt  *int
	PrefixHitRate *float64
	SLO           serve.SLO // --goodput
	Format        string
	HTML          string // --html FILE; "" = none
	// Progress forces the progress line on (true) or off (false); nil
	// shows it when stderr is a terminal.
	Progress *bool
}

func newSimulateCmd(s *streams, runF func(*simulateOptions) error) *cobra.Command {
	opts := &simulateOptions{}
	var conc, rate string
	var seed uint64
	var sysTok int
	var hitRate float64
	var goodput string
	cmd := &cobra.Command{
		Use:   "simulate [SCENARIO]",
		Short: "Simulate serving under load: TTFT, TPOT, ITL and throughput as vllm bench serve reports them",
		Long: `Simulate a serving engine (vLLM or SGLang) running a scenario's deployment
under the load vllm bench serve sends: a closed loop at each concurrency
(--max-concurrency C --request-rate inf) or an open loop at each request
rate, random prompts of fixed length (--ignore-eos). Each engine step is
priced by the same step model as predict, with the other requests'
prefill chunks mixed in.

SCENARIO is a TOML file, or the name of a shipped scenario
(` + strings.Join(scenarios.Names(), ", ") + `).
Without it, the embedded default ` + scenarios.DefaultName + ` runs.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Scenario = args[0]
			}
			f := c.Flags()
			if f.Changed("concurrency") && f.Changed("request-rate") {
				return inputErrf("give --concurrency or --request-rate, not both")
			}
			if f.Changed("concurrency") {
				v, err := parseConcurrencyFlag(conc)
				if err != nil {
					return err
				}
				opts.Concurrency = v
			}
			if f.Changed("request-rate") {
				v, err := parseRateFlag(rate)
				if err != nil {
					return err
				}
				opts.RequestRate = v
			}
			for _, t := range []struct {
				name string
				v    int
			}{{"input-tokens", opts.InputTokens}, {"output-tokens", opts.OutputTokens}} {
				if f.Changed(t.name) {
					if err := scenarios.CheckTokens(t.v); err != nil {
						return inputErrf("--%s: %w", t.name, err)
					}
				}
			}
			if f.Changed("requests") {
				if err := scenarios.CheckRequests(opts.Requests); err != nil {
					return inputErrf("--requests: %w", err)
				}
			}
			if f.Changed("seed") {
				opts.Seed = &seed
			}
			if goodput != "" {
				slo, err := parseGoodput(goodput)
				if err != nil {
					return inputErrf("--goodput: %v", err)
				}
				opts.SLO = slo
			}
			if f.Changed("system-prompt-tokens") && f.Changed("prefix-hit-rate") {
				return inputErrf("--system-prompt-tokens and --prefix-hit-rate exclude each other")
			}
			if f.Changed("system-prompt-tokens") {
				if sysTok < 0 || sysTok > sim.MaxContext {
					return inputErrf("--system-prompt-tokens: %d must be in [0, %d] tokens", sysTok, sim.MaxContext)
				}
				opts.SystemPrompt = &sysTok
			}
			if f.Changed("prefix-hit-rate") {
				if !(hitRate >= 0 && hitRate <= 1) {
					return inputErrf("--prefix-hit-rate: %g must be in [0, 1]", hitRate)
				}
				opts.PrefixHitRate = &hitRate
			}
			if opts.Workload != "" {
				for _, fl := range []string{"concurrency", "request-rate", "input-tokens", "output-tokens", "requests"} {
					if f.Changed(fl) {
						return inputErrf("--workload replays a request log's load and lengths: --%s does not apply", fl)
					}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runSimulate(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&conc, "concurrency", "", "closed-loop concurrencies, comma-separated (e.g. 4,64); default: the scenario's workload.concurrency")
	f.StringVar(&rate, "request-rate", "", "open-loop request rates in requests/s, comma-separated (e.g. 2,8); default: the scenario's workload.request_rate")
	f.IntVar(&opts.InputTokens, "input-tokens", 0, "prompt length in tokens; default: the scenario's workload.input_tokens")
	f.IntVar(&opts.OutputTokens, "output-tokens", 0, "output length in tokens; default: the scenario's workload.output_tokens")
	f.IntVar(&opts.Requests, "requests", 0, "requests per point; default: the scenario's workload.requests (0 = 10 x concurrency, at least 100)")
	f.Uint64Var(&seed, "seed", 0, "seed of the random lengths, arrivals and acceptance draws; default: the scenario's workload.seed")
	f.StringVar(&opts.Calibration, "calibration", "", `op-cost calibration, as predict --calibration: "embedded", "embedded:NAME", "none" or a calibration file; several, comma-separated, are layered; default: the scenario's hardware.calibration`)
	f.StringVar(&opts.Workload, "workload", "", "replay a request log's arrivals and lengths (LLMServingSim requests.jsonl, a Mooncake trace, ...) instead of the generated load; default: the scenario's workload.trace")
	f.StringVar(&goodput, "goodput", "", `latency objectives of goodput, vllm bench serve's --goodput in ms, comma-separated: "ttft:2000,tpot:50" (also e2el)`)
	f.BoolVar(&opts.NoPrefixCache, "no-prefix-cache", false, "turn the engine's prefix caching off (runtime.prefix_caching = false), to compare")
	f.IntVar(&sysTok, "system-prompt-tokens", 0, "every request starts with the same N-token system prompt (prefix caching); default: the scenario's workload.system_prompt_tokens")
	f.Float64Var(&hitRate, "prefix-hit-rate", 0, "every request's first floor(h x input) tokens are one shared document (prefix caching); default: the scenario's workload.prefix_hit_rate")
	f.StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report with charts to FILE")
	return cmd
}

// parseGoodput parses --goodput's "ttft:2000,tpot:50" (ms).
func parseGoodput(v string) (serve.SLO, error) {
	var slo serve.SLO
	seen := map[string]bool{}
	for _, kv := range strings.Split(v, ",") {
		k, x, ok := strings.Cut(strings.TrimSpace(kv), ":")
		ms, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if !ok || err != nil || !(ms > 0) || math.IsInf(ms, 0) {
			return slo, fmt.Errorf("%q: want KEY:MS with a positive number of ms, e.g. ttft:2000,tpot:50", kv)
		}
		d := unit.Seconds(ms / 1000)
		k = strings.ToLower(strings.TrimSpace(k))
		if seen[k] {
			return slo, fmt.Errorf("%q: %s given twice", kv, k)
		}
		seen[k] = true
		switch k {
		case "ttft":
			slo.TTFT = d
		case "tpot":
			slo.TPOT = d
		case "e2el":
			slo.E2EL = d
		default:
			return slo, fmt.Errorf("%q: unknown objective %q (want ttft, tpot or e2el)", kv, k)
		}
	}
	return slo, nil
}

// parseConcurrencyFlag parses "4,64".
func parseConcurrencyFlag(v string) ([]int, error) {
	out, err := parseIntList("concurrency", v, "4,64")
	if err != nil {
		return nil, err
	}
	if err := scenarios.CheckConcurrency(out); err != nil {
		return nil, inputErrf("--concurrency: %w", err)
	}
	return out, nil
}

// parseRateFlag parses "2,8.5".
func parseRateFlag(v string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, inputErrf("--request-rate: %q is not a number (want e.g. --request-rate 2,8)", f)
		}
		out = append(out, x)
	}
	if err := scenarios.CheckRates(out); err != nil {
		return nil, inputErrf("--request-rate: %w", err)
	}
	return out, nil
}

func runSimulate(s *streams, opts *simulateOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkHTMLPath(opts.HTML); err != nil {
		return err
	}
	sc, err := openScenario(s, opts.Scenario)
	if err != nil {
		return err
	}
	if opts.Calibration != "" {
		if err := sc.SetCalibration(calibrationSources(opts.Calibration)...); err != nil {
			return err // *scenarios.InputError
		}
	}
	applySimulateFlags(&sc.Serving, opts)
	if err := checkHTMLInputs(opts.HTML, scenarioInputs(sc)); err != nil {
		return err
	}
	replayWarnings, err := loadReplay(sc, opts.Workload)
	if err != nil {
		return err
	}
	sn, err := simulateScenario(simulateInput{Scenario: sc, Progress: progressOn(s.Err, opts.Progress)})
	if err != nil {
		return err
	}
	sn.Warnings = append(sn.Warnings, replayWarnings...)
	return output{html: opts.HTML, views: sn.Views(), inputs: scenarioInputs(sc)}.write(s, opts.Format)
}

// openScenario opens a scenario file or shipped name; "" is the embedded
// default.
func openScenario(s *streams, name string) (*scenarios.Scenario, error) {
	var (
		sc  *scenarios.Scenario
		err error
	)
	switch name {
	case "":
		sc, err = scenarios.Default()
	case infile.Stdin:
		var src *scenarios.Source
		if src, err = scenarios.ReadSourceIn(name, s.In); err == nil {
			sc, err = src.Parse(nil)
		}
	default:
		sc, err = scenarios.Open(name)
	}
	if err != nil {
		return nil, err // *scenarios.InputError
	}
	return sc, nil
}

// applySimulateFlags lays simulate's workload flags over the scenario's.
func applySimulateFlags(v *scenarios.Serving, opts *simulateOptions) {
	if opts.Concurrency != nil {
		v.Concurrency, v.RequestRate = opts.Concurrency, nil
	}
	if opts.RequestRate != nil {
		v.Concurrency, v.RequestRate = nil, opts.RequestRate
	}
	if opts.InputTokens > 0 {
		v.InputTokens = opts.InputTokens
	}
	if opts.OutputTokens > 0 {
		v.OutputTokens = opts.OutputTokens
	}
	if opts.Requests > 0 {
		v.Requests = opts.Requests
	}
	if opts.Seed != nil {
		v.Seed = *opts.Seed
	}
	if opts.NoPrefixCache {
		v.NoPrefixCache = true
	}
	if opts.SLO != (serve.SLO{}) {
		v.SLO = opts.SLO
	}
	if opts.SystemPrompt != nil {
		v.Prefix = &serve.PrefixLoad{SystemTokens: *opts.SystemPrompt}
	}
	if opts.PrefixHitRate != nil {
		v.Prefix = &serve.PrefixLoad{HitRate: *opts.PrefixHitRate}
	}
}

// simulateInput is what simulate computes from: the scenario, with the
// command's flags applied and its request log loaded, and where the
// progress line goes (nil: nowhere).
type simulateInput struct {
	Scenario *scenarios.Scenario
	Progress io.Writer
}

// simulateScenario runs the serving simulation of every point of the
// scenario's workload (sc.Serving), as `moecast simulate` does; in.Progress,
// when set, gets the progress line. Warnings: the scenario's, then each
// point's.
func simulateScenario(in simulateInput) (*view.Simulation, error) {
	sc, progress := in.Scenario, in.Progress
	sm, err := sc.Sim()
	if err != nil {
		return nil, err
	}
	sn := &view.Simulation{Scenario: sc, Warnings: append([]string{}, sc.Warnings...), Accuracy: accuracyOf(sc)}
	if sc.Disagg != nil {
		if sn.PrefillSim, sn.DecodeSim, err = sc.DisaggSims(); err != nil {
			return nil, err
		}
	}
	for _, p := range sc.Serving.Points() {
		if err := sc.Serving.CheckWork(p); err != nil {
			return nil, err // *scenarios.InputError
		}
		cfg, err := sc.ServeConfig(sm, p)
		if err != nil {
			return nil, err
		}
		if sc.Disagg != nil {
			if err := sc.DisaggConfig(&cfg, sn.PrefillSim, sn.DecodeSim); err != nil {
				return nil, err
			}
		}
		sn.Points = append(sn.Points, view.SimPoint{At: p, Config: cfg})
	}
	if err := runSimulation(sn, sm, progress); err != nil {
		return nil, err
	}
	for i := range sn.Points {
		p := &sn.Points[i]
		switch {
		case p.Unservable != "":
			sn.Warnings = append(sn.Warnings, pointLabel(p.At)+": cannot be served: "+p.Unservable)
		case p.Result != nil:
			sn.Warnings = append(sn.Warnings, p.Result.Warnings()...) // they name the rate
			if m := sc.Config.Model; m != nil && m.MaxPosition > 0 && p.Result.LongestRequest > m.MaxPosition {
				sn.Warnings = append(sn.Warnings, fmt.Sprintf("%s: request of %d tokens (input + output) exceeds the model's max_position_embeddings (%d): an engine refuses it (or needs RoPE scaling); priced as asked",
					pointLabel(p.At), p.Result.LongestRequest, m.MaxPosition))
			}
		}
	}
	return sn, nil
}

// loadReplay reads the request log to replay: file (--workload) when set,
// else the scenario's workload.trace; nothing when neither is.
func loadReplay(sc *scenarios.Scenario, file string) ([]string, error) {
	var data []byte
	var name string
	var err error
	switch {
	case file != "":
		name = file
		data, err = infile.ReadFile(file, nil, infile.MaxRequestLog)
	case sc.Serving.Trace != "":
		data, name, err = sc.ReadRelative(sc.Serving.Trace)
		if err != nil {
			return nil, inputErrf("%s:%d: workload.trace: %v", sc.File, sc.Line("workload.trace"), pathErrText(err))
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, inputErrf("--workload: %s: %v", file, pathErrText(err))
	}
	tr, warns, err := validate.ReadWorkload(name, data)
	if err != nil {
		return nil, err // *validate.ReadError
	}
	if len(tr) > scenarios.MaxRequests {
		return nil, inputErrf("%s: %d requests is more than moecast simulates (%d)", name, len(tr), scenarios.MaxRequests)
	}
	for _, q := range tr {
		for _, n := range []int{q.InputTokens, q.OutputTokens} {
			if err := scenarios.CheckTokens(n); err != nil {
				return nil, inputErrf("%s: a request's length %v", name, err)
			}
		}
	}
	sc.Serving.SetReplay(tr)
	out := make([]string, len(warns))
	for i, w := range warns {
		out[i] = name + ": " + w
	}
	return out, nil
}

// pathErrText is an os error without the Go operation ("no such file or
// directory").
func pathErrText(err error) string {
	var ie *infile.Error
	if errors.As(err, &ie) {
		if ie.Msg != "" {
			return ie.Msg
		}
		return ie.Err.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// pointLabel names a point in warnings: "concurrency 64" or "request rate 8/s".
func pointLabel(p scenarios.ServePoint) string {
	if p.Replay {
		return "replayed trace"
	}
	if p.Concurrency > 0 {
		return fmt.Sprintf("concurrency %d", p.Concurrency)
	}
	return fmt.Sprintf("request rate %g/s", p.RequestRate)
}

// runSimulation simulates every point, in parallel on every core; results land at
// their point's index, so the output does not depend on the schedule.
// With progress set, a progress line goes to progress once the run has
// taken a second.
func runSimulation(sn *view.Simulation, sm *sim.Sim, progress io.Writer) error {
	n := len(sn.Points)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	prog := startProgressLine(progress, func(done int64) string {
		return fmt.Sprintf("simulate: %d/%d points", done, n)
	})
	done := &prog.done
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				errs[i] = runSimPoint(sn, sm, &sn.Points[i])
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	prog.Stop()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runSimPoint simulates one point.
func runSimPoint(sn *view.Simulation, sm *sim.Sim, p *view.SimPoint) error {
	if p.Config.Memory.KVCapacity <= 0 {
		p.Unservable = fmt.Sprintf("the weights and reserve leave no room for a KV cache (%s short per GPU)", -p.Config.Memory.KVCapacity)
		return nil
	}
	if d := p.Config.Disagg; d != nil && d.Prefill.Memory.KVCapacity <= 0 {
		p.Unservable = fmt.Sprintf("prefill pool: the weights and reserve leave no room for a KV cache (%s short per GPU)", -d.Prefill.Memory.KVCapacity)
		return nil
	}
	c := serve.NewSimCoster(sm)
	costers := []*serve.SimCoster{c}
	if d := p.Config.Disagg; d != nil {
		// costers per point: points run in parallel
		pc, dc := serve.NewSimCoster(sn.PrefillSim), serve.NewSimCoster(sn.DecodeSim)
		dd := *d
		dd.Prefill.Coster, dd.Decode.Coster = pc, dc
		p.Config.Disagg = &dd
		costers = append(costers, pc, dc)
	}
	r, err := serve.Run(p.Config, c)
	var ue *serve.UnservableError
	switch {
	case errors.As(err, &ue):
		p.Unservable = ue.Error()
		return nil
	case err != nil:
		return sn.Scenario.KeyError(err)
	}
	for _, x := range costers {
		if x.Err() != nil {
			return inputErrf("%s: %s: %w", sn.Scenario.File, pointLabel(p.At), x.Err())
		}
	}
	p.Result = r
	return nil
}

// progressOn is where the progress line goes: w when it is a terminal (or
// when forced), else nil.
func progressOn(w io.Writer, force *bool) io.Writer {
	if force != nil {
		if *force {
			return rawWriter(w)
		}
		return nil
	}
	f, ok := osFile(w)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return f
}
