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

	running   []int32 // decoding requests, in the order their prefill ended
	chunked   int32   // the request whose prefill is in progress, or -1
	chunkedIn bool    // chunked has a chunk in this step
}

func newSGLangScheduler(c *Config) scheduler {
	return &sglangScheduler{budget: min(c.MaxPrefillTokens, c.MaxNumBatchedTokens), maxSeqs: c.MaxNumSeqs,
		mixed: c.MixedChunk, running: make([]int32, 0, 256), chunked: -1}
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
		r, n, ok := in.admit(budget)
		if !ok {
			break
		}
		admitted++
		budget -= n
		if n < in.reqs[r].need() {
			s.chunked, s.chunkedIn = r, true
			open = false
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
	in.runPass(&s.running, math.MaxInt, s)
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
