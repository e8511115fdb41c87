package serve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/moecast/moecast/internal/unit"
)

// Request is one request of a load: its prompt and output lengths (the
// request generates exactly Out tokens) and when the client is ready to
// send it, from the start of the run.
type Request struct {
	In, Out int
	Arrival unit.Seconds
	// Prefix describes the request's tokens (prompt, then output) as
	// segments of shared content, for prefix caching (prefixcache.go);
	// tokens past the last segment are the request's own. Nil: nothing
	// is shared (random prompts).
	Prefix []Segment
	// After lists earlier requests (indices) this one waits for: it is
	// ready Wait after the last of them finishes (a later turn of an
	// agentic session or a conversation), and Arrival is then unused.
	After []int
	Wait  unit.Seconds
}

// Load is a run's requests: the arrival process and the request lengths.
// Generate returns them in arrival order (non-decreasing Arrival), drawing
// any randomness from rng in a fixed order. The client sends them as
// `vllm bench serve` does, at most Workload.MaxConcurrency in flight.
//
// Workload, vllm bench's random dataset with a closed loop or gamma
// arrivals, is the built-in load. A request log or a trace is another
// implementation (its requests passed in as data: serve reads no files);
// a multi-turn conversation, whose next turn is ready only when the
// previous one finished, adds a dependency to Request that the client
// honours.
type Load interface {
	Generate(rng *rand.Rand) []Request
}

// Generate implements Load: vllm bench serve's random dataset (every input
// length, then every output length, see drawLengths) and its arrivals
// (see arrivals), in that order.
func (w Workload) Generate(rng *rand.Rand) []Request {
	reqs := make([]Request, w.Requests)
	drawLengths(w, rng, reqs)
	if w.Turns > 1 {
		sessions(w, rng, reqs)
		return reqs
	}
	arrivals(w, rng, reqs)
	return reqs
}

// sessions makes reqs (their own input and output lengths drawn) sessions
// of w.Turns turns, the last one possibly shorter: request i is turn
// i mod Turns of session i / Turns. The arrival process starts the
// sessions' first turns; a later turn waits for the turn before it plus
// ThinkTime, and its prompt is the earlier turn's prompt and output and
// then its own input (describe shares that prefix). Its Arrival is its
// session's first turn's (unused: it is sent when ready).
func sessions(w Workload, rng *rand.Rand, reqs []Request) {
	t := w.Turns
	first := make([]Request, (len(reqs)+t-1)/t)
	arrivals(w, rng, first)
	for i := range reqs {
		r := &reqs[i]
		r.Arrival = first[i/t].Arrival
		if i%t == 0 {
			continue
		}
		prev := &reqs[i-1]
		r.In += prev.In + prev.Out
		r.After, r.Wait = []int{i - 1}, w.ThinkTime
	}
}

// checkLoad validates what a caller's Load generated.
func checkLoad(reqs []Request) error {
	if len(reqs) < 1 || len(reqs) > 1<<24 {
		return fieldErrorf("Load", "generated %d requests, want [1, %d]", len(reqs), 1<<24)
	}
	prev := 0.0
	for i, r := range reqs {
		a := float64(r.Arrival)
		switch {
		case r.In < 1 || r.In > maxTokens:
			return fieldErrorf("Load", "request %d: input %d tokens outside [1, %d]", i, r.In, maxTokens)
		case r.Out < 1 || r.Out > maxTokens:
			return fieldErrorf("Load", "request %d: output %d tokens outside [1, %d]", i, r.Out, maxTokens)
		case !(a >= prev) || math.IsInf(a, 0):
			return fieldErrorf("Load", "request %d: arrival %g s is not finite and at or after the previous (%g s)", i, a, prev)
		}
		prev = a
		for _, a := range r.After {
			if a < 0 || a >= i {
				return fieldErrorf("Load", "request %d: waits for request %d, which is not an earlier one", i, a)
			}
		}
		if w := float64(r.Wait); !finiteNonNeg(w) {
			return fieldErrorf("Load", "request %d: wait %g s: want finite and >= 0", i, w)
		}
		for k, sg := range r.Prefix {
			if sg.Tokens < 1 || sg.Tokens > 2*maxTokens {
				return fieldErrorf("Load", "request %d: prefix segment %d: %d tokens outside [1, %d]", i, k, sg.Tokens, 2*maxTokens)
			}
		}
	}
	return nil
}

// offeredRate is a generated load's rate for Result.RequestRate: n / last
// arrival, +Inf when every request arrives at t = 0.
func offeredRate(reqs []Request) float64 {
	last := float64(reqs[len(reqs)-1].Arrival)
	if last == 0 {
		return math.Inf(1)
	}
	return float64(len(reqs)) / last
}

// RangeStyle is how a benchmark client turns a nominal length L and a
// range ratio r into the range each request's length is drawn from,
// uniformly and inclusively.
type RangeStyle int

const (
	// RangeSymmetric is `vllm bench serve`'s random dataset:
	// [floor(L(1-r)), ceil(L(1+r))], r in [0, 1), 0 = fixed lengths
	// (vllm-project/vllm `vllm/benchmarks/datasets.py` @ f2e97dd,
	// RandomDataset).
	RangeSymmetric RangeStyle = iota
	// RangeBelow is the older benchmark_serving.py's random dataset, kept
	// by SGLang and by InferenceX's and srt-slurm's harnesses:
	// [max(int(L r), 1), L], r in [0, 1], 1 = fixed lengths, 0 = [1, L]
	// (SemiAnalysisAI/InferenceX @ 843c625
	// `utils/bench_serving/benchmark_serving.py` sample_random_requests;
	// NVIDIA/srt-slurm @ 024aa2d `src/srtctl/benchmarks/scripts/sa-bench/
	// benchmark_serving.py`; sgl-project/sglang @ 0ae7bc2
	// `python/sglang/benchmark/datasets/common.py` compute_random_lens).
	// InferenceX's lower bound is int(L r) without the clamp; moecast
	// clamps it to 1, the shortest request it simulates.
	RangeBelow
)

// RangeStyles lists the styles by name (workload.range_style).
var RangeStyles = []string{"symmetric", "below"}

func (s RangeStyle) String() string {
	if s >= 0 && int(s) < len(RangeStyles) {
		return RangeStyles[s]
	}
	return fmt.Sprintf("RangeStyle(%d)", int(s))
}

// ParseRangeStyle is the style named s (RangeStyles).
func ParseRangeStyle(s string) (RangeStyle, error) {
	for i, n := range RangeStyles {
		if s == n {
			return RangeStyle(i), nil
		}
	}
	return 0, fmt.Errorf("unknown range style %q (want %s)", s, strings.Join(RangeStyles, " or "))
}

// lengthRange is the range a client of style s draws a length from for
// a nominal length L and range ratio r, at least 1 (see RangeStyle).
func lengthRange(l int, r float64, s RangeStyle) (lo, hi int) {
	if s == RangeBelow {
		return max(int(float64(l)*r), 1), max(l, 1)
	}
	if r == 0 {
		return l, l
	}
	lo = int(math.Floor(float64(l) * (1 - r)))
	hi = int(math.Ceil(float64(l) * (1 + r)))
	return max(lo, 1), max(hi, 1)
}

// drawLengths sets each request's prompt and output lengths: all input
// lengths first, then all output lengths, each uniform on its inclusive
// range (the order numpy's integers(lo, hi+1, size=n) calls draw them in;
// the generator differs, so the draws are not vLLM's).
func drawLengths(w Workload, rng *rand.Rand, reqs []Request) {
	if n := len(w.Lengths); n > 0 {
		// An empirical distribution: one pair per request, uniformly.
		for i := range reqs {
			l := w.Lengths[rng.IntN(n)]
			reqs[i].In, reqs[i].Out = l.In, l.Out
		}
		return
	}
	draw := func(l int, set func(i, v int)) {
		lo, hi := lengthRange(l, w.RangeRatio, w.RangeStyle)
		for i := range reqs {
			if lo == hi {
				set(i, lo)
			} else {
				set(i, lo+rng.IntN(hi-lo+1))
			}
		}
	}
	draw(w.InputTokens, func(i, v int) { reqs[i].In = v })
	draw(w.OutputTokens, func(i, v int) { reqs[i].Out = v })
}

// arrivals sets each request's arrival time in seconds from the start, as
// vllm bench serve's get_request computes them: with rate = +Inf all zero;
// else cumulative gamma(shape = burstiness, scale = 1/(rate x
// burstiness)) intervals (constant 1/rate intervals for burstiness +Inf),
// then rescaled so the last arrival is at exactly n/rate.
func arrivals(w Workload, rng *rand.Rand, reqs []Request) {
	if math.IsInf(w.RequestRate, 1) {
		for i := range reqs {
			reqs[i].Arrival = 0
		}
		return
	}
	sum := 0.0
	for i := range reqs {
		var d float64
		switch {
		case math.IsInf(w.Burstiness, 1):
			d = 1 / w.RequestRate
		case w.Burstiness == 1:
			d = rng.ExpFloat64() / w.RequestRate
		default:
			d = gamma(rng, w.Burstiness) / (w.RequestRate * w.Burstiness)
		}
		sum += d
		reqs[i].Arrival = unit.Seconds(sum)
	}
	if sum > 0 {
		// at/sum first: with tiny gamma shapes sum can be subnormal, and
		// (n/rate)/sum would overflow.
		end := float64(len(reqs)) / w.RequestRate
		for i := range reqs {
			reqs[i].Arrival = unit.Seconds(float64(reqs[i].Arrival) / sum * end)
		}
	}
}

// gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method (ACM TOMS
// 26(3), 2000), boosted for shape < 1 by U^(1/shape).
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		return gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// newRand is the package's one generator construction.
func newRand(seed uint64) *rand.Rand { return rand.New(newPCG(seed)) }

// newPCG is newRand's source.
func newPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 1) }

// traceLoad replays Workload.Trace: each request's arrival and lengths.
type traceLoad []TraceRequest

func (t traceLoad) Generate(*rand.Rand) []Request {
	reqs := make([]Request, len(t))
	for i, r := range t {
		reqs[i] = Request{In: r.InputTokens, Out: r.OutputTokens, Arrival: unit.Seconds(r.Arrival),
			After: r.After, Wait: unit.Seconds(r.Wait)}
	}
	return reqs
}

// Segment IDs of the built-in descriptions: the shared documents, a
// trace's hash IDs and each request's own content live in disjoint
// ranges.
const (
	segSystem = 1
	segHitDoc = 2
	segHash   = 1 << 62
	segOwn    = 1 << 63
)

// describe sets each request's Prefix from w: a trace's hash IDs (blocks
// of w.HashBlockTokens tokens) where the trace has them, else w.Prefix's
// shared document; a later turn of a session (w.Turns) starts with the
// turn before it whole. The request's remaining tokens (prompt and output)
// are its own segment. Nothing is set when w describes no sharing.
func describe(w Workload, reqs []Request) {
	bt := w.HashBlockTokens
	if bt == 0 {
		bt = DefaultHashBlockTokens
	}
	for i := range reqs {
		r := &reqs[i]
		var segs []Segment
		covered := 0
		switch {
		case w.Trace != nil && w.Trace[i].HashIDs != nil:
			ids := w.Trace[i].HashIDs
			segs = make([]Segment, 0, len(ids)+1)
			for _, id := range ids {
				n := min(bt, r.In-covered)
				if n <= 0 {
					break
				}
				segs = append(segs, Segment{ID: segHash | uint64(id)&(segHash-1), Tokens: n})
				covered += n
			}
		case w.Prefix != nil:
			shared := min(w.Prefix.SystemTokens, r.In)
			id := uint64(segSystem)
			if w.Prefix.HitRate > 0 {
				shared, id = int(w.Prefix.HitRate*float64(r.In)), segHitDoc
			}
			segs = make([]Segment, 0, 2)
			if shared > 0 {
				segs = append(segs, Segment{ID: id, Tokens: shared})
				covered = shared
			}
		default:
			if w.Turns <= 1 {
				continue
			}
		}
		if w.Turns > 1 && i%w.Turns > 0 {
			// A later turn of a session: the turn before it, prompt and
			// output, then its own tokens.
			prev := reqs[i-1].Prefix
			segs = append(segs[:0:0], prev...)
			covered = reqs[i-1].In + reqs[i-1].Out
		}
		r.Prefix = append(segs, Segment{ID: segOwn | uint64(i), Tokens: r.In + r.Out - covered})
	}
}
