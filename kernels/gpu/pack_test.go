package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToBF16(t *testing.T) {
	tests := []struct {
		in   float32
		want BF16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{128, 0x4300},
		{1 + 1.0/256, 0x3f80},        // tie, even stays
		{1 + 3.0/256, 0x3f82},        // tie, odd rounds up
		{1 + 1.0/256 + 1e-6, 0x3f81}, // above the tie
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, toBF16(tt.in), "%v", tt.in)
	}
	assert.True(t, math.IsNaN(float64(toBF16(float32(math.NaN())).Float32())))
	assert.Equal(t, float32(136), BF16(0x4308).Float32(), "the kernel's 128+8 constant")
}

func TestCheckShape(t *testing.T) {
	assert.NoError(t, checkShape(256, 7168, 32))
	assert.ErrorContains(t, checkShape(256, 7168, 16), "group size 16")
	assert.ErrorContains(t, checkShape(200, 7168, 32), "N=200")
	assert.ErrorContains(t, checkShape(256, 100, 32), "K=100")
	_, err := Repack(&packQuantized{N: 128, K: 128, Group: 32, Packed: make([]int32, 3)})
	assert.ErrorContains(t, err, "weight_packed has 3 words, want N*K/8 = 2048")
}

// TestCompressedTensorsOrder pins the source layout: nibble j of word
// [n][k/8] is column k = 8*(k/8) + j, lowest bits first, stored as q + 8.
func TestCompressedTensorsOrder(t *testing.T) {
	p := &packQuantized{N: 128, K: 128, Group: 128, Packed: make([]int32, 128*16), Scales: make([]BF16, 128)}
	p.Packed[5*16+2] = int32(0x76543210 - 0x100000000 + 0x80000000) // nibbles 0..7 = 0,1,2,...,6,f
	for i := range p.Scales {
		p.Scales[i] = toBF16(0.5)
	}
	for j := 0; j < 7; j++ {
		assert.Equal(t, j, p.Q(16+j, 5))
		assert.Equal(t, float64(j-8)*0.5, p.Weight(16+j, 5))
	}
	assert.Equal(t, 0xf, p.Q(23, 5))
}

func TestRepackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, g := range []int{32, 64, 128} {
		p, err := randomPackQuantized(rng, 256, 384, g)
		require.NoError(t, err)
		w, err := Repack(p)
		require.NoError(t, err)
		assert.Equal(t, int64(256*384/2+256*384/g*2), w.Bytes())
		for n := 0; n < p.N; n++ {
			for k := 0; k < p.K; k++ {
				if w.QAt(k, n) != p.Q(k, n) || w.ScaleAt(k, n) != p.Scales[n*(p.K/g)+k/g] {
					t.Fatalf("group %d: [k=%d][n=%d] moved wrong", g, k, n)
				}
			}
		}
	}
}

// TestFragments reads the repacked words as the kernel does (uint4 per lane
// and k16 step, shifts 0/4/8/12, mask 0x000F000F) and checks that each
// register holds the mma.sync m16n8k16 B fragment: b0 = W[2(l%4)+{0,1}][l/4],
// b1 = W[2(l%4)+8+{0,1}][l/4] of each 8-column tile, and that the lane's
// 16-byte scale word holds its eight tiles' scales.
func TestFragments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p, err := randomPackQuantized(rng, 256, 256, 32)
	require.NoError(t, err)
	w, err := Repack(p)
	require.NoError(t, err)
	groups := p.K / p.Group
	for c := 0; c < p.N/64; c++ {
		for s := 0; s < p.K/16; s++ {
			for l := 0; l < 32; l++ {
				base := ((c*(p.K/16)+s)*32 + l) * 4
				sbase := (c*groups+s*16/p.Group)*64 + 8*(l/4)
				for j := 0; j < 4; j++ {
					word := w.Q[base+j]
					for i := 0; i < 4; i++ {
						x := (word >> (4 * i)) & 0x000F000F
						lo, hi := int(x&0xf), int(x>>16)
						tile := 2*j + i/2
						n := 64*c + 8*tile + l/4
						k := 16*s + 2*(l%4) + 8*(i%2)
						if lo != p.Q(k, n) || hi != p.Q(k+1, n) {
							t.Fatalf("chunk %d step %d lane %d word %d shift %d: got (%d,%d) want (%d,%d)",
								c, s, l, j, 4*i, lo, hi, p.Q(k, n), p.Q(k+1, n))
						}
						if w.S[sbase+tile] != p.Scales[n*groups+k/p.Group] {
							t.Fatalf("scale of lane %d tile %d", l, tile)
						}
					}
				}
			}
		}
	}
}

// TestDequantTrick checks the kernel's int4 -> bf16 arithmetic on every
// nibble: bf16(0x4300 | q) - 136 is q - 8 exactly.
func TestDequantTrick(t *testing.T) {
	for q := 0; q < 16; q++ {
		v := BF16(0x4300 | q).Float32()
		assert.Equal(t, float32(q-8), v-BF16(0x4308).Float32())
		assert.Equal(t, float32(128+q), v)
	}
}

func TestReferenceGEMM(t *testing.T) {
	p := &packQuantized{N: 128, K: 128, Group: 64, Packed: make([]int32, 128*16), Scales: make([]BF16, 256)}
	for i := range p.Packed {
		p.Packed[i] = int32(-0x66666667) // every nibble 9: W = +1 * scale
	}
	for i := range p.Scales {
		p.Scales[i] = toBF16(0.25)
	}
	a := make([]BF16, 2*128)
	for i := range a {
		a[i] = toBF16(1)
	}
	ref := referenceGEMM(a, 2, p, []int{1})
	require.Len(t, ref, 1)
	assert.InDelta(t, 128*0.25, ref[0][7], 1e-12)
	got := [][]BF16{make([]BF16, 128)}
	for j := range got[0] {
		got[0][j] = toBF16(32)
	}
	e, err := relError(got, ref)
	require.NoError(t, err)
	assert.Equal(t, 0.0, e)
	got[0][3] = 0xffff
	_, err = relError(got, ref)
	assert.ErrorContains(t, err, "output [0][3]")
}

// BenchmarkRepack reports weights repacked per second (a Kimi-K2.5 expert's
// gate_up shard, 4096 x 7168).
func BenchmarkRepack(b *testing.B) {
	p, err := randomPackQuantized(rand.New(rand.NewPCG(5, 6)), 4096, 7168, 32)
	require.NoError(b, err)
	b.ResetTimer()
	for range b.N {
		if _, err := Repack(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(p.N*p.K)/b.Elapsed().Seconds(), "weights/s")
}
