package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// randomPackQuantized draws an N x K matrix: uniform nibbles and scales of
// magnitude 2^-8..2^-6 with random signs (never zero), from rng.
func randomPackQuantized(rng *rand.Rand, n, k, group int) (*packQuantized, error) {
	if err := checkShape(n, k, group); err != nil {
		return nil, err
	}
	p := &packQuantized{N: n, K: k, Group: group, Packed: make([]int32, n*k/8), Scales: make([]BF16, n*k/group)}
	for i := range p.Packed {
		p.Packed[i] = int32(rng.Uint32())
	}
	for i := range p.Scales {
		s := float32(math.Ldexp(1+rng.Float64(), -8+rng.IntN(2)))
		if rng.IntN(2) == 0 {
			s = -s
		}
		p.Scales[i] = toBF16(s)
	}
	return p, nil
}

// randomBF16 draws n bf16 values uniform in [-1, 1), never exactly zero.
func randomBF16(rng *rand.Rand, n int) []BF16 {
	out := make([]BF16, n)
	for i := range out {
		v := float32(2*rng.Float64() - 1)
		if v == 0 {
			v = 0.5
		}
		out[i] = toBF16(v)
	}
	return out
}

// referenceGEMM computes C = A x W in float64 over the dequantised weights:
// rows of a are K long, rows[i] picks the row of a for output row i (nil:
// row i), and the result is len(rows) (or m) x N.
func referenceGEMM(a []BF16, m int, p *packQuantized, rows []int) [][]float64 {
	if rows == nil {
		rows = make([]int, m)
		for i := range rows {
			rows[i] = i
		}
	}
	w := make([]float64, p.K*p.N) // [n][k]
	for n := 0; n < p.N; n++ {
		for k := 0; k < p.K; k++ {
			w[n*p.K+k] = p.Weight(k, n)
		}
	}
	out := make([][]float64, len(rows))
	for i, r := range rows {
		ar := make([]float64, p.K)
		for k := range ar {
			ar[k] = float64(a[r*p.K+k].Float32())
		}
		out[i] = make([]float64, p.N)
		for n := 0; n < p.N; n++ {
			var s float64
			wn := w[n*p.K : (n+1)*p.K]
			for k, x := range ar {
				s += x * wn[k]
			}
			out[i][n] = s
		}
	}
	return out
}

// relError is ||got - ref|| / ||ref|| (Frobenius) over the rows, and an error
// when a value is not finite (an unwritten, poisoned output).
func relError(got [][]BF16, ref [][]float64) (float64, error) {
	var num, den float64
	for i := range ref {
		for j, r := range ref[i] {
			g := float64(got[i][j].Float32())
			if math.IsNaN(g) || math.IsInf(g, 0) {
				return math.Inf(1), fmt.Errorf("output [%d][%d] = %v (not written?)", i, j, g)
			}
			num += (g - r) * (g - r)
			den += r * r
		}
	}
	if den == 0 {
		return math.Inf(1), fmt.Errorf("reference is all zeros")
	}
	return math.Sqrt(num / den), nil
}
