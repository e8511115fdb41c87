package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestE8M0BF16(t *testing.T) {
	tests := []struct {
		name string
		e    byte
		want float64
		err  bool
	}{
		{"one", 127, 1, false},
		{"2^-9", 118, math.Ldexp(1, -9), false},
		{"largest", 254, math.Ldexp(1, 127), false},
		{"smallest normal", 1, math.Ldexp(1, -126), false},
		{"zero exponent is subnormal 2^-127", 0, math.Ldexp(1, -127), false},
		{"NaN", 255, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := e8m0BF16(tt.e)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, float64(b.Float32()))
		})
	}
}

// TestDQE2M1Bits follows w4a16.cu's dq_e2m1 on the host: the bit placement
// gives code * 2^-126 as a bf16, and 2^126 times that is the e2m1 value.
func TestDQE2M1Bits(t *testing.T) {
	want := []float64{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6}
	for code := 0; code < 16; code++ {
		for _, other := range []uint32{0, 0xfff0fff0} { // the word's other nibbles must not leak in
			x := uint32(code) | uint32(15-code)<<16 | other
			b := ((x & 0x00080008) << 12) | ((x & 0x00070007) << 6)
			lo := float64(math.Float32frombits(b<<16)) * math.Ldexp(1, 126)
			hi := float64(math.Float32frombits(b&0xffff0000)) * math.Ldexp(1, 126)
			assert.Equal(t, want[code], lo, "code %d", code)
			assert.Equal(t, want[15-code], hi, "code %d (high half)", 15-code)
			assert.Equal(t, want[code], e2m1(code))
		}
	}
}

func TestMXFP4Packed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, k = 128, 256
	x := randomMXFP4(rng.Uint64, n, k)
	p, err := x.packed()
	require.NoError(t, err)
	w, err := Repack(p)
	require.NoError(t, err)
	for _, at := range [][2]int{{0, 0}, {1, 0}, {31, 5}, {32, 5}, {255, 127}, {100, 64}} {
		kk, nn := at[0], at[1]
		by := x.Blocks[nn*k/2+kk/2]
		code := int(by & 15)
		if kk%2 == 1 {
			code = int(by >> 4)
		}
		want := e2m1(code) * math.Ldexp(1, int(x.Scales[nn*k/32+kk/32])-127)
		assert.Equal(t, want, p.Weight(kk, nn), "W[%d][%d]", kk, nn)
		assert.Equal(t, code, w.QAt(kk, nn), "repacked code of W[%d][%d]", kk, nn)
	}
	tests := []struct {
		name string
		x    *mxfp4
		want string
	}{
		{"short blocks", &mxfp4{N: n, K: k, Blocks: x.Blocks[1:], Scales: x.Scales}, "block bytes"},
		{"NaN scale", &mxfp4{N: n, K: k, Blocks: x.Blocks, Scales: append([]byte{255}, x.Scales[1:]...)}, "NaN"},
		{"K not a multiple of 128", &mxfp4{N: n, K: 96, Blocks: make([]byte, n*48), Scales: make([]byte, n*3)}, "K=96"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.x.packed()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
