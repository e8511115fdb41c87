package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// monteCarlo draws uniform top-k routings of T tokens and returns the
// averages over trials of the busiest slot's pairs, distinct experts and
// tokens, and of the mean distinct experts per slot.
func monteCarlo(E, k, ep, T, trials int, seed uint64) (pairs, touched, tokens, meanTouched float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := E / ep
	perm := make([]int, E)
	for i := range perm {
		perm[i] = i
	}
	slotPairs := make([]int, ep)
	slotTokens := make([]int, ep)
	used := make([]bool, E)
	hit := make([]bool, ep)
	for trial := 0; trial < trials; trial++ {
		clear(slotPairs)
		clear(slotTokens)
		clear(used)
		for t := 0; t < T; t++ {
			clear(hit)
			// Partial Fisher-Yates: the first k of perm are a uniform k-subset.
			for i := 0; i < k; i++ {
				j := i + rng.IntN(E-i)
				perm[i], perm[j] = perm[j], perm[i]
				e := perm[i]
				slotPairs[e/m]++
				used[e] = true
				hit[e/m] = true
			}
			for s, h := range hit {
				if h {
					slotTokens[s]++
				}
			}
		}
		maxP, maxT, maxD, sumD := 0, 0, 0, 0
		for s := 0; s < ep; s++ {
			d := 0
			for e := s * m; e < (s+1)*m; e++ {
				if used[e] {
					d++
				}
			}
			sumD += d
			maxP = max(maxP, slotPairs[s])
			maxT = max(maxT, slotTokens[s])
			maxD = max(maxD, d)
		}
		pairs += float64(maxP)
		touched += float64(maxD)
		tokens += float64(maxT)
		meanTouched += float64(sumD) / float64(ep)
	}
	n := float64(trials)
	return pairs / n, touched / n, tokens / n, meanTouched / n
}

func TestRoutingMonteCarlo(t *testing.T) {
	shapes := []struct {
		name     string
		E, k, ep int
	}{
		{"kimi-k2.5 ep8", 384, 8, 8},
		{"deepseek-v3 ep8", 256, 8, 8},
		{"qwen3 ep4", 128, 8, 4},
		{"mixtral ep8", 8, 2, 8},
		{"kimi ep1", 384, 8, 1},
	}
	const trials = 4000
	for _, sh := range shapes {
		r := newRouting(sh.E, sh.k, sh.ep)
		for _, T := range []int{1, 2, 4, 8, 16, 64, 256} {
			l := r.at(float64(T))
			p, d, tok, meanD := monteCarlo(sh.E, sh.k, sh.ep, T, trials, uint64(T))
			t.Logf("%s T=%d pairs %.3f mc %.3f | touched %.3f mc %.3f | tokens %.3f mc %.3f",
				sh.name, T, l.Pairs, p, l.Touched, d, l.Tokens, tok)
			// Mean distinct experts per slot is exact: m(1-(1-k/E)^T).
			m := float64(sh.E / sh.ep)
			assert.InEpsilon(t, meanD, r.meanTouched(float64(T)), 0.02, "%s T=%d mean distinct experts", sh.name, T)
			_ = m
			assert.InEpsilon(t, p, l.Pairs, 0.05, "%s T=%d busiest-slot pairs", sh.name, T)
			{
				assert.InEpsilon(t, d, l.Touched, 0.05, "%s T=%d busiest-slot distinct experts", sh.name, T)
			}
			assert.InEpsilon(t, tok, l.Tokens, 0.05, "%s T=%d busiest-slot tokens", sh.name, T)
		}
	}
}
