package serve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// UnservableError says a point cannot be served at all: one request does not
// fit in the KV cache even alone.
type UnservableError struct {
	Tokens   int        // KV slots the longest request needs at its peak
	Need     unit.Bytes // per GPU for those slots, in whole blocks
	Capacity unit.Bytes // KV cache per GPU
}

func (e *UnservableError) Error() string {
	return fmt.Sprintf("KV cache too small for one request: the longest needs %d tokens (%.2f GB per GPU in whole blocks), the cache holds %.2f GB per GPU",
		e.Tokens, e.Need.GB(), e.Capacity.GB())
}

// run is the simulation state of one Run: the request table, the client
// that sends requests, the engine instance that serves them, the clock
// and what the metrics need. Nothing in it depends on the engine: the
// instance's scheduler does.
type run struct {
	cfg    *Config
	coster StepCoster
	rng    *rand.Rand
	// acc draws the acceptance of speculative decoding from rng's
	// source, once the load has been drawn.
	acc    acceptance
	reqs   []request
	rate   float64 // offered request rate for Result (+Inf: all at once)
	replay bool    // a request log (Workload.Trace): never judged overloaded
	client *client
	inst   *instance
	cl     *cluster // a disaggregated run's instances (disagg.go); nil otherwise
	dp     *dpRanks // a run's DP ranks, each its own engine core (dpranks.go); nil otherwise

	// outcomes
	steps, mixedSteps       int
	decodeSeqs, decodeSteps int
	cats                    [cost.NumCategories]unit.Seconds
	itl                     []weighted
	groups                  itlGroups
	completed               int
}

// Run simulates one serving point and returns what `vllm bench serve`
// would report. It is a pure function of cfg and the coster: the only
// randomness is rand.New(rand.NewPCG(cfg.Seed, 1)), drawn in a fixed order
// (the load's draws: input lengths, output lengths, arrivals; then
// acceptance during the run). It returns a *model.FieldError for an invalid cfg
// and an *UnservableError when one request does not fit in the KV cache.
func Run(cfg Config, coster StepCoster) (*Result, error) {
	e, err := simulate(cfg, coster)
	if err != nil {
		return nil, err
	}
	r := e.result()
	putWeighted(e.itl)
	e.itl = nil
	return r, nil
}

// simulate runs the point and returns the final state.
func simulate(cfg Config, coster StepCoster) (*run, error) {
	if cfg.Disagg != nil {
		cfg.Memory = cfg.Disagg.Decode.Memory
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pcg := newPCG(cfg.Seed)
	e := &run{cfg: &cfg, coster: coster, rng: rand.New(pcg), rate: cfg.Workload.RequestRate}
	e.acc = acceptance{pcg: pcg, thr: acceptThresholds(cfg.Spec.Acceptance)}
	for len(e.acc.thr) == 1 && cfg.Spec.DraftTokens > 1 {
		// one value for every position: written out per position
		e.acc.thr = slices.Repeat(e.acc.thr, cfg.Spec.DraftTokens)
	}
	var load Load = cfg.Workload
	given := true
	switch {
	case cfg.Load != nil:
		load = cfg.Load
	case cfg.Workload.Trace != nil:
		load, e.replay = traceLoad(cfg.Workload.Trace), true
	default:
		given = false
	}
	gen := load.Generate(e.rng)
	if cfg.Load == nil {
		describe(cfg.Workload, gen)
	}
	if given {
		if err := checkLoad(gen); err != nil {
			return nil, err
		}
		e.rate = offeredRate(gen)
		if e.replay {
			// A log's offered rate is the mean over its arrivals.
			e.rate = math.Inf(1)
			if last := float64(gen[len(gen)-1].Arrival); last > 0 {
				e.rate = float64(len(gen)-1) / last
			}
		}
	}
	e.reqs = make([]request, len(gen))
	maxTok := 0
	shared := false
	for i, g := range gen {
		e.reqs[i] = request{in: int32(g.In), out: int32(g.Out), arrival: float64(g.Arrival), prefix: g.Prefix, wait: float64(g.Wait)}
		shared = shared || g.Prefix != nil
		maxTok = max(maxTok, g.In+g.Out-1)
	}
	k := cfg.Spec.DraftTokens
	peak := maxTok
	if k > 0 {
		peak += k + cfg.Spec.Lookahead
	}
	if err := cfg.Memory.fits(peak); err != nil {
		return nil, err
	}
	if err := sglangAdmissible(&cfg, e.reqs); err != nil {
		return nil, err
	}
	var kv kvCache = newBlockPool(cfg.Memory, e.reqs).recovering(cfg.ownBlocks())
	if shared && !cfg.NoPrefixCache {
		kv = newPrefixPool(cfg.Memory, e.reqs)
	}
	e.inst = &instance{reqs: e.reqs, kv: kv, sched: engines[cfg.Engine].scheduler(&cfg), fullISL: cfg.fullISL(),
		waiting: make([]int32, 0, len(e.reqs)), k: k, lookahead: cfg.Spec.Lookahead}
	e.client = newClient(e.reqs, cfg.Workload.MaxConcurrency, cfg.FrontEnd, cfg.ScheduleAhead && cfg.AsyncScheduling)
	e.client.deps = newDeps(gen)
	e.itl = getWeighted()
	if cfg.Disagg != nil {
		cl, err := e.newCluster(shared)
		if err != nil {
			return nil, err
		}
		e.cl, e.inst = cl, cl.decode[0].in
		if err := e.loopDisagg(); err != nil {
			return nil, err
		}
		return e, nil
	}
	if cfg.perRankDP() {
		e.dp = e.newDPRanks(engines[cfg.Engine].balance, shared)
		if err := e.loopDP(e.dp); err != nil {
			return nil, err
		}
		return e, nil
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	return e, nil
}

// loop runs steps until every request has finished: when the instance is
// idle the clock jumps to the client's next send; otherwise the
// instance's scheduler builds a step, the coster prices it, the clock
// advances by its wall time and its outcome is applied.
func (e *run) loop() error {
	n := len(e.reqs)
	in := e.inst
	t := 0.0
	for e.completed < n {
		if in.idle() {
			var ok bool
			if t, ok = e.client.wake(t, in); !ok {
				return fmt.Errorf("serve: internal error: %d requests unfinished with nothing to run", n-e.completed)
			}
			continue
		}
		e.client.stepStart(t)
		in.sched.schedule(in)
		if len(in.step.seqs) == 0 {
			return fmt.Errorf("serve: internal error: a step scheduled nothing (%d held, %d waiting)", in.sched.holding(), in.queued())
		}
		d, err := e.price(&in.step)
		if err != nil {
			return err
		}
		t += d
		e.client.stepEnd(t, e.finishStep(in, t), in)
	}
	return nil
}

// price costs a step and returns its wall time: the coster's GPU time plus
// the host overhead, which async scheduling hides behind the GPU when the
// step has no prefill (every step for an engine whose overlap covers
// prefill: SGLang). The visible host time is booked as cost.Other.
func (e *run) price(s *step) (float64, error) { return e.priceWith(e.coster, s) }

// priceWith is price with coster c (a disaggregated pool's).
func (e *run) priceWith(c StepCoster, s *step) (float64, error) {
	gpu, cats := c.StepCost(s.seqs)
	return e.book(gpu, cats, len(s.seqs), s.prefills, len(s.seqs))
}

// book adds a step of seqs sequences (prefills of them prefill chunks)
// and GPU time gpu to the run's outcomes and returns its wall time, with
// the host overhead of a host loop that schedules most sequences.
func (e *run) book(gpu unit.Seconds, cats [cost.NumCategories]unit.Seconds, seqs, prefills, most int) (float64, error) {
	g := float64(gpu)
	if !(g > 0) || math.IsInf(g, 0) {
		return 0, fmt.Errorf("serve: step cost of %d sequences is %g s (want finite and > 0)", seqs, g)
	}
	decode := seqs - prefills
	prefill := prefills > 0
	wall, _, _ := stepWall(e.cfg, g, prefill, most)
	cats[cost.Other] += unit.Seconds(wall - g)
	for i := range e.cats {
		e.cats[i] += cats[i]
	}
	e.steps++
	if prefill && decode > 0 {
		e.mixedSteps++
	}
	if decode > 0 {
		e.decodeSteps++
		e.decodeSeqs += decode
	}
	return wall, nil
}

// finishStep applies the outcome of in's step at time t: chunks computed
// (the scheduler told of each prefill chunk), first tokens and decode
// tokens streamed (with speculative decoding, 1 + accepted tokens in one
// chunk), finished requests freed. It returns the number of requests that
// finished.
func (e *run) finishStep(in *instance, t float64) int {
	groups := &e.groups
	done := 0
	// Requests whose previous chunk came at the same time (usually all
	// decodes of the step) are counted as one run before grouping.
	runPrev, runN := 0.0, 0
	reqs, who := in.reqs, in.step.who
	acc := &e.acc
	for i, s := range in.step.seqs {
		r := who[i]
		q := &reqs[r]
		emit := int32(0)
		if s.Prefill {
			q.computed += int32(s.Query)
			whole := q.computed == q.in+q.gen
			in.sched.prefilled(r, whole)
			if whole {
				emit = 1
			}
		} else {
			a := 0
			if s.Query > 1 {
				a = acc.draw(s.Query - 1)
			}
			q.computed += int32(1 + a)
			emit = int32(1 + a)
		}
		if emit == 0 {
			continue
		}
		emit = min(emit, q.out-q.gen)
		if q.gen == 0 {
			q.ttft = t - q.send
		} else if q.lastTok == runPrev {
			runN++
		} else {
			if runN > 0 {
				groups.add(runPrev, runN)
			}
			runPrev, runN = q.lastTok, 1
		}
		q.gen += emit
		q.lastTok = t
		if q.gen == q.out {
			q.e2e = t - q.send
			if in.handoff != nil {
				// a prefill instance's request: its KV stays until sent
				in.sched.finished(r)
				*in.handoff = append(*in.handoff, r)
				continue
			}
			in.kv.free(r)
			in.sched.finished(r)
			if e.client.deps != nil {
				e.client.finished(r, t)
			}
			e.completed++
			done++
		}
	}
	if runN > 0 {
		groups.add(runPrev, runN)
	}
	groups.flush(t, &e.itl)
	return done
}

// acceptance is the run's acceptance draws (finishStep). Its draws are
// the run's random stream, in the same order as a draw of
// rand.Float64() per position tested, stopping at the first rejected:
// they are taken from the source ahead, acceptBuf at a time, into buf
// (nothing else draws from the source once the load is drawn, so drawing
// ahead changes no draw), and a verify step's positions are then tested
// without a branch per position; the draws it used are consumed (the
// accepted ones and the rejected one, or all d).
type acceptance struct {
	pcg *rand.PCG
	// thr[i] is position i's Spec.Acceptance as a threshold on a 53-bit
	// draw: the position is accepted when the draw is below it
	// (acceptThresholds); one per draft token.
	thr              []uint64
	buf              []uint64 // draws taken ahead: buf[pos:] not used yet
	pos              int
	drafts, accepted int
}

// acceptBuf is the draws acceptance takes from the source at a time.
const acceptBuf = 512

// draw draws how many of d drafts are accepted: position i is accepted
// with its conditional acceptance if every earlier one was.
func (c *acceptance) draw(d int) int {
	if d <= 0 {
		return 0
	}
	if c.pos+d > len(c.buf) {
		c.fill(d)
	}
	u := c.buf[c.pos : c.pos+d]
	thr := c.thr[:d]
	// alive stays 1 while every position so far is accepted: a position's
	// draw v (53 bits, the draw of rand.Float64() without the float) is
	// accepted when v < thr (both below 2^63, so v - thr wraps exactly
	// then and its top bit is set)
	a, alive := 0, uint64(1)
	for j, v := range u {
		alive &= (v<<11>>11 - thr[j]) >> 63
		a += int(alive)
	}
	c.pos += min(a+1, d) // the rejected position's draw is used too
	c.drafts++
	c.accepted += a
	return a
}

// fill moves the unused draws to the front of buf and draws more from
// the source, so that at least d are ready.
func (c *acceptance) fill(d int) {
	if c.buf == nil {
		c.buf = make([]uint64, 0, max(acceptBuf, d))
	}
	n := copy(c.buf[:cap(c.buf)], c.buf[c.pos:])
	if cap(c.buf) < n+d {
		c.buf = append(c.buf[:n], make([]uint64, d)...)
	}
	c.buf = c.buf[:cap(c.buf)]
	for i := n; i < len(c.buf); i++ {
		c.buf[i] = c.pcg.Uint64()
	}
	c.pos = 0
}

// acceptThresholds turns acceptance probabilities into thresholds on a
// 53-bit uniform draw u: float64(u) / 2^53 < p, the rand.Float64 test, holds
// exactly when u < ceil(p x 2^53) (u and p x 2^53 are exact in float64).
func acceptThresholds(acc []float64) []uint64 {
	t := make([]uint64, len(acc))
	for i, p := range acc {
		t[i] = uint64(math.Ceil(p * (1 << 53)))
	}
	return t
}
