package gpu

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMXFP4MoEOnDevice checks the ModeFP4 kernels (MXFP4 experts, moe_align
// sorted ids, gate_up and down row maps, expert parallelism) against the
// float64 host reference over the exact dequantised weights.
func TestMXFP4MoEOnDevice(t *testing.T) {
	m, s := onDevice(t)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 17))
	const experts, topk, N, K = 16, 4, 256, 512
	worst, cases := 0.0, 0
	defer func() { t.Logf("MXFP4 MoE: %d cases, worst rel error %.3g", cases, worst) }()
	pqs := make([]*packQuantized, experts)
	all := &Weights{N: N, K: K, Group: mxfp4Group}
	for e := range pqs {
		w, p, err := repackMXFP4(randomMXFP4(rng.Uint64, N, K))
		require.NoError(t, err)
		pqs[e] = p
		all.Q = append(all.Q, w.Q...)
		all.S = append(all.S, w.S...)
	}
	for _, tokens := range []int{1, 5, 37, 300} {
		for _, down := range []bool{false, true} {
			r, err := routePowerLaw(rng.Uint64(), tokens, experts, topk, 1.2)
			require.NoError(t, err)
			rows := tokens * topk
			aRows, aDiv := tokens, topk
			if down {
				aRows, aDiv = rows, 1
			}
			a := randomBF16(rng, aRows*K)
			ref := make([][]float64, rows)
			for id := 0; id < rows; id++ {
				ref[id] = referenceGEMM(a, aRows, pqs[r.TopK[id/topk][id%topk]], []int{id / aDiv})[0]
			}
			for _, v := range []struct {
				block int
				o     Options
			}{{16, Options{Mode: ModeFP4}}, {32, Options{Mode: ModeFP4}}, {64, Options{Mode: ModeFP4}},
				{16, Options{Mode: ModeFP4, WN: 2}}, {64, Options{Mode: ModeFP4, WN: 4}}, {64, Options{Mode: ModeFP4, WN: 4, BN: 256}}} {
				al, err := Align(r, v.block)
				require.NoError(t, err)
				o := v.o
				o.Units = 1 + v.block/32 // cut tiles too
				p, err := m.PlanMoE(al, N, K, mxfp4Group, aDiv, o)
				require.NoError(t, err)
				name := fmt.Sprintf("T%d/down%v/block%d/%s", tokens, down, v.block, p.Variant().Name())
				got := runOnce(t, m, s, p, a, all, al.SortedIDs, al.ExpertIDs, rows)
				e, err := relError(got, ref)
				if err != nil || e >= 1e-2 {
					t.Errorf("%s: rel error %.3g: %v", name, e, err)
				} else {
					worst, cases = max(worst, e), cases+1
					t.Logf("%s: rel error %.3g", name, e)
				}
			}
			al, err := alignLocal(r, 16, 0, experts/2) // expert parallelism: experts [0, 8) here
			require.NoError(t, err)
			if al.Blocks() == 0 {
				continue
			}
			p, err := m.PlanMoE(al, N, K, mxfp4Group, aDiv, Options{Mode: ModeFP4})
			require.NoError(t, err)
			got := runOnce(t, m, s, p, a, all, al.SortedIDs, al.ExpertIDs, rows)
			var gl [][]BF16
			var rl [][]float64
			for id := 0; id < rows; id++ {
				if r.TopK[id/topk][id%topk] < experts/2 {
					gl, rl = append(gl, got[id]), append(rl, ref[id])
				} else if got[id][0] != 0xffff {
					t.Errorf("T%d down%v: row %d of a remote expert was written", tokens, down, id)
				}
			}
			e, err := relError(gl, rl)
			if err != nil || e >= 1e-2 {
				t.Errorf("T%d down%v local: rel error %.3g: %v", tokens, down, e, err)
			} else {
				worst, cases = max(worst, e), cases+1
			}
		}
	}
}

// TestMXFP4TimingOnDevice times the MXFP4 grouped GEMMs at gpt-oss shapes
// (hidden and intermediate 2880 padded to 2944, the kernel's multiple of
// 128; gate_up N = 2 x 2880) with uniform routing, weights rotated over
// 512 MiB, and writes JSON lines to $MOECAST_MXFP4_TIMING.
func TestMXFP4TimingOnDevice(t *testing.T) {
	path := os.Getenv("MOECAST_MXFP4_TIMING")
	if path == "" {
		t.Skip("set MOECAST_MXFP4_TIMING=out.jsonl to time")
	}
	m, s := onDevice(t)
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	enc := json.NewEncoder(f)
	const rotate = 512 << 20
	for _, c := range []struct {
		name           string
		experts, local int
	}{{"gpt-oss-120b tp1", 128, 0}, {"gpt-oss-120b ep4", 128, 32}, {"gpt-oss-20b tp1", 32, 0}} {
		for _, tokens := range []int{1, 32, 512, 4096, 16384} {
			for _, down := range []bool{false, true} {
				mc := moeCase{Name: c.name + " gate_up", Tokens: tokens, Experts: c.experts, TopK: 4, N: 5760, K: 2944,
					Group: mxfp4Group, Local: c.local, Seed: uint64(tokens), Opt: Options{Mode: ModeFP4}}
				if down {
					mc.Name, mc.N, mc.Down = c.name+" down", 2944, true
				}
				r, err := measureMoE(m, mc, rotate, s)
				require.NoError(t, err)
				r.Kernel = r.Variant
				require.NoError(t, enc.Encode(r))
				t.Logf("%-26s T=%-5d %-20s %9.2f us graph %7.0f GB/s %6.1f TFLOP/s touched %5.1f", r.Name, tokens, r.Variant,
					r.GraphSeconds*1e6, r.BytesPerSec/1e9, r.FLOPsPerSec/1e12, r.Touched)
			}
		}
	}
}
