package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Routing is the experts each token is sent to: TopK[t] lists token t's
// experts (distinct).
type Routing struct {
	Experts int
	TopK    [][]int
}

// routeUniform draws each token's k distinct experts uniformly.
func routeUniform(seed uint64, tokens, experts, k int) (*Routing, error) {
	return route(seed, tokens, experts, k, 0)
}

// routePowerLaw draws each token's k distinct experts with expert popularity
// proportional to rank^-alpha, the ranks a seeded permutation of the experts.
func routePowerLaw(seed uint64, tokens, experts, k int, alpha float64) (*Routing, error) {
	if alpha <= 0 || math.IsNaN(alpha) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("route: power-law alpha %v: want a finite value > 0", alpha)
	}
	return route(seed, tokens, experts, k, alpha)
}

func route(seed uint64, tokens, experts, k int, alpha float64) (*Routing, error) {
	if tokens < 0 || experts <= 0 || k <= 0 || k > experts {
		return nil, fmt.Errorf("route: %d tokens, %d experts, top-%d: want tokens >= 0 and 0 < k <= experts", tokens, experts, k)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	weight := make([]float64, experts)
	perm := rng.Perm(experts)
	for i := range weight {
		weight[perm[i]] = 1
		if alpha > 0 {
			weight[perm[i]] = math.Pow(float64(i+1), -alpha)
		}
	}
	r := &Routing{Experts: experts, TopK: make([][]int, tokens)}
	w := make([]float64, experts)
	for t := range r.TopK {
		copy(w, weight)
		total := 0.0
		for _, x := range w {
			total += x
		}
		sel := make([]int, 0, k)
		for len(sel) < k {
			u := rng.Float64() * total
			e := 0
			for ; e < experts-1; e++ {
				if u < w[e] {
					break
				}
				u -= w[e]
			}
			if w[e] == 0 { // rounding landed on a taken expert
				continue
			}
			sel = append(sel, e)
			total -= w[e]
			w[e] = 0
		}
		r.TopK[t] = sel
	}
	return r, nil
}

// Aligned is a routed batch sorted by expert and padded per expert to a
// multiple of Block rows, as vLLM's moe_align_block_size lays it out.
type Aligned struct {
	Block int
	// SortedIDs holds, expert by expert, the ids t*k + slot of the (token,
	// slot) pairs routed to it, each expert's run padded to a multiple of
	// Block with the sentinel Tokens*K.
	SortedIDs []int32
	// ExpertIDs holds the expert of each block of Block rows.
	ExpertIDs []int32
	Tokens, K int
	// Touched is the number of experts that got at least one token.
	Touched int
}

// Align sorts and pads a routing into blocks of block rows.
func Align(r *Routing, block int) (*Aligned, error) { return alignLocal(r, block, 0, r.Experts) }

// alignLocal is Align for the experts [first, first+count) that one
// expert-parallel rank holds: (token, slot) pairs routed elsewhere are left
// out (their rows of C are not written), and ExpertIDs count from first.
func alignLocal(r *Routing, block, first, count int) (*Aligned, error) {
	if block <= 0 {
		return nil, fmt.Errorf("align: block %d: want > 0", block)
	}
	if first < 0 || count <= 0 || first+count > r.Experts {
		return nil, fmt.Errorf("align: local experts [%d,%d) outside [0,%d)", first, first+count, r.Experts)
	}
	k := 0
	if len(r.TopK) > 0 {
		k = len(r.TopK[0])
	}
	per := make([][]int32, count)
	for t, sel := range r.TopK {
		if len(sel) != k {
			return nil, fmt.Errorf("align: token %d has %d experts, token 0 has %d", t, len(sel), k)
		}
		for s, e := range sel {
			if e < 0 || e >= r.Experts {
				return nil, fmt.Errorf("align: token %d slot %d: expert %d out of range [0,%d)", t, s, e, r.Experts)
			}
			if e >= first && e < first+count {
				per[e-first] = append(per[e-first], int32(t*k+s))
			}
		}
	}
	a := &Aligned{Block: block, Tokens: len(r.TopK), K: k}
	sentinel := int32(len(r.TopK) * k)
	for e, ids := range per {
		if len(ids) == 0 {
			continue
		}
		a.Touched++
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		a.SortedIDs = append(a.SortedIDs, ids...)
		for len(a.SortedIDs)%block != 0 {
			a.SortedIDs = append(a.SortedIDs, sentinel)
		}
		for n := (len(ids) + block - 1) / block; n > 0; n-- {
			a.ExpertIDs = append(a.ExpertIDs, int32(e))
		}
	}
	return a, nil
}

// Blocks is the number of row blocks (one kernel block row each).
func (a *Aligned) Blocks() int { return len(a.ExpertIDs) }
