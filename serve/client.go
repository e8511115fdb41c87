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
	reqs            []request
	next            int // first request not yet sent
	inflight, limit int
	free            int     // slots free while the current step runs
	t0              float64 // the current step's start
	deps            *deps   // dependent requests (workload_deps.go); nil: none
}

func newClient(reqs []request, limit int) *client {
	if limit == 0 {
		limit = len(reqs)
	}
	return &client{reqs: reqs, limit: limit}
}

// wake is called when the engine has nothing to run at t: it sends every
// request ready at the next arrival (or at t if later) to in and returns
// that time; false when no request is left to send.
func (c *client) wake(t float64, in *instance) (float64, bool) {
	_, at, _, ok := c.peek()
	if !ok {
		return t, false
	}
	t = math.Max(t, at)
	for c.inflight < c.limit {
		r, at, h, ok := c.peek()
		if !ok || at > t {
			break
		}
		c.take(h)
		c.reqs[r].send = at
		in.enqueue(r)
		c.inflight++
	}
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
func (c *client) stepEnd(t float64, done int, in *instance) {
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
		in.enqueue(i)
		c.inflight++
	}
}
