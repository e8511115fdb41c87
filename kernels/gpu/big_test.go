package gpu

import (
	"slices"
	"strings"
	"testing"

	"github.com/moecast/moecast/internal/cuda"
)

// TestBigDense pins the large-batch tile's default rule to the H200 runs it
// came from (bench/gpu-w4a16-runs/run9: which tile was faster, 132 SMs).
func TestBigDense(t *testing.T) {
	for _, c := range []struct {
		name    string
		M, N, K int
		want    bool
	}{
		{"dense up M=128", 128, 18432, 7168, false},
		{"dense up M=256", 256, 18432, 7168, true},
		{"expert gate_up M=256", 256, 4096, 7168, true},
		{"expert down M=256", 256, 7168, 2048, false},
		{"expert down M=512", 512, 7168, 2048, true},
		{"tp8 gate_up M=256", 256, 512, 7168, false},
		{"tp8 gate_up M=512", 512, 512, 7168, true},   // run15: 128-column stream-K 19.4 us, the 64-row tile 21.3
		{"tp8 gate_up M=1024", 1024, 512, 7168, true}, // run15: 25.2 us, the 64-row tile 32.4
		{"tp8 gate_up M=2048", 2048, 512, 7168, true},
		{"tp8 down M=256", 256, 7168, 256, false},
		{"tp8 down M=512", 512, 7168, 256, true},
	} {
		if got := bigDense(c.M, c.N, c.K, 132); got != c.want {
			t.Errorf("%s: bigDense = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestBigVariants(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		image        string
		want         bool
	}{
		{9, 0, "w4a16.sm_90.cubin", true},
		{9, 0, "/tmp/build/w4a16.sm_90.cubin", true},
		{9, 0, "w4a16.compute_80.ptx", false},
		{8, 0, "w4a16.sm_80.cubin", false},
		{12, 0, "w4a16.sm_120.cubin", false},
	} {
		if got := hasWGMMA(c.major, c.minor, c.image); got != c.want {
			t.Errorf("hasWGMMA(%d.%d, %s) = %v, want %v", c.major, c.minor, c.image, got, c.want)
		}
	}
	names := map[Variant]string{
		{bigMT, 4, 4, 0, false, 256}:             "w4a16_mt8_n256",
		{bigMT, 3, 4, 0, false, 256}:             "w4a16_mt8_s3_n256",
		{bigMT, 4, 4, modeWGMMA, false, 256}:     "w4a16_mt8_wg_n256",
		{bigMT, 4, 4, modeWGMMA, false, 128}:     "w4a16_mt8_w4_wg",
		{bigMT, 5, 4, modeWGMMA, false, 128}:     "w4a16_mt8_s5_w4_wg",
		{4, 3, 4, modeWGMMA, false, 256}:         "w4a16_mt4_s3_wg_n256",
		{4, 4, 4, modeWGMMA, false, 128}:         "w4a16_mt4_w4_wg",
		{bigMT, 4, 4, modeWGPersist, false, 128}: "w4a16_mt8_w4_wgp",
	}
	for v, want := range names {
		if v.Name() != want {
			t.Errorf("%+v: name %s, want %s", v, v.Name(), want)
		}
		if !slices.Contains(Variants, v) {
			t.Errorf("%s is not among the Variants", want)
		}
		// Hopper allows 227 KiB of dynamic shared memory a block; the
		// wgmma tile's stages of (BN/2 + BN/8 + 256) x 128 B start at a 1 KiB
		// boundary (the kernel aligns them: 1 KiB more).
		tile := 16 * v.MT * (v.BN + 8) * 4
		if v.Mode == modeWGPersist { // stages bf16 halves of the tile in two slots
			tile = 0
		}
		if v.Smem() > 227<<10 || v.Smem() < tile {
			t.Errorf("%s: %d B of shared memory: want the fp32 tile's %d..227 KiB", want, v.Smem(), tile)
		}
		if stage := (tileK*v.BN/2 + v.BN/64*512 + 16*v.MT*tileK*2); wgmmaMode(v.Mode) && v.Smem() != max(v.Stages*stage, tile)+1024 {
			t.Errorf("%s: %d B of shared memory, want %d stages of %d B and 1 KiB", want, v.Smem(), v.Stages, stage)
		}
		// The 64-row wgmma tiles run two blocks a multiprocessor: 228 KiB
		// a Hopper SM, 1 KiB of it reserved a block.
		if v.MT == 4 && 2*(v.Smem()+1024) > 228<<10 {
			t.Errorf("%s: %d B of shared memory: two blocks do not fit an SM", want, v.Smem())
		}
	}
}

// TestWGTiles pins the wgmma tile's default plan to the H200 run it came
// from (bench/gpu-w4a16-runs/run12, 132 SMs, one block each): in each case
// the fastest there of whole 256-column tiles, whole 128-column tiles and
// 256-column stream-K (the comments: the times of run12).
func TestWGTiles(t *testing.T) {
	for _, c := range []struct {
		name      string
		M, N, K   int
		bn        int
		wantWhole bool
	}{
		{"expert gate_up M=512", 512, 4096, 7168, 128, true},   // 58.0 us; 256 stream-K 66.9, whole 88.1
		{"expert gate_up M=1024", 1024, 4096, 7168, 256, true}, // 92.7; stream-K 127.2
		{"expert gate_up M=2048", 2048, 4096, 7168, 256, true}, // 192.9; stream-K 225.8
		{"expert down M=512", 512, 7168, 2048, 256, true},      // 30.2; stream-K 56.1
		{"expert down M=2048", 2048, 7168, 2048, 256, true},    // 115.9; stream-K 133.6
		{"o_proj M=512", 512, 7168, 8192, 256, true},           // 104.2; stream-K 128.9
		{"dense up M=512", 512, 18432, 7168, 256, false},       // 261.3; whole 281.7
		{"dense up M=2048", 2048, 18432, 7168, 256, true},      // 920.0; stream-K 936.1
		{"tp8 gate_up M=512", 512, 512, 7168, 128, false},      // run15: 19.4; 256 stream-K 26.2
		{"tp8 gate_up M=1024", 1024, 512, 7168, 128, false},    // run15: 25.2; 256 stream-K 31.0
		{"tp8 gate_up M=2048", 2048, 512, 7168, 128, false},    // run15: 39.5; 256 stream-K 41.9; run12: whole 88.3, 128 whole 53.2
		{"tp8 down M=2048", 2048, 7168, 256, 256, true},        // 29.5; stream-K 47.5
	} {
		bn, whole := wgTiles((c.M+127)/128, c.N, c.K/tileK, 132, true)
		if bn != c.bn || whole != c.wantWhole {
			t.Errorf("%s: %d columns, whole %v; want %d, %v", c.name, bn, whole, c.bn, c.wantWhole)
		}
	}
	// A default plan of whole tiles cuts none: no workspace.
	m := &Module{SMs: 132, PerSM: map[Variant]int{}, fn: map[Variant]cuda.Function{}}
	for _, v := range Variants {
		var f cuda.Function
		m.fn[v], m.PerSM[v] = f, 1
	}
	p, err := m.PlanGEMM(512, 7168, 2048, 32, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.MT != bigMT || p.Mode != modeWGMMA || p.BN != 256 || p.Units != 16 || p.MaxParts != 1 || p.Blocks != 112 || p.WorkspaceBytes() != 0 {
		t.Errorf("expert down M=512: %+v, want 112 blocks of one whole 128 x 256 tile", p)
	}
	p, err = m.PlanGEMM(512, 4096, 7168, 32, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.BN != 128 || p.Units != 56 || p.MaxParts != 1 || p.Blocks != 128 {
		t.Errorf("expert gate_up M=512: %+v, want 128 blocks of one whole 128 x 128 tile", p)
	}
	// Explicit options keep stream-K.
	p, err = m.PlanGEMM(512, 7168, 2048, 32, Options{MT: bigMT, BN: 256, WN: 4, Mode: modeWGMMA})
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxParts < 2 {
		t.Errorf("explicit wgmma options: %+v, want stream-K's cut tiles", p)
	}
}

// TestWGDefaultShapes pins the plans TestWGDefaultOnDevice checks on the
// device: one of each kind on 132 SMs.
func TestWGDefaultShapes(t *testing.T) {
	for _, c := range []struct {
		M, N, K int
		bn      int
		whole   bool
	}{{260, 5632, 256, 128, true}, {260, 7168, 1024, 256, true}, {300, 1024, 11264, 128, false}, {1000, 512, 7168, 128, false},
		{2100, 7168, 256, 256, true}, {512, 512, 7168, 128, false}} {
		if !bigDense(c.M, c.N, c.K, 132) {
			t.Errorf("%d x %d x %d: not the large-batch tile", c.M, c.N, c.K)
		}
		if bn, whole := wgTiles((c.M+127)/128, c.N, c.K/tileK, 132, true); bn != c.bn || whole != c.whole {
			t.Errorf("%d x %d x %d: %d columns, whole %v; want %d, %v", c.M, c.N, c.K, bn, whole, c.bn, c.whole)
		}
	}
}

// TestWGDense pins wgDense's two refinements on a 132-SM device with one
// wgmma block an SM (two of the 64-row tile): the persistent grid of
// 128-column tiles for more than two waves of whole 256-column tiles of
// short K, the 64-row tile for narrow stream-K.
func TestWGDense(t *testing.T) {
	m := &Module{SMs: 132, PerSM: map[Variant]int{}, fn: map[Variant]cuda.Function{}}
	for _, v := range Variants {
		var f cuda.Function
		m.fn[v], m.PerSM[v] = f, 1
		if v.MT == 4 && v.Mode == modeWGMMA {
			m.PerSM[v] = 2
		}
	}
	for _, c := range []struct {
		name          string
		M, N, K       int
		mt, mode, bn  int
		units, blocks int
	}{
		{"tp8 down M=2048: persistent 128-column tiles, one block an SM", 2048, 7168, 256, bigMT, modeWGPersist, 128, 2, 132},
		{"tp8 down M=1024: two waves keep whole tiles", 1024, 7168, 256, bigMT, modeWGMMA, 256, 2, 224},
		{"tp8 down M=512: one wave keeps whole tiles", 512, 7168, 256, bigMT, modeWGMMA, 256, 2, 112},
		{"expert down M=2048: long K keeps whole tiles", 2048, 7168, 2048, bigMT, modeWGMMA, 256, 16, 448},
		{"tp8 gate_up M=512: the 64-row tile's stream-K", 512, 512, 7168, 4, modeWGMMA, 128, 7, 256},
		{"tp8 gate_up M=1024: the 128-row tile's", 1024, 512, 7168, bigMT, modeWGMMA, 128, 14, 128},
	} {
		p, err := m.PlanGEMM(c.M, c.N, c.K, 32, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.MT != c.mt || p.Mode != c.mode || p.BN != c.bn || p.Units != c.units || p.Blocks != c.blocks {
			t.Errorf("%s: plan %s mt %d mode %d bn %d units %d blocks %d; want mt %d mode %d bn %d units %d blocks %d",
				c.name, p.Variant().Name(), p.MT, p.Mode, p.BN, p.Units, p.Blocks, c.mt, c.mode, c.bn, c.units, c.blocks)
		}
	}
	// The persistent tile: MoE plans and splits are refused; Units caps the tiles a block runs.
	_, err := m.PlanGEMM(1100, 7168, 256, 32, Options{MT: bigMT, BN: 128, WN: 4, Mode: modeWGPersist, Splits: 2})
	if err == nil || !strings.Contains(err.Error(), "whole tiles of dense GEMMs only") {
		t.Errorf("persistent tile with splits: %v", err)
	}
	p, err := m.PlanGEMM(1100, 7168, 256, 32, Options{MT: bigMT, BN: 128, WN: 4, Mode: modeWGPersist, Units: 3})
	if err != nil || p.Blocks != 168 || p.MaxParts != 1 || p.WorkspaceBytes() != 0 {
		t.Errorf("persistent tile, 3 tiles a block: %+v, %v; want 168 blocks of 504 tiles, no workspace", p, err)
	}
	// The 256-column persistent tile is not loaded (it failed the device checks).
	if _, err := m.PlanGEMM(1100, 7168, 256, 32, Options{MT: bigMT, BN: 256, WN: 4, Mode: modeWGPersist}); err == nil {
		t.Error("the 256-column persistent tile was planned")
	}
}
