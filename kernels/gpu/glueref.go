package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Host references of glue.cu's kernels: the device tests compare each
// kernel with them, and the layer measurement plans its GEMMs from
// hostRouter's routing of the same logits.

// sigmoid32 is the sigmoid of x rounded once to float32.
func sigmoid32(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

// hostRouter is the router kernel's reference on logits [tokens][experts]
// (bias nil: none): ids and weights [tokens][k] in the kernel's order (the
// best biased score first, ties to the lower expert), and each token's
// margin, the least gap between two biased scores (or two group scores)
// whose order decides the selection: where it is below a float32
// rounding, the device may pick differently.
func hostRouter(c RouterConfig, logits, bias []float32, tokens int) (ids []int32, weights []float32, margin []float64, err error) {
	if err := c.Check(); err != nil {
		return nil, nil, nil, err
	}
	if len(logits) != tokens*c.Experts || (bias != nil && len(bias) != c.Experts) {
		return nil, nil, nil, fmt.Errorf("router: %d logits, %d biases for %d tokens x %d experts", len(logits), len(bias), tokens, c.Experts)
	}
	E, k := c.Experts, c.TopK
	ids, weights, margin = make([]int32, tokens*k), make([]float32, tokens*k), make([]float64, tokens)
	sc, ch := make([]float32, E), make([]float32, E)
	order := make([]int, E)
	for t := 0; t < tokens; t++ {
		for e := 0; e < E; e++ {
			sc[e] = sigmoid32(logits[t*E+e])
			ch[e] = sc[e]
			if bias != nil {
				ch[e] = sc[e] + bias[e]
			}
		}
		margin[t] = math.Inf(1)
		if c.Groups > 1 {
			gsize := E / c.Groups
			gs := make([]float32, c.Groups)
			gord := make([]int, c.Groups)
			for g := range gs {
				b1, b2 := float32(math.Inf(-1)), float32(math.Inf(-1))
				for _, v := range ch[g*gsize : (g+1)*gsize] {
					if v > b1 {
						b2, b1 = b1, v
					} else if v > b2 {
						b2 = v
					}
				}
				gs[g] = b1
				if gsize > 1 {
					gs[g] = b1 + b2
				}
				gord[g] = g
			}
			sort.SliceStable(gord, func(i, j int) bool { return gs[gord[i]] > gs[gord[j]] })
			if c.TopKGroups < c.Groups {
				margin[t] = float64(gs[gord[c.TopKGroups-1]] - gs[gord[c.TopKGroups]])
			}
			for _, g := range gord[c.TopKGroups:] {
				for e := g * gsize; e < (g+1)*gsize; e++ {
					ch[e] = float32(math.Inf(-1))
				}
			}
		}
		for e := range order {
			order[e] = e
		}
		sort.SliceStable(order, func(i, j int) bool { return ch[order[i]] > ch[order[j]] })
		var sum float32
		for j := 0; j < k; j++ {
			sum += sc[order[j]]
		}
		for j := 0; j < k; j++ {
			e := order[j]
			if j+1 < E && !math.IsInf(float64(ch[order[j+1]]), -1) {
				margin[t] = min(margin[t], float64(ch[e]-ch[order[j+1]]))
			}
			w := sc[e]
			if c.Renormalize {
				w /= sum
			}
			ids[t*k+j], weights[t*k+j] = int32(e), w*c.Scale
		}
	}
	return ids, weights, margin, nil
}

// routingOf turns top-k ids [tokens][k] into a Routing.
func routingOf(ids []int32, experts, k int) *Routing {
	r := &Routing{Experts: experts, TopK: make([][]int, len(ids)/k)}
	for t := range r.TopK {
		r.TopK[t] = make([]int, k)
		for s := range r.TopK[t] {
			r.TopK[t][s] = int(ids[t*k+s])
		}
	}
	return r
}

// logitsFor draws router logits whose top-k under c (with bias, whose
// entries lie within +-0.002) is exactly r, in slot order, by margins far
// above any rounding: a routed slot s gets 2 - 0.1 s + U[0, 0.02) (sigmoid
// at least 0.78, slots 0.008 apart), every other expert U[-3, 0) (at most
// 0.5). Groups must be 1 (grouped routers select groups first).
func logitsFor(rng *rand.Rand, r *Routing) []float32 {
	E := r.Experts
	out := make([]float32, len(r.TopK)*E)
	for t, sel := range r.TopK {
		row := out[t*E : (t+1)*E]
		for e := range row {
			row[e] = float32(-3 * rng.Float64())
		}
		for s, e := range sel {
			row[e] = float32(2 - 0.1*float64(s) + 0.02*rng.Float64())
		}
	}
	return out
}

// randomBias draws a correction bias within +-0.002.
func randomBias(rng *rand.Rand, experts int) []float32 {
	b := make([]float32, experts)
	for i := range b {
		b[i] = float32(0.004 * (rng.Float64() - 0.5))
	}
	return b
}

// hostSiluAndMul is silu(x[r, :n]) * x[r, n:] over rows of x [rows][2n].
func hostSiluAndMul(x []BF16, rows, n int) [][]float64 {
	out := make([][]float64, rows)
	for r := range out {
		out[r] = make([]float64, n)
		for j := range out[r] {
			g, u := float64(x[r*2*n+j].Float32()), float64(x[r*2*n+n+j].Float32())
			out[r][j] = g / (1 + math.Exp(-g)) * u
		}
	}
	return out
}

// hostSwigluOAI is gpt-oss's clamped SwiGLU over rows of x [rows][2n]
// (gate at even, up at odd columns): (clamp(up) + 1) * g * sigmoid(alpha g)
// with g = min(gate, limit).
func hostSwigluOAI(x []BF16, rows, n int, alpha, limit float64) [][]float64 {
	out := make([][]float64, rows)
	for r := range out {
		out[r] = make([]float64, n)
		for j := range out[r] {
			g := math.Min(float64(x[r*2*n+2*j].Float32()), limit)
			u := math.Max(-limit, math.Min(float64(x[r*2*n+2*j+1].Float32()), limit))
			out[r][j] = (u + 1) * g / (1 + math.Exp(-alpha*g))
		}
	}
	return out
}

// hostMoESum is out[t] = sum over slots s routed to [first, first+count) of
// w[t*k+s] * y[t*k+s], y [tokens*k][h].
func hostMoESum(y []BF16, w []float32, ids []int32, tokens, k, h, first, count int) [][]float64 {
	out := make([][]float64, tokens)
	for t := range out {
		out[t] = make([]float64, h)
		for s := 0; s < k; s++ {
			id := t*k + s
			if e := int(ids[id]); e < first || e >= first+count {
				continue
			}
			for j := range out[t] {
				out[t][j] += float64(w[id]) * float64(y[id*h+j].Float32())
			}
		}
	}
	return out
}

// hostRMSNorm is x / sqrt(mean(x^2) + eps) * weight over rows of h.
func hostRMSNorm(x, weight []BF16, tokens, h int, eps float64) [][]float64 {
	out := make([][]float64, tokens)
	for t := range out {
		var ss float64
		for j := 0; j < h; j++ {
			v := float64(x[t*h+j].Float32())
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(h)+eps)
		out[t] = make([]float64, h)
		for j := range out[t] {
			out[t][j] = float64(x[t*h+j].Float32()) * r * float64(weight[j].Float32())
		}
	}
	return out
}

// hostAdd is a + b, as rows of h.
func hostAdd(a, b []BF16, h int) [][]float64 {
	out := make([][]float64, len(a)/h)
	for t := range out {
		out[t] = make([]float64, h)
		for j := range out[t] {
			out[t][j] = float64(a[t*h+j].Float32()) + float64(b[t*h+j].Float32())
		}
	}
	return out
}

// maxRelError is the largest |got - ref| / max(|ref|, floor) over the
// elements (a per-element bound, tighter than relError's norm), and an
// error at the first value that is not finite.
func maxRelError(got [][]BF16, ref [][]float64, floor float64) (float64, error) {
	worst := 0.0
	for i := range ref {
		for j, r := range ref[i] {
			g := float64(got[i][j].Float32())
			if math.IsNaN(g) || math.IsInf(g, 0) {
				return math.Inf(1), fmt.Errorf("output [%d][%d] = %v (not written?)", i, j, g)
			}
			worst = max(worst, math.Abs(g-r)/max(math.Abs(r), floor))
		}
	}
	return worst, nil
}
