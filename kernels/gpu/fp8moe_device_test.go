package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/stretchr/testify/require"
)

// onFP8Device makes device 0 current and loads fp8moe.cu's and glue.cu's
// kernels, or skips where there is no driver.
func onFP8Device(t *testing.T) (*FP8MoE, *Glue, cuda.Stream) {
	t.Helper()
	dev, s := onGPU(t, cuda.Init, cuda.NoGPU)
	f, err := LoadFP8MoE(dev)
	require.NoError(t, err)
	g, err := LoadGlue(dev)
	require.NoError(t, err)
	t.Logf("fp8moe kernels from %s on %d SMs", f.Image, f.SMs)
	return f, g, s
}

// TestFP8QuantOnDevice checks fp8moe_quant against hostQuantFP8 bit for
// bit: groups of every magnitude, a group of zeros, values that round to
// e4m3 subnormals.
func TestFP8QuantOnDevice(t *testing.T) {
	f, _, s := onFP8Device(t)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 3))
	const rows, K = 37, 1024
	x := randomBF16(rng, rows*K)
	for r := 0; r < rows; r++ {
		for g := 0; g < K/fp8Block; g++ {
			sc := float32(math.Ldexp(1, rng.IntN(30)-15))
			for j := 0; j < fp8Block; j++ {
				i := r*K + g*fp8Block + j
				if r == 3 && g == 2 {
					x[i] = 0
					continue
				}
				v := x[i].Float32() * sc
				if j%7 == 0 {
					v *= 1e-4 // below the group's subnormal range of e4m3
				}
				x[i] = toBF16(v)
			}
		}
	}
	var bufs deviceBuffers
	defer bufs.free()
	dx, err := bufs.upload(x, int64(rows*K*2))
	require.NoError(t, err)
	dq, err := bufs.alloc(int64(rows * K))
	require.NoError(t, err)
	ds, err := bufs.alloc(int64(rows * K / fp8Block * 4))
	require.NoError(t, err)
	launch, err := f.Quant(dx, dq, ds, rows, K, 0, 0, s)
	require.NoError(t, err)
	require.NoError(t, launch())
	require.NoError(t, s.Synchronize())
	gq, gs := make([]E4M3, rows*K), make([]float32, rows*K/fp8Block)
	require.NoError(t, cuda.CopyFromDevice(gq, dq))
	require.NoError(t, cuda.CopyFromDevice(gs, ds))
	hq, hs := hostQuantFP8(x, rows, K)
	bad := 0
	for i := range hq {
		if gq[i] != hq[i] && bad < 5 {
			t.Errorf("q[%d]: device %#x host %#x (x %g scale %g)", i, gq[i], hq[i], x[i].Float32(), hs[i/fp8Block])
			bad++
		}
	}
	for i := range hs {
		require.Equal(t, hs[i], gs[i], "scale %d", i)
	}
	// The rows sorted ids name (the padding sentinel skipped), the others
	// left as they were.
	sorted := []int32{5, 0, 36, rows, 12, rows}
	dsorted, err := bufs.upload(sorted, int64(len(sorted)*4))
	require.NoError(t, err)
	require.NoError(t, cuda.Memset8(dq, 0x7f, int64(rows*K)))
	launch, err = f.Quant(dx, dq, ds, rows, K, dsorted, len(sorted), s)
	require.NoError(t, err)
	require.NoError(t, launch())
	require.NoError(t, s.Synchronize())
	require.NoError(t, cuda.CopyFromDevice(gq, dq))
	for r := 0; r < rows; r++ {
		named := r == 5 || r == 0 || r == 36 || r == 12
		for j := 0; j < K; j++ {
			i := r*K + j
			if named && gq[i] != hq[i] || !named && gq[i] != 0x7f {
				t.Fatalf("sorted quant: row %d (named %v) byte %d: %#x", r, named, j, gq[i])
			}
		}
	}
}

// TestFP8MoEOnDevice checks the block-fp8 grouped GEMM (moe_align sorted
// ids, gate_up and down row maps, 16/32/64-row blocks, split-K, expert
// parallelism) against the float64 reference over the exact fp8 values
// and scales; it logs the error against bf16 activations too (the
// quantisation's, not the kernel's).
func TestFP8MoEOnDevice(t *testing.T) {
	f, _, s := onFP8Device(t)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 19))
	const experts, topk, N, K = 8, 3, 256, 640
	worst, worstQ, cases := 0.0, 0.0, 0
	defer func() {
		t.Logf("block-fp8 MoE: %d cases, worst rel error %.3g (vs unquantised bf16 activations: %.3g)", cases, worst, worstQ)
	}()
	ws := make([]*fp8Weights, experts)
	var allQ []E4M3
	var allS []float32
	for e := range ws {
		ws[e] = randomFP8Weights(rng, N, K)
		allQ = append(allQ, ws[e].Q...)
		allS = append(allS, ws[e].S...)
	}
	var bufs deviceBuffers
	defer bufs.free()
	dW, err := bufs.upload(allQ, int64(len(allQ)))
	require.NoError(t, err)
	dWS, err := bufs.upload(allS, int64(len(allS)*4))
	require.NoError(t, err)
	for _, tokens := range []int{1, 5, 37, 300} {
		for _, down := range []bool{false, true} {
			r, err := routePowerLaw(rng.Uint64(), tokens, experts, topk, 1.2)
			require.NoError(t, err)
			rows := tokens * topk
			aRows, aDiv := tokens, topk
			if down {
				aRows, aDiv = rows, 1
			}
			x := randomBF16(rng, aRows*K)
			q, qs := hostQuantFP8(x, aRows, K)
			ref := make([][]float64, rows)
			refX := make([][]float64, rows)
			for id := 0; id < rows; id++ {
				w := ws[r.TopK[id/topk][id%topk]]
				ref[id] = referenceFP8(q, qs, id/aDiv, K, w)
				refX[id] = make([]float64, N)
				for n := 0; n < N; n++ {
					for k := 0; k < K; k++ {
						refX[id][n] += float64(x[(id/aDiv)*K+k].Float32()) * w.at(n, k)
					}
				}
			}
			dA, err := bufs.upload(q, int64(len(q)))
			require.NoError(t, err)
			dAS, err := bufs.upload(qs, int64(len(qs)*4))
			require.NoError(t, err)
			run := func(al *Aligned, slices int) ([][]BF16, FP8Plan) {
				p, err := f.PlanMoE(al, N, K, aDiv, slices)
				require.NoError(t, err)
				var local deviceBuffers
				defer local.free()
				b := FP8Buffers{A: dA, AS: dAS, W: dW, WS: dWS}
				b.C, err = local.alloc(int64(rows * N * 2))
				require.NoError(t, err)
				require.NoError(t, cuda.Memset8(b.C, 0xff, int64(rows*N*2)))
				if p.Slices > 1 {
					b.Workspace, err = local.alloc(p.WorkspaceBytes())
					require.NoError(t, err)
					require.NoError(t, cuda.Memset32(b.Workspace, 0x7fc00000, p.WorkspaceBytes()/4))
				}
				b.SortedIDs, err = local.upload(al.SortedIDs, int64(len(al.SortedIDs)*4))
				require.NoError(t, err)
				b.ExpertIDs, err = local.upload(al.ExpertIDs, int64(len(al.ExpertIDs)*4))
				require.NoError(t, err)
				launch, err := f.GEMM(p, b, s)
				require.NoError(t, err)
				require.NoError(t, cuda.Synchronize())
				require.NoError(t, launch())
				require.NoError(t, s.Synchronize())
				flat := make([]BF16, rows*N)
				require.NoError(t, cuda.CopyFromDevice(flat, b.C))
				out := make([][]BF16, rows)
				for i := range out {
					out[i] = flat[i*N : (i+1)*N]
				}
				return out, p
			}
			for _, block := range []int{16, 32, 64} {
				for _, slices := range []int{1, 2, 5, 0} {
					al, err := Align(r, block)
					require.NoError(t, err)
					got, p := run(al, slices)
					name := fmt.Sprintf("T%d/down%v/block%d/%s", tokens, down, block, p.Kernel())
					e, err := relError(got, ref)
					if err != nil || e >= 1e-2 {
						t.Errorf("%s: rel error %.3g: %v", name, e, err)
						continue
					}
					eq, _ := relError(got, refX)
					worst, worstQ, cases = max(worst, e), max(worstQ, eq), cases+1
					t.Logf("%s: rel error %.3g (vs bf16 activations %.3g)", name, e, eq)
				}
			}
			al, err := alignLocal(r, 16, 0, experts/2) // expert parallelism: experts [0, 4) here
			require.NoError(t, err)
			if al.Blocks() == 0 {
				continue
			}
			for _, slices := range []int{1, 2} {
				got, _ := run(al, slices)
				var gl [][]BF16
				var rl [][]float64
				for id := 0; id < rows; id++ {
					if r.TopK[id/topk][id%topk] < experts/2 {
						gl, rl = append(gl, got[id]), append(rl, ref[id])
					} else if got[id][0] != 0xffff {
						t.Errorf("T%d down%v slices %d: row %d of a remote expert was written", tokens, down, slices, id)
					}
				}
				e, err := relError(gl, rl)
				if err != nil || e >= 1e-2 {
					t.Errorf("T%d down%v local slices %d: rel error %.3g: %v", tokens, down, slices, e, err)
				} else {
					worst, cases = max(worst, e), cases+1
				}
			}
		}
	}
}

// TestFP8LayerOnDevice times small and DeepSeek-sized block-fp8 layers (the
// measurement checks the device's alignment against the host's for every
// routing) and checks that the parts are consistent with the whole.
func TestFP8LayerOnDevice(t *testing.T) {
	f, g, s := onFP8Device(t)
	for _, c := range []FP8LayerCase{
		{Name: "small", Tokens: 5, Experts: 16, TopK: 4, Hidden: 512, Inter: 256, Seed: 3},
		{Name: "deepseek tp8", Tokens: 8, Experts: 256, TopK: 8, Hidden: 7168, Inter: 256, Seed: 5},
		{Name: "deepseek ep8", Tokens: 200, Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048, Local: 32, Seed: 7},
	} {
		r, err := MeasureFP8MoELayer(f, g, c, 512<<20, s)
		require.NoError(t, err, c.Name)
		parts := r.Align.Median + r.Quant.Median + r.GateUp.Median + r.Act.Median + r.Down.Median + r.Sum.Median
		t.Logf("%s T=%d: layer %.2f us, align %.2f quant %.2f gate_up %.2f act %.2f down %.2f sum %.2f (parts %.2f); %d routings, %.1f experts, %s+%s",
			c.Name, c.Tokens, r.Experts.Median*1e6, r.Align.Median*1e6, r.Quant.Median*1e6, r.GateUp.Median*1e6, r.Act.Median*1e6,
			r.Down.Median*1e6, r.Sum.Median*1e6, parts*1e6, r.Routings, r.Touched, r.GateUpVariant, r.DownVariant)
		require.Greater(t, r.Experts.Median, r.GateUp.Median, c.Name)
		require.Less(t, r.Experts.Median, 2*parts, c.Name)
	}
}
