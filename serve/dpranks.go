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
// SGLang's DP-attention ranks (--enable-dp-attention) run the same way:
// each rank is a Scheduler process of its own with its own KV pool
// (max_total_num_tokens per rank), running batch, waiting queue and
// new-token ratio, fed by the DataParallelController (sglangBalance);
// every scheduler iteration all-gathers the ranks' token counts, a rank
// with no batch runs an IDLE batch when any rank has tokens, and the
// ranks run CUDA graphs only when none extends (sgl-project/sglang
// `python/sglang/srt/managers/scheduler_dp_attn_mixin.py` @ 01ac007,
// prepare_mlp_sync_batch_raw: need_idle_batch, can_cuda_graph = min
// over ranks, is_extend_in_batch = max); the MoE layers' collectives then
// end the step with its slowest rank.
//
// Not modelled: the ranks' host loops drifting apart between collectives,
// the coordinator's 100 ms stale view of the ranks' queues (the balancer
// reads them exactly), and dense models' DP ranks, which vLLM runs
// unsynchronised (no MoE collective): they are stepped in lockstep too.
type dpRanks struct {
	in    []*instance
	pick  balancer // the engine's balancer
	start int      // the balancer's rotating first rank
	// of is, where not nil, the rank each request was given to (a
	// disaggregated prefill pool frees a request's KV on its rank when
	// the transfer ends).
	of  []int32
	buf []Seq // a rank's batch once per rank, for the coster
	// steps is the DP wave's step counter (vLLM's
	// DPEngineCoreProc.step_counter: one per lockstep step, the same on
	// every rank, 0 when the ranks went idle), which vLLM's prefill
	// cadence reads (sched_vllm.go).
	steps int
}

// balancer is an engine's front-end load balancer over DP ranks: the rank
// that gets request r. nil: the engine's DP ranks are pooled under one
// scheduler.
type balancer func(d *dpRanks, r int32) int

// vllmBalance is vLLM's DP load balancer with one API server
// (vllm-project/vllm `vllm/v1/engine/core_client.py` @ 00080ee,
// DPLBAsyncMPClient.get_core_engine_for_request): each rank's score is
// its requests in flight (waiting + running: this client's exact count),
// plus, while some wait, waiting x 6 x max(0, KV-cache usage - 0.5); the
// lowest score wins, ties to the first in a scan that starts one rank
// later at every request.
func vllmBalance(d *dpRanks, _ int32) int {
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

// sglangBalance is SGLang's DataParallelController with its default
// load_balance_method (sgl-project/sglang
// `python/sglang/srt/managers/data_parallel_controller.py` @ 000a3db,
// round_robin_scheduler: workers[round_robin_counter], the counter
// advancing by one per request; `python/sglang/srt/server_args.py` @
// 469c63e, _handle_load_balance_method: "auto" is round_robin outside
// PD disaggregation and on a PD decode server): the ranks in turn,
// whatever their load.
func sglangBalance(d *dpRanks, _ int32) int {
	i := d.start
	d.start = (d.start + 1) % len(d.in)
	return i
}

// sglangBootstrapBalance is a PD prefill server's DataParallelController:
// follow_bootstrap_room, the rank bootstrap_room % dp_size
// (data_parallel_controller.py @ 000a3db; server_args.py @ 469c63e
// makes it the prefill server's "auto", and maps a prefill server's
// legacy "round_robin" to it). SGLang's PD router draws each request's
// bootstrap_room at random (sgl-project/sglang
// `sgl-router/py_src/sglang_router/mini_lb.py` @ 097e50b,
// _generate_bootstrap_room: random.randint(0, 2**63 - 1)); here a fixed
// mix of the run's seed and the request's index (splitmix64) stands for
// that draw, so that the run stays a pure function of its Config and the
// run's own random stream is untouched.
func sglangBootstrapBalance(seed uint64) balancer {
	return func(d *dpRanks, r int32) int {
		z := seed + (uint64(r)+1)*0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		return int(z % uint64(len(d.in)))
	}
}

// oneRanker is a scheduler that runs as one of several DP ranks of its
// own (SGLang's: newDPRanks tells it after making it from the whole
// deployment's Config).
type oneRanker interface{ oneRank(ranks int) }

// extendSynced is a scheduler whose prefill cadence reads the ranks'
// synchronised is_extend_in_batch (SGLang's --prefill-decode-interval
// under DP attention): extendInBatch tells it that some rank's step had
// a prefill chunk.
type extendSynced interface{ extendInBatch() }

// cadenced is a scheduler that reads the DP wave's step counter (vLLM's
// prefill cadence).
type cadenced interface{ setSteps(n int) }

// enqueue hands r to the rank the balancer picks (a request reaches the
// engine core the front end chose for it).
func (d *dpRanks) enqueue(r int32) {
	i := d.pick(d, r)
	if d.of != nil {
		d.of[r] = int32(i)
	}
	d.in[i].enqueue(r)
}

func (d *dpRanks) idle() bool {
	for _, in := range d.in {
		if !in.idle() {
			return false
		}
	}
	return true
}

// newDPRanks makes one instance per attention group, each with one
// group's KV cache and the engine's scheduler (told it is one rank of
// Memory.Groups where it divides the deployment's limits by them).
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
		sc := engines[cfg.Engine].scheduler(cfg)
		if o, ok := sc.(oneRanker); ok {
			o.oneRank(cfg.Memory.Groups)
		}
		d.in[i] = &instance{reqs: e.reqs, kv: kv, sched: sc, fullISL: cfg.fullISL(),
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
		d.schedule()
		w, err := e.priceDP(e.coster, d)
		if err != nil {
			return err
		}
		t += w
		e.client.stepEnd(t, e.finishDP(d, t), d)
	}
	return nil
}

// schedule builds the ranks' lockstep step: every rank with work
// schedules its own batch (an idle rank runs none: its IDLE batch is the
// padding priceDP prices), and the ranks' synchronised flags are shared.
// It reports whether any rank scheduled a sequence.
func (d *dpRanks) schedule() bool {
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
	extend, some := false, false
	for _, in := range d.in {
		extend = extend || in.step.prefills > 0
		some = some || len(in.step.seqs) > 0
	}
	if extend {
		for _, in := range d.in {
			if x, ok := in.sched.(extendSynced); ok {
				x.extendInBatch()
			}
		}
	}
	return some
}

// finishDP applies every rank's step at its end t and returns the requests
// that finished.
func (e *run) finishDP(d *dpRanks, t float64) int {
	done := 0
	for _, in := range d.in {
		if len(in.step.seqs) > 0 {
			done += e.finishStep(in, t)
		}
	}
	return done
}

// priceDP costs a lockstep step of the ranks with coster c: every rank is padded to
// the rank with the most tokens this step (ties: the most context), whose
// batch is priced as every rank's (see dpRanks); the step is booked with
// every rank's sequences.
func (e *run) priceDP(c StepCoster, d *dpRanks) (float64, error) {
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
		tok, ctx := s.tokens, s.context
		if tok > bigTok || tok == bigTok && ctx > bigCtx {
			big, bigTok, bigCtx = s, tok, ctx
		}
	}
	if big == nil {
		return 0, fmt.Errorf("serve: internal error: a step scheduled nothing on %d DP ranks", len(d.in))
	}
	if rc, ok := c.(repeatCoster); ok {
		gpu, cats := rc.StepCostN(big.seqs, len(d.in))
		return e.book(gpu, cats, seqs, prefills, most)
	}
	d.buf = d.buf[:0]
	for range d.in {
		d.buf = append(d.buf, big.seqs...)
	}
	gpu, cats := c.StepCost(d.buf)
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
