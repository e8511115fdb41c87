package gpu

import (
	"slices"
	"testing"
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
		{"tp8 gate_up M=1024", 1024, 512, 7168, false},
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
		{bigMT, 4, 4, 0, false, 256}:         "w4a16_mt8_n256",
		{bigMT, 3, 4, 0, false, 256}:         "w4a16_mt8_s3_n256",
		{bigMT, 4, 4, modeWGMMA, false, 256}: "w4a16_mt8_wg_n256",
		{bigMT, 4, 4, modeWGMMA, false, 128}: "w4a16_mt8_w4_wg",
		{bigMT, 5, 4, modeWGMMA, false, 128}: "w4a16_mt8_s5_w4_wg",
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
		tile := 16 * bigMT * (v.BN + 8) * 4
		if v.Smem() > 227<<10 || v.Smem() < tile {
			t.Errorf("%s: %d B of shared memory: want the fp32 tile's %d..227 KiB", want, v.Smem(), tile)
		}
		if stage := (tileK*v.BN/2 + v.BN/64*512 + 16*bigMT*tileK*2); v.Mode == modeWGMMA && v.Smem() != max(v.Stages*stage, tile)+1024 {
			t.Errorf("%s: %d B of shared memory, want %d stages of %d B and 1 KiB", want, v.Smem(), v.Stages, stage)
		}
	}
}
