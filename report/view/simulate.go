package view

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// SimPoint is one simulated point: its config and result, or why it could
// not be served.
type SimPoint struct {
	At         scenarios.ServePoint
	Config     serve.Config
	Result     *serve.Result
	Unservable string // set when the point cannot be served at all
}

// Simulation is what simulate computed, ready to render.
type Simulation struct {
	Scenario *scenarios.Scenario
	Points   []SimPoint
	Warnings []string
	// psm, dsm are the pools' simulators of a [disagg] scenario.
	PrefillSim, DecodeSim *sim.Sim
	// Accuracy is the corpus's measured error on deployments like this
	// one (nil: not looked up, as in validate corpus).
	Accuracy *Accuracy
}

// num is a float for JSON: nil (null) when not finite.
func simNum(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	v := Round6(x)
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
	MaxNumBatchedTokens int  `json:"max_num_batched_tokens"`
	MaxNumSeqs          int  `json:"max_num_seqs"`
	MixedChunk          bool `json:"mixed_chunk"`
	AsyncScheduling     bool `json:"async_scheduling"`
	// HostMsPerStep is the engine's host work per step (serve.Config.Host).
	HostMsPerStep float64 `json:"host_ms_per_step"`
	BlockSize     int     `json:"block_size"`
	// KVCapacityGBPerGPU is 0 where the weights leave no room for a KV
	// cache (the points say they cannot be served), never negative.
	KVCapacityGBPerGPU float64 `json:"kv_capacity_gb_per_gpu"`
	KVBytesPerToken    float64 `json:"kv_bytes_per_token_per_gpu"`
	AttentionGroups    int     `json:"attention_groups"`
	// SeqBlocks: blocks each request holds whatever its length (window KV,
	// recurrent state); 0 for models without them.
	SeqBlocks int `json:"seq_blocks,omitempty"`
}

type simulateJSON struct {
	Scenario     string         `json:"scenario"`
	Engine       string         `json:"engine"`
	EngineConfig engineJSON     `json:"engine_config"`
	Calibration  []string       `json:"calibration"`
	Accuracy     *accuracyJSON  `json:"accuracy,omitempty"`
	Points       []simPointJSON `json:"points"`
	Warnings     []string       `json:"warnings"`
}

// simMs is a latency in ms for JSON.
func simMs(t unit.Seconds) *float64 { return simNum(t.Ms()) }

func (sn *Simulation) JSON() simulateJSON {
	out := simulateJSON{Scenario: sn.Scenario.Name, Engine: sn.Scenario.Serving.Engine.String(), Calibration: []string{},
		Points: []simPointJSON{}, Warnings: append([]string{}, sn.Warnings...), Accuracy: sn.Accuracy.json()}
	for _, u := range sn.Scenario.CalibrationUses {
		out.Calibration = append(out.Calibration, u.Name)
	}
	if len(sn.Points) > 0 {
		out.EngineConfig = engineOf(sn.Points[0].Config)
	}
	for i := range sn.Points {
		p := &sn.Points[i]
		w := p.Config.Workload
		pj := simPointJSON{Requests: w.Requests, InputTokens: w.InputTokens, OutputTokens: w.OutputTokens,
			BreakdownShare: map[string]float64{}}
		switch {
		case p.At.Replay:
			pj.Replay = true
			if p.Result != nil {
				pj.RequestRate = simNum(p.Result.RequestRate)
			}
		case p.At.Concurrency > 0:
			c := p.At.Concurrency
			pj.Concurrency = &c
		default:
			pj.RequestRate = simNum(p.At.RequestRate)
		}
		if r := p.Result; r != nil {
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
					pj.BreakdownShare[c.String()] = Round6(sh[c])
				}
			}
			pj.MeanAcceptanceLength = simNum(r.MeanAcceptanceLength)
			if r.PrefixCache {
				pj.PrefixHitRate = simNum(Round6(r.PrefixHitRate))
			}
			if !r.Overloaded {
				pj.Interactivity = simNum(Round6(r.Interactivity))
			}
			if p.Config.SLO != (serve.SLO{}) {
				pj.RequestGoodput = simNum(Round6(r.Goodput))
			}
			if d := r.Disagg; d != nil {
				pj.Disagg = &disaggJSON{PrefillGPUs: d.PrefillGPUs, DecodeGPUs: d.DecodeGPUs, KVTransferMsMean: simMs(d.KVTransferMean),
					PrefillUtilisation: simNum(Round6(d.PrefillUtilisation)), DecodeUtilisation: simNum(Round6(d.DecodeUtilisation))}
			}
		}
		out.Points = append(out.Points, pj)
	}
	return out
}

func engineOf(c serve.Config) engineJSON {
	return engineJSON{MaxNumBatchedTokens: c.MaxNumBatchedTokens, MaxNumSeqs: c.MaxNumSeqs, MixedChunk: c.MixedChunk,
		AsyncScheduling: c.AsyncScheduling, HostMsPerStep: Round6(c.Host.PerStep.Ms()), BlockSize: c.Memory.BlockSize, KVCapacityGBPerGPU: Round6(max(0, c.Memory.KVCapacity.GB())),
		KVBytesPerToken: Round6(float64(c.Memory.KVBytesPerToken)), AttentionGroups: c.Memory.Groups, SeqBlocks: c.Memory.SeqBlocks}
}

// cell is a metric for a table: nil ("-" in text, empty in CSV) when the
// point has no such number.
func simCell(ok bool, x float64) any {
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return Round6(x)
}

// Table is the per-point table: the text view (full=false) or the CSV view
// (full=true: the JSON's scalar fields, breakdown shares as columns).
func (sn *Simulation) Table(full bool) *report.Table {
	closed := len(sn.Scenario.Serving.Concurrency) > 0
	first := report.Column{Name: "concurrency"}
	if !closed {
		first = report.Column{Name: "request_rate"}
	}
	if full {
		t := &report.Table{Columns: []report.Column{first, {Name: "requests"}, {Name: "input_tokens"}, {Name: "output_tokens"},
			{Name: "duration_s"}, {Name: "completed"}, {Name: "request_throughput"}, {Name: "output_throughput"},
			{Name: "total_token_throughput"}}}
		for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
			for _, s := range []string{"mean", "median", "p90", "p99"} {
				t.Columns = append(t.Columns, report.Column{Name: s + "_" + m + "_ms"})
			}
		}
		t.Columns = append(t.Columns, report.Column{Name: "mean_batch"}, report.Column{Name: "steps"}, report.Column{Name: "mixed_steps"},
			report.Column{Name: "preemptions"}, report.Column{Name: "kv_peak_gb_per_gpu"}, report.Column{Name: "mean_acceptance_length"})
		for c := cost.Category(0); c < cost.NumCategories; c++ {
			if c != cost.Idle {
				t.Columns = append(t.Columns, report.Column{Name: c.String() + "_share"})
			}
		}
		// Issue 23's metrics: interactivity always; goodput, the prefix
		// cache and the pools where a point has them.
		var slo, prefix, dis bool
		for i := range sn.Points {
			p := &sn.Points[i]
			slo = slo || p.Config.SLO != (serve.SLO{})
			prefix = prefix || (p.Result != nil && p.Result.PrefixCache)
			dis = dis || p.Config.Disagg != nil
		}
		t.Columns = append(t.Columns, report.Column{Name: "interactivity"})
		if slo {
			t.Columns = append(t.Columns, report.Column{Name: "request_goodput"})
		}
		if prefix {
			t.Columns = append(t.Columns, report.Column{Name: "prefix_hit_rate"})
		}
		if dis {
			t.Columns = append(t.Columns, report.Column{Name: "prefill_gpus"}, report.Column{Name: "decode_gpus"}, report.Column{Name: "kv_transfer_ms_mean"},
				report.Column{Name: "prefill_utilisation"}, report.Column{Name: "decode_utilisation"})
		}
		for i := range sn.Points {
			p := &sn.Points[i]
			w := p.Config.Workload
			row := []any{pointValue(p.At), w.Requests, w.InputTokens, w.OutputTokens}
			r := p.Result
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
			t.Add(row...)
		}
		return t
	}
	first.Name = "conc"
	if !closed {
		first.Name = "rate/s"
	}
	t := &report.Table{Columns: []report.Column{first, {Name: "requests"},
		{Name: "TTFT ms", Text: "%.1f"}, {Name: "p99", Text: "%.1f"},
		{Name: "TPOT ms", Text: "%.2f"}, {Name: "p99", Text: "%.2f"}, {Name: "ITL p99", Text: "%.2f"},
		{Name: "out tok/s", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"},
		{Name: "mean batch", Text: "%.1f"}, {Name: "preempt"}}}
	for i := range sn.Points {
		p := &sn.Points[i]
		r := p.Result
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
		t.Add(pointValue(p.At), p.Config.Workload.Requests, simCell(lat, r.TTFT.Mean.Ms()), simCell(lat, r.TTFT.P99.Ms()),
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

// Text writes the header, the table and the warnings.
func (sn *Simulation) Text(w io.Writer) error {
	sc := sn.Scenario
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
	if sn.Accuracy != nil {
		lines = append(lines, sn.Accuracy.Line())
	}
	if d := sc.Disagg; d != nil {
		pool := func(p scenarios.PoolSpec) string {
			cc := c
			cc.Layout = p.Layout
			return fmt.Sprintf("%dx (%s, %d GPUs%s)", p.Workers, layoutString(cc), p.GPUs, poolSettings(p))
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
	if len(sn.Points) > 0 {
		lines = append(lines, sn.engineLine(), sn.kvLine(), sn.workloadLine())
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n\n"); err != nil {
		return err
	}
	if err := sn.Table(false).Render(w, report.Text); err != nil {
		return err
	}
	var inter []string
	for i := range sn.Points {
		if p := &sn.Points[i]; p.Result != nil && !p.Result.Overloaded {
			v := fmt.Sprintf("%v: %.1f", pointValue(p.At), p.Result.Interactivity)
			if p.Config.SLO != (serve.SLO{}) {
				v += fmt.Sprintf(" (goodput %.3g req/s, %d of %d requests met the SLOs)", p.Result.Goodput, p.Result.GoodRequests, p.Result.Completed)
			}
			inter = append(inter, v)
		}
	}
	if len(inter) > 0 {
		if _, err := fmt.Fprintf(w, "interactivity (tok/s/user, 1 / P90 of E2E / output tokens): %s\n", strings.Join(inter, ", ")); err != nil {
			return err
		}
	}
	for i := range sn.Points {
		if p := &sn.Points[i]; p.Result != nil && p.Result.PrefixCache {
			if _, err := fmt.Fprintf(w, "prefix cache at %v: hit rate %.1f%% of prompt tokens\n", pointValue(p.At), 100*p.Result.PrefixHitRate); err != nil {
				return err
			}
		}
		if p := &sn.Points[i]; p.Result != nil && p.Result.Disagg != nil {
			d := p.Result.Disagg
			if _, err := fmt.Fprintf(w, "disagg at %v: prefill %d GPUs %.0f%% busy, decode %d GPUs %.0f%% busy, KV transfer %.3f ms mean\n",
				pointValue(p.At), d.PrefillGPUs, 100*d.PrefillUtilisation, d.DecodeGPUs, 100*d.DecodeUtilisation, d.KVTransferMean.Ms()); err != nil {
				return err
			}
		}
	}
	for _, wn := range sn.Warnings {
		if _, err := fmt.Fprintln(w, "warning: "+wn); err != nil {
			return err
		}
	}
	return nil
}

// given marks a setting as the scenario's or the engine's default.
func (sn *Simulation) given(key string) string {
	if sn.Scenario.Given(key) {
		return ""
	}
	return " (default)"
}

func (sn *Simulation) engineLine() string {
	c := sn.Points[0].Config
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
	host := "host work per step 0"
	if h := c.Host.PerStep; h > 0 {
		host = fmt.Sprintf("host work %.2f ms per step", h.Ms())
		if c.Host.PerSeq > 0 {
			host += fmt.Sprintf(" + %.3f ms per sequence", c.Host.PerSeq.Ms())
		}
	}
	return fmt.Sprintf("engine    %s%s: %s %d%s, %s%s, async scheduling %s%s, KV block %d tokens, %s",
		info.Name, sn.given("runtime.engine"), info.BudgetKey, c.MaxNumBatchedTokens, sn.given("runtime.max_num_batched_tokens"), seqs, extra,
		onOff(c.AsyncScheduling), sn.given("runtime.async_scheduling"), c.Memory.BlockSize, host)
}

func (sn *Simulation) kvLine() string {
	m := sn.Points[0].Config.Memory
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

func (sn *Simulation) workloadLine() string {
	v := &sn.Scenario.Serving
	w := sn.Points[0].Config.Workload
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
	lengths := fmt.Sprintf("%d in / %d out tokens, range ratio %g", w.InputTokens, w.OutputTokens, w.RangeRatio)
	if w.RangeStyle == serve.RangeBelow {
		lengths += " below (lengths in [int(L r), L])"
	}
	if len(w.Lengths) > 0 {
		lengths = fmt.Sprintf("lengths drawn from %d pairs of %s (mean %d in / %d out tokens)", len(w.Lengths), v.LengthsFile, w.InputTokens, w.OutputTokens)
	}
	line := fmt.Sprintf("workload  %s; %s, %s, seed %d", loop, lengths, req, v.Seed)
	if w.Turns > 1 {
		line += fmt.Sprintf("; sessions of %d turns, each sent %s after the one before finishes, its prompt the earlier turns' prompt and output plus its own input (requests count every turn; the load starts sessions)",
			w.Turns, w.ThinkTime)
	}
	return line
}

// poolSettings lists a disaggregated pool's own engine settings, those its
// [disagg.prefill] or [disagg.decode] sets in place of the scenario's
// (the engine line shows the scenario's): "; max_num_seqs 16, ...", or ""
// when it sets none.
func poolSettings(p scenarios.PoolSpec) string {
	var out []string
	for _, k := range []struct {
		key string
		n   int
	}{{"max_num_seqs", p.MaxNumSeqs}, {"max_num_batched_tokens", p.MaxNumBatchedTokens}, {"max_prefill_tokens", p.MaxPrefillTokens},
		{"max_total_tokens", p.MaxTotalTokens}, {"scheduler_recv_interval", p.SchedulerRecvInterval}} {
		if k.n > 0 {
			out = append(out, fmt.Sprintf("%s %d", k.key, k.n))
		}
	}
	if p.MemFraction > 0 {
		out = append(out, "gpu_memory_utilization "+strconv.FormatFloat(p.MemFraction, 'g', -1, 64))
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, ", ")
}
