package gpu

import (
	"encoding/binary"
	"fmt"
)

// MXFP4 weights as gpt-oss's checkpoints store one expert's matrix (the
// OCP microscaling format, 4-bit e2m1 elements with one e8m0 scale per 32
// along K): Blocks [N][K/32][16] bytes, element k of a block in byte k/2,
// low nibble first; Scales [N][K/32], value 2^(e-127). An e2m1 code is sign
// (bit 3), 2 exponent bits and 1 mantissa bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
type mxfp4 struct {
	N, K   int
	Blocks []byte
	Scales []byte
}

// mxfp4Group is the elements that share one e8m0 scale.
const mxfp4Group = 32

// e2m1Values are the magnitudes of the e2m1 codes 0..7.
var e2m1Values = [8]float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}

// e2m1 is the value of a 4-bit code.
func e2m1(code int) float64 {
	v := e2m1Values[code&7]
	if code&8 != 0 {
		return -v
	}
	return v
}

// e8m0BF16 is the bf16 of the scale 2^(e-127), exact (e = 0 is the bf16
// subnormal 2^-127); e = 255 is the format's NaN and an error.
func e8m0BF16(e byte) (BF16, error) {
	switch e {
	case 255:
		return 0, fmt.Errorf("mxfp4: scale 0xff is NaN")
	case 0:
		return 0x0040, nil
	}
	return BF16(uint16(e) << 7), nil
}

// packed gives the matrix as the W4A16 kernel's host format: the nibbles in
// pack-quantized order (Blocks' bytes are already K-ordered, low nibble
// first, so each little-endian 32-bit word is one weight_packed word) and
// the scales as bf16; Weight then reads the e2m1 values.
func (x *mxfp4) packed() (*packQuantized, error) {
	if err := checkShape(x.N, x.K, mxfp4Group); err != nil {
		return nil, err
	}
	if len(x.Blocks) != x.N*x.K/2 || len(x.Scales) != x.N*x.K/mxfp4Group {
		return nil, fmt.Errorf("mxfp4: %d block bytes and %d scales, want %d and %d", len(x.Blocks), len(x.Scales),
			x.N*x.K/2, x.N*x.K/mxfp4Group)
	}
	p := &packQuantized{N: x.N, K: x.K, Group: mxfp4Group, FP4: true, Packed: make([]int32, x.N*x.K/8),
		Scales: make([]BF16, len(x.Scales))}
	for i := range p.Packed {
		p.Packed[i] = int32(binary.LittleEndian.Uint32(x.Blocks[4*i:]))
	}
	for i, e := range x.Scales {
		s, err := e8m0BF16(e)
		if err != nil {
			return nil, fmt.Errorf("mxfp4: scale %d: %w", i, err)
		}
		p.Scales[i] = s
	}
	return p, nil
}

// RepackMXFP4 converts an MXFP4 matrix into the W4A16 kernel's layout for
// its ModeFP4 kernels: the same nibble positions, scales widened to bf16
// (2 bytes a group of 32 instead of 1: 18 bytes per 32 weights, not 17).
func repackMXFP4(x *mxfp4) (*Weights, *packQuantized, error) {
	p, err := x.packed()
	if err != nil {
		return nil, nil, err
	}
	w, err := Repack(p)
	return w, p, err
}

// weightFP4 is W[k][n] of an MXFP4 matrix in float64 (exact).
func (p *packQuantized) weightFP4(k, n int) float64 {
	return e2m1(p.Q(k, n)) * float64(p.Scales[n*(p.K/p.Group)+k/p.Group].Float32())
}

// randomMXFP4 draws an N x K matrix: uniform codes, scales 2^-9..2^-5.
func randomMXFP4(next func() uint64, n, k int) *mxfp4 {
	x := &mxfp4{N: n, K: k, Blocks: make([]byte, n*k/2), Scales: make([]byte, n*k/mxfp4Group)}
	for i := range x.Blocks {
		x.Blocks[i] = byte(next())
	}
	for i := range x.Scales {
		x.Scales[i] = byte(127 - 9 + int(next()%5))
	}
	return x
}
