package serve

import "math"

// client is `vllm bench serve`'s sender (vllm-project/vllm
// `vllm/benchmarks/serve.py` @ def9ce8): request i is ready at its arrival
// time and is sent once fewer than limit requests are in flight (the
// semaphore of --max-concurrency); the engine sees a sent request at its
// first step boundary after the send. With every arrival at t = 0 and a
// limit this is the closed loop; with gamma arrivals and no limit, the
// open loop.
type client struct {
	fe              frontEnd
	reqs            []request
	next            int // first request not yet sent
	inflight, limit int
	free            int     // slots free while the current step runs
	t0              float64 // the current step's start
	deps            *deps   // dependent requests (workload_deps.go); nil: none
	// ahead: the engine builds a step while the previous one runs
	// (Config.ScheduleAhead with AsyncScheduling): at a step's end only
	// the requests that reached the engine by the step's start join the
	// next step; the rest wait one step more.
	ahead bool
}

func newClient(reqs []request, limit int, fe FrontEnd, ahead bool) *client {
	if limit == 0 {
		limit = len(reqs)
	}
	c := &client{reqs: reqs, limit: limit, fe: newFrontEnd(reqs, fe), ahead: ahead}
	if ahead && !c.fe.on {
		// the hand-over times are needed to hold requests back
		c.fe.on, c.fe.q = true, make([]pending, 0, 64)
	}
	return c
}

// wake is called when the engine has nothing to run at t: it moves the
// clock to the next event, the client's next send or the front end's next
// delivery (the earlier; a send at a tie), does it, and returns that time;
// false when nothing is left to send or deliver.
func (c *client) wake(t float64, in sink) (float64, bool) {
	send, deliver := math.Inf(1), math.Inf(1)
	if _, at, _, ok := c.peek(); ok && c.inflight < c.limit {
		send = math.Max(t, at)
	}
	if at, ok := c.fe.nextAt(); ok {
		deliver = math.Max(t, at)
	}
	switch {
	case math.IsInf(send, 1) && math.IsInf(deliver, 1):
		return t, false
	case send <= deliver:
		t = send
		for c.inflight < c.limit {
			r, at, h, ok := c.peek()
			if !ok || at > t {
				break
			}
			c.take(h)
			c.reqs[r].send = at
			c.fe.submit(r, in)
			c.inflight++
		}
	default:
		t = deliver
	}
	c.fe.deliver(t, in)
	return t, true
}

// stepStart is called as a step starts at t0.
func (c *client) stepStart(t0 float64) {
	c.free = c.limit - c.inflight
	c.t0 = t0
}

// stepEnd is called when the step ends at t with done requests finished:
// the requests that arrived during the step are sent, at their arrival if
// a slot was free then, else at t when a finished request freed one, and
// queued at in.
func (c *client) stepEnd(t float64, done int, in sink) {
	c.inflight -= done
	for c.inflight < c.limit {
		i, at, h, ok := c.peek()
		if !ok || at > t {
			break
		}
		c.take(h)
		r := &c.reqs[i]
		if c.free > 0 {
			r.send = math.Max(at, c.t0)
			c.free--
		} else {
			r.send = t
		}
		c.fe.submit(i, in)
		c.inflight++
	}
	if c.ahead {
		// the next step was built when this one started (t0)
		c.fe.deliver(c.t0, in)
		return
	}
	c.fe.deliver(t, in)
}

// sink is where the front end hands a request to the engine: an instance's
// waiting queue, or the DP ranks' balancer (dpranks.go).
type sink interface{ enqueue(r int32) }

// frontEnd is the serving API server between the client and the engine
// core (vLLM's OpenAI server process, SGLang's TokenizerManager): it takes
// the requests one at a time, in the order sent, each for PerRequest plus
// PerInputToken per prompt token (tokenisation), and hands each to the
// engine core's input queue when done; the engine core drains that queue
// at its step boundaries (see FrontEnd for the sources). A zero FrontEnd
// hands every request over at its send.
type frontEnd struct {
	reqs          []request
	perReq, perTo float64
	on            bool
	free          float64   // when the API server is next idle
	q             []pending // processed or in processing, in order: q[qh:]
	qh            int
}

type pending struct {
	r  int32
	at float64 // when the API server hands r to the engine core
}

func newFrontEnd(reqs []request, f FrontEnd) frontEnd {
	on := f.PerRequest > 0 || f.PerInputToken > 0
	fe := frontEnd{reqs: reqs, perReq: float64(f.PerRequest), perTo: float64(f.PerInputToken), on: on}
	if on {
		fe.q = make([]pending, 0, 64)
	}
	return fe
}

// submit takes r at its send time: queued behind the requests the API
// server is still processing; without a front end r goes straight to in.
func (f *frontEnd) submit(r int32, in sink) {
	if !f.on {
		in.enqueue(r)
		return
	}
	q := &f.reqs[r]
	f.free = math.Max(f.free, q.send) + f.perReq + f.perTo*float64(q.in)
	if f.qh == len(f.q) {
		f.q, f.qh = f.q[:0], 0
	}
	f.q = append(f.q, pending{r: r, at: f.free})
}

// nextAt is when the next request held is handed over; false when none is.
func (f *frontEnd) nextAt() (float64, bool) {
	if f.qh == len(f.q) {
		return 0, false
	}
	return f.q[f.qh].at, true
}

// deliver hands every request processed by t to in's waiting queue.
func (f *frontEnd) deliver(t float64, in sink) {
	for f.qh < len(f.q) && f.q[f.qh].at <= t {
		in.enqueue(f.q[f.qh].r)
		f.qh++
	}
}
