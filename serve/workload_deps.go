package serve

import "container/heap"

// Dependent requests (Request.After): an agentic or multi-turn load's
// turn is ready when every request it waits for has finished, plus its
// Wait (the client's think or tool time): Mooncake's agentic traces'
// wait_for, delay and tool_wait_ms. Until then it is not sent, whatever
// its Arrival; once ready its arrival is that time.

// deps is the client's view of the dependencies: the unfinished count of
// each waiting request, the dependents of each request (CSR), and the
// requests made ready by finishes, earliest first.
type deps struct {
	left    []int32 // dependencies not finished yet; 0 for independent requests
	readyAt []float64
	start   []int32 // dependents of r: kids[start[r]:start[r+1]]
	kids    []int32
	ready   timedHeap
}

// newDeps indexes gen's dependencies; nil when there are none.
func newDeps(gen []Request) *deps {
	n := 0
	for _, g := range gen {
		n += len(g.After)
	}
	if n == 0 {
		return nil
	}
	d := &deps{left: make([]int32, len(gen)), readyAt: make([]float64, len(gen)), start: make([]int32, len(gen)+1), kids: make([]int32, n)}
	for i, g := range gen {
		d.left[i] = int32(len(g.After))
		for _, a := range g.After {
			d.start[a+1]++
		}
	}
	for i := range gen {
		d.start[i+1] += d.start[i]
	}
	fill := append([]int32(nil), d.start[:len(gen)]...)
	for i, g := range gen {
		for _, a := range g.After {
			d.kids[fill[a]] = int32(i)
			fill[a]++
		}
	}
	return d
}

// finished readies r's dependents whose last dependency r was, at t plus
// their wait.
func (c *client) finished(r int32, t float64) {
	d := c.deps
	for _, k := range d.kids[d.start[r]:d.start[r+1]] {
		d.readyAt[k] = max(d.readyAt[k], t)
		d.left[k]--
		if d.left[k] == 0 {
			at := d.readyAt[k] + c.reqs[k].wait
			c.reqs[k].arrival = at
			heap.Push(&d.ready, timed{at: at, r: k})
		}
	}
}

// peek is the next request to send and when it is ready: the earlier of
// the next independent request in arrival order and the earliest ready
// dependent; false when neither is left.
func (c *client) peek() (r int32, at float64, fromHeap, ok bool) {
	n := len(c.reqs)
	if c.deps != nil {
		for c.next < n && c.deps.left[c.next] > 0 {
			c.next++
		}
	}
	if c.next < n {
		r, at, ok = int32(c.next), c.reqs[c.next].arrival, true
	}
	if c.deps != nil && len(c.deps.ready) > 0 {
		if h := c.deps.ready[0]; !ok || h.at < at {
			return h.r, h.at, true, true
		}
	}
	return r, at, false, ok
}

// take removes the request peek returned.
func (c *client) take(fromHeap bool) {
	if fromHeap {
		heap.Pop(&c.deps.ready)
		return
	}
	c.next++
}

// timed is a request due at a time (a ready dependent, an arriving KV
// transfer).
type timed struct {
	at float64
	r  int32
}

// timedHeap orders timed requests by time, then index.
type timedHeap []timed

func (h timedHeap) Len() int { return len(h) }
func (h timedHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].r < h[j].r)
}
func (h timedHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timedHeap) Push(x any)   { *h = append(*h, x.(timed)) }
func (h *timedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
