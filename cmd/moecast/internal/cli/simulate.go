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

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
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

func newSimulateCmd(s *streams) *cobra.Command {
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
	for _, kv := range strings.Split(v, ",") {
		k, x, ok := strings.Cut(strings.TrimSpace(kv), ":")
		ms, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if !ok || err != nil || !(ms > 0) || math.IsInf(ms, 0) {
			return slo, fmt.Errorf("%q: want KEY:MS with a positive number of ms, e.g. ttft:2000,tpot:50", kv)
		}
		d := unit.Seconds(ms / 1000)
		switch strings.ToLower(strings.TrimSpace(k)) {
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

// simPoint is one simulated point: its config and result, or why it could
// not be served.
type simPoint struct {
	at         scenarios.ServePoint
	cfg        serve.Config
	res        *serve.Result
	unservable string // set when the point cannot be served at all
}

// simulation is what simulate computed, ready to render.
type simulation struct {
	sc       *scenarios.Scenario
	points   []simPoint
	warnings []string
	// psm, dsm are the pools' simulators of a [disagg] scenario.
	psm, dsm *sim.Sim
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
			return inputErr(err)
		}
	}
	applySimulateFlags(&sc.Serving, opts)
	replayWarnings, err := loadReplay(sc, opts.Workload)
	if err != nil {
		return err
	}
	sn, err := simulateScenario(sc, progressOn(s.Err, opts.Progress))
	if err != nil {
		return err
	}
	sn.warnings = append(sn.warnings, replayWarnings...)
	return output{html: opts.HTML, page: sn.page, json: func() any { return sn.json() },
		csv: func() *table { return sn.table(true) }, text: sn.text, warnings: sn.warnings, inputs: scenarioInputs(sc)}.write(s, opts.Format)
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
		return nil, inputErr(err)
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

// simulateScenario runs the serving simulation of every point of the
// scenario's workload (sc.Serving), as `moecast simulate` does; progress,
// when set, gets the progress line. Warnings: the scenario's, then each
// point's.
func simulateScenario(sc *scenarios.Scenario, progress io.Writer) (*simulation, error) {
	sm, err := sc.Sim()
	if err != nil {
		return nil, inputErr(err)
	}
	sn := &simulation{sc: sc, warnings: append([]string{}, sc.Warnings...)}
	if sc.Disagg != nil {
		if sn.psm, sn.dsm, err = sc.DisaggSims(); err != nil {
			return nil, inputErr(err)
		}
	}
	for _, p := range sc.Serving.Points() {
		if err := sc.Serving.CheckWork(p); err != nil {
			return nil, inputErr(err)
		}
		cfg, err := sc.ServeConfig(sm, p)
		if err != nil {
			return nil, inputErr(err)
		}
		if sc.Disagg != nil {
			if err := sc.DisaggConfig(&cfg, sn.psm, sn.dsm); err != nil {
				return nil, inputErr(err)
			}
		}
		sn.points = append(sn.points, simPoint{at: p, cfg: cfg})
	}
	if err := runSimulation(sn, sm, progress); err != nil {
		return nil, err
	}
	for i := range sn.points {
		p := &sn.points[i]
		switch {
		case p.unservable != "":
			sn.warnings = append(sn.warnings, pointLabel(p.at)+": cannot be served: "+p.unservable)
		case p.res != nil:
			sn.warnings = append(sn.warnings, p.res.Warnings()...) // they name the rate
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
		return nil, inputErr(err)
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
func runSimulation(sn *simulation, sm *sim.Sim, progress io.Writer) error {
	n := len(sn.points)
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
				errs[i] = runSimPoint(sn, sm, &sn.points[i])
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
func runSimPoint(sn *simulation, sm *sim.Sim, p *simPoint) error {
	if p.cfg.Memory.KVCapacity <= 0 {
		p.unservable = fmt.Sprintf("the weights and reserve leave no room for a KV cache (%s short per GPU)", -p.cfg.Memory.KVCapacity)
		return nil
	}
	if d := p.cfg.Disagg; d != nil && d.Prefill.Memory.KVCapacity <= 0 {
		p.unservable = fmt.Sprintf("prefill pool: the weights and reserve leave no room for a KV cache (%s short per GPU)", -d.Prefill.Memory.KVCapacity)
		return nil
	}
	c := serve.NewSimCoster(sm)
	costers := []*serve.SimCoster{c}
	if d := p.cfg.Disagg; d != nil {
		// costers per point: points run in parallel
		pc, dc := serve.NewSimCoster(sn.psm), serve.NewSimCoster(sn.dsm)
		dd := *d
		dd.Prefill.Coster, dd.Decode.Coster = pc, dc
		p.cfg.Disagg = &dd
		costers = append(costers, pc, dc)
	}
	r, err := serve.Run(p.cfg, c)
	var ue *serve.UnservableError
	switch {
	case errors.As(err, &ue):
		p.unservable = ue.Error()
		return nil
	case err != nil:
		return sn.sc.KeyError(err)
	}
	for _, x := range costers {
		if x.Err() != nil {
			return inputErr(fmt.Errorf("%s: %s: %w", sn.sc.File, pointLabel(p.at), x.Err()))
		}
	}
	p.res = r
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

// num is a float for JSON: nil (null) when not finite.
func simNum(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	v := r6(x)
	return &v
}

// simPointJSON is one element of "points" in `simulate --format json`:
// vllm bench serve's result names, plus the simulator's own. Metrics are
// null for a point that cannot be served; latencies are null for an
// open-loop point beyond capacity (they grow with the run's length).
type simPointJSON struct {
	Concurrency          *int     `json:"concurrency,omitempty"`
	RequestRate          *float64 `json:"request_rate,omitempty"`
	Replay               bool     `json:"replay,omitempty"` // a replayed request log (request_rate: its mean)
	Requests             int      `json:"requests"`
	InputTokens          int      `json:"input_tokens"`
	OutputTokens         int      `json:"output_tokens"`
	DurationS            *float64 `json:"duration_s"`
	Completed            int      `json:"completed"`
	RequestThroughput    *float64 `json:"request_throughput"`
	OutputThroughput     *float64 `json:"output_throughput"`
	TotalTokenThroughput *float64 `json:"total_token_throughput"`
	MeanTTFTMs           *float64 `json:"mean_ttft_ms"`
	MedianTTFTMs         *float64 `json:"median_ttft_ms"`
	P90TTFTMs            *float64 `json:"p90_ttft_ms"`
	P99TTFTMs            *float64 `json:"p99_ttft_ms"`
	MeanTPOTMs           *float64 `json:"mean_tpot_ms"`
	MedianTPOTMs         *float64 `json:"median_tpot_ms"`
	P90TPOTMs            *float64 `json:"p90_tpot_ms"`
	P99TPOTMs            *float64 `json:"p99_tpot_ms"`
	MeanITLMs            *float64 `json:"mean_itl_ms"`
	MedianITLMs          *float64 `json:"median_itl_ms"`
	P90ITLMs             *float64 `json:"p90_itl_ms"`
	P99ITLMs             *float64 `json:"p99_itl_ms"`
	MeanE2ELMs           *float64 `json:"mean_e2el_ms"`
	MedianE2ELMs         *float64 `json:"median_e2el_ms"`
	P90E2ELMs            *float64 `json:"p90_e2el_ms"`
	P99E2ELMs            *float64 `json:"p99_e2el_ms"`
	MeanBatch            *float64 `json:"mean_batch"`
	Steps                int      `json:"steps"`
	MixedSteps           int      `json:"mixed_steps"`
	Preemptions          int      `json:"preemptions"`
	KVPeakGBPerGPU       *float64 `json:"kv_peak_gb_per_gpu"`
	// BreakdownShare is the share of each category in the run's step time.
	BreakdownShare       map[string]float64 `json:"breakdown_share"`
	MeanAcceptanceLength *float64           `json:"mean_acceptance_length"`
	// PrefixHitRate is the prefix cache's hit rate (prompt tokens found
	// cached over those looked up); absent when nothing is shared or the
	// cache is off.
	PrefixHitRate *float64 `json:"prefix_hit_rate,omitempty"`
	// Disagg is a disaggregated point's pools and KV transfer.
	Disagg *disaggJSON `json:"disagg,omitempty"`
	// Interactivity is InferenceX's E2E interactivity (tokens/s/user: 1 /
	// P90 over requests of E2E latency / output tokens); RequestGoodput
	// vllm bench's request_goodput under --goodput's objectives.
	Interactivity  *float64 `json:"interactivity"`
	RequestGoodput *float64 `json:"request_goodput,omitempty"`
}

// disaggJSON is what a disaggregated point adds (issue 23's names).
type disaggJSON struct {
	PrefillGPUs        int      `json:"prefill_gpus"`
	DecodeGPUs         int      `json:"decode_gpus"`
	KVTransferMsMean   *float64 `json:"kv_transfer_ms_mean"`
	PrefillUtilisation *float64 `json:"prefill_utilisation"`
	DecodeUtilisation  *float64 `json:"decode_utilisation"`
}

// engineJSON is the engine settings every point ran with (defaults
// filled in).
type engineJSON struct {
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens"`
	MaxNumSeqs          int     `json:"max_num_seqs"`
	MixedChunk          bool    `json:"mixed_chunk"`
	AsyncScheduling     bool    `json:"async_scheduling"`
	BlockSize           int     `json:"block_size"`
	KVCapacityGBPerGPU  float64 `json:"kv_capacity_gb_per_gpu"`
	KVBytesPerToken     float64 `json:"kv_bytes_per_token_per_gpu"`
	AttentionGroups     int     `json:"attention_groups"`
	// SeqBlocks: blocks each request holds whatever its length (window KV,
	// recurrent state); 0 for models without them.
	SeqBlocks int `json:"seq_blocks,omitempty"`
}

type simulateJSON struct {
	Scenario     string         `json:"scenario"`
	Engine       string         `json:"engine"`
	EngineConfig engineJSON     `json:"engine_config"`
	Calibration  []string       `json:"calibration"`
	Points       []simPointJSON `json:"points"`
	Warnings     []string       `json:"warnings"`
}

// simMs is a latency in ms for JSON.
func simMs(t unit.Seconds) *float64 { return simNum(t.Ms()) }

func (sn *simulation) json() simulateJSON {
	out := simulateJSON{Scenario: sn.sc.Name, Engine: sn.sc.Serving.Engine.String(), Calibration: []string{},
		Points: []simPointJSON{}, Warnings: append([]string{}, sn.warnings...)}
	for _, u := range sn.sc.CalibrationUses {
		out.Calibration = append(out.Calibration, u.Name)
	}
	if len(sn.points) > 0 {
		out.EngineConfig = engineOf(sn.points[0].cfg)
	}
	for i := range sn.points {
		p := &sn.points[i]
		w := p.cfg.Workload
		pj := simPointJSON{Requests: w.Requests, InputTokens: w.InputTokens, OutputTokens: w.OutputTokens,
			BreakdownShare: map[string]float64{}}
		switch {
		case p.at.Replay:
			pj.Replay = true
			if p.res != nil {
				pj.RequestRate = simNum(p.res.RequestRate)
			}
		case p.at.Concurrency > 0:
			c := p.at.Concurrency
			pj.Concurrency = &c
		default:
			pj.RequestRate = simNum(p.at.RequestRate)
		}
		if r := p.res; r != nil {
			pj.DurationS = simNum(float64(r.Duration))
			pj.Completed = r.Completed
			pj.RequestThroughput, pj.OutputThroughput = simNum(r.RequestThroughput), simNum(r.OutputThroughput)
			pj.TotalTokenThroughput = simNum(r.TotalTokenThroughput)
			if !r.Overloaded {
				for _, m := range []struct {
					st                  serve.Stats
					mean, med, p90, p99 **float64
				}{{r.TTFT, &pj.MeanTTFTMs, &pj.MedianTTFTMs, &pj.P90TTFTMs, &pj.P99TTFTMs},
					{r.TPOT, &pj.MeanTPOTMs, &pj.MedianTPOTMs, &pj.P90TPOTMs, &pj.P99TPOTMs},
					{r.ITL, &pj.MeanITLMs, &pj.MedianITLMs, &pj.P90ITLMs, &pj.P99ITLMs},
					{r.E2EL, &pj.MeanE2ELMs, &pj.MedianE2ELMs, &pj.P90E2ELMs, &pj.P99E2ELMs}} {
					*m.mean, *m.med, *m.p90, *m.p99 = simMs(m.st.Mean), simMs(m.st.Median), simMs(m.st.P90), simMs(m.st.P99)
				}
			}
			pj.MeanBatch = simNum(r.MeanBatch)
			pj.Steps, pj.MixedSteps, pj.Preemptions = r.Steps, r.MixedSteps, r.Preemptions
			pj.KVPeakGBPerGPU = simNum(r.KVPeakPerGPU.GB())
			sh := r.BreakdownShare()
			for c := cost.Category(0); c < cost.NumCategories; c++ {
				if c != cost.Idle || sh[c] != 0 {
					pj.BreakdownShare[c.String()] = r6(sh[c])
				}
			}
			pj.MeanAcceptanceLength = simNum(r.MeanAcceptanceLength)
			if r.PrefixCache {
				pj.PrefixHitRate = simNum(r6(r.PrefixHitRate))
			}
			if !r.Overloaded {
				pj.Interactivity = simNum(r6(r.Interactivity))
			}
			if p.cfg.SLO != (serve.SLO{}) {
				pj.RequestGoodput = simNum(r6(r.Goodput))
			}
			if d := r.Disagg; d != nil {
				pj.Disagg = &disaggJSON{PrefillGPUs: d.PrefillGPUs, DecodeGPUs: d.DecodeGPUs, KVTransferMsMean: simMs(d.KVTransferMean),
					PrefillUtilisation: simNum(r6(d.PrefillUtilisation)), DecodeUtilisation: simNum(r6(d.DecodeUtilisation))}
			}
		}
		out.Points = append(out.Points, pj)
	}
	return out
}

func engineOf(c serve.Config) engineJSON {
	return engineJSON{MaxNumBatchedTokens: c.MaxNumBatchedTokens, MaxNumSeqs: c.MaxNumSeqs, MixedChunk: c.MixedChunk,
		AsyncScheduling: c.AsyncScheduling, BlockSize: c.Memory.BlockSize, KVCapacityGBPerGPU: r6(c.Memory.KVCapacity.GB()),
		KVBytesPerToken: r6(float64(c.Memory.KVBytesPerToken)), AttentionGroups: c.Memory.Groups, SeqBlocks: c.Memory.SeqBlocks}
}

// cell is a metric for a table: nil ("-" in text, empty in CSV) when the
// point has no such number.
func simCell(ok bool, x float64) any {
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return r6(x)
}

// table is the per-point table: the text view (full=false) or the CSV view
// (full=true: the JSON's scalar fields, breakdown shares as columns).
func (sn *simulation) table(full bool) *table {
	closed := len(sn.sc.Serving.Concurrency) > 0
	first := column{Name: "concurrency"}
	if !closed {
		first = column{Name: "request_rate"}
	}
	if full {
		t := &table{Columns: []column{first, {Name: "requests"}, {Name: "input_tokens"}, {Name: "output_tokens"},
			{Name: "duration_s"}, {Name: "completed"}, {Name: "request_throughput"}, {Name: "output_throughput"},
			{Name: "total_token_throughput"}}}
		for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
			for _, s := range []string{"mean", "median", "p90", "p99"} {
				t.Columns = append(t.Columns, column{Name: s + "_" + m + "_ms"})
			}
		}
		t.Columns = append(t.Columns, column{Name: "mean_batch"}, column{Name: "steps"}, column{Name: "mixed_steps"},
			column{Name: "preemptions"}, column{Name: "kv_peak_gb_per_gpu"}, column{Name: "mean_acceptance_length"})
		for c := cost.Category(0); c < cost.NumCategories; c++ {
			if c != cost.Idle {
				t.Columns = append(t.Columns, column{Name: c.String() + "_share"})
			}
		}
		// Issue 23's metrics: interactivity always; goodput, the prefix
		// cache and the pools where a point has them.
		var slo, prefix, dis bool
		for i := range sn.points {
			p := &sn.points[i]
			slo = slo || p.cfg.SLO != (serve.SLO{})
			prefix = prefix || (p.res != nil && p.res.PrefixCache)
			dis = dis || p.cfg.Disagg != nil
		}
		t.Columns = append(t.Columns, column{Name: "interactivity"})
		if slo {
			t.Columns = append(t.Columns, column{Name: "request_goodput"})
		}
		if prefix {
			t.Columns = append(t.Columns, column{Name: "prefix_hit_rate"})
		}
		if dis {
			t.Columns = append(t.Columns, column{Name: "prefill_gpus"}, column{Name: "decode_gpus"}, column{Name: "kv_transfer_ms_mean"},
				column{Name: "prefill_utilisation"}, column{Name: "decode_utilisation"})
		}
		for i := range sn.points {
			p := &sn.points[i]
			w := p.cfg.Workload
			row := []any{pointValue(p.at), w.Requests, w.InputTokens, w.OutputTokens}
			r := p.res
			ok := r != nil
			if !ok {
				r = &serve.Result{}
			}
			lat := ok && !r.Overloaded
			row = append(row, simCell(ok, float64(r.Duration)), r.Completed, simCell(ok, r.RequestThroughput),
				simCell(ok, r.OutputThroughput), simCell(ok, r.TotalTokenThroughput))
			for _, st := range []serve.Stats{r.TTFT, r.TPOT, r.ITL, r.E2EL} {
				row = append(row, simCell(lat, st.Mean.Ms()), simCell(lat, st.Median.Ms()), simCell(lat, st.P90.Ms()), simCell(lat, st.P99.Ms()))
			}
			row = append(row, simCell(ok, r.MeanBatch), r.Steps, r.MixedSteps, r.Preemptions, simCell(ok, r.KVPeakPerGPU.GB()),
				simCell(ok, r.MeanAcceptanceLength))
			sh := r.BreakdownShare()
			for c := cost.Category(0); c < cost.NumCategories; c++ {
				if c != cost.Idle {
					row = append(row, simCell(ok, sh[c]))
				}
			}
			row = append(row, simCell(lat, r.Interactivity))
			if slo {
				row = append(row, simCell(ok, r.Goodput))
			}
			if prefix {
				row = append(row, simCell(ok && r.PrefixCache, r.PrefixHitRate))
			}
			if dis {
				d := r.Disagg
				if d == nil {
					d = &serve.DisaggResult{}
				}
				row = append(row, d.PrefillGPUs, d.DecodeGPUs, simCell(ok, d.KVTransferMean.Ms()),
					simCell(ok, d.PrefillUtilisation), simCell(ok, d.DecodeUtilisation))
			}
			t.add(row...)
		}
		return t
	}
	first.Name = "conc"
	if !closed {
		first.Name = "rate/s"
	}
	t := &table{Columns: []column{first, {Name: "requests"},
		{Name: "TTFT ms", Text: "%.1f"}, {Name: "p99", Text: "%.1f"},
		{Name: "TPOT ms", Text: "%.2f"}, {Name: "p99", Text: "%.2f"}, {Name: "ITL p99", Text: "%.2f"},
		{Name: "out tok/s", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"},
		{Name: "mean batch", Text: "%.1f"}, {Name: "preempt"}}}
	for i := range sn.points {
		p := &sn.points[i]
		r := p.res
		ok := r != nil
		if !ok {
			r = &serve.Result{}
		}
		lat := ok && !r.Overloaded
		perUser := math.NaN()
		if r.TPOT.Mean > 0 {
			perUser = 1 / float64(r.TPOT.Mean)
		}
		var pre any
		if ok {
			pre = r.Preemptions
		}
		t.add(pointValue(p.at), p.cfg.Workload.Requests, simCell(lat, r.TTFT.Mean.Ms()), simCell(lat, r.TTFT.P99.Ms()),
			simCell(lat, r.TPOT.Mean.Ms()), simCell(lat, r.TPOT.P99.Ms()), simCell(lat, r.ITL.P99.Ms()),
			simCell(ok, r.OutputThroughput), simCell(lat, perUser), simCell(ok, r.MeanBatch), pre)
	}
	return t
}

// pointValue is the point's concurrency (int) or request rate (float).
func pointValue(p scenarios.ServePoint) any {
	if p.Replay {
		return "trace"
	}
	if p.Concurrency > 0 {
		return p.Concurrency
	}
	return p.RequestRate
}

// text writes the header, the table and the warnings.
func (sn *simulation) text(w io.Writer) error {
	sc := sn.sc
	c := sc.Config
	graphs := "on"
	if !c.Graphs {
		graphs = "off"
	}
	lines := []string{
		"scenario  " + sc.Name + " (" + sc.File + ")",
		"model     " + modelSummary(sc),
		fmt.Sprintf("box       %dx %s (%s, %s), fabric %s", c.GPUs, c.GPU.Name, c.GPU.Memory, c.GPU.MemBW, c.Fabric.Name),
		fmt.Sprintf("layout    %s, CUDA graphs %s, all-reduce %s, KV cache %s", layoutString(c), graphs, allReduceName(sc), kvCacheName(sc)),
		"calib     " + sc.CalibrationNote,
	}
	if d := sc.Disagg; d != nil {
		pool := func(p scenarios.PoolSpec) string {
			cc := c
			cc.Layout = p.Layout
			return fmt.Sprintf("%dx (%s, %d GPUs)", p.Workers, layoutString(cc), p.GPUs)
		}
		router := [...]string{serve.RoundRobin: "round-robin", serve.LeastLoaded: "least-loaded", serve.PrefixAware: "prefix-aware"}[d.Router]
		lines = append(lines, fmt.Sprintf("disagg    prefill %s, decode %s; KV cache over %s (%s per GPU, %s), router %s; box and layout above: one decode instance",
			pool(d.Prefill), pool(d.Decode), d.Transfer.Name, d.Transfer.BW, d.Transfer.Latency, router))
	}
	if sp := c.Spec; sp.Method != sim.SpecNone {
		acc := make([]string, len(sp.Acceptance))
		for i, a := range sp.Acceptance {
			acc[i] = strconv.FormatFloat(a, 'g', -1, 64)
		}
		lines = append(lines, fmt.Sprintf("spec      %s, %d draft tokens, acceptance [%s]", specName(sp.Method), sp.DraftTokens, strings.Join(acc, ", ")))
	}
	if len(sn.points) > 0 {
		lines = append(lines, sn.engineLine(), sn.kvLine(), sn.workloadLine())
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n\n"); err != nil {
		return err
	}
	if err := sn.table(false).render(w, formatText); err != nil {
		return err
	}
	var inter []string
	for i := range sn.points {
		if p := &sn.points[i]; p.res != nil && !p.res.Overloaded {
			v := fmt.Sprintf("%v: %.1f", pointValue(p.at), p.res.Interactivity)
			if p.cfg.SLO != (serve.SLO{}) {
				v += fmt.Sprintf(" (goodput %.3g req/s, %d of %d requests met the SLOs)", p.res.Goodput, p.res.GoodRequests, p.res.Completed)
			}
			inter = append(inter, v)
		}
	}
	if len(inter) > 0 {
		if _, err := fmt.Fprintf(w, "interactivity (tok/s/user, 1 / P90 of E2E / output tokens): %s\n", strings.Join(inter, ", ")); err != nil {
			return err
		}
	}
	for i := range sn.points {
		if p := &sn.points[i]; p.res != nil && p.res.PrefixCache {
			if _, err := fmt.Fprintf(w, "prefix cache at %v: hit rate %.1f%% of prompt tokens\n", pointValue(p.at), 100*p.res.PrefixHitRate); err != nil {
				return err
			}
		}
		if p := &sn.points[i]; p.res != nil && p.res.Disagg != nil {
			d := p.res.Disagg
			if _, err := fmt.Fprintf(w, "disagg at %v: prefill %d GPUs %.0f%% busy, decode %d GPUs %.0f%% busy, KV transfer %.3f ms mean\n",
				pointValue(p.at), d.PrefillGPUs, 100*d.PrefillUtilisation, d.DecodeGPUs, 100*d.DecodeUtilisation, d.KVTransferMean.Ms()); err != nil {
				return err
			}
		}
	}
	for _, wn := range sn.warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// given marks a setting as the scenario's or the engine's default.
func (sn *simulation) given(key string) string {
	if sn.sc.Given(key) {
		return ""
	}
	return " (default)"
}

func (sn *simulation) engineLine() string {
	c := sn.points[0].cfg
	info := c.Engine.Info()
	seqs := fmt.Sprintf("%s %d%s", info.SeqsKey, c.MaxNumSeqs, sn.given("runtime.max_num_seqs"))
	if info.UnlimitedSeqs && c.MaxNumSeqs == 0 {
		seqs = info.SeqsKey + " unlimited" + sn.given("runtime.max_num_seqs")
	}
	extra := ""
	if info.MixedChunk {
		extra += fmt.Sprintf(", mixed chunk %s%s", onOff(c.MixedChunk), sn.given("runtime.mixed_chunk"))
	}
	if info.PrefillTokens {
		extra += fmt.Sprintf(", max_prefill_tokens %d", c.MaxPrefillTokens)
	}
	return fmt.Sprintf("engine    %s%s: %s %d%s, %s%s, async scheduling %s%s, KV block %d tokens, host overhead 0 (not modelled)",
		info.Name, sn.given("runtime.engine"), info.BudgetKey, c.MaxNumBatchedTokens, sn.given("runtime.max_num_batched_tokens"), seqs, extra,
		onOff(c.AsyncScheduling), sn.given("runtime.async_scheduling"), c.Memory.BlockSize)
}

func (sn *simulation) kvLine() string {
	m := sn.points[0].cfg.Memory
	if m.KVCapacity <= 0 {
		return fmt.Sprintf("kv        per GPU: no room (weights and reserve exceed the budget by %s)", -m.KVCapacity)
	}
	tokens := math.Floor(float64(m.KVCapacity)/(float64(m.BlockSize)*float64(m.KVBytesPerToken))) * float64(m.BlockSize)
	s := fmt.Sprintf("kv        per GPU: %s, %s/token: %.0f tokens", m.KVCapacity, m.KVBytesPerToken, tokens)
	if m.Groups > 1 {
		s += fmt.Sprintf(" in each of %d attention groups", m.Groups)
	}
	if m.SeqBlocks > 0 {
		s += fmt.Sprintf("; each request also holds %d blocks (%d tokens' worth) for its window KV and recurrent state", m.SeqBlocks, m.SeqBlocks*m.BlockSize)
	}
	return s
}

func (sn *simulation) workloadLine() string {
	v := &sn.sc.Serving
	w := sn.points[0].cfg.Workload
	if n := len(w.Trace); n > 0 {
		var in, out float64
		for _, q := range w.Trace {
			in += float64(q.InputTokens)
			out += float64(q.OutputTokens)
		}
		return fmt.Sprintf("workload  replayed request log: %d requests over %.1f s, mean %.0f in / %.0f out tokens",
			n, w.Trace[n-1].Arrival, in/float64(n), out/float64(n))
	}
	loop := "closed loop (all C sent at t = 0, the next when one finishes)"
	if len(v.RequestRate) > 0 {
		loop = fmt.Sprintf("open loop, gamma arrivals, burstiness %g", w.Burstiness)
	}
	req := "requests 10 x concurrency, at least 100"
	switch {
	case v.Requests > 0:
		req = fmt.Sprintf("requests %d", v.Requests)
	case len(v.RequestRate) > 0:
		req = fmt.Sprintf("requests %d", scenarios.DefaultOpenRequests)
	}
	return fmt.Sprintf("workload  %s; %d in / %d out tokens, range ratio %g, %s, seed %d",
		loop, w.InputTokens, w.OutputTokens, w.RangeRatio, req, v.Seed)
}
