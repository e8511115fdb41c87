package serve

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// Stats summarises one latency metric as `vllm bench serve` does: mean,
// median, population standard deviation and the 90th and 99th percentiles
// with numpy's default (linear) interpolation. All zero when there are no
// samples (vllm bench reports 0 then).
type Stats struct {
	Mean, Median, Std, P90, P99 unit.Seconds
}

// Result is one serving point: `vllm bench serve`'s result fields
// (vllm-project/vllm `vllm/benchmarks/serve.py` @ def9ce8, the dict
// benchmark() returns) plus what only a simulator knows.
type Result struct {
	RequestRate       float64 // offered, requests/s (+Inf: all sent at once)
	Requests          int
	Completed         int
	Duration          unit.Seconds // first send (t = 0) to the last token
	TotalInputTokens  int
	TotalOutputTokens int
	// LongestRequest is the longest request's input + output tokens.
	LongestRequest       int
	RequestThroughput    float64 // completed / duration, requests/s
	OutputThroughput     float64 // output tokens / duration, tokens/s
	TotalTokenThroughput float64 // (input + output tokens) / duration, tokens/s

	TTFT Stats // send to first token, per request
	TPOT Stats // (e2e - ttft) / (output - 1), per request with output > 1
	ITL  Stats // gaps between consecutive streamed chunks, pooled over requests
	E2EL Stats // send to last token, per request

	// MeanBatch is the mean number of decode (or verify) sequences over
	// the steps that hold at least one.
	MeanBatch   float64
	Steps       int
	MixedSteps  int // steps holding prefill chunks and decodes
	Preemptions int // vLLM preemptions / SGLang retractions (each recomputed)
	// KVPeakPerGPU is the peak KV-cache use per GPU, in whole blocks (the
	// pooled peak divided by Memory.Groups).
	KVPeakPerGPU unit.Bytes
	// Breakdown is the time per category summed over the steps (the
	// coster's categories; host time not hidden by async scheduling as
	// cost.Other). Idle time between steps is not in it.
	Breakdown [cost.NumCategories]unit.Seconds
	// MeanAcceptanceLength is vLLM's 1 + accepted / drafts (1 without
	// speculative decoding).
	MeanAcceptanceLength float64
	// PrefixCache is set when the run's KV cache cached prefixes (the load
	// describes shared content and Config.NoPrefixCache is off);
	// PrefixHitRate is then the prompt tokens found cached over those
	// looked up, on every admission (vLLM's prefix cache hit rate).
	PrefixCache   bool
	PrefixHitRate float64
	// Disagg is set for a disaggregated run (Config.Disagg).
	Disagg *DisaggResult
	// Interactivity is InferenceX's E2E interactivity, tokens/s: 1 / the
	// 90th percentile over requests of E2E latency / output tokens.
	Interactivity float64
	// Goodput is the requests per second that met Config.SLO (vllm bench
	// serve's request_goodput), GoodRequests their number; 0 without SLOs.
	Goodput      float64
	GoodRequests int

	// Overloaded is set for an open-loop point whose completions over the
	// second half of the arrival window fell more than 10% short of its
	// arrivals: the rate is beyond what the engine serves (or the run is
	// too short to reach a steady state). Its latency metrics grow with
	// the number of requests and should not be reported as a prediction.
	// Points with fewer than 20 arrivals in that window are not judged.
	Overloaded bool
	// ServedRate is the completion rate over that window, requests/s
	// (open loop only; 0 otherwise).
	ServedRate float64
}

// BreakdownShare is the share of each category in Breakdown (0 when empty).
func (r *Result) BreakdownShare() [cost.NumCategories]float64 {
	var s [cost.NumCategories]float64
	total := 0.0
	for _, v := range r.Breakdown {
		total += float64(v)
	}
	if total > 0 {
		for i, v := range r.Breakdown {
			s[i] = float64(v) / total
		}
	}
	return s
}

// Warnings lists what makes the point's numbers unfit to report.
func (r *Result) Warnings() []string {
	if !r.Overloaded {
		return nil
	}
	return []string{fmt.Sprintf("request rate %g/s is beyond capacity: requests completed at %.3g/s over the second half of the arrivals, so queues grow and latencies depend on the number of requests (%d)",
		r.RequestRate, r.ServedRate, r.Requests)}
}

// weighted is a value repeated n times (ITLs of requests streaming in the
// same step share a value).
type weighted struct {
	v float64
	n int
}

// itlGroups gathers one step's ITLs by the previous chunk's time: every
// request whose last chunk came at the same time has the same ITL. The
// first 16 distinct times are merged; later ones are kept one by one (the
// weighted list allows repeats).
type itlGroups struct {
	prev []float64
	n    []int
}

func (g *itlGroups) add(prev float64, n int) {
	for i := 0; i < len(g.prev) && i < 16; i++ {
		if g.prev[i] == prev {
			g.n[i] += n
			return
		}
	}
	g.prev = append(g.prev, prev)
	g.n = append(g.n, n)
}

// flush appends the step's ITLs at step end t and empties g.
func (g *itlGroups) flush(t float64, out *[]weighted) {
	for i, p := range g.prev {
		*out = append(*out, weighted{v: t - p, n: g.n[i]})
	}
	g.prev, g.n = g.prev[:0], g.n[:0]
}

// statsOf summarises plain samples (sorted in place).
func statsOf(x []float64) Stats {
	if len(x) == 0 {
		return Stats{}
	}
	w := make([]weighted, len(x))
	for i, v := range x {
		w[i] = weighted{v: v, n: 1}
	}
	return weightedStats(w)
}

// byValue orders weighted samples by value.
func byValue(a, b weighted) int {
	switch {
	case a.v < b.v:
		return -1
	case a.v > b.v:
		return 1
	}
	return 0
}

// radixMin is the fewest samples sortWeighted radix-sorts; fewer are
// sorted by comparison.
const radixMin = 256

// sortWeighted sorts w by value (the order of equal values is not
// kept): a least-significant-digit radix sort, a byte a pass, of the
// values' bits made order-preserving (sign bit flipped, all bits of a
// negative value flipped), skipping the bytes every sample shares. A run's
// ITL samples number about its steps: this is several times faster than
// a comparison sort there.
func sortWeighted(w []weighted) {
	n := len(w)
	if n < radixMin {
		slices.SortFunc(w, byValue)
		return
	}
	buf := getWeighted()
	if cap(buf) < n {
		buf = make([]weighted, n)
	}
	src, dst := w, buf[:n]
	defer putWeighted(buf)
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for i := range src {
			count[byte(radixKey(src[i].v)>>shift)]++
		}
		if count[byte(radixKey(src[0].v)>>shift)] == n {
			continue // every sample has this byte
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i := range src {
			d := byte(radixKey(src[i].v) >> shift)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &w[0] {
		copy(w, src)
	}
}

// weightedPool holds the sample buffers of finished runs: a run's ITL
// samples (run.itl) and sortWeighted's scratch, about 16 bytes a step,
// which a plan's hundreds of runs would otherwise each allocate, grow and
// leave to the garbage collector (most of its allocation).
var weightedPool sync.Pool

// getWeighted is an empty sample buffer, from the pool where it has one.
func getWeighted() []weighted {
	if b, ok := weightedPool.Get().(*[]weighted); ok {
		return (*b)[:0]
	}
	return make([]weighted, 0, 1024)
}

// putWeighted gives w's memory back to the pool; w is not used after.
func putWeighted(w []weighted) {
	if cap(w) == 0 {
		return
	}
	w = w[:0]
	weightedPool.Put(&w)
}

// radixKey is v's bits in an order that unsigned comparison keeps: the
// sign bit flipped, every bit of a negative value flipped, -0 as +0 (they
// compare equal).
func radixKey(v float64) uint64 {
	b := math.Float64bits(v)
	switch {
	case v == 0:
		return 1 << 63
	case b>>63 != 0:
		return ^b
	}
	return b | 1<<63
}

// weightedStats summarises weighted samples (reordered in place), exactly
// as numpy would on the expanded list. The percentiles' order statistics
// are found by selection (selectRanks) rather than a full sort.
func weightedStats(w []weighted) Stats { return weightedStatsBy(w, selectRanks) }

// weightedStatsBy is weightedStats with the values at 0-based ranks ks
// (ascending) of the expanded list found by values, out[i] for ks[i].
func weightedStatsBy(w []weighted, values func(w []weighted, ks []int, out []float64)) Stats {
	total, sum := 0, 0.0
	for _, s := range w {
		total += s.n
		sum += s.v * float64(s.n)
	}
	if total == 0 {
		return Stats{}
	}
	mean := sum / float64(total)
	ss := 0.0
	for _, s := range w {
		d := s.v - mean
		ss += d * d * float64(s.n)
	}
	// numpy's linear interpolation between the ranks lo and lo+1 around
	// p/100 x (total-1)
	ps := [...]float64{50, 90, 99}
	var los [len(ps)]int
	var fracs [len(ps)]float64
	var ranks [2 * len(ps)]int
	ks := ranks[:0]
	for i, p := range ps {
		h := p / 100 * float64(total-1)
		los[i] = int(math.Floor(h))
		fracs[i] = h - float64(los[i])
		ks = append(ks, los[i])
		if fracs[i] > 0 {
			ks = append(ks, los[i]+1)
		}
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	var vals [2 * len(ps)]float64
	values(w, ks, vals[:len(ks)])
	at := func(k int) float64 {
		i, _ := slices.BinarySearch(ks, k)
		return vals[i]
	}
	pct := func(i int) unit.Seconds {
		a := at(los[i])
		if frac := fracs[i]; frac > 0 {
			a += (at(los[i]+1) - a) * frac
		}
		return unit.Seconds(a)
	}
	return Stats{Mean: unit.Seconds(mean), Median: pct(0), Std: unit.Seconds(math.Sqrt(ss / float64(total))),
		P90: pct(1), P99: pct(2)}
}

// sortedRanks returns a weightedStatsBy values function that sorts w with
// sort and reads the ranks off the sorted list.
func sortedRanks(sort func([]weighted)) func(w []weighted, ks []int, out []float64) {
	return func(w []weighted, ks []int, out []float64) {
		sort(w)
		ranksOfSorted(w, ks, 0, out)
	}
}

// ranksOfSorted fills out[i] with the value at rank ks[i] - base of the
// expanded list of w, sorted by value.
func ranksOfSorted(w []weighted, ks []int, base int, out []float64) {
	j, cum := 0, base
	for _, s := range w {
		for j < len(ks) && ks[j] < cum+s.n {
			out[j] = s.v
			j++
		}
		cum += s.n
	}
}

// selectRanks finds the values at ranks ks (ascending, each below the
// total weight) of w's expanded list: a quickselect that follows only
// the parts holding a rank (Hoare's FIND, CACM 4(7), 1961), with a
// three-way partition around the median of three (equal values, common in
// ITLs, end in the middle part at once), falling back to sortWeighted on
// small parts and past a depth of 2 log2(n) + 8.
func selectRanks(w []weighted, ks []int, out []float64) {
	selectIn(w, ks, 0, out, 2*bits.Len(uint(len(w)))+8)
}

// selectIn is selectRanks of the ranks ks counted from base (the weight
// before w).
func selectIn(w []weighted, ks []int, base int, out []float64, depth int) {
	if len(ks) == 0 {
		return
	}
	if len(w) <= 64 || depth == 0 {
		sortWeighted(w)
		ranksOfSorted(w, ks, base, out)
		return
	}
	p := median3(w[0].v, w[len(w)/2].v, w[len(w)-1].v)
	lt, i, gt := 0, 0, len(w)
	below, equal := 0, 0
	for i < gt {
		switch v := w[i].v; {
		case v < p:
			below += w[i].n
			w[lt], w[i] = w[i], w[lt]
			lt++
			i++
		case v > p:
			gt--
			w[i], w[gt] = w[gt], w[i]
		default:
			equal += w[i].n
			i++
		}
	}
	a, _ := slices.BinarySearch(ks, base+below)
	b, _ := slices.BinarySearch(ks, base+below+equal)
	selectIn(w[:lt], ks[:a], base, out[:a], depth-1)
	for j := a; j < b; j++ {
		out[j] = p
	}
	selectIn(w[gt:], ks[b:], base+below+equal, out[b:], depth-1)
}

// median3 is the middle value of a, b and c.
func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	b = min(b, c)
	return max(a, b)
}

// result computes the metrics once every request has finished.
func (e *run) result() *Result {
	n := len(e.reqs)
	r := &Result{RequestRate: e.rate, Requests: n, Completed: e.completed, Steps: e.steps, MixedSteps: e.mixedSteps,
		Preemptions: e.inst.preemptions, Breakdown: e.cats, MeanAcceptanceLength: 1}
	ttft := make([]float64, 0, n)
	e2e := make([]float64, 0, n)
	tpot := make([]float64, 0, n)
	end := 0.0
	for i := range e.reqs {
		q := &e.reqs[i]
		r.TotalInputTokens += int(q.in)
		r.TotalOutputTokens += int(q.gen)
		r.LongestRequest = max(r.LongestRequest, int(q.in+q.out))
		ttft = append(ttft, q.ttft)
		e2e = append(e2e, q.e2e)
		if q.gen > 1 {
			tpot = append(tpot, (q.e2e-q.ttft)/float64(q.gen-1))
		}
		end = math.Max(end, q.send+q.e2e)
	}
	r.Duration = unit.Seconds(end)
	if end > 0 {
		r.RequestThroughput = float64(r.Completed) / end
		r.OutputThroughput = float64(r.TotalOutputTokens) / end
		r.TotalTokenThroughput = float64(r.TotalInputTokens+r.TotalOutputTokens) / end
	}
	r.TTFT, r.TPOT, r.E2EL = statsOf(ttft), statsOf(tpot), statsOf(e2e)
	r.ITL = weightedStats(e.itl)
	if e.decodeSteps > 0 {
		r.MeanBatch = float64(e.decodeSeqs) / float64(e.decodeSteps)
	}
	if e.acc.drafts > 0 {
		r.MeanAcceptanceLength = 1 + float64(e.acc.accepted)/float64(e.acc.drafts)
	}
	m := e.cfg.Memory
	u := e.inst.kv.usage()
	if e.dp != nil {
		r.Preemptions, u = e.dp.preemptions(), e.dp.kvPeak()
		m.Groups = 1
	}
	r.KVPeakPerGPU = unit.Bytes(float64(u.Peak*u.BlockSize) * float64(m.KVBytesPerToken) / float64(m.Groups))
	if u.Prefix {
		r.PrefixCache = true
		if u.Queries > 0 {
			r.PrefixHitRate = float64(u.Hits) / float64(u.Queries)
		}
	}
	if e.cl != nil {
		e.cl.fill(r)
	}
	e.sloMetrics(r)
	// A replayed log is not judged overloaded: its latencies are of the
	// same requests as the measured run's.
	if !math.IsInf(e.rate, 1) && !e.replay {
		r.Overloaded, r.ServedRate = e.overload()
	}
	return r
}

// overload compares completions with arrivals over the second half of the
// arrival window (request n/2 to the last): in a steady state they match
// (up to the change in the number in flight); beyond capacity completions
// run at the engine's rate and the backlog grows. Runs with fewer than 20
// arrivals in the window are not judged.
func (e *run) overload() (bool, float64) {
	n := len(e.reqs)
	h := n / 2
	arrived := n - 1 - h
	t0, t1 := e.reqs[h].arrival, e.reqs[n-1].arrival
	if arrived < 20 || !(t1 > t0) {
		return false, 0
	}
	done := 0
	for i := range e.reqs {
		if f := e.reqs[i].send + e.reqs[i].e2e; f > t0 && f <= t1 {
			done++
		}
	}
	return float64(done) < 0.9*float64(arrived), float64(done) / (t1 - t0)
}
