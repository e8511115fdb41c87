package cli

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/serve"
)

// disaggPoint is one disaggregated deployment that plan priced: X prefill
// instances of Prefill's layout and Y decode instances of Decode's, at
// Concurrency requests in flight, by the serving simulation.
type disaggPoint struct {
	Prefill, Decode   *plan.Candidate
	X, Y              int
	Concurrency       int
	GPUs              int
	Metrics           plan.Metrics
	PerGPU            float64
	KVTransferMean    float64 // ms
	PrefillBusy       float64 // the prefill pool's utilisation, 0..1
	MeetsSLO, OnFront bool    // OnFront: not dominated by the agg front nor another disagg point
	Err               string
}

// Label is the xPyD name, e.g. "1P(TP8)+1D(TP1 DP8 EP8)".
func (d *disaggPoint) Label() string {
	return fmt.Sprintf("%dP(%s)+%dD(%s)", d.X, poolLayout(d.Prefill), d.Y, poolLayout(d.Decode))
}

func poolLayout(c *plan.Candidate) string {
	l := c.Config.Layout
	s := fmt.Sprintf("TP%d", l.TP)
	if l.DP > 1 {
		s += fmt.Sprintf(" DP%d", l.DP)
	}
	if l.DPAttention {
		s += " DPA"
	}
	if l.EP > 1 {
		s += fmt.Sprintf(" EP%d", l.EP)
	}
	return s
}

// Pools screened per side: the decode pool's layouts are the agg
// deployments with the most tokens/s per GPU under the SLOs (the
// decode-step model's and serving simulation's figures), the prefill
// pool's those with the most prompt tokens/s per GPU in one prefill step
// of the request's prompt (the prefill step price).
const disaggPoolsPerSide = 2

// planDisagg prices the disaggregated deployments of [plan] disagg = true
// with the serving simulation, and judges them against the agg front.
func planDisagg(pl *planned, ev *servingEval) {
	r := pl.res
	p := &pl.plan
	// decode pool: agg deployments by best tokens/s per GPU (no
	// speculative decoding: the pools run plain steps).
	var dec []int
	for di := range r.Deployments {
		d := &r.Deployments[di]
		c := &r.Candidates[d.Candidate]
		if d.Best >= 0 && !c.Config.Spec.Active() {
			dec = append(dec, di)
		}
	}
	sort.SliceStable(dec, func(i, j int) bool {
		return r.Points[r.Deployments[dec[i]].Best].PerGPU > r.Points[r.Deployments[dec[j]].Best].PerGPU
	})
	if len(dec) > disaggPoolsPerSide {
		dec = dec[:disaggPoolsPerSide]
	}
	type job struct {
		pre, dec *plan.Candidate
		x, y     int
		conc     int
	}
	var jobs []job
	for _, di := range dec {
		dc := &r.Candidates[r.Deployments[di].Candidate]
		conc := r.Points[r.Deployments[di].Best].Concurrency
		// prefill pool: same GPU and KV cache, by prompt tokens/s per GPU.
		type pre struct {
			c    *plan.Candidate
			rate float64
		}
		var pres []pre
		for ci := range r.Candidates {
			c := &r.Candidates[ci]
			if c.MaxConcurrency < 1 || c.Config.Spec.Active() || c.Config.GPU.Name != dc.Config.GPU.Name || c.Config.KVCache != dc.Config.KVCache {
				continue
			}
			t, _ := serve.NewSimCoster(c.Sim).StepCost([]serve.Seq{{Query: max(1, p.InputTokens), Prefill: true}})
			if t > 0 && !math.IsInf(float64(t), 0) {
				pres = append(pres, pre{c, float64(max(1, p.InputTokens)) / float64(t) / float64(c.GPUs())})
			}
		}
		sort.SliceStable(pres, func(i, j int) bool { return pres[i].rate > pres[j].rate })
		if len(pres) > disaggPoolsPerSide {
			pres = pres[:disaggPoolsPerSide]
		}
		for _, pc := range pres {
			for x := 1; x <= p.MaxPrefillWorkers; x++ {
				for y := 1; y <= p.MaxDecodeWorkers; y++ {
					if n := x*pc.c.GPUs() + y*dc.GPUs(); p.MaxGPUs > 0 && n > p.MaxGPUs {
						continue
					}
					if gcd(x, y) > 1 {
						continue // k copies of (x/k)P(y/k)D: the same per-GPU and per-user figures
					}
					jobs = append(jobs, job{pc.c, dc, x, y, conc * y})
				}
			}
		}
	}
	out := make([]disaggPoint, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = ev.evaluateDisagg(j.pre, j.dec, j.x, j.y, j.conc, pl)
		}()
	}
	wg.Wait()
	pl.disagg = out
	// judge: a disagg point is on the front when it meets the SLOs and
	// neither an agg front point nor another disagg point dominates it.
	for i := range out {
		d := &out[i]
		if d.Err != "" || !d.MeetsSLO {
			continue
		}
		d.OnFront = true
		for _, fi := range r.Front {
			fp := &r.Points[fi]
			if plan.Dominates(fp.PerGPU, fp.Metrics.PerUser, d.PerGPU, d.Metrics.PerUser) {
				d.OnFront = false
			}
		}
		for k := range out {
			o := &out[k]
			if k != i && o.Err == "" && o.MeetsSLO && plan.Dominates(o.PerGPU, o.Metrics.PerUser, d.PerGPU, d.Metrics.PerUser) {
				d.OnFront = false
			}
		}
	}
}

// evaluateDisagg runs the serving simulation of x prefill instances of pre
// and y decode instances of dec, a closed loop at conc requests in flight.
func (e *servingEval) evaluateDisagg(pre, dec *plan.Candidate, x, y, conc int, pl *planned) disaggPoint {
	d := disaggPoint{Prefill: pre, Decode: dec, X: x, Y: y, Concurrency: conc, GPUs: x*pre.GPUs() + y*dec.GPUs()}
	p := &pl.plan
	engine := dec.Engine.Pick(e.engine)
	cfg, err := serve.SimConfig(dec.Config, dec.Sim, engine)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	if e.maxBatched > 0 {
		cfg.MaxNumBatchedTokens = e.maxBatched
	}
	if e.maxSeqs != nil {
		cfg.MaxNumSeqs = *e.maxSeqs
	}
	cfg.Seed = e.seed
	cfg.Workload = serve.Workload{Requests: max(PlanRequestsPerSlot*conc, PlanMinRequests), MaxConcurrency: conc,
		RequestRate: math.Inf(1), Burstiness: 1, InputTokens: max(1, p.InputTokens), OutputTokens: p.OutputTokens}
	pmem, err := serve.SimMemory(pre.Config, pre.Sim, engine)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	pc, dcost := serve.NewSimCoster(pre.Sim), serve.NewSimCoster(dec.Sim)
	cfg.Disagg = &serve.Disagg{
		Prefill:         serve.Pool{Workers: x, GPUs: pre.GPUs(), Memory: pmem, Coster: pc},
		Decode:          serve.Pool{Workers: y, GPUs: dec.GPUs(), Memory: cfg.Memory, Coster: dcost},
		KVBytesPerToken: pmem.KVBytesPerToken, TransferBandwidth: float64(p.DisaggTransfer.BW),
		TransferLatency: p.DisaggTransfer.Latency, Router: serve.LeastLoaded}
	res, err := serve.Run(cfg, dcost)
	if err == nil {
		err = pc.Err()
	}
	if err == nil {
		err = dcost.Err()
	}
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.Metrics = plan.Metrics{OutputTokensPerSecond: res.OutputThroughput, TPOTP99: res.TPOT.P99, TTFTP99: res.TTFT.P99, HasTTFT: true}
	if res.TPOT.Mean > 0 {
		d.Metrics.PerUser = 1 / float64(res.TPOT.Mean)
	}
	d.PerGPU = res.OutputThroughput / float64(d.GPUs)
	if res.Disagg != nil {
		d.KVTransferMean = res.Disagg.KVTransferMean.Ms()
		d.PrefillBusy = res.Disagg.PrefillUtilisation
	}
	d.MeetsSLO = pl.slo.Meets(&d.Metrics)
	return d
}

// disaggVerdict says whether disaggregation pays: a disagg point on the
// front beside agg, or why not.
func (pl *planned) disaggVerdict() string {
	var best *disaggPoint
	nfront, nmeet := 0, 0
	for i := range pl.disagg {
		d := &pl.disagg[i]
		if d.OnFront {
			nfront++
		}
		if d.Err == "" && d.MeetsSLO {
			nmeet++
			if best == nil || d.PerGPU > best.PerGPU {
				best = d
			}
		}
	}
	switch {
	case len(pl.disagg) == 0:
		return "disaggregation not priced: no agg deployment meets the SLOs to serve as a decode pool"
	case nfront > 0:
		return fmt.Sprintf("disaggregation pays: %d of %d disaggregated points are on the front beside agg", nfront, len(pl.disagg))
	case nmeet == 0:
		return fmt.Sprintf("disaggregation does not pay: none of the %d disaggregated points meets the SLOs", len(pl.disagg))
	}
	s := fmt.Sprintf("disaggregation does not pay: agg dominates all %d disaggregated points (best %s at %.1f tok/s/GPU, %.1f tok/s/user, prefill pool %.0f%% busy",
		len(pl.disagg), best.Label(), best.PerGPU, best.Metrics.PerUser, 100*best.PrefillBusy)
	if b := pl.res.Best; b != nil {
		ap := &pl.res.Points[b.Point]
		s += fmt.Sprintf("; agg best %.1f tok/s/GPU", ap.PerGPU)
	}
	return s + ")"
}

// disaggRows is the disaggregated points' table.
func (pl *planned) disaggRows() *table {
	t := &table{Columns: []column{{Name: "deployment"}, {Name: "gpu"}, {Name: "gpus"}, {Name: "conc"},
		{Name: "tok/s/GPU", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"}, {Name: "TTFT p99 ms", Text: "%.1f"},
		{Name: "TPOT p99 ms", Text: "%.2f"}, {Name: "KV xfer ms", Text: "%.3f"}, {Name: "verdict", Left: true}}}
	for i := range pl.disagg {
		d := &pl.disagg[i]
		t.add(d.Label(), d.Decode.Config.GPU.Name+" kv "+d.Decode.Config.KVCache.String(), d.GPUs, d.Concurrency, d.PerGPU, d.Metrics.PerUser, d.Metrics.TTFTP99.Ms(), d.Metrics.TPOTP99.Ms(),
			d.KVTransferMean, d.verdict())
	}
	return t
}

func (d *disaggPoint) verdict() string {
	switch {
	case d.Err != "":
		return "error: " + d.Err
	case !d.MeetsSLO:
		return "fails the SLOs"
	case d.OnFront:
		return "on front"
	}
	return "dominated"
}

// planDisaggJSON is one disaggregated point in `plan --format json`.
type planDisaggJSON struct {
	Deployment         string   `json:"deployment"`
	Mode               string   `json:"mode"` // "disagg"
	PrefillWorkers     int      `json:"prefill_workers"`
	PrefillLayout      string   `json:"prefill_layout"`
	DecodeWorkers      int      `json:"decode_workers"`
	DecodeLayout       string   `json:"decode_layout"`
	GPU                string   `json:"gpu"`
	GPUs               int      `json:"gpus"`
	Concurrency        int      `json:"concurrency"`
	OutputTokensPerS   float64  `json:"output_tokens_per_s"`
	TokensPerSPerGPU   float64  `json:"tokens_per_s_per_gpu"`
	TokensPerSPerUser  float64  `json:"tokens_per_s_per_user"`
	TPOTP99Ms          float64  `json:"tpot_p99_ms"`
	TTFTP99Ms          *float64 `json:"ttft_p99_ms"`
	KVTransferMsMean   float64  `json:"kv_transfer_ms_mean"`
	PrefillUtilisation float64  `json:"prefill_utilisation"`
	Verdict            string   `json:"verdict"`
	PricedBy           string   `json:"priced_by"`
}

type planDisaggSectionJSON struct {
	Transfer string           `json:"transfer"`
	Points   []planDisaggJSON `json:"points"`
	Verdict  string           `json:"verdict"`
}

func (pl *planned) disaggJSON() *planDisaggSectionJSON {
	out := &planDisaggSectionJSON{Transfer: pl.plan.DisaggTransfer.Name, Points: []planDisaggJSON{}, Verdict: pl.disaggVerdict()}
	for i := range pl.disagg {
		d := &pl.disagg[i]
		j := planDisaggJSON{Deployment: d.Label(), Mode: "disagg", PrefillWorkers: d.X, PrefillLayout: poolLayout(d.Prefill),
			DecodeWorkers: d.Y, DecodeLayout: poolLayout(d.Decode), GPU: d.Decode.Config.GPU.Name, GPUs: d.GPUs,
			Concurrency: d.Concurrency, OutputTokensPerS: r6(d.Metrics.OutputTokensPerSecond), TokensPerSPerGPU: r6(d.PerGPU),
			TokensPerSPerUser: r6(d.Metrics.PerUser), TPOTP99Ms: r6(d.Metrics.TPOTP99.Ms()), KVTransferMsMean: r6(d.KVTransferMean),
			PrefillUtilisation: r6(d.PrefillBusy),
			Verdict:            d.verdict(), PricedBy: "serving simulation"}
		if d.Err == "" {
			v := r6(d.Metrics.TTFTP99.Ms())
			j.TTFTP99Ms = &v
		}
		out.Points = append(out.Points, j)
	}
	return out
}

// disaggText writes the disaggregated section of the text output.
func (pl *planned) disaggText(w *strings.Builder) {
	fmt.Fprintf(w, "\ndisaggregated (xPyD: x prefill + y decode instances, KV cache over %s; serving simulation)\n", pl.plan.DisaggTransfer.Name)
	_ = pl.disaggRows().render(w, formatText)
	fmt.Fprintln(w, "verdict   "+pl.disaggVerdict())
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
