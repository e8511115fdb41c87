package serve

// vllmScheduler is one vLLM V1 Scheduler.schedule per step (vllm-project/vllm
// `vllm/v1/core/sched/scheduler.py` @ b4622cf): running requests first,
// then, only if nothing was preempted, waiting requests in order while
// budget and max_num_seqs allow, the last chunked to the remaining
// budget. A request stays in running from admission to its end, prefill
// chunks included; the newest running request is preempted when the KV
// cache is short. With long_prefill_token_threshold (vllmLongPrefill) no
// request gets more prefill tokens than it in one step, in either pass.
//
// With --prefill-schedule-interval N > 1 (Config.PrefillScheduleInterval)
// prefill work runs only on every N-th step of a DP wave (see cadence).
type vllmScheduler struct {
	budget, maxSeqs int     // max_num_batched_tokens, max_num_seqs
	chunk           int     // long_prefill_token_threshold in effect; 0 = none
	running         []int32 // admitted, in admission order

	// The prefill cadence: interval is prefill_schedule_interval where it
	// applies (vllmInterval; 0 or 1 = never throttled), steps the DP
	// wave's step counter at this step (set by the DP ranks' loop through
	// setSteps, else counted here: own), and bound the scheduler's
	// prefill_capacity_bound.
	interval, steps int
	own, bound      bool
}

func newVLLMScheduler(c *Config) scheduler {
	return &vllmScheduler{budget: c.MaxNumBatchedTokens, maxSeqs: c.MaxNumSeqs, chunk: vllmLongPrefill(c),
		interval: vllmInterval(c), own: true, running: make([]int32, 0, 256)}
}

// vllmInterval is the prefill_schedule_interval vLLM applies under c:
// Config.PrefillScheduleInterval on an engine of DP ranks (Memory.Groups
// > 1), 1 otherwise. vLLM's throttle signal comes from the DP engine core
// alone (vllm-project/vllm `vllm/v1/engine/core.py` @ 00080ee:
// EngineCore._should_throttle_prefills returns False, "Overridden by the
// DP engine core; never throttles otherwise"); PR #54627, which would
// apply it to one engine, is open (2026-09). A disaggregated run's pools
// are not given it (their DP ranks are pooled; not modelled).
func vllmInterval(c *Config) int {
	if c.Memory.Groups <= 1 || c.Disagg != nil {
		return 1
	}
	return max(c.PrefillScheduleInterval, 1)
}

// setSteps gives the scheduler the DP wave's step counter for the next
// step (DPEngineCoreProc.step_counter, the same on every rank).
func (s *vllmScheduler) setSteps(n int) { s.steps, s.own = n, false }

// throttled reports whether this step is off the prefill cadence
// (DPEngineCoreProc._should_throttle_prefills @ 00080ee:
// prefill_schedule_interval > 1 and step_counter % interval != 0; the
// counter counts the wave's steps from 0, so a wave's first step takes
// prefills). A scheduler that counts its own steps (the DP ranks pooled
// under one scheduler) starts a wave when it holds nothing; vLLM ends a
// wave only at its every-32-step DP sync (_has_global_unfinished_reqs),
// a tail not modelled.
func (s *vllmScheduler) throttled() bool {
	if s.interval <= 1 {
		return false
	}
	if s.own {
		if len(s.running) == 0 {
			s.steps = 0
		}
		defer func() { s.steps++ }()
	}
	return s.steps%s.interval != 0
}

// deferPrefills is the scheduler's defer_prefills for this step (vLLM's
// DP prefill balancing, vllm-project/vllm PR #44558, merged 2026-06;
// scheduler.py as quoted in PR #54627 and mirrored by vllm-ascend's
// patch_scheduler.py): off the cadence, unless the last step that took
// prefills left requests waiting (prefill_capacity_bound), and only while
// some running request decodes: with none there is nothing to run in the
// prefills' place, so they proceed.
func (s *vllmScheduler) deferPrefills(in *instance) bool {
	if !s.throttled() || s.bound {
		return false
	}
	for _, r := range s.running {
		if in.reqs[r].decoding() {
			return true
		}
	}
	return false
}

func (s *vllmScheduler) schedule(in *instance) {
	in.step.reset()
	hold := s.deferPrefills(in)
	// A deferred step holds the prefill chunks in progress too ("if
	// defer_prefills and request.is_prefill_chunk: continue").
	budget, preempted := in.runPass(&s.running, s.budget, s.chunk, hold, s)
	if preempted {
		return
	}
	for in.queued() > 0 && budget > 0 && len(s.running) < s.maxSeqs {
		if hold && in.pending(in.head()) > 1 {
			// "elif defer_prefills and num_computed_tokens <
			// request.num_tokens - 1: break": a request with more than
			// its last token to compute waits for the cadence.
			break
		}
		limit := budget
		if s.chunk > 0 {
			limit = min(limit, s.chunk)
		}
		r, n, ok := in.admit(limit)
		if !ok {
			break
		}
		s.running = append(s.running, r)
		budget -= n
	}
	if !hold {
		// "if not defer_prefills: self.prefill_capacity_bound =
		// bool(self.waiting)", in the waiting pass, which a step that
		// preempted skips.
		s.bound = in.queued() > 0
	}
}

// victim is the newest running request.
func (s *vllmScheduler) victim() int32 {
	v := s.running[len(s.running)-1]
	s.running = s.running[:len(s.running)-1]
	return v
}

func (s *vllmScheduler) prefilled(int32, bool) {}
func (s *vllmScheduler) finished(r int32)      { s.running = remove(s.running, r) }
func (s *vllmScheduler) holding() int          { return len(s.running) }
