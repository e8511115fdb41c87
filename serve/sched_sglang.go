package serve

import (
	"math"

	"github.com/moecast/moecast/internal/unit"
)

// sglangScheduler is one SGLang scheduler iteration per step
// (sgl-project/sglang `python/sglang/srt/managers/scheduler.py`): a
// prefill batch when there is prefill work that fits (the chunk in
// progress first, then waiting requests in order,
// min(max_prefill_tokens, chunked_prefill_size) tokens in all, less the
// running decodes with mixed chunks), run on its own unless MixedChunk
// puts the decodes in it; else one decode step of every running request.
// A decode that cannot get its KV retracts the newest request (SGLang's
// retract_decode picks by progress; newest-first is a simplification).
//
// With DP attention (Memory.Groups = G > 1) SGLang runs one scheduler per
// attention DP rank, and chunked_prefill_size is the budget of all of
// them: server_args.py divides it by dp_size
// (_handle_data_parallelism: "chunked_prefill_size //= dp_size ... to avoid
// MoE kernel issues"), so each rank's prefill batch holds
// min(max_prefill_tokens, chunked_prefill_size / G) tokens and each rank
// has its own chunk in progress. By default each rank is a scheduler of
// its own (dpranks.go: its own KV pool, queue, running batch and
// new-token ratio; oneRank); pooled (Config.PooledSGLangDP, and the pools
// of a disaggregated run) one scheduler here plays the G ranks' prefill
// batches from one waiting queue and one KV pool, a step being G such
// batches, one per rank (the step's chunks spread over the ranks,
// sim.Sim's pass).
type sglangScheduler struct {
	budget  int // per rank: min(max_prefill_tokens, chunked_prefill_size / ranks)
	ranks   int // attention DP ranks (Memory.Groups): one SGLang scheduler each
	maxSeqs int // max_running_requests; 0 = no limit
	mixed   bool

	// New-token-ratio admission (Config.ScheduleConservativeness > 0; see
	// admitsByRatio): the ratio now, its start, floor and decay per
	// decode step.
	ratioOn                  bool
	ratio, init, floor, step float64

	// --prefill-decode-interval: the rounds after a prefill step that
	// take no new prefill work (interval), and those left (deferred).
	interval, deferred int

	// --scheduler-recv-interval (receive): the interval, the skipper's
	// count, and in.enqueued at the last receive (the requests after it
	// wait in the scheduler's input queue).
	recvN, recvCount, seen int

	// prebuilt: a disaggregated decode instance, which admits
	// transferred requests without a prefill step (admitPrebuilt).
	prebuilt bool

	running []int32 // decoding requests, in the order their prefill ended
	chunked []int32 // the requests whose prefill is in progress, at most one per rank
	inStep  []bool  // whether chunked[i] has a chunk in this step
}

func newSGLangScheduler(c *Config) scheduler {
	ranks := max(c.Memory.Groups, 1)
	s := &sglangScheduler{budget: min(c.MaxPrefillTokens, max(c.MaxNumBatchedTokens/ranks, 1)), ranks: ranks,
		maxSeqs: c.MaxNumSeqs, mixed: c.MixedChunk, interval: c.PrefillDecodeInterval, recvN: c.SchedulerRecvInterval, running: make([]int32, 0, 256)}
	if cons := c.ScheduleConservativeness; cons > 0 {
		if ranks > 1 {
			// server_args.py _handle_data_parallelism: DP attention
			// scales schedule_conservativeness by 0.3.
			cons *= sglangDPConservativeness
		}
		// scheduler.py: init = min(0.7 x schedule_conservativeness, 1),
		// min = min(init x 0.14, 1), decay = (init - min) / 600
		// (global_config.py @ 025ea29: SGLANG_INIT_NEW_TOKEN_RATIO 0.7,
		// SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
		// SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600).
		s.ratioOn = true
		s.init = math.Min(sglangInitRatio*cons, 1)
		s.floor = math.Min(s.init*sglangMinRatioFactor, 1)
		s.step = (s.init - s.floor) / sglangRatioDecaySteps
		s.ratio = s.init
	}
	return s
}

// SGLang's admission constants (sgl-project/sglang
// `python/sglang/global_config.py` @ 025ea29 and
// `python/sglang/srt/managers/env_vars.py`: CLIP_MAX_NEW_TOKENS_ESTIMATION
// 4096).
const (
	sglangInitRatio       = 0.7
	sglangMinRatioFactor  = 0.14
	sglangRatioDecaySteps = 600
	sglangRetractSteps    = 20   // retract_decode_steps
	sglangClipNewTokens   = 4096 // CLIP_MAX_NEW_TOKENS_ESTIMATION

	// sglangDPConservativeness scales schedule_conservativeness under DP
	// attention (`python/sglang/srt/server_args.py`,
	// _handle_data_parallelism: "self.schedule_conservativeness =
	// self.schedule_conservativeness * 0.3").
	sglangDPConservativeness = 0.3
)

// remTotal is SGLang's PrefillAdder.rem_total_tokens before this batch's
// admissions (`python/sglang/srt/managers/schedule_policy.py`): the
// available KV slots plus the radix cache's evictable ones (cached tokens
// no request holds; a prefix cache's unreferenced blocks count as free
// here, the blocks of running requests, protected, do not) less each
// running request's expected further tokens, min(max_new_tokens -
// generated, 4096) x new_token_ratio.
// sglangAdmissible returns an *UnservableError when SGLang's new-token-
// ratio admission could never take some request, not even into an empty
// cache: add_one_req needs its prompt plus min(output, 4096) tokens to be
// below rem_total_tokens, which an idle engine sets to its whole pool
// (remTotal). SGLang itself never queues such a request: the scheduler
// clips its max_new_tokens to the pool (scheduler.py
// handle_generate_request, max_req_len), which a benchmark with
// --ignore-eos would see as a shorter output; moecast reports the point
// unservable instead of simulating a different workload.
func sglangAdmissible(c *Config, reqs []request) error {
	if c.Engine != SGLang || c.ScheduleConservativeness <= 0 {
		return nil
	}
	need := 0
	for i := range reqs {
		need = max(need, int(reqs[i].in)+min(int(reqs[i].out), sglangClipNewTokens)+1)
	}
	m := c.Memory
	if have := m.blocksPerGroup() * m.BlockSize; need > have {
		return &UnservableError{Tokens: need, Capacity: m.KVCapacity,
			Need: unit.Bytes(float64(need) * float64(m.KVBytesPerToken))}
	}
	return nil
}

func (s *sglangScheduler) remTotal(in *instance) float64 {
	u := in.kv.usage()
	rem := float64((u.Total - u.Used) * u.BlockSize)
	for _, r := range s.running {
		q := &in.reqs[r]
		rem -= float64(min(q.out-q.gen, sglangClipNewTokens)) * s.ratio
	}
	return rem
}

// retracted sets new_token_ratio after a retraction as SGLang's
// retract_decode does (schedule_batch.py): (tokens generated + 20 x
// requests) / their max_new_tokens over the requests still running,
// at most 1.
func (s *sglangScheduler) retracted(in *instance) {
	gen, out := 0, 0
	for _, r := range s.running {
		gen += int(in.reqs[r].gen)
		out += int(in.reqs[r].out)
	}
	if out > 0 {
		s.ratio = math.Min(1, float64(gen+sglangRetractSteps*len(s.running))/float64(out))
	}
}

// SchedulerRecvSkipper's weights (sgl-project/sglang
// `python/sglang/srt/managers/scheduler_recv_skipper.py` @ 70310f0, with
// the defaults of SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_* in
// `python/sglang/srt/environ.py`): a DECODE or TARGET_VERIFY batch, or no
// batch, adds 1; any other batch (extend, mixed) adds 1000.
const (
	sglangRecvWeightDecode = 1
	sglangRecvWeightOther  = 1000
)

// receive is the start of SGLang's scheduler iteration, recv_requests:
// with --scheduler-recv-interval N > 1 the SchedulerRecvSkipper
// (scheduler_recv_skipper.py @ 70310f0, handle) adds the weight of the
// last batch's forward mode to its count and takes the requests waiting
// in the input queue only when the count reaches N, then restarts it at
// 0. A request that arrives while others decode thus waits up to N-1
// decode steps; after an extend or mixed batch the next iteration
// receives. An idle scheduler (no batch to run) spins with weight 1 per
// iteration, microseconds each, so it receives at once here. With N <= 1
// (the default; maybe_create makes no skipper) every iteration receives.
// in.step still holds the last step when this runs.
func (s *sglangScheduler) receive(in *instance) {
	if s.recvN > 1 {
		w := sglangRecvWeightDecode
		if in.step.prefills > 0 {
			w = sglangRecvWeightOther
		}
		s.recvCount += w
		if s.recvCount < s.recvN && (s.holding() > 0 || s.waiting(in) > 0) {
			return
		}
		s.recvCount = 0
	}
	s.seen = in.enqueued
}

// waiting is the requests of in's queue the scheduler has received:
// those enqueued since the last receive are at its tail.
func (s *sglangScheduler) waiting(in *instance) int { return in.queued() - (in.enqueued - s.seen) }

func (s *sglangScheduler) schedule(in *instance) {
	s.receive(in)
	in.step.reset()
	if s.deferred > 0 {
		// --prefill-decode-interval (sgl-project/sglang PR #35017,
		// scheduler.py _should_defer_prefill and
		// _arm_prefill_decode_interval @ 20621aa): each of the rounds
		// after a prefill batch skips get_new_batch_prefill, the chunk in
		// progress included, and runs the decode batch. A round with no
		// decode to run is an idle round of the scheduler loop, which
		// takes no GPU step: the countdown runs out at once.
		if len(s.running) > 0 {
			s.deferred--
			s.decode(in)
			return
		}
		s.deferred = 0
	}
	defer func() {
		if in.step.prefills > 0 {
			// Armed by any extend (or mixed) batch; with DP attention
			// by the ranks' synchronised is_extend_in_batch, which the
			// one pooled scheduler here sees as its own step (per-rank
			// schedulers: extendInBatch).
			s.deferred = s.interval
		}
	}()
	per := s.budget
	if s.mixed {
		// Each rank sets aside its own running decodes.
		per -= ceilDiv(len(s.running), s.ranks)
	}
	admitted := 0
	clear(s.inStep)
	if s.ratioOn && len(s.running) == 0 && len(s.chunked) == 0 {
		// Idle: SGLang resets the ratio when it has no batch to run.
		s.ratio = s.init
	}
	var pre []int32
	if s.prebuilt {
		pre = s.admitPrebuilt(in)
		defer func() {
			// They decode from the next step on; this step computes the
			// token the prefill instance sampled.
			for _, r := range pre {
				in.add(r, 1, false)
			}
			s.running = append(s.running, pre...)
		}()
	}
	rem := 0.0
	if s.ratioOn && s.waiting(in) > 0 {
		rem = s.remTotal(in)
	}
	chunked := len(s.chunked) // the chunks in progress before this step
ranks:
	for rank := 0; rank < s.ranks; rank++ {
		budget := per
		open := true // whether new requests may join this rank's batch
		if rank < chunked {
			open = false
			c := s.chunked[rank]
			q := &in.reqs[c]
			if n := min(q.need(), budget); n > 0 && in.alloc(c, int(q.computed)+n) {
				s.inStep[rank] = true
				in.add(c, n, true)
				budget -= n
				rem -= float64(n) // add_chunked_req: _update_prefill_budget(0, chunk, 0)
				open = n == q.need()
			}
		}
		for open && s.waiting(in) > 0 && budget > 0 {
			if s.maxSeqs > 0 && len(s.running)+admitted >= s.maxSeqs {
				break ranks
			}
			var newTokens float64
			locked := 0
			if s.ratioOn {
				// add_one_req (`python/sglang/srt/managers/
				// schedule_policy.py`, PrefillAdder): extend_input_len,
				// the prompt less its cached prefix, plus
				// min(max_new_tokens, 4096) must be below
				// rem_total_tokens, the free and evictable KV less the
				// offsets; locking the prefix's radix nodes
				// (_lock_node, inc_lock_ref) takes the part no request
				// held out of the evictable size, and the check is made
				// again. An admitted whole prompt then reserves its
				// extend and new tokens, a chunked one its chunk only.
				head := in.head()
				q := &in.reqs[head]
				newTokens = float64(min(q.out-q.gen, sglangClipNewTokens))
				extend := q.need()
				if q.computed == 0 {
					extend -= in.kv.lookup(head)
					locked = in.kv.unheld(head)
				}
				if float64(extend)+newTokens >= rem-float64(locked) {
					break ranks
				}
			}
			r, n, ok := in.admit(budget)
			if !ok {
				break ranks
			}
			admitted++
			budget -= n
			rem -= float64(n + locked)
			if n < in.reqs[r].need() {
				open = false // r is this rank's chunk in progress (prefilled)
			} else {
				rem -= newTokens
			}
		}
		if rank >= chunked && s.waiting(in) == 0 {
			break
		}
	}
	if len(in.step.seqs) > 0 && !s.mixed {
		return
	}
	if len(in.step.seqs) > 0 {
		// Mixed: the decodes join the prefill batch; their budget was
		// set aside above.
		in.runPass(&s.running, len(s.running)*(1+in.k), 0, false, s)
		return
	}
	s.decode(in)
}

// prebuilder is a scheduler that can run a disaggregated decode
// instance's prebuilt admission.
type prebuilder interface{ setPrebuilt() }

func (s *sglangScheduler) setPrebuilt() { s.prebuilt = true }

// oneRank makes s the scheduler of one of ranks DP-attention ranks, each
// a Scheduler process of its own (dpranks.go): its prefill budget is
// already the rank's (chunked_prefill_size / ranks) and its ratio the DP
// attention one; it plays one rank's batch, and --max-running-requests
// is the rank's share, max_running_requests // dp_size (SGLang's model
// runner; DefaultMaxRunning's derived limit is the ranks' sum, so that
// share is one rank's own).
func (s *sglangScheduler) oneRank(ranks int) {
	s.ranks = 1
	if s.maxSeqs > 0 && ranks > 1 {
		s.maxSeqs = max(s.maxSeqs/ranks, 1)
	}
}

// extendInBatch arms --prefill-decode-interval on every rank when any
// rank's step extends (the ranks' all-gathered is_extend_in_batch).
func (s *sglangScheduler) extendInBatch() { s.deferred = s.interval }

// admitPrebuilt takes the transferred requests at the head of the
// received queue straight into the running batch, as SGLang's decode
// server does: it builds a "fake completed prefill" from the transferred
// KV and the first token the prefill server sampled, with no forward
// (sgl-project/sglang `python/sglang/srt/disaggregation/decode.py`,
// get_new_prebuilt_batch: prepare_for_prebuilt_extend and
// process_prebuilt_extend; the decode event loop streams that batch's
// output without running it), and the requests join the decode batch.
// Here each joins this step's decode batch as a decode row at context
// prompt - 1, which computes the last prompt token's KV and emits the
// first token: no prefill batch (and no eager step) interrupts the
// decodes; the first token comes one decode step after SGLang streams
// it. It stops at a request to recompute (preempted after its first
// token), at max_running_requests and when the KV cache is short.
func (s *sglangScheduler) admitPrebuilt(in *instance) []int32 {
	var pre []int32
	for s.waiting(in) > 0 {
		r := in.head()
		q := &in.reqs[r]
		if q.gen > 0 || q.computed > 0 || (s.maxSeqs > 0 && len(s.running)+len(s.chunked)+len(pre) >= s.maxSeqs) {
			break
		}
		c := in.kv.lookup(r)
		if c != int(q.in)-1 || !in.alloc(r, c+1) {
			break
		}
		q.computed = int32(c)
		in.pop()
		pre = append(pre, r)
	}
	return pre
}

// decode is one decode batch of every running request, with the
// new-token ratio's update (update_running_batch).
func (s *sglangScheduler) decode(in *instance) {
	_, preempted := in.runPass(&s.running, math.MaxInt, 0, false, s)
	if s.ratioOn {
		// update_running_batch: a decode batch decays the ratio, a
		// retraction resets it from the requests left.
		if preempted {
			s.retracted(in)
		} else {
			s.ratio = math.Max(s.ratio-s.step, s.floor)
		}
	}
}

// victim is a request whose prefill is in progress and has no chunk in
// this step (it holds blocks that the decodes may need, and without it
// both could wait on each other), else the newest running request.
func (s *sglangScheduler) victim() int32 {
	for i := len(s.chunked) - 1; i >= 0; i-- {
		if !s.inStep[i] {
			v := s.chunked[i]
			s.dropChunked(i)
			return v
		}
	}
	v := s.running[len(s.running)-1]
	s.running = s.running[:len(s.running)-1]
	return v
}

// dropChunked removes chunked[i], keeping the others' order and flags.
func (s *sglangScheduler) dropChunked(i int) {
	s.chunked = append(s.chunked[:i], s.chunked[i+1:]...)
	s.inStep = append(s.inStep[:i], s.inStep[i+1:]...)
}

// prefilled moves r to the decoding requests when its prefill is whole;
// otherwise r is a chunk in progress.
func (s *sglangScheduler) prefilled(r int32, whole bool) {
	i := 0
	for i < len(s.chunked) && s.chunked[i] != r {
		i++
	}
	if !whole {
		if i == len(s.chunked) {
			s.chunked = append(s.chunked, r)
			s.inStep = append(s.inStep, false)
		}
		return
	}
	if i < len(s.chunked) {
		s.dropChunked(i)
	}
	s.running = append(s.running, r)
}

func (s *sglangScheduler) finished(r int32) { s.running = remove(s.running, r) }

func (s *sglangScheduler) holding() int { return len(s.running) + len(s.chunked) }
