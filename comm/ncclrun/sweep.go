package ncclrun

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/unit"
)

// Timing is one rank's time per collective: the median of the timed
// batches and the fastest and slowest. Its JSON is seconds (median_s,
// min_s, max_s), as before the fields were unit.Seconds.
type Timing struct {
	Median unit.Seconds `json:"median_s"`
	Min    unit.Seconds `json:"min_s"`
	Max    unit.Seconds `json:"max_s"`
}

// Measurement is one rank's result at one point and mode.
type Measurement struct {
	Rank       int        `json:"rank"`
	Collective Collective `json:"op"`
	Mode       Mode       `json:"mode"`
	Bytes      int64      `json:"bytes"`
	Count      int64      `json:"count"`
	Tokens     int        `json:"tokens,omitempty"`
	Iters      int        `json:"iters"`
	Time       Timing     `json:"time"` // out of place
	Wrong      int64      `json:"wrong"`
	InPlace    *Timing    `json:"inplace,omitempty"`
	// InPlaceWrong counts the wrong elements of the first in-place call.
	InPlaceWrong int64 `json:"inplace_wrong,omitempty"`
}

// Sweep measures every point of p on the group's ranks: for each point
// and mode, out of place (then in place when p.InPlace and NCCL can),
// timed and checked. say, when set, is called after each point with the
// local ranks' measurements. Every rank of the job must run the same plan:
// the collectives are matched across processes by their order.
func (g *Group) Sweep(p Plan, say func([]Measurement)) ([]Measurement, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	var out []Measurement
	for _, pt := range p.Points(g.world) {
		if err := g.reserve(pt); err != nil {
			return nil, err
		}
		byMode, err := g.measure(p, pt)
		if err != nil {
			return nil, err
		}
		for _, ms := range byMode {
			out = append(out, ms...)
			if say != nil {
				say(ms)
			}
		}
	}
	return out, nil
}

// reserve makes every rank's buffers large enough for pt (in place too).
func (g *Group) reserve(pt Point) error {
	in := InputCount(pt.Collective, pt.Count, g.world) * ElemBytes
	out := OutputCount(pt.Collective, pt.Count, g.world) * ElemBytes
	// In place, all-gather writes the whole output from the input's slot
	// and reduce-scatter reads the whole input: the one buffer is the
	// larger of the two.
	in, out = max(in, out, 16), max(in, out, 16)
	for _, r := range g.ranks {
		if err := r.ctx.SetCurrent(); err != nil {
			return err
		}
		var err error
		if r.sendCap < in {
			if r.send != 0 {
				cuda.Free(r.send)
				r.send, r.sendCap = 0, 0
			}
			if r.send, err = cuda.Alloc(in); err != nil {
				return err
			}
			r.sendCap = in
		}
		if r.recvCap < out {
			if r.recv != 0 {
				cuda.Free(r.recv)
				r.recv, r.recvCap = 0, 0
			}
			if r.recv, err = cuda.Alloc(out); err != nil {
				return err
			}
			r.recvCap = out
		}
	}
	n := max(InputCount(pt.Collective, pt.Count, g.world), OutputCount(pt.Collective, pt.Count, g.world))
	for _, r := range g.ranks {
		if int64(cap(r.host)) < n {
			r.host, r.want = make([]uint16, n), make([]uint16, n)
		}
	}
	return nil
}

// each runs f for every local rank at once, each on a thread of its own
// with the rank's context current (host-side fills, copies and checks of
// one rank do not wait for the others'), and returns the first error.
func (g *Group) each(f func(i int, r *rank) error) error {
	if len(g.ranks) == 1 {
		return f(0, g.ranks[0]) // the caller's thread already has the context
	}
	errs := make([]error, len(g.ranks))
	var wg sync.WaitGroup
	for i, r := range g.ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := r.ctx.SetCurrent(); err != nil {
				errs[i] = err
				return
			}
			errs[i] = f(i, r)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// launch enqueues one collective on every local rank (a group call when
// there are several), out of place or in place.
func (g *Group) launch(pt Point, inPlace bool) error {
	n := g.world
	several := len(g.ranks) > 1
	if several {
		if err := cuda.GroupStart(); err != nil {
			return err
		}
	}
	var first error
	for _, r := range g.ranks {
		send, recv := r.send, r.recv
		var err error
		switch pt.Collective {
		case AllReduce:
			if inPlace {
				recv = send
			}
			err = r.comm.AllReduce(send, recv, pt.Count, cuda.NCCLBfloat16, cuda.NCCLSum, r.stream)
		case AllGather:
			b := pt.Count / int64(n)
			if inPlace {
				send = recv + cuda.DevicePtr(int64(r.rank)*b*ElemBytes)
			}
			err = r.comm.AllGather(send, recv, b, cuda.NCCLBfloat16, r.stream)
		case ReduceScatter:
			b := pt.Count / int64(n)
			if inPlace {
				recv = send + cuda.DevicePtr(int64(r.rank)*b*ElemBytes)
			}
			err = r.comm.ReduceScatter(send, recv, b, cuda.NCCLBfloat16, cuda.NCCLSum, r.stream)
		case AllToAll:
			err = r.comm.AllToAll(send, recv, pt.Count/int64(n), cuda.NCCLBfloat16, ElemBytes, n, r.stream)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	if several {
		if err := cuda.GroupEnd(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// prepare writes every rank's input (and poisons its output with NaN).
// In place, the input goes where NCCL reads it from: the all-gather slot
// of the output buffer, or the whole input of reduce-scatter.
func (g *Group) prepare(pt Point, inPlace bool) error {
	inN := InputCount(pt.Collective, pt.Count, g.world)
	return g.each(func(_ int, r *rank) error {
		if err := r.ctx.SetCurrent(); err != nil {
			return err
		}
		if err := cuda.Memset8(r.recv, 0xff, r.recvCap); err != nil { // 0xffff: a NaN
			return err
		}
		if err := cuda.Memset8(r.send, 0xff, r.sendCap); err != nil {
			return err
		}
		host := r.host[:inN]
		g.pat.input(pt.Collective, r.rank, host)
		dst := r.send
		if inPlace && pt.Collective == AllGather {
			dst = r.recv + cuda.DevicePtr(int64(r.rank)*inN*ElemBytes)
		}
		if err := cuda.Synchronize(); err != nil {
			return err
		}
		if err := cuda.CopyToDevice(dst, host); err != nil {
			return err
		}
		// A pageable copy may return before its DMA lands.
		return cuda.Synchronize()
	})
}

// check counts each rank's wrong output elements.
func (g *Group) check(pt Point, inPlace bool) ([]int64, error) {
	outN := OutputCount(pt.Collective, pt.Count, g.world)
	wrongs := make([]int64, len(g.ranks))
	err := g.each(func(i int, r *rank) error {
		if err := r.ctx.SetCurrent(); err != nil {
			return err
		}
		src := r.recv
		if inPlace {
			switch pt.Collective {
			case AllReduce:
				src = r.send
			case ReduceScatter:
				src = r.send + cuda.DevicePtr(int64(r.rank)*outN*ElemBytes)
			}
		}
		got := r.host[:outN]
		if err := cuda.CopyFromDevice(got, src); err != nil {
			return err
		}
		want := r.want[:outN]
		g.pat.expect(pt.Collective, r.rank, pt.Count, want)
		wrongs[i] = wrong(got, want)
		return nil
	})
	if len(g.ranks) > 0 {
		g.ranks[0].ctx.SetCurrent()
	}
	return wrongs, err
}

func (g *Group) label(pt Point, m Mode, inPlace bool) string {
	s := fmt.Sprintf("%s %d B (%s, %d ranks", pt.Collective, pt.Bytes, m, g.world)
	if inPlace {
		s += ", in place"
	}
	return s + ")"
}

// measure times and checks one point in every mode of p: out of place
// in each mode, then in place in each mode. Out of place the inputs are
// written once and never change; every call writes the same result,
// which is checked after each mode's timing (after the graph replays in
// graph mode) with the output poisoned before. In place a call changes
// its own input (a reduction's result is the next call's input), so the
// first in-place call is checked, once, and the timings that follow run
// on whatever the buffers hold. Returns the measurements by mode.
func (g *Group) measure(p Plan, pt Point) ([][]Measurement, error) {
	out := make([][]Measurement, len(p.Modes))
	if err := g.prepare(pt, false); err != nil {
		return nil, err
	}
	for mi, m := range p.Modes {
		out[mi] = make([]Measurement, len(g.ranks))
		for i, r := range g.ranks {
			out[mi][i] = Measurement{Rank: r.rank, Collective: pt.Collective, Mode: m, Bytes: pt.Bytes, Count: pt.Count,
				Tokens: pt.Size.Tokens, Iters: pt.Iters}
		}
		if mi > 0 {
			if err := g.poison(); err != nil {
				return nil, err
			}
		}
		ts, err := g.time(p, pt, m, false)
		if err != nil {
			return nil, err
		}
		w, err := g.check(pt, false)
		if err != nil {
			return nil, err
		}
		for i := range out[mi] {
			out[mi][i].Time, out[mi][i].Wrong = ts[i], w[i]
		}
	}
	if !p.InPlace || !InPlaceOK(pt.Collective) {
		return out, nil
	}
	if err := g.prepare(pt, true); err != nil {
		return nil, err
	}
	if err := g.launch(pt, true); err != nil {
		return nil, err
	}
	if err := g.wait(g.label(pt, Eager, true)); err != nil {
		return nil, err
	}
	w, err := g.check(pt, true)
	if err != nil {
		return nil, err
	}
	for mi, m := range p.Modes {
		ts, err := g.time(p, pt, m, true)
		if err != nil {
			return nil, err
		}
		for i := range out[mi] {
			t := ts[i]
			out[mi][i].InPlace = &t
			if mi == 0 {
				out[mi][i].InPlaceWrong = w[i] // checked once, on the first call
			}
		}
	}
	return out, nil
}

// poison sets every rank's output buffer to NaN (the inputs stay).
func (g *Group) poison() error {
	return g.each(func(_ int, r *rank) error {
		if err := r.ctx.SetCurrent(); err != nil {
			return err
		}
		if err := cuda.Memset8(r.recv, 0xff, r.recvCap); err != nil {
			return err
		}
		return cuda.Synchronize()
	})
}

// time returns each local rank's seconds per collective.
func (g *Group) time(p Plan, pt Point, m Mode, inPlace bool) ([]Timing, error) {
	what := g.label(pt, m, inPlace)
	k := pt.Iters
	batch := func(run func() error) ([]float64, error) {
		for _, r := range g.ranks {
			if err := r.e0.Record(r.stream); err != nil {
				return nil, err
			}
		}
		if err := run(); err != nil {
			return nil, err
		}
		for _, r := range g.ranks {
			if err := r.e1.Record(r.stream); err != nil {
				return nil, err
			}
		}
		if err := g.wait(what); err != nil {
			return nil, err
		}
		dt := make([]float64, len(g.ranks))
		for i, r := range g.ranks {
			s, err := cuda.Elapsed(r.e0, r.e1)
			if err != nil {
				return nil, err
			}
			dt[i] = s / float64(k)
		}
		return dt, nil
	}
	calls := func(n int) func() error {
		return func() error {
			for i := 0; i < n; i++ {
				if err := g.launch(pt, inPlace); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// Warm-up (eager launches in both modes: it also makes NCCL's
	// connections before any capture).
	if err := calls(max(p.Warmup, 1))(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := g.wait(what + " warm-up"); err != nil {
		return nil, err
	}
	run := calls(k)
	if m == Graph {
		if err := g.capture(run); err != nil {
			return nil, fmt.Errorf("%s: capture: %w", what, err)
		}
		defer g.dropGraphs()
		run = g.replay
		for i := 0; i < 3; i++ {
			if err := run(); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	samples := make([][]float64, len(g.ranks))
	for i := 0; i < p.Repeats; i++ {
		dt, err := batch(run)
		if err != nil {
			return nil, err
		}
		for j, v := range dt {
			samples[j] = append(samples[j], v)
		}
	}
	out := make([]Timing, len(g.ranks))
	for j, s := range samples {
		sort.Float64s(s)
		out[j] = Timing{Median: unit.Seconds(s[len(s)/2]), Min: unit.Seconds(s[0]), Max: unit.Seconds(s[len(s)-1])}
	}
	return out, nil
}

// capture records run into one graph per local stream, as nccl-tests
// does (thread-local capture on every stream, then one graph each).
func (g *Group) capture(run func() error) error {
	for i, r := range g.ranks {
		if err := r.stream.BeginCapture(cuda.CaptureModeThreadLocal); err != nil {
			for _, q := range g.ranks[:i] {
				q.stream.EndCapture()
			}
			return err
		}
	}
	runErr := run()
	var first error
	g.graphs = make([]cuda.GraphExec, len(g.ranks))
	for i, r := range g.ranks {
		gr, err := r.stream.EndCapture()
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if runErr == nil && first == nil {
			r.ctx.SetCurrent()
			g.graphs[i], err = gr.Instantiate()
			if err != nil {
				first = err
			}
		}
		gr.Destroy()
	}
	if len(g.ranks) > 0 {
		g.ranks[0].ctx.SetCurrent()
	}
	if runErr != nil {
		return runErr
	}
	return first
}

func (g *Group) replay() error {
	for i, r := range g.ranks {
		if err := g.graphs[i].Launch(r.stream); err != nil {
			return err
		}
	}
	return nil
}
