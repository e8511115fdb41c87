package cli

import (
	"math"
	"sort"
	"sync"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/serve"
)

// Pools screened per side: the decode pool's layouts are the agg
// deployments with the most tokens/s per GPU under the SLOs (the
// decode-step model's and serving simulation's figures), the prefill
// pool's those with the most prompt tokens/s per GPU in one prefill step
// of the request's prompt (the prefill step price).
const disaggPoolsPerSide = 2

// planDisagg prices the disaggregated deployments of [plan] disagg = true
// with the serving simulation, and judges them against the agg front.
func planDisagg(pl *view.Planned, ev *servingEval) {
	r := pl.Result
	p := &pl.Plan
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
	out := make([]view.DisaggPoint, len(jobs))
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
	pl.Disagg = out
	if want := pl.TargetOutput(); want > 0 {
		for i := range out {
			d := &out[i]
			if d.Err == "" && d.Metrics.OutputTokensPerSecond > 0 {
				d.Units = int(min(math.Ceil(want/d.Metrics.OutputTokensPerSecond), plan.MaxReplicas))
				d.TotalGPUs = d.Units * d.GPUs
			}
		}
	}
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
func (e *servingEval) evaluateDisagg(pre, dec *plan.Candidate, x, y, conc int, pl *view.Planned) view.DisaggPoint {
	d := view.DisaggPoint{Prefill: pre, Decode: dec, X: x, Y: y, Concurrency: conc, GPUs: x*pre.GPUs() + y*dec.GPUs()}
	cfg, err := e.disaggConfig(pre, dec, x, y, conc, &pl.Plan)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	pc, dcost := cfg.Disagg.Prefill.Coster.(*serve.SimCoster), cfg.Disagg.Decode.Coster.(*serve.SimCoster)
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
	d.MeetsSLO = pl.SLO.Meets(&d.Metrics)
	return d
}

// disaggConfig is the serve.Config of x prefill instances of pre and y
// decode instances of dec at conc requests in flight: the decode
// candidate's engine configuration as servingEval.config makes it (the
// engine's derived defaults, the scenario's settings, the version's), the
// pools priced by their own simulators, and the engine's KV transfer
// (serve.PullsKV: vLLM's decode instance pulls it, as simulate runs it).
func (e *servingEval) disaggConfig(pre, dec *plan.Candidate, x, y, conc int, p *scenarios.Plan) (serve.Config, error) {
	engine := dec.Engine.Pick(e.engine)
	cfg, err := serve.SimConfig(dec.Config, dec.Sim, engine)
	if err != nil {
		return cfg, err
	}
	if e.maxBatched > 0 {
		cfg.MaxNumBatchedTokens = e.maxBatched
	}
	if e.maxSeqs != nil {
		cfg.MaxNumSeqs = *e.maxSeqs
	}
	e.versionDefaults(&cfg, engine)
	cfg.Seed = e.seed
	cfg.Workload = serve.Workload{Requests: max(PlanRequestsPerSlot*conc, PlanMinRequests), MaxConcurrency: conc,
		RequestRate: math.Inf(1), Burstiness: 1, InputTokens: max(1, p.InputTokens), OutputTokens: p.OutputTokens}
	pmem, err := serve.SimMemory(pre.Config, pre.Sim, engine)
	if err != nil {
		return cfg, err
	}
	cfg.Disagg = &serve.Disagg{
		Prefill:         serve.Pool{Workers: x, GPUs: pre.GPUs(), Memory: pmem, Coster: serve.NewSimCoster(pre.Sim)},
		Decode:          serve.Pool{Workers: y, GPUs: dec.GPUs(), Memory: cfg.Memory, Coster: serve.NewSimCoster(dec.Sim)},
		KVBytesPerToken: pmem.KVBytesPerToken, TransferBandwidth: float64(p.DisaggTransfer.BW),
		TransferLatency: p.DisaggTransfer.Latency, Router: serve.LeastLoaded, Pull: serve.PullsKV(engine)}
	return cfg, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
