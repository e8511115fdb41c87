package serve

import "math"

// sglangScheduler is one SGLang scheduler iteration per step
// (sgl-project/sglang `python/sglang/srt/managers/scheduler.py`): a
// prefill batch when there is prefill work that fits (the chunk in
// progress first, then waiting requests in order,
// min(max_prefill_tokens, chunked_prefill_size) tokens in all, less the
// running decodes with mixed chunks), run on its own unless MixedChunk
// puts the decodes in it; else one decode step of every running request.
// A decode that cannot get its KV retracts the newest request (SGLang's
// retract_decode picks by progress; newest-first is a simplification).
type sglangScheduler struct {
	budget  int // min(max_prefill_tokens, chunked_prefill_size)
	maxSeqs int // max_running_requests; 0 = no limit
	mixed   bool

	// New-token-ratio admission (Config.ScheduleConservativeness > 0; see
	// admitsByRatio): the ratio now, its start, floor and decay per
	// decode step.
	ratioOn                  bool
	ratio, init, floor, step float64

	running   []int32 // decoding requests, in the order their prefill ended
	chunked   int32   // the request whose prefill is in progress, or -1
	chunkedIn bool    // chunked has a chunk in this step
}

func newSGLangScheduler(c *Config) scheduler {
	s := &sglangScheduler{budget: min(c.MaxPrefillTokens, c.MaxNumBatchedTokens), maxSeqs: c.MaxNumSeqs,
		mixed: c.MixedChunk, running: make([]int32, 0, 256), chunked: -1}
	if c.ScheduleConservativeness > 0 {
		// scheduler.py: init = min(0.7 x schedule_conservativeness, 1),
		// min = min(init x 0.14, 1), decay = (init - min) / 600
		// (global_config.py @ 025ea29: SGLANG_INIT_NEW_TOKEN_RATIO 0.7,
		// SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
		// SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600).
		s.ratioOn = true
		s.init = math.Min(sglangInitRatio*c.ScheduleConservativeness, 1)
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
)

// remTotal is SGLang's PrefillAdder.rem_total_tokens before this batch's
// admissions (`python/sglang/srt/managers/schedule_policy.py`): the free
// KV slots less each running request's expected further tokens,
// min(max_new_tokens - generated, 4096) x new_token_ratio.
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

func (s *sglangScheduler) schedule(in *instance) {
	in.step.reset()
	budget := s.budget
	if s.mixed {
		budget -= len(s.running)
	}
	admitted := 0
	open := true // whether new requests may join this batch
	s.chunkedIn = false
	if s.ratioOn && len(s.running) == 0 && s.chunked < 0 {
		// Idle: SGLang resets the ratio when it has no batch to run.
		s.ratio = s.init
	}
	rem := 0.0
	if s.ratioOn && in.queued() > 0 {
		rem = s.remTotal(in)
	}
	if c := s.chunked; c >= 0 {
		open = false
		q := &in.reqs[c]
		if n := min(q.need(), budget); n > 0 && in.alloc(c, int(q.computed)+n) {
			s.chunkedIn = true
			in.add(c, n, true)
			budget -= n
			open = n == q.need()
		}
	}
	for open && in.queued() > 0 && budget > 0 {
		if s.maxSeqs > 0 && len(s.running)+admitted >= s.maxSeqs {
			break
		}
		var newTokens float64
		if s.ratioOn {
			// add_one_req: the prompt plus min(max_new_tokens, 4096) must
			// fit in what is left; an admitted whole prompt then reserves
			// both, a chunked one its chunk only.
			q := &in.reqs[in.head()]
			newTokens = float64(min(q.out-q.gen, sglangClipNewTokens))
			if float64(q.need())+newTokens >= rem {
				break
			}
		}
		r, n, ok := in.admit(budget)
		if !ok {
			break
		}
		admitted++
		budget -= n
		rem -= float64(n)
		if n < in.reqs[r].need() {
			s.chunked, s.chunkedIn = r, true
			open = false
		} else {
			rem -= newTokens
		}
	}
	if len(in.step.seqs) > 0 && !s.mixed {
		return
	}
	if len(in.step.seqs) > 0 {
		// Mixed: the decodes join the prefill batch; their budget was
		// set aside above.
		in.runPass(&s.running, len(s.running)*(1+in.k), s)
		return
	}
	_, preempted := in.runPass(&s.running, math.MaxInt, s)
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

// victim is the request whose prefill is in progress when it has no chunk
// in this step (it holds blocks that the decodes may need, and without it
// both could wait on each other), else the newest running request.
func (s *sglangScheduler) victim() int32 {
	if c := s.chunked; c >= 0 && !s.chunkedIn {
		s.chunked = -1
		return c
	}
	v := s.running[len(s.running)-1]
	s.running = s.running[:len(s.running)-1]
	return v
}

// prefilled moves r to the decoding requests when its prefill is whole;
// otherwise r is the chunk in progress.
func (s *sglangScheduler) prefilled(r int32, whole bool) {
	if !whole {
		s.chunked = r
		return
	}
	if s.chunked == r {
		s.chunked = -1
	}
	s.running = append(s.running, r)
}

func (s *sglangScheduler) finished(r int32) { s.running = remove(s.running, r) }

func (s *sglangScheduler) holding() int {
	if s.chunked >= 0 {
		return len(s.running) + 1
	}
	return len(s.running)
}
