// Package gpu holds moecast's own GPU kernels (the .cu sources, their PTX and
// cubins embedded with a hash of the source), the host-side data layouts they
// read (int4 weight repacking, MoE routing and padding), and launchers over
// internal/cuda.
//
// The W4A16 kernel (w4a16.cu) computes C[M,N] = A[M,K] x W[K,N] with A and C
// bf16 and W int4 symmetric with one bf16 scale per group of Group rows of K:
// W[k][n] = (q - 8) * scale[n][k/Group], q in 0..15, as compressed-tensors'
// pack-quantized format stores it (weight_packed int32 [N][K/8], nibble j of
// a word holds column k = 8*word + j, lowest bits first; weight_scale
// [N][K/Group]). Repack converts that once into the kernel's layout.
package gpu

import (
	"fmt"
	"math"
)

// BF16 is a bfloat16 bit pattern.
type BF16 uint16

// toBF16 rounds a float32 to the nearest bf16 (ties to even; NaN stays NaN).
func toBF16(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return BF16(b>>16 | 0x40)
	}
	b += 0x7fff + (b>>16)&1
	return BF16(b >> 16)
}

// Float32 widens the bf16 exactly.
func (h BF16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }

// Shape limits of the kernel.
const (
	tileN = 128 // N must be a multiple
	tileK = 128 // K must be a multiple
)

// checkShape says whether the kernel takes an N x K weight with this group.
func checkShape(n, k, group int) error {
	switch {
	case group != 32 && group != 64 && group != 128:
		return fmt.Errorf("w4a16: group size %d: want 32, 64 or 128", group)
	case n <= 0 || n%tileN != 0:
		return fmt.Errorf("w4a16: N=%d: want a positive multiple of %d", n, tileN)
	case k <= 0 || k%tileK != 0:
		return fmt.Errorf("w4a16: K=%d: want a positive multiple of %d", k, tileK)
	}
	return nil
}

// packQuantized is one weight matrix as compressed-tensors stores it
// (format "pack-quantized", 4 bits, symmetric, group strategy).
type packQuantized struct {
	N, K, Group int
	Packed      []int32 // weight_packed [N][K/8]
	Scales      []BF16  // weight_scale [N][K/Group]
	// FP4: the nibbles are MXFP4 e2m1 codes (mxfp4.packed), not q + 8.
	FP4 bool
}

// Q returns the stored nibble (0..15, the int4 value plus 8) of W[k][n].
func (p *packQuantized) Q(k, n int) int {
	w := uint32(p.Packed[n*(p.K/8)+k/8])
	return int(w>>(4*(k%8))) & 0xf
}

// Weight returns W[k][n] = (q - 8) * scale, exact in float64.
func (p *packQuantized) Weight(k, n int) float64 {
	if p.FP4 {
		return p.weightFP4(k, n)
	}
	return float64(p.Q(k, n)-8) * float64(p.Scales[n*(p.K/p.Group)+k/p.Group].Float32())
}

func (p *packQuantized) check() error {
	if err := checkShape(p.N, p.K, p.Group); err != nil {
		return err
	}
	if len(p.Packed) != p.N*p.K/8 {
		return fmt.Errorf("w4a16: weight_packed has %d words, want N*K/8 = %d", len(p.Packed), p.N*p.K/8)
	}
	if len(p.Scales) != p.N*p.K/p.Group {
		return fmt.Errorf("w4a16: weight_scale has %d values, want N*K/group = %d", len(p.Scales), p.N*p.K/p.Group)
	}
	return nil
}

// Weights is a matrix in the kernel's layout.
//
// Q: for each 64-column chunk c, each k16 step s and each lane l of a warp,
// four words (16 bytes) that hold the lane's mma.sync m16n8k16 B fragments
// for the chunk's eight 8-column tiles: word j, nibble p (bits 4p..4p+3)
// holds W[k][n] with
//
//	tile = 2j + (p%4)/2, n = 64c + 8*tile + l/4,
//	k = 16s + 2*(l%4) + 8*(p%2) + p/4,
//
// so that (word >> 4i) & 0x000F000F, i = 0..3, puts the pairs (b0, b1) of
// tiles 2j and 2j+1 into the two halves of a bf16x2.
//
// S: for each chunk c and each group row g, the 64 scales of the chunk's
// columns ordered (l/4, tile): position 8r + t holds column 64c + 8t + r, so
// a lane reads its eight tiles' scales as one 16-byte word.
type Weights struct {
	N, K, Group int
	Q           []uint32
	S           []BF16
}

// Bytes is the weight storage the kernel streams (int4 values and scales).
func (w *Weights) Bytes() int64 { return int64(len(w.Q))*4 + int64(len(w.S))*2 }

// qIndex is the word and nibble of W[k][n] in Weights.Q.
func qIndex(k, n, K int) (word, nibble int) {
	c, ni := n/64, n%64
	tile, r := ni/8, ni%8
	s, ki := k/16, k%16
	// ki = 2q + hi + 8b: q = l%4, hi the half of the bf16x2, b the register
	// (b0 or b1) of the fragment.
	q, hi, b := ki/2%4, ki%2, ki/8
	l := 4*r + q
	j := tile / 2
	p := 4*hi + 2*(tile%2) + b
	return ((c*(K/16)+s)*32+l)*4 + j, p
}

// sIndex is the position of scale[n][g] in Weights.S.
func sIndex(g, n, groups int) int {
	c, ni := n/64, n%64
	return (c*groups+g)*64 + 8*(ni%8) + ni/8
}

// Repack converts a compressed-tensors matrix into the kernel's layout.
func Repack(p *packQuantized) (*Weights, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	w := &Weights{N: p.N, K: p.K, Group: p.Group, Q: make([]uint32, p.N*p.K/8), S: make([]BF16, len(p.Scales))}
	for n := 0; n < p.N; n++ {
		for k := 0; k < p.K; k++ {
			word, nib := qIndex(k, n, p.K)
			w.Q[word] |= uint32(p.Q(k, n)) << (4 * nib)
		}
	}
	groups := p.K / p.Group
	for n := 0; n < p.N; n++ {
		for g := 0; g < groups; g++ {
			w.S[sIndex(g, n, groups)] = p.Scales[n*groups+g]
		}
	}
	return w, nil
}

// QAt returns the nibble of W[k][n] from the kernel layout (tests and checks).
func (w *Weights) QAt(k, n int) int {
	word, nib := qIndex(k, n, w.K)
	return int(w.Q[word]>>(4*nib)) & 0xf
}

// ScaleAt returns scale[n][k/Group] from the kernel layout.
func (w *Weights) ScaleAt(k, n int) BF16 {
	return w.S[sIndex(k/w.Group, n, w.K/w.Group)]
}
