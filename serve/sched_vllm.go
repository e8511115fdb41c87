package serve

// vllmScheduler is one vLLM V1 Scheduler.schedule per step (vllm-project/vllm
// `vllm/v1/core/sched/scheduler.py` @ b4622cf): running requests first,
// then, only if nothing was preempted, waiting requests in order while
// budget and max_num_seqs allow, the last chunked to the remaining
// budget. A request stays in running from admission to its end, prefill
// chunks included; the newest running request is preempted when the KV
// cache is short. With long_prefill_token_threshold (vllmLongPrefill) no
// request gets more prefill tokens than it in one step, in either pass.
type vllmScheduler struct {
	budget, maxSeqs int     // max_num_batched_tokens, max_num_seqs
	chunk           int     // long_prefill_token_threshold in effect; 0 = none
	running         []int32 // admitted, in admission order
}

func newVLLMScheduler(c *Config) scheduler {
	return &vllmScheduler{budget: c.MaxNumBatchedTokens, maxSeqs: c.MaxNumSeqs, chunk: vllmLongPrefill(c),
		running: make([]int32, 0, 256)}
}

func (s *vllmScheduler) schedule(in *instance) {
	in.step.reset()
	budget, preempted := in.runPass(&s.running, s.budget, s.chunk, s)
	if preempted {
		return
	}
	for in.queued() > 0 && budget > 0 && len(s.running) < s.maxSeqs {
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
