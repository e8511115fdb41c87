package serve

// request is one request's state. Token bookkeeping follows vLLM's: tokens
// known = in + gen; computed = tokens in the KV cache; a request decodes
// when gen > 0 and computed = in + gen - 1, else it (re)fills in + gen -
// computed tokens. held is the KV slots the cache reserves for it (kvCache
// keeps it). The fields every step reads and writes come first, in the
// first 32 bytes (one cache line for any request of the table).
type request struct {
	in, out  int32
	computed int32
	gen      int32
	held     int32
	lastTok  float64
	arrival  float64
	send     float64
	ttft     float64
	e2e      float64
	prefix   []Segment // the request's content, for prefix caching (Request.Prefix)
	wait     float64   // Request.Wait
}

func (r *request) decoding() bool { return r.gen > 0 && r.computed == r.in+r.gen-1 }

// need is the tokens a (re)fill still has to compute.
func (r *request) need() int { return int(r.in + r.gen - r.computed) }

// scheduler is one engine's scheduling policy over an instance: which
// requests run in the next step and with how many tokens, and the
// requests it holds between steps (running, chunked). One implementation
// per engine, each in its own file (sched_<engine>.go), made by the
// engine's row (engineRow.scheduler).
type scheduler interface {
	// schedule builds in.step from in's waiting queue and the requests
	// the scheduler holds, preempting through in.preempt when the KV
	// cache is short. An empty step is an internal error.
	schedule(in *instance)
	// prefilled is called after a step for each prefill chunk of r in
	// it; whole is set when r's prompt (or recompute) is now complete and
	// its next step is a decode.
	prefilled(r int32, whole bool)
	// finished is called when r has generated its last token; the
	// scheduler drops it (its KV is already freed).
	finished(r int32)
	// holding is the number of requests the scheduler holds: admitted
	// and not finished (the instance is idle when it is 0 and nothing
	// waits).
	holding() int
}

// step is the batch one engine step runs: the sequences in the order the
// coster sees them and the request of each.
type step struct {
	seqs     []Seq
	who      []int32
	prefills int // prefill chunks in seqs
	// tokens and context sum the seqs' Query and Context (priceDP's
	// busiest rank).
	tokens, context int
}

func (s *step) reset() {
	s.seqs, s.who, s.prefills = s.seqs[:0], s.who[:0], 0
	s.tokens, s.context = 0, 0
}

// instance is one engine instance: a scheduler over a KV cache and a
// waiting queue, and the step it builds. Requests are indices into the
// run's request table, which instances share. Today a run drives one
// instance; a disaggregated or per-DP-rank run drives several
// (docs/decisions/0005-serve-design.md).
type instance struct {
	reqs    []request
	kv      kvCache
	sched   scheduler
	waiting []int32 // deque: waiting[wh:]
	wh      int
	// enqueued counts the requests handed to the instance (enqueue), so
	// that a scheduler can tell the ones it has received from those that
	// still sit in its input queue (SGLang's receive cadence); preempted
	// requests go back to the front and are not counted.
	enqueued int
	step     step

	k, lookahead int // Spec.DraftTokens, Spec.Lookahead
	// fullISL admits a waiting request only when its whole known
	// sequence fits in the free KV (vLLM's scheduler_reserve_full_isl,
	// Config.ReserveFullISL).
	fullISL     bool
	preemptions int
	// handoff, on a disaggregated prefill instance, collects the requests
	// whose prefill finished in a step (their KV held until transferred);
	// nil elsewhere.
	handoff *[]int32
}

func (in *instance) enqueue(r int32) {
	in.waiting = append(in.waiting, r)
	in.enqueued++
}

// queued is the number of requests waiting.
func (in *instance) queued() int { return len(in.waiting) - in.wh }

// head is the first waiting request; pop removes it.
func (in *instance) head() int32 { return in.waiting[in.wh] }
func (in *instance) pop()        { in.wh++ }

func (in *instance) idle() bool { return in.wh == len(in.waiting) && in.sched.holding() == 0 }

func (in *instance) pushFront(r int32) {
	if in.wh > 0 {
		in.wh--
		in.waiting[in.wh] = r
		return
	}
	in.waiting = append(in.waiting, 0)
	copy(in.waiting[1:], in.waiting)
	in.waiting[0] = r
}

// alloc makes r hold slots KV slots; false when the cache has too few
// free (vLLM KVCacheManager.allocate_slots).
func (in *instance) alloc(r int32, slots int) bool {
	if slots <= int(in.reqs[r].held) {
		return true
	}
	return in.kv.grow(r, slots)
}

// preempt frees v, which the scheduler has already dropped, and puts it
// at the head of the waiting queue; its KV is recomputed when it is
// admitted again.
func (in *instance) preempt(v int32) {
	in.kv.preempt(v)
	in.reqs[v].computed = 0
	in.pushFront(v)
	in.preemptions++
}

// add puts q tokens of r in the step.
func (in *instance) add(r int32, q int, prefill bool) {
	c := int(in.reqs[r].computed)
	in.step.seqs = append(in.step.seqs, Seq{Query: q, Context: c, Prefill: prefill})
	in.step.who = append(in.step.who, r)
	in.step.tokens += q
	in.step.context += c
	if prefill {
		in.step.prefills++
	}
}

// victimPicker chooses and drops the request to preempt.
type victimPicker interface {
	victim() int32
}

// runPass is vLLM's first pass over its running requests, also SGLang's
// decode step: each request of *running in order gets its decode (1+K)
// or the rest of its chunk, capped by the budget; when its KV cannot be
// allocated, p's victim is preempted until it fits or is itself the one
// preempted. A prefill chunk is also capped at chunk tokens when chunk >
// 0 (vLLM's long_prefill_token_threshold), and left out of the step when
// hold is set (vLLM's deferred prefills, sched_vllm.go). It returns the
// budget left and whether anything was preempted.
func (in *instance) runPass(running *[]int32, budget, chunk int, hold bool, p victimPicker) (int, bool) {
	reqs, k, lookahead := in.reqs, in.k, in.lookahead
	preempted := false
	for i := 0; i < len(*running) && budget > 0; i++ {
		r := (*running)[i]
		q := &reqs[r]
		dec := q.decoding()
		if hold && !dec {
			continue
		}
		var n, slots int
		if dec {
			n = min(1+k, budget)
			slots = int(q.computed) + n + lookahead
		} else {
			n = min(q.need(), budget)
			if chunk > 0 {
				n = min(n, chunk)
			}
			slots = int(q.computed) + n
		}
		self := false
		for slots > int(q.held) && !in.kv.grow(r, slots) {
			preempted = true
			v := p.victim()
			in.preempt(v)
			if v == r {
				self = true
				break
			}
		}
		if self {
			break
		}
		in.add(r, n, !dec)
		budget -= n
	}
	return budget, preempted
}

// pending is the tokens the waiting request r would compute on
// admission: its known tokens less those computed, or, for a request with
// none computed, those the cache holds (kvCache.lookup, which admit
// repeats).
func (in *instance) pending(r int32) int {
	q := &in.reqs[r]
	c := q.computed
	if c == 0 {
		c = int32(in.kv.lookup(r))
	}
	return int(q.in + q.gen - c)
}

// admit takes the head of the waiting queue into the step with at most
// budget tokens of its prefill, if its KV can be allocated, and returns
// it and the tokens scheduled; ok is false (and the queue unchanged) when
// the cache is short. Prompt tokens the cache already holds
// (kvCache.lookup) count as computed.
func (in *instance) admit(budget int) (r int32, n int, ok bool) {
	r = in.head()
	q := &in.reqs[r]
	c := q.computed
	if c == 0 {
		c = int32(in.kv.lookup(r))
	}
	n = min(int(q.in+q.gen-c), budget)
	if in.fullISL && !in.kv.fits(r, int(q.in+q.gen)) {
		return r, 0, false
	}
	if !in.alloc(r, int(c)+n) {
		return r, 0, false
	}
	q.computed = c
	in.pop()
	in.add(r, n, true)
	return r, n, true
}

// remove drops r from list (order kept).
func remove(list []int32, r int32) []int32 {
	for i, x := range list {
		if x == r {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}
