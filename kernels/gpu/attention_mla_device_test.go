package gpu

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
)

// TestMLAModuleKernelsOnDevice checks the module's small kernels against
// host references: the two RMSNorms, the rotary embedding of q_pe (into the
// absorbed query) and k_pe, and the cache write at each sequence's last
// position of a paged cache.
func TestMLAModuleKernelsOnDevice(t *testing.T) {
	m, s := onDeviceAttention(t)
	k, err := m.moduleKernels()
	require.NoError(t, err)
	d := deepSeekV3MLA
	qkv := d.QLoRARank + d.KVLoRARank + d.QKRope
	const B, H = 3, 5
	lens := []int{5, 70, 130}
	rng := rand.New(rand.NewPCG(9, 9))
	y1 := randomBF16(rng, B*qkv)
	gq, gkv := randomBF16(rng, d.QLoRARank), randomBF16(rng, d.KVLoRARank)
	qb := randomBF16(rng, B*H*192)
	cache := randomKVCache(rng, MLADim, lens, true)
	maxPages := ceilDiv(130, pageSize)
	var bufs deviceBuffers
	defer bufs.free()
	up := func(host any, n int64) cuda.DevicePtr {
		var p cuda.DevicePtr
		var err error
		if h, ok := host.([]int32); ok { // blas.go's upload takes no int32
			p, err = uploadInt32(&bufs, h)
		} else {
			p, err = bufs.upload(host, n)
		}
		require.NoError(t, err)
		return p
	}
	dy := up(y1, int64(len(y1))*2)
	dgq, dgkv := up(gq, int64(len(gq))*2), up(gkv, int64(len(gkv))*2)
	dqb := up(qb, int64(len(qb))*2)
	dqa, err := bufs.alloc(int64(B*H*MLADim) * 2)
	require.NoError(t, err)
	require.NoError(t, cuda.Memset8(dqa, 0, int64(B*H*MLADim)*2))
	lens32 := []int32{5, 70, 130}
	dl := up(lens32, 12)
	dc := up(cache.Data, int64(len(cache.Data))*2)
	flat := cache.FlatTable(maxPages)
	dt := up(flat, int64(len(flat))*4)
	require.NoError(t, cuda.Synchronize())
	row, blk := cuda.Dim3{X: B, Y: 1, Z: 1}, cuda.Dim3{X: 128, Y: 1, Z: 1}
	require.NoError(t, k.rmsnorm.Launch(row, blk, 0, s, dy, int32(qkv), int32(d.QLoRARank), dgq, float32(1e-6)))
	require.NoError(t, k.rmsnorm.Launch(row, blk, 0, s, dy+cuda.DevicePtr(2*d.QLoRARank), int32(qkv), int32(d.KVLoRARank), dgkv, float32(1e-6)))
	require.NoError(t, k.rope.Launch(row, blk, 0, s, dqb, dqa, dy, int32(qkv), int32(H), dl))
	require.NoError(t, k.cacheWrite.Launch(row, cuda.Dim3{X: 96, Y: 1, Z: 1}, 0, s, dy, int32(qkv), dc, dt, dl, int32(maxPages), int64(0)))
	require.NoError(t, s.Synchronize())
	gy := make([]BF16, len(y1))
	require.NoError(t, cuda.CopyFromDevice(gy, dy))
	gqa := make([]BF16, B*H*MLADim)
	require.NoError(t, cuda.CopyFromDevice(gqa, dqa))
	gc := make([]BF16, len(cache.Data))
	require.NoError(t, cuda.CopyFromDevice(gc, dc))

	near := func(what string, got BF16, want float64) {
		t.Helper()
		if g := float64(got.Float32()); math.Abs(g-want) > 1e-2*math.Abs(want)+1e-3 {
			t.Errorf("%s: got %g, want %g", what, g, want)
		}
	}
	rot := func(x0, x1 float64, pos, p int) (float64, float64) {
		th := float64(pos) * math.Pow(10000, -float64(2*p)/64)
		return x0*math.Cos(th) - x1*math.Sin(th), x0*math.Sin(th) + x1*math.Cos(th)
	}
	for b := 0; b < B; b++ {
		r := toF64(y1[b*qkv : (b+1)*qkv])
		for _, part := range []struct {
			off, n int
			g      []BF16
		}{{0, d.QLoRARank, gq}, {d.QLoRARank, d.KVLoRARank, gkv}} {
			var ss float64
			for i := 0; i < part.n; i++ {
				ss += r[part.off+i] * r[part.off+i]
			}
			inv := 1 / math.Sqrt(ss/float64(part.n)+1e-6)
			for i := 0; i < part.n; i++ {
				near("rmsnorm", gy[b*qkv+part.off+i], r[part.off+i]*inv*float64(part.g[i].Float32()))
			}
		}
		pos := lens[b] - 1
		for p := 0; p < 32; p++ {
			w0, w1 := rot(r[qkv-64+2*p], r[qkv-64+2*p+1], pos, p)
			near("k_pe rope", gy[b*qkv+qkv-64+2*p], w0)
			near("k_pe rope", gy[b*qkv+qkv-64+2*p+1], w1)
			for h := 0; h < H; h++ {
				q := qb[(b*H+h)*192+128:]
				w0, w1 := rot(float64(q[2*p].Float32()), float64(q[2*p+1].Float32()), pos, p)
				near("q_pe rope", gqa[(b*H+h)*MLADim+512+2*p], w0)
				near("q_pe rope", gqa[(b*H+h)*MLADim+512+2*p+1], w1)
			}
		}
		got := &KVCache{Row: MLADim, Lens: lens, Table: cache.Table, Data: gc}
		assert.Equal(t, gy[b*qkv+qkv-MLADim:(b+1)*qkv], got.RowOf(b, pos), "cache row of sequence %d", b)
		if pos > 0 {
			assert.Equal(t, cache.RowOf(b, pos-1), got.RowOf(b, pos-1), "the token before is untouched")
		}
	}
}

// onModule loads the attention kernels and a cuBLASLt GEMMer, or skips.
func onModule(t *testing.T) (*AttentionModule, *BLASGEMMer, cuda.Stream) {
	t.Helper()
	m, s := onDeviceAttention(t)
	if err := cuda.InitCUBLASLt(); err != nil {
		if cuda.NoCUBLASLt(err) {
			t.Skipf("no cuBLASLt here: %v", err)
		}
		t.Fatal(err)
	}
	h, err := cuda.NewBLASLt()
	require.NoError(t, err)
	ws, err := cuda.Alloc(BLASWorkspace)
	require.NoError(t, err)
	g := &BLASGEMMer{H: h, Workspace: ws, WorkspaceBytes: BLASWorkspace}
	t.Cleanup(func() { g.Close(); cuda.Free(ws); h.Destroy() })
	return m, g, s
}

// TestMLAModuleGEMMsOnDevice checks each of the module's GEMM specs (the
// strided-batched W_UK/W_UV with their leading dims) through cuBLASLt
// against the host reference, and times a few whole modules.
func TestMLAModuleGEMMsOnDevice(t *testing.T) {
	m, g, s := onModule(t)
	for _, heads := range []int{8, 16} {
		for _, gm := range mlaModuleGEMMs(deepSeekV3MLA, 4, heads) {
			spec := cuda.MatmulSpec{Kind: cuda.MatmulBF16, M: gm.M, N: gm.N, K: gm.K, WeightKN: gm.WeightKN, LDX: gm.LDX, LDW: gm.LDW,
				LDY: gm.LDY, Batch: gm.Batch, StrideX: gm.StrideX, StrideW: gm.StrideW, StrideY: gm.StrideY}
			c, err := CheckMatmul(g.H, spec, 5, true, s)
			require.NoError(t, err, gm.Name)
			t.Logf("%d heads %s: %s", heads, gm.Name, c)
			assert.True(t, c.Pass(), "%d heads %s: %s", heads, gm.Name, c)
		}
	}
	for _, c := range []MLAModuleCase{{Batch: 1, Heads: 8, KVLen: 4096}, {Batch: 64, Heads: 8, KVLen: 4096}, {Batch: 16, Heads: 128, KVLen: 8192}} {
		c.Dims, c.Name = deepSeekV3MLA, "mla module"
		r, err := MeasureMLAModule(m, g, c, 256<<20, s)
		require.NoError(t, err)
		t.Logf("module %d heads batch %d kv %d: %.1f us (%.1f-%.1f), %d kernels, %d layers, %.1f MB a layer",
			c.Heads, c.Batch, c.KVLen, r.GraphSeconds*1e6, r.GraphMin*1e6, r.GraphMax*1e6, r.Kernels, r.Layers, r.WorkingSetBytes/1e6)
		assert.Positive(t, r.GraphSeconds)
	}
}

// TestMLAModuleTimingOnDevice times the module over a spread of shapes
// (MOECAST_MLA_MODULE_TIMING=FILE.json to run): a benchmark for the device
// runs, not a check.
func TestMLAModuleTimingOnDevice(t *testing.T) {
	path := os.Getenv("MOECAST_MLA_MODULE_TIMING")
	if path == "" {
		t.Skip("MOECAST_MLA_MODULE_TIMING not set")
	}
	m, g, s := onModule(t)
	var res []MLAModuleResult
	for _, h := range []int{8, 16, 128} {
		for _, bl := range [][2]int{{1, 1024}, {1, 32768}, {16, 4096}, {64, 4096}, {256, 2048}, {64, 32768}} {
			c := MLAModuleCase{Name: "mla module", Dims: deepSeekV3MLA, Batch: bl[0], Heads: h, KVLen: bl[1]}
			r, err := MeasureMLAModule(m, g, c, 256<<20, s)
			if err != nil {
				t.Logf("%+v: %v", c, err)
				continue
			}
			t.Logf("module %3d heads b=%3d L=%6d: %8.1f us (%.1f-%.1f), eager %.1f us, %d kernels, %d layers, %.1f MB a layer",
				h, bl[0], bl[1], r.GraphSeconds*1e6, r.GraphMin*1e6, r.GraphMax*1e6, r.LaunchSeconds*1e6, r.Kernels, r.Layers, r.WorkingSetBytes/1e6)
			res = append(res, r)
			b, err := json.MarshalIndent(res, "", " ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b, 0o644))
		}
	}
}
