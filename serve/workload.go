package serve

import (
	"math"
	"math/rand/v2"
)

// lengthRange is vLLM's RandomDataset range for a nominal length L and
// range ratio r: [floor(L(1-r)), ceil(L(1+r))], at least 1
// (vllm-project/vllm `vllm/benchmarks/datasets.py` @ f2e97dd).
func lengthRange(l int, r float64) (lo, hi int) {
	if r == 0 {
		return l, l
	}
	lo = int(math.Floor(float64(l) * (1 - r)))
	hi = int(math.Ceil(float64(l) * (1 + r)))
	return max(lo, 1), max(hi, 1)
}

// drawLengths fills in and out with each request's prompt and output
// lengths: all input lengths first, then all output lengths, each uniform
// on its inclusive range (the order numpy's integers(lo, hi+1, size=n)
// calls draw them in; the generator differs, so the draws are not vLLM's).
func drawLengths(w Workload, rng *rand.Rand, in, out []int32) {
	draw := func(dst []int32, l int) {
		lo, hi := lengthRange(l, w.RangeRatio)
		for i := range dst {
			if lo == hi {
				dst[i] = int32(lo)
			} else {
				dst[i] = int32(lo + rng.IntN(hi-lo+1))
			}
		}
	}
	draw(in, w.InputTokens)
	draw(out, w.OutputTokens)
}

// arrivals fills at with each request's arrival time in seconds from the
// start, as vllm bench serve's get_request computes them: with rate = +Inf
// all zero; else cumulative gamma(shape = burstiness, scale = 1/(rate x
// burstiness)) intervals (constant 1/rate intervals for burstiness +Inf),
// then rescaled so the last arrival is at exactly n/rate.
func arrivals(w Workload, rng *rand.Rand, at []float64) {
	if math.IsInf(w.RequestRate, 1) {
		clear(at)
		return
	}
	sum := 0.0
	for i := range at {
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
		at[i] = sum
	}
	if sum > 0 {
		// at/sum first: with tiny gamma shapes sum can be subnormal, and
		// (n/rate)/sum would overflow.
		end := float64(len(at)) / w.RequestRate
		for i := range at {
			at[i] = at[i] / sum * end
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
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
