package serve

import (
	"fmt"
	"math"
	"math/rand/v2"

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

// request is one request's state. Token bookkeeping follows vLLM's: tokens
// known = In + gen; computed = tokens in the KV cache; a request decodes
// when gen > 0 and computed = In + gen - 1, else it (re)fills In + gen -
// computed tokens.
type request struct {
	in, out  int32
	computed int32
	gen      int32
	blocks   int32
	arrival  float64
	send     float64
	ttft     float64
	lastTok  float64
	e2e      float64
}

func (r *request) decoding() bool { return r.gen > 0 && r.computed == r.in+r.gen-1 }

// need is the tokens a (re)fill still has to compute.
func (r *request) need() int { return int(r.in + r.gen - r.computed) }

// engine is the simulation state of one run.
type engine struct {
	cfg    *Config
	coster StepCoster
	rng    *rand.Rand
	reqs   []request

	running   []int32 // vLLM: every admitted request; SGLang: decoding requests
	waiting   []int32 // deque: waiting[wh:]
	wh        int
	chunked   int32 // SGLang: the request whose prefill is in progress, or -1
	chunkedIn bool  // SGLang: chunked has a chunk in this step

	freeBlocks, totalBlocks, peakBlocks int
	bs, lookahead, k                    int

	seqs     []Seq
	who      []int32
	prefills int // prefill chunks in seqs

	// outcomes
	steps, mixedSteps, preemptions int
	decodeSeqs, decodeSteps        int
	drafts, accepted               int
	cats                           [cost.NumCategories]unit.Seconds
	itl                            []weighted
	groups                         itlGroups
	completed                      int
}

// Run simulates one serving point and returns what `vllm bench serve`
// would report. It is a pure function of cfg and the coster: the only
// randomness is rand.New(rand.NewPCG(cfg.Seed, 1)), drawn in a fixed order
// (input lengths, output lengths, arrivals, then acceptance during the
// run). It returns a *FieldError for an invalid cfg and an
// *UnservableError when one request does not fit in the KV cache.
func Run(cfg Config, coster StepCoster) (*Result, error) {
	e, err := simulate(cfg, coster)
	if err != nil {
		return nil, err
	}
	return e.result(), nil
}

// simulate runs the point and returns the final engine state.
func simulate(cfg Config, coster StepCoster) (*engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := cfg.Workload
	n := w.Requests
	e := &engine{cfg: &cfg, coster: coster, rng: newRand(cfg.Seed), chunked: -1,
		bs: cfg.Memory.BlockSize, lookahead: cfg.Spec.Lookahead, k: cfg.Spec.DraftTokens}
	in, out := make([]int32, n), make([]int32, n)
	at := make([]float64, n)
	if w.Trace != nil {
		for i, r := range w.Trace {
			in[i], out[i], at[i] = int32(r.InputTokens), int32(r.OutputTokens), r.Arrival
		}
	} else {
		drawLengths(w, e.rng, in, out)
		arrivals(w, e.rng, at)
	}
	e.reqs = make([]request, n)
	maxTok := 0
	for i := range e.reqs {
		e.reqs[i] = request{in: in[i], out: out[i], arrival: at[i]}
		maxTok = max(maxTok, int(in[i])+int(out[i])-1)
	}
	perGroup := cfg.Memory.blocksPerGroup()
	peak := maxTok
	if e.k > 0 {
		peak += e.k + e.lookahead
	}
	if need := ceilDiv(peak, e.bs); need > perGroup {
		return nil, &UnservableError{Tokens: peak, Capacity: cfg.Memory.KVCapacity,
			Need: unit.Bytes(float64(need*e.bs) * float64(cfg.Memory.KVBytesPerToken))}
	}
	e.totalBlocks = perGroup * cfg.Memory.Groups
	e.freeBlocks = e.totalBlocks
	e.running = make([]int32, 0, 256)
	e.waiting = make([]int32, 0, n)
	e.itl = make([]weighted, 0, 1024)
	if err := e.loop(); err != nil {
		return nil, err
	}
	return e, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// loop runs steps until every request has finished. Requests are sent as
// `vllm bench serve` sends them: request i becomes ready at its arrival
// time and is sent once fewer than MaxConcurrency are in flight; the
// engine sees a request at the first step boundary after its send time.
func (e *engine) loop() error {
	n := len(e.reqs)
	c := e.cfg.Workload.MaxConcurrency
	if c == 0 {
		c = n
	}
	next, inflight := 0, 0
	t := 0.0
	for e.completed < n {
		if e.idle() {
			if next >= n {
				return fmt.Errorf("serve: internal error: %d requests unfinished with nothing to run", n-e.completed)
			}
			t = math.Max(t, e.reqs[next].arrival)
			for next < n && inflight < c && e.reqs[next].arrival <= t {
				e.reqs[next].send = e.reqs[next].arrival
				e.waiting = append(e.waiting, int32(next))
				next++
				inflight++
			}
			continue
		}
		free := c - inflight // slots free while this step runs
		t0 := t
		switch e.cfg.Engine {
		case VLLM:
			e.scheduleVLLM()
		case SGLang:
			e.scheduleSGLang()
		}
		if len(e.seqs) == 0 {
			return fmt.Errorf("serve: internal error: a step scheduled nothing (%d running, %d waiting)", len(e.running), len(e.waiting)-e.wh)
		}
		d, err := e.price()
		if err != nil {
			return err
		}
		t += d
		inflight -= e.finishStep(t)
		for next < n && inflight < c && e.reqs[next].arrival <= t {
			r := &e.reqs[next]
			if free > 0 {
				r.send = math.Max(r.arrival, t0)
				free--
			} else {
				r.send = t
			}
			e.waiting = append(e.waiting, int32(next))
			next++
			inflight++
		}
	}
	return nil
}

func (e *engine) idle() bool {
	return len(e.running) == 0 && e.wh == len(e.waiting) && e.chunked < 0
}

// price costs the scheduled step and returns its wall time: the coster's
// GPU time plus the host overhead, which async scheduling hides behind the
// GPU when the step has no prefill. The visible host time is booked as
// cost.Other.
func (e *engine) price() (float64, error) {
	gpu, cats := e.coster.StepCost(e.seqs)
	g := float64(gpu)
	if !(g > 0) || math.IsInf(g, 0) {
		return 0, fmt.Errorf("serve: step cost of %d sequences is %g s (want finite and > 0)", len(e.seqs), g)
	}
	decode := len(e.seqs) - e.prefills
	prefill := e.prefills > 0
	host := float64(e.cfg.Host.PerStep) + float64(e.cfg.Host.PerSeq)*float64(len(e.seqs))
	wall := g + host
	if e.cfg.AsyncScheduling && !prefill {
		wall = math.Max(g, host)
	}
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

// alloc reserves KV blocks so that r holds slots tokens; false when the
// cache has too few free blocks (vLLM KVCacheManager.allocate_slots).
func (e *engine) alloc(r int32, slots int) bool {
	if slots <= int(e.reqs[r].blocks)*e.bs {
		return true
	}
	return e.grow(r, slots)
}

// grow is alloc's slow path: the request needs more blocks.
func (e *engine) grow(r int32, slots int) bool {
	q := &e.reqs[r]
	need := ceilDiv(slots, e.bs) - int(q.blocks)
	if need > e.freeBlocks {
		return false
	}
	e.freeBlocks -= need
	q.blocks += int32(need)
	if used := e.totalBlocks - e.freeBlocks; used > e.peakBlocks {
		e.peakBlocks = used
	}
	return true
}

func (e *engine) free(r int32) {
	q := &e.reqs[r]
	e.freeBlocks += int(q.blocks)
	q.blocks = 0
}

// preemptNewest frees the newest request and puts it at the head of the
// waiting queue; its KV is recomputed when it is admitted again. The
// newest is the last running request, or with SGLang the request whose
// prefill is in progress when it is not in this step (it holds blocks
// that the decodes may need, and without it both could wait on each
// other).
func (e *engine) preemptNewest() int32 {
	var v int32
	if c := e.chunked; c >= 0 && !e.chunkedIn {
		v = c
		e.chunked = -1
	} else {
		v = e.running[len(e.running)-1]
		e.running = e.running[:len(e.running)-1]
	}
	e.free(v)
	e.reqs[v].computed = 0
	e.pushFront(v)
	e.preemptions++
	return v
}

func (e *engine) pushFront(r int32) {
	if e.wh > 0 {
		e.wh--
		e.waiting[e.wh] = r
		return
	}
	e.waiting = append(e.waiting, 0)
	copy(e.waiting[1:], e.waiting)
	e.waiting[0] = r
}

func (e *engine) add(r int32, q int, prefill bool) {
	e.seqs = append(e.seqs, Seq{Query: q, Context: int(e.reqs[r].computed), Prefill: prefill})
	e.who = append(e.who, r)
	if prefill {
		e.prefills++
	}
}

// reset empties the step being built.
func (e *engine) reset() {
	e.seqs, e.who, e.prefills = e.seqs[:0], e.who[:0], 0
}

// scheduleRunning is vLLM's first pass, also SGLang's decode step: each
// running request in order gets its decode (1+K) or the rest of its chunk,
// capped by the budget; when its blocks cannot be allocated the newest
// running request is preempted, until it fits or is itself the one
// preempted. It returns the budget left and whether anything was
// preempted.
func (e *engine) scheduleRunning(budget int) (int, bool) {
	preempted := false
	for i := 0; i < len(e.running) && budget > 0; i++ {
		r := e.running[i]
		q := &e.reqs[r]
		dec := q.decoding()
		n := q.need()
		slots := 0
		if dec {
			n = min(1+e.k, budget)
			slots = int(q.computed) + n + e.lookahead
		} else {
			n = min(n, budget)
			slots = int(q.computed) + n
		}
		self := false
		for !e.alloc(r, slots) {
			preempted = true
			if e.preemptNewest() == r {
				self = true
				break
			}
		}
		if self {
			break
		}
		e.add(r, n, !dec)
		budget -= n
	}
	return budget, preempted
}

// scheduleVLLM is one vLLM V1 Scheduler.schedule (vllm-project/vllm
// `vllm/v1/core/sched/scheduler.py` @ b4622cf):
// running requests first, then, only if nothing was preempted, waiting
// requests in order while budget and max_num_seqs allow, the last chunked
// to the remaining budget.
func (e *engine) scheduleVLLM() {
	e.reset()
	budget, preempted := e.scheduleRunning(e.cfg.MaxNumBatchedTokens)
	if preempted {
		return
	}
	for e.wh < len(e.waiting) && budget > 0 && len(e.running) < e.cfg.MaxNumSeqs {
		r := e.waiting[e.wh]
		q := &e.reqs[r]
		n := min(q.need(), budget)
		if !e.alloc(r, int(q.computed)+n) {
			break
		}
		e.wh++
		e.running = append(e.running, r)
		e.add(r, n, true)
		budget -= n
	}
}

// scheduleSGLang is one SGLang scheduler iteration (sgl-project/sglang
// `python/sglang/srt/managers/scheduler.py`):
// a prefill batch when there is prefill work that fits (the chunk in
// progress first, then waiting requests in order, min(max_prefill_tokens,
// chunked_prefill_size) tokens in all, less the running decodes with mixed
// chunks), run on its own unless MixedChunk puts the decodes in it; else
// one decode step of every running request. A decode that cannot get its
// KV retracts the newest request (preemptNewest; SGLang's retract_decode
// picks by progress, newest-first is a simplification).
func (e *engine) scheduleSGLang() {
	e.reset()
	budget := min(e.cfg.MaxPrefillTokens, e.cfg.MaxNumBatchedTokens)
	if e.cfg.MixedChunk {
		budget -= len(e.running)
	}
	admitted := 0
	open := true // whether new requests may join this batch
	e.chunkedIn = false
	if c := e.chunked; c >= 0 {
		open = false
		q := &e.reqs[c]
		if n := min(q.need(), budget); n > 0 && e.alloc(c, int(q.computed)+n) {
			e.chunkedIn = true
			e.add(c, n, true)
			budget -= n
			open = n == q.need()
		}
	}
	for open && e.wh < len(e.waiting) && budget > 0 {
		if m := e.cfg.MaxNumSeqs; m > 0 && len(e.running)+admitted >= m {
			break
		}
		r := e.waiting[e.wh]
		q := &e.reqs[r]
		n := min(q.need(), budget)
		if !e.alloc(r, int(q.computed)+n) {
			break
		}
		e.wh++
		admitted++
		e.add(r, n, true)
		budget -= n
		if n < q.need() {
			e.chunked, e.chunkedIn = r, true
			open = false
		}
	}
	if len(e.seqs) > 0 && !e.cfg.MixedChunk {
		return
	}
	if len(e.seqs) > 0 {
		// Mixed: the decodes join the prefill batch; their budget was
		// set aside above.
		e.scheduleRunning(len(e.running) * (1 + e.k))
		return
	}
	e.scheduleRunning(math.MaxInt)
}

// finishStep applies the step's outcome at time t: chunks computed, first
// tokens and decode tokens streamed (with speculative decoding, 1 +
// accepted tokens in one chunk), finished requests freed. It returns the
// number of requests that finished.
func (e *engine) finishStep(t float64) int {
	groups := &e.groups
	done := 0
	// Requests whose previous chunk came at the same time (usually all
	// decodes of the step) are counted as one run before grouping.
	runPrev, runN := 0.0, 0
	for i, s := range e.seqs {
		r := e.who[i]
		q := &e.reqs[r]
		emit := int32(0)
		if s.Prefill {
			q.computed += int32(s.Query)
			if q.computed == q.in+q.gen {
				emit = 1
				if e.cfg.Engine == SGLang {
					if e.chunked == r {
						e.chunked = -1
					}
					e.running = append(e.running, r)
				}
			} else if e.cfg.Engine == SGLang {
				e.chunked = r
			}
		} else {
			a := 0
			if s.Query > 1 {
				a = e.accept(s.Query - 1)
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
			e.free(r)
			e.remove(r)
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

// accept draws how many of d drafts are accepted: position i is accepted
// with its conditional acceptance if every earlier one was.
func (e *engine) accept(d int) int {
	if d <= 0 {
		return 0
	}
	acc := e.cfg.Spec.Acceptance
	a := 0
	for a < d {
		p := acc[0]
		if len(acc) > 1 {
			p = acc[a]
		}
		if e.rng.Float64() >= p {
			break
		}
		a++
	}
	e.drafts++
	e.accepted += a
	return a
}

// remove drops a finished request from the running list (order kept).
func (e *engine) remove(r int32) {
	for i, x := range e.running {
		if x == r {
			e.running = append(e.running[:i], e.running[i+1:]...)
			return
		}
	}
}
