package serve

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// dpRanks is a deployment of Memory.Groups > 1 attention groups run as
// the engine runs them: each group (DP rank) is an engine core of its own,
// with its own scheduler (its own token budget and max_num_seqs), its own
// KV cache of KVCapacity per GPU and its own waiting queue, and a front
// end that assigns each request to one rank (the engine row's balancer).
//
// The ranks step in lockstep: vLLM's DP engine cores run a step whenever
// any rank has work, an idle rank running a dummy batch so that the MoE
// layers' collectives have every rank (vllm-project/vllm
// `vllm/v1/engine/core.py` @ ac3cb2e, DPEngineCoreProc.run_busy_loop:
// "We are in a running state and so must execute a dummy pass if the
// model didn't execute any ready requests"), and the collectives of every
// MoE layer make a step end when the slowest rank's does. Each rank's
// batch is padded to the largest rank's tokens (sim's DP model,
// sim/config.go: "every rank costs the largest group's tokens"), so a step
// costs the batch of the rank with the most tokens as if every rank ran
// it: that batch is given to the coster once per rank, which sim spreads
// one copy per group.
//
// Not modelled: the ranks' host loops drifting apart between collectives,
// the coordinator's 100 ms stale view of the ranks' queues (the balancer
// reads them exactly), and dense models' DP ranks, which vLLM runs
// unsynchronised (no MoE collective): they are stepped in lockstep too.
type dpRanks struct {
	in    []*instance
	pick  func(d *dpRanks) int // the engine's balancer
	start int                  // the balancer's rotating first rank
	buf   []Seq                // a rank's batch once per rank, for the coster
	// steps is the DP wave's step counter (vLLM's
	// DPEngineCoreProc.step_counter: one per lockstep step, the same on
	// every rank, 0 when the ranks went idle), which vLLM's prefill
	// cadence reads (sched_vllm.go).
	steps int
}

// balancer is an engine's front-end load balancer over DP ranks: the rank
// that gets the next request. nil: the engine's DP ranks are pooled under
// one scheduler.
type balancer func(d *dpRanks) int

// vllmBalance is vLLM's DP load balancer with one API server
// (vllm-project/vllm `vllm/v1/engine/core_client.py` @ 00080ee,
// DPLBAsyncMPClient.get_core_engine_for_request): each rank's score is
// its requests in flight (waiting + running: this client's exact count),
// plus, while some wait, waiting x 6 x max(0, KV-cache usage - 0.5); the
// lowest score wins, ties to the first in a scan that starts one rank
// later at every request.
func vllmBalance(d *dpRanks) int {
	n := len(d.in)
	best, low := 0, math.Inf(1)
	for i := range n {
		idx := (d.start + i) % n
		in := d.in[idx]
		w := in.queued()
		score := float64(w + in.sched.holding())
		if w > 0 {
			u := in.kv.usage()
			if u.Total > 0 {
				score += float64(w) * 6 * math.Max(0, float64(u.Used)/float64(u.Total)-0.5)
			}
		}
		if score < low {
			best, low = idx, score
		}
	}
	d.start = (d.start + 1) % n
	return best
}

// cadenced is a scheduler that reads the DP wave's step counter (vLLM's
// prefill cadence).
type cadenced interface{ setSteps(n int) }

// enqueue hands r to the rank the balancer picks (a request reaches the
// engine core the front end chose for it).
func (d *dpRanks) enqueue(r int32) { d.in[d.pick(d)].enqueue(r) }

func (d *dpRanks) idle() bool {
	for _, in := range d.in {
		if !in.idle() {
			return false
		}
	}
	return true
}

// newDPRanks makes one instance per attention group, each with one
// group's KV cache and the engine's scheduler.
func (e *run) newDPRanks(pick balancer, shared bool) *dpRanks {
	cfg := e.cfg
	m := cfg.Memory
	m.Groups = 1
	d := &dpRanks{in: make([]*instance, cfg.Memory.Groups), pick: pick}
	for i := range d.in {
		var kv kvCache = newBlockPool(m, e.reqs).recovering(cfg.ownBlocks())
		if shared && !cfg.NoPrefixCache {
			kv = newPrefixPool(m, e.reqs)
		}
		d.in[i] = &instance{reqs: e.reqs, kv: kv, sched: engines[cfg.Engine].scheduler(cfg), fullISL: cfg.fullISL(),
			waiting: make([]int32, 0, 64), k: cfg.Spec.DraftTokens, lookahead: cfg.Spec.Lookahead}
	}
	return d
}

// loopDP is loop over DP ranks: every rank with work schedules its own
// step, the step is priced once for all (priceDP) and each rank's outcome
// is applied at its end.
func (e *run) loopDP(d *dpRanks) error {
	n := len(e.reqs)
	t := 0.0
	for e.completed < n {
		if d.idle() {
			d.steps = 0
			var ok bool
			if t, ok = e.client.wake(t, d); !ok {
				return fmt.Errorf("serve: internal error: %d requests unfinished with nothing to run", n-e.completed)
			}
			continue
		}
		e.client.stepStart(t)
		for _, in := range d.in {
			in.step.reset()
			if c, ok := in.sched.(cadenced); ok {
				c.setSteps(d.steps)
			}
			if !in.idle() {
				in.sched.schedule(in)
			}
		}
		d.steps++
		w, err := e.priceDP(d)
		if err != nil {
			return err
		}
		t += w
		done := 0
		for _, in := range d.in {
			if len(in.step.seqs) > 0 {
				done += e.finishStep(in, t)
			}
		}
		e.client.stepEnd(t, done, d)
	}
	return nil
}

// priceDP costs a lockstep step of the ranks: every rank is padded to
// the rank with the most tokens this step (ties: the most context), whose
// batch is priced as every rank's (see dpRanks); the step is booked with
// every rank's sequences.
func (e *run) priceDP(d *dpRanks) (float64, error) {
	seqs, prefills, most := 0, 0, 0
	var big *step
	bigTok, bigCtx := -1, -1
	for _, in := range d.in {
		s := &in.step
		if len(s.seqs) == 0 {
			continue
		}
		seqs += len(s.seqs)
		prefills += s.prefills
		most = max(most, len(s.seqs))
		tok, ctx := 0, 0
		for _, q := range s.seqs {
			tok += q.Query
			ctx += q.Context
		}
		if tok > bigTok || tok == bigTok && ctx > bigCtx {
			big, bigTok, bigCtx = s, tok, ctx
		}
	}
	if big == nil {
		return 0, fmt.Errorf("serve: internal error: a step scheduled nothing on %d DP ranks", len(d.in))
	}
	if rc, ok := e.coster.(repeatCoster); ok {
		gpu, cats := rc.StepCostN(big.seqs, len(d.in))
		return e.book(gpu, cats, seqs, prefills, most)
	}
	d.buf = d.buf[:0]
	for range d.in {
		d.buf = append(d.buf, big.seqs...)
	}
	gpu, cats := e.coster.StepCost(d.buf)
	return e.book(gpu, cats, seqs, prefills, most)
}

// repeatCoster is a StepCoster that prices n copies of a batch, one after
// another, as StepCost prices them written out (SimCoster.StepCostN).
type repeatCoster interface {
	StepCostN(seqs []Seq, n int) (unit.Seconds, [cost.NumCategories]unit.Seconds)
}

// preemptions sums the ranks' preemptions; kvPeak is the fullest rank's
// KV usage (its blocks are one GPU's) with every rank's prefix lookups.
func (d *dpRanks) preemptions() int {
	p := 0
	for _, in := range d.in {
		p += in.preemptions
	}
	return p
}

func (d *dpRanks) kvPeak() kvUsage {
	var u kvUsage
	q, h := 0, 0
	for _, in := range d.in {
		x := in.kv.usage()
		q, h = q+x.Queries, h+x.Hits
		if x.Peak >= u.Peak {
			u = x
		}
	}
	u.Queries, u.Hits = q, h
	return u
}
