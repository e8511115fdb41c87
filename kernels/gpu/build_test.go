package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildMatchesSource fails when a kernel source changed after its
// images were built: rebuild them with kernels/gpu/build.sh where nvcc is.
func TestBuildMatchesSource(t *testing.T) {
	man, err := Manifest()
	require.NoError(t, err)
	stems := Stems()
	require.Contains(t, stems, "w4a16")
	for _, stem := range stems {
		src, err := fs.ReadFile(Sources, stem+".cu")
		require.NoError(t, err)
		require.Equal(t, hashOf(src), man[stem+".cu"],
			"kernels/gpu/build is stale or missing: %s.cu changed since its images were built; run kernels/gpu/build.sh", stem)
		for _, name := range []string{stem + ".sm_80.cubin", stem + ".compute_80.ptx"} {
			assert.Contains(t, man, name, "the build must hold %s", name)
		}
	}
	entries, err := fs.ReadDir(Build, "build")
	require.NoError(t, err)
	images := 0
	for _, e := range entries {
		if e.Name() == "MANIFEST" {
			continue
		}
		images++
		b, err := fs.ReadFile(Build, "build/"+e.Name())
		require.NoError(t, err)
		h := sha256.Sum256(b)
		assert.Equal(t, man[e.Name()], hex.EncodeToString(h[:]), "%s differs from the manifest", e.Name())
	}
	assert.Equal(t, len(man)-len(stems), images, "the manifest lists images that are not embedded")
}

func TestImageChoice(t *testing.T) {
	tests := []struct {
		major, minor int
		want         string
	}{
		{8, 0, "w4a16.sm_80.cubin"},
		{8, 6, "w4a16.sm_80.cubin"},
		{8, 9, "w4a16.sm_80.cubin"},
		{9, 0, "w4a16.sm_90.cubin"},
		{12, 0, "w4a16.sm_120.cubin"},
		{12, 1, "w4a16.sm_120.cubin"},
		{10, 0, "w4a16.compute_80.ptx"},
	}
	man, err := Manifest()
	require.NoError(t, err)
	for _, tt := range tests {
		if _, ok := man[tt.want]; !ok {
			tt.want = "w4a16.compute_80.ptx" // not built here: the PTX stands in
		}
		name, img, err := Image(tt.major, tt.minor)
		require.NoError(t, err)
		assert.Equal(t, tt.want, name, "sm_%d%d", tt.major, tt.minor)
		assert.NotEmpty(t, img)
	}
	_, _, err = Image(7, 5)
	assert.ErrorContains(t, err, "sm_75: the kernels need sm_80 or newer")
}

func TestPlans(t *testing.T) {
	m := &Module{SMs: 132} // 2 blocks per SM where the occupancy is unknown
	tests := []struct {
		name                          string
		M, N, K                       int
		o                             Options
		mt, mb, nb, units, blocks, mp int
	}{
		{"decode gate_up: 8 runs a tile", 1, 4096, 7168, Options{}, 1, 1, 32, 7, 256, 8},
		{"decode down", 8, 7168, 2048, Options{}, 1, 1, 56, 4, 224, 4},
		{"M=32", 32, 4096, 7168, Options{}, 2, 1, 32, 7, 256, 8},
		{"M=512: 256-column tiles, runs of 28", 512, 4096, 7168, Options{}, 4, 8, 16, 28, 256, 2},
		{"M=512 on 128-column tiles: runs of 55 over tiles of 56", 512, 4096, 7168, Options{WN: 2}, 4, 8, 32, 55, 261, 2},
		{"wide N: up to 3 runs a tile", 1, 18432, 7168, Options{}, 1, 1, 144, 31, 261, 3},
		{"tp8 gate_up: 4 iterations at least", 1, 512, 7168, Options{}, 1, 1, 4, 4, 56, 14},
		{"tp8 down: no tile cut", 1, 7168, 256, Options{}, 1, 1, 56, 2, 56, 1},
		{"forced split", 3, 256, 640, Options{Splits: 5}, 1, 1, 2, 1, 10, 5},
		{"split rounded", 3, 256, 640, Options{Splits: 4}, 1, 1, 2, 2, 5, 3},
		{"one tile a block", 3, 256, 640, Options{Units: 5}, 1, 1, 2, 5, 2, 1},
		{"two tiles a block", 3, 256, 640, Options{Units: 10}, 1, 1, 2, 10, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := m.PlanGEMM(tt.M, tt.N, tt.K, 32, tt.o)
			require.NoError(t, err)
			assert.Equal(t, []int{tt.mt, tt.mb, tt.nb, tt.units, tt.blocks, tt.mp},
				[]int{p.MT, p.MBlocks, p.NBlocks, p.Units, p.Blocks, p.MaxParts})
			work := p.MBlocks * p.NBlocks * p.K / tileK
			assert.GreaterOrEqual(t, p.Blocks*p.Units, work)
			assert.Less(t, (p.Blocks-1)*p.Units, work, "no empty block")
			assert.LessOrEqual(t, p.Blocks, 264, "one wave")
		})
	}
	m4 := &Module{SMs: 132, PerSM: map[Variant]int{{4, 4, 4, 0, false, 256}: 1}}
	p4, err := m4.PlanGEMM(512, 4096, 7168, 32, Options{})
	require.NoError(t, err)
	assert.Equal(t, []int{55, 131, 256}, []int{p4.Units, p4.Blocks, p4.BN}, "one block per SM: one wave of at most 132")
	for _, tt := range []struct {
		name         string
		M, N, K      int
		wn, bn, mode int
	}{
		{"decode M=1: swapped operands, 2 warps along N", 1, 7168, 8192, 2, 128, modeSwap},
		{"M=8: swapped operands", 8, 7168, 8192, 2, 128, modeSwap},
		{"M=9: 4 warps along N", 9, 7168, 8192, 4, 128, 0},
		{"M=32: 2 warps along N", 32, 4096, 7168, 2, 128, 0},
		{"M=64, 72 tiles of 256 columns: over SMs/2", 64, 18432, 7168, 4, 256, 0},
		{"M=64 on 16 tiles of 256: down projection, 4 warps along N", 64, 4096, 2048, 4, 128, 0},
		{"M=64 on 16 tiles of 256, K=7168: 2 warps along N", 64, 4096, 7168, 2, 128, 0},
		{"N not a multiple of 256", 512, 384, 7168, 2, 128, 0},
	} {
		p, err := m.PlanGEMM(tt.M, tt.N, tt.K, 32, Options{})
		require.NoError(t, err, tt.name)
		assert.Equal(t, []int{tt.wn, tt.bn, tt.mode}, []int{p.WN, p.BN, p.Mode}, tt.name)
	}
	_, err = m.PlanGEMM(9, 7168, 8192, 32, Options{Mode: modeSwap})
	assert.ErrorContains(t, err, "swapped operands need a dense GEMM of at most 8 rows (M=9)")

	_, err = m.PlanGEMM(1, 4096, 7168, 32, Options{Splits: 57})
	assert.ErrorContains(t, err, "57 splits of K=7168: at most 56")
	_, err = m.PlanGEMM(64, 4096, 7168, 32, Options{Stages: 6})
	assert.ErrorContains(t, err, "no kernel with 64 rows, 6 stages")
	assert.Equal(t, "w4a16_mt1_s6", Variant{1, 6, 2, 0, false, 128}.Name())
	assert.Equal(t, "w4a16_mt4_w4", Variant{4, 4, 4, 0, false, 128}.Name())
	assert.Equal(t, "w4a16_mt1_ldonly", Variant{1, 4, 2, modeLoadOnly, false, 128}.Name())
	assert.Equal(t, "w4a16_mt1_s6_wp", Variant{1, 6, 2, 0, true, 128}.Name())
	assert.Equal(t, 6*(8192+1024+4096), Variant{1, 6, 2, 0, false, 128}.Smem())
	assert.Equal(t, 4*8*(1024+128+16*64), Variant{1, 4, 2, 0, true, 128}.Smem())
	assert.Equal(t, "w4a16_mt4_s3_n256", Variant{4, 3, 4, 0, false, 256}.Name())
	assert.Equal(t, 3*(16384+2048+16384), Variant{4, 3, 4, 0, false, 256}.Smem())
	_, err = m.PlanGEMM(64, 384, 256, 32, Options{BN: 256, MT: 4, WN: 4})
	assert.ErrorContains(t, err, "tiles of 256 columns need N % 256 == 0")
	src := string(Source)
	for _, v := range Variants {
		assert.Contains(t, src, fmt.Sprintf("W4A16_KERNEL(%s, %d, %d, %d, %d, %v, %d, ", v.Name(), v.MT, v.Stages, v.WN, v.Mode, v.WP, v.BN),
			"w4a16.cu defines each variant with its parameters")
	}
	_, err = m.PlanGEMM(0, 4096, 7168, 32, Options{})
	assert.ErrorContains(t, err, "M=0")

	p, err := m.PlanGEMM(1, 256, 256, 32, Options{Splits: 2})
	require.NoError(t, err)
	_, err = p.Args(Buffers{A: 1, W: 2, S: 3, C: 4, Counters: 6})
	assert.ErrorContains(t, err, "cuts tiles (2 parts) needs a workspace and counters")
	args, err := p.Args(Buffers{A: 1, W: 2, S: 3, C: 4, Workspace: 5, Counters: 6})
	require.NoError(t, err)
	assert.Equal(t, []byte{5, 0, 0, 0, 0, 0, 0, 0}, args.Bytes(4))
	assert.Equal(t, []byte{1, 0, 0, 0}, args.Bytes(12), "a_div of a dense GEMM")
	assert.Equal(t, []byte{1, 0, 0, 0}, args.Bytes(13), "m blocks")
	assert.Equal(t, []byte{1, 0, 0, 0}, args.Bytes(14), "units per block")
	assert.Equal(t, int64(4*2*16*128*4), p.WorkspaceBytes(), "two slots per block")
	assert.Equal(t, int64(2*4), p.CounterBytes())
	one, err := m.PlanGEMM(1, 256, 256, 32, Options{Units: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(0), one.WorkspaceBytes())
	_, err = one.Args(Buffers{A: 1, W: 2, S: 3, C: 4})
	assert.ErrorContains(t, err, "needs a workspace and counters")

	r := &Routing{Experts: 4, TopK: [][]int{{2, 0}, {2, 3}, {0, 2}}}
	a, err := Align(r, 16)
	require.NoError(t, err)
	mp, err := m.PlanMoE(a, 256, 256, 32, 2, Options{})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3, 6, 2}, []int{mp.MT, mp.MBlocks, mp.M, mp.ADiv})
	_, err = mp.Args(Buffers{A: 1, W: 2, S: 3, C: 4, Workspace: 5, Counters: 6})
	assert.ErrorContains(t, err, "MoE plans need sorted and expert ids")
	a, _ = Align(r, 24)
	_, err = m.PlanMoE(a, 256, 256, 32, 2, Options{})
	assert.ErrorContains(t, err, "moe block 24")
	assert.Equal(t, 16, moeBlockRows(1))
	assert.Equal(t, 64, moeBlockRows(40))
}

// The parallel fixup exists only in the kernels of at least parMinMT m16
// tiles (w4a16.cu's PAR_MIN_BM): no plan of fewer rows a block may ask for
// it, and the two constants agree.
func TestParallelFixupTiles(t *testing.T) {
	src := Source // the embedded w4a16.cu: the test binary runs anywhere (the device machine too)
	mm := regexp.MustCompile(`constexpr int PAR_MIN_BM = (\d+);`).FindSubmatch(src)
	require.NotNil(t, mm, "w4a16.cu: PAR_MIN_BM not found")
	assert.Equal(t, string(mm[1]), strconv.Itoa(16*parMinMT), "PAR_MIN_BM = 16 * parMinMT")

	m := &Module{SMs: 132, PerSM: map[Variant]int{}}
	for _, v := range Variants {
		m.PerSM[v] = 4 // every grid resident: only the tile decides
	}
	par := 0
	for _, mt := range []int{1, 2, 4, bigMT} {
		for _, shape := range [][2]int{{512, 7168}, {4096, 7168}, {18432, 7168}, {7168, 2048}} {
			for _, splits := range []int{0, 3, 8} {
				p, err := m.PlanGEMM(16*mt, shape[0], shape[1], 32, Options{MT: mt, Splits: splits})
				if err != nil {
					continue
				}
				if p.Coresident {
					par++
					assert.GreaterOrEqual(t, p.MT, parMinMT, "%+v: parallel fixup on a kernel without it", p)
				}
			}
		}
	}
	assert.Positive(t, par, "some plan of 64 or 128 rows takes the parallel fixup")
}
