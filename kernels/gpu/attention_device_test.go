package gpu

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
)

// attnTolerance is the relative (Frobenius) error allowed against the
// float64 reference: bf16 probabilities in the P.V product and a bf16
// output (2^-9 relative each) bound it near 4e-3.
const attnTolerance = 1e-2

// onDeviceAttention makes device 0 current and loads attention.cu, or
// skips where there is no driver.
func onDeviceAttention(t *testing.T) (*AttentionModule, cuda.Stream) {
	t.Helper()
	dev, s := onGPU(t, cuda.Init, cuda.NoGPU)
	m, err := LoadAttention(dev)
	require.NoError(t, err)
	t.Logf("attention kernels from %s on %d SMs; blocks/SM %v", m.Image, m.SMs, m.PerSM)
	return m, s
}

// runAttention uploads q and the caches, poisons the output with NaN,
// launches twice and reads the output back as rows of the output dim.
func runAttention(t *testing.T, m *AttentionModule, s cuda.Stream, p attnPlan, q []BF16, k, v *KVCache) [][]BF16 {
	t.Helper()
	var free []cuda.DevicePtr
	defer func() {
		for _, b := range free {
			cuda.Free(b)
		}
	}()
	up := func(p cuda.DevicePtr, err error) cuda.DevicePtr {
		t.Helper()
		require.NoError(t, err)
		free = append(free, p)
		return p
	}
	lens := make([]int32, len(k.Lens))
	for i, l := range k.Lens {
		lens[i] = int32(l)
	}
	b := attnBuffers{Q: up(Upload(q, 2)), K: up(Upload(k.Data, 2)), Lens: up(Upload(lens, 4)), KVStride: int64(k.Stride)}
	if v != nil {
		b.V = up(Upload(v.Data, 2))
	}
	if k.Table != nil {
		b.Table = up(Upload(k.FlatTable(p.MaxPages), 4))
	}
	b.Out = up(cuda.Alloc(int64(p.OutElems()) * 2))
	require.NoError(t, cuda.Memset8(b.Out, 0xff, int64(p.OutElems())*2))
	if p.Splits > 1 {
		b.Partial = up(cuda.Alloc(p.PartialBytes()))
		require.NoError(t, cuda.Memset32(b.Partial, 0x7fc00000, p.PartialBytes()/4))
		b.LSE = up(cuda.Alloc(p.LSEBytes()))
		require.NoError(t, cuda.Memset32(b.LSE, 0x7fc00000, p.LSEBytes()/4))
	}
	require.NoError(t, cuda.Synchronize())
	args, err := p.Args(b)
	require.NoError(t, err)
	for rep := 0; rep < 2; rep++ {
		require.NoError(t, m.Launch(p, args, s))
	}
	require.NoError(t, s.Synchronize())
	flat := make([]BF16, p.OutElems())
	require.NoError(t, cuda.CopyFromDevice(flat, b.Out))
	rows := p.Batch * p.Heads
	out := make([][]BF16, rows)
	for i := range out {
		out[i] = flat[i*p.outDim : (i+1)*p.outDim]
	}
	return out
}

func TestMLAOnDevice(t *testing.T) {
	m, s := onDeviceAttention(t)
	cases := []struct {
		name  string
		heads int
		lens  []int
		opt   AttnOptions
	}{
		{"one split, 16 heads", 16, []int{1000}, AttnOptions{Splits: 1}},
		{"kimi tp8: 8 heads, paged, ragged", 8, []int{1, 77, 1000}, AttnOptions{Paged: true}},
		{"128 heads, 16 splits, paged", 128, []int{4096, 3000}, AttnOptions{Splits: 16, Paged: true}},
		{"40 heads, 3 stages", 40, []int{513}, AttnOptions{Tile: 32, Stages: 3}},
		{"one token", 16, []int{1, 1}, AttnOptions{}},
		{"many splits", 16, []int{8192}, AttnOptions{Splits: 200, Paged: true}},
		{"16-token tiles, 4 stages", 8, []int{1, 77, 1000}, AttnOptions{Tile: 16, Stages: 4, Paged: true}},
		{"16-token tiles, 6 stages", 128, []int{4096, 3000}, AttnOptions{Tile: 16, Stages: 6, Splits: 7}},
		{"32-token tiles, 3 stages, 256 splits", 16, []int{16384}, AttnOptions{Tile: 32, Stages: 3, Splits: 256, Paged: true}},
		{"two head tiles, 128 heads", 128, []int{4096, 3000}, AttnOptions{HeadTiles: 2, Splits: 5, Paged: true}},
		{"two head tiles, 40 heads", 40, []int{513}, AttnOptions{HeadTiles: 2}},
		{"two head tiles, 8 heads (one empty tile)", 8, []int{1, 77, 1000}, AttnOptions{HeadTiles: 2, Paged: true}},
		{"two head tiles, 16-token tiles", 64, []int{2000}, AttnOptions{HeadTiles: 2, Tile: 16, Stages: 4, Paged: true}},
	}
	// No subtests: the context is current on this test's locked OS thread
	// only.
	for i, tc := range cases {
		{
			rng := rand.New(rand.NewPCG(uint64(i+1), 3))
			longest := 0
			for _, l := range tc.lens {
				longest = max(longest, l)
			}
			p, err := m.PlanMLA(len(tc.lens), tc.heads, longest, tc.opt)
			require.NoError(t, err, tc.name)
			kv := randomKVCache(rng, MLADim, tc.lens, tc.opt.Paged)
			q := randomBF16(rng, p.QElems())
			got := runAttention(t, m, s, p, q, kv, nil)
			ref, err := referenceMLA(q, tc.heads, kv, p.Scale)
			require.NoError(t, err)
			e, err := relError(got, ref)
			require.NoError(t, err)
			t.Logf("%s: %d splits of %d tokens, %d blocks: rel error %.2e", tc.name, p.Splits, p.Chunk, p.Blocks(), e)
			assert.Less(t, e, attnTolerance, tc.name)
		}
	}
}

func TestGQAOnDevice(t *testing.T) {
	m, s := onDeviceAttention(t)
	cases := []struct {
		name                string
		heads, kvHeads, dim int
		lens                []int
		opt                 AttnOptions
	}{
		{"qwen3-235b tp1 64/4, paged", 64, 4, 128, []int{300, 2048}, AttnOptions{Paged: true}},
		{"gpt-oss tp1 64/8 d64, ragged", 64, 8, 64, []int{1, 64, 1111}, AttnOptions{}},
		{"8/1, 8 splits, 3 stages", 8, 1, 128, []int{4096}, AttnOptions{Splits: 8, Stages: 3}},
		{"llama-4 tp1 40/8", 40, 8, 128, []int{777}, AttnOptions{Paged: true}},
		{"5/1 d64", 5, 1, 64, []int{2000, 65}, AttnOptions{Stages: 3, Paged: true}},
		{"32 per kv head (two tiles)", 64, 2, 128, []int{1500}, AttnOptions{}},
		{"one split", 16, 2, 64, []int{3000}, AttnOptions{Splits: 1}},
	}
	for i, tc := range cases {
		{
			rng := rand.New(rand.NewPCG(uint64(i+1), 5))
			longest := 0
			for _, l := range tc.lens {
				longest = max(longest, l)
			}
			p, err := m.PlanGQA(len(tc.lens), tc.heads, tc.kvHeads, tc.dim, longest, tc.opt)
			require.NoError(t, err)
			k := randomKVCache(rng, tc.kvHeads*tc.dim, tc.lens, tc.opt.Paged)
			v := &KVCache{Row: k.Row, Lens: k.Lens, Stride: k.Stride, Table: k.Table, Data: randomBF16(rng, len(k.Data))}
			q := randomBF16(rng, p.QElems())
			got := runAttention(t, m, s, p, q, k, v)
			ref, err := referenceGQA(q, tc.heads, tc.kvHeads, tc.dim, k, v, p.Scale)
			require.NoError(t, err)
			e, err := relError(got, ref)
			require.NoError(t, err)
			t.Logf("%s: %d splits of %d tokens, %d blocks: rel error %.2e", tc.name, p.Splits, p.Chunk, p.Blocks(), e)
			assert.Less(t, e, attnTolerance, tc.name)
		}
	}
}

// TestAttentionTimingOnDevice times decode attention at a spread of shapes
// and variants (MOECAST_ATTN_TIMING=FILE.json to run; the results go to
// FILE): a benchmark for the device runs, not a check.
func TestAttentionTimingOnDevice(t *testing.T) {
	path := os.Getenv("MOECAST_ATTN_TIMING")
	if path == "" {
		t.Skip("MOECAST_ATTN_TIMING not set")
	}
	m, s := onDeviceAttention(t)
	var cases []AttnCase
	shapes := [][2]int{{1, 4096}, {1, 32768}, {1, 131072}, {8, 8192}, {32, 4096}, {64, 8192}, {128, 4096}, {256, 2048}, {256, 16384}}
	for _, v := range mlaVariants {
		for _, bl := range shapes {
			cases = append(cases, AttnCase{Name: fmt.Sprintf("mla 8 heads t%d s%d", v[0], v[1]), MLA: true, Batch: bl[0], Heads: 8,
				KVLen: bl[1], Opt: AttnOptions{Tile: v[0], Stages: v[1], Paged: true}})
		}
	}
	for _, st := range gqaStages {
		for _, bl := range shapes {
			for _, g := range [][3]int{{64, 4, 128}, {64, 8, 64}, {8, 1, 128}} {
				cases = append(cases, AttnCase{Name: fmt.Sprintf("gqa %d/%d d%d s%d", g[0], g[1], g[2], st), Batch: bl[0], Heads: g[0],
					KVHeads: g[1], HeadDim: g[2], KVLen: bl[1], Opt: AttnOptions{Stages: st, Paged: true}})
			}
		}
	}
	for _, bl := range [][2]int{{1, 4096}, {32, 4096}, {128, 4096}} {
		for _, h := range []int{16, 32, 64, 128} {
			cases = append(cases, AttnCase{Name: fmt.Sprintf("mla %d heads", h), MLA: true, Batch: bl[0], Heads: h, KVLen: bl[1], Opt: AttnOptions{Paged: true}})
		}
	}
	// The shapes of kernels/testdata/measure_h200_attention.json (PyTorch
	// SDPA on the same H200), for a side-by-side.
	for _, g := range [][3]int{{16, 1, 128}, {64, 8, 64}} {
		for _, b := range []int{1, 8, 64} {
			for _, l := range []int{1024, 8192} {
				cases = append(cases, AttnCase{Name: fmt.Sprintf("gqa sdpa-peer %d/%d d%d", g[0], g[1], g[2]), Batch: b, Heads: g[0],
					KVHeads: g[1], HeadDim: g[2], KVLen: l, Opt: AttnOptions{Paged: true}})
			}
		}
	}
	for _, sp := range []int{32, 64, 132, 264} {
		cases = append(cases, AttnCase{Name: fmt.Sprintf("mla splits %d", sp), MLA: true, Batch: 1, Heads: 8, KVLen: 131072, Opt: AttnOptions{Splits: sp, Paged: true}})
	}
	var res []AttnResult
	for _, c := range cases {
		r, err := MeasureAttention(m, c, 256<<20, s)
		if err != nil {
			t.Logf("%s batch %d kv %d: %v", c.Name, c.Batch, c.KVLen, err)
			continue
		}
		t.Logf("%-26s b=%3d L=%6d paged=%v %s splits=%3d: %8.1f us (%.1f-%.1f) %.2f TB/s, eager %.1f us",
			c.Name, c.Batch, c.KVLen, c.Opt.Paged, r.Kernel, r.Splits, r.GraphSeconds*1e6, r.GraphMin*1e6, r.GraphMax*1e6,
			r.BytesPerSec/1e12, r.LaunchSeconds*1e6)
		res = append(res, r)
		b, err := json.MarshalIndent(res, "", " ") // after each case: a run cut short keeps what it measured
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
}
