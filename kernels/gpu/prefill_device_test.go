package gpu

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
)

// runPrefill uploads q and the caches, poisons the output with NaN,
// launches twice and reads the output back as rows of VDim.
func runPrefill(t *testing.T, m *AttentionModule, s cuda.Stream, p prefillPlan, q []BF16, k, v *KVCache) [][]BF16 {
	t.Helper()
	var bufs deviceBuffers
	defer bufs.free()
	up := func(host []BF16) cuda.DevicePtr {
		t.Helper()
		d, err := bufs.upload(host, int64(len(host))*2)
		require.NoError(t, err)
		return d
	}
	b := prefillBuffers{Q: up(q), K: up(k.Data), V: up(v.Data), KVStride: int64(k.Stride)}
	if k.Table != nil {
		var err error
		b.Table, err = uploadInt32(&bufs, k.FlatTable(p.MaxPages))
		require.NoError(t, err)
	}
	var err error
	b.Out, err = bufs.alloc(int64(p.OutElems()) * 2)
	require.NoError(t, err)
	require.NoError(t, cuda.Memset8(b.Out, 0xff, int64(p.OutElems())*2))
	require.NoError(t, cuda.Synchronize())
	args, err := p.Args(b)
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, m.LaunchPrefill(p, args, s))
	}
	require.NoError(t, s.Synchronize())
	flat := make([]BF16, p.OutElems())
	require.NoError(t, cuda.CopyFromDevice(flat, b.Out))
	out := make([][]BF16, p.Batch*p.Chunk*p.Heads)
	for i := range out {
		out[i] = flat[i*p.VDim : (i+1)*p.VDim]
	}
	return out
}

func TestPrefillOnDevice(t *testing.T) {
	m, s := onDeviceAttention(t)
	cases := []PrefillCase{
		{Name: "gqa d128 8/1, no prefix", Batch: 1, Chunk: 256, Heads: 8, KVHeads: 1, QKDim: 128, VDim: 128},
		{Name: "gqa d128 16/4, ragged chunk after a prefix, paged", Batch: 2, Chunk: 200, Prefix: 333, Heads: 16, KVHeads: 4, QKDim: 128, VDim: 128, Paged: true},
		{Name: "gqa d128 8/2, 3 stages", Batch: 1, Chunk: 130, Prefix: 1000, Heads: 8, KVHeads: 2, QKDim: 128, VDim: 128, Stages: 3},
		{Name: "gqa d64 gpt-oss 8/1, window 128", Batch: 1, Chunk: 300, Prefix: 100, Heads: 8, KVHeads: 1, QKDim: 64, VDim: 64, Window: 128},
		{Name: "gqa d64 16/2, window 128 behind a long prefix, paged", Batch: 1, Chunk: 190, Prefix: 700, Heads: 16, KVHeads: 2, QKDim: 64, VDim: 64, Window: 128, Paged: true},
		{Name: "gqa d64 8/8, 3 stages", Batch: 2, Chunk: 64, Prefix: 64, Heads: 8, KVHeads: 8, QKDim: 64, VDim: 64, Stages: 3},
		{Name: "gqa d128 one token", Batch: 1, Chunk: 1, Prefix: 77, Heads: 4, KVHeads: 1, QKDim: 128, VDim: 128},
		{Name: "mla prefill q192 v128, 8 heads", Batch: 1, Chunk: 250, Prefix: 500, Heads: 8, KVHeads: 8, QKDim: 192, VDim: 128},
		{Name: "mla prefill q192 v128, paged, 3 stages", Batch: 2, Chunk: 128, Prefix: 129, Heads: 4, KVHeads: 4, QKDim: 192, VDim: 128, Stages: 3, Paged: true},
	}
	worst := 0.0
	// No subtests: the context is current on this test's locked OS thread
	// only.
	for i, c := range cases {
		rng := rand.New(rand.NewPCG(uint64(i+1), 17))
		p, err := m.PlanPrefill(c)
		require.NoError(t, err, c.Name)
		lens := make([]int, c.Batch)
		for b := range lens {
			lens[b] = c.KVLen()
		}
		k := randomKVCache(rng, c.KVHeads*c.QKDim, lens, c.Paged)
		v := &KVCache{Row: c.KVHeads * c.VDim, Lens: lens, Stride: k.Stride, Table: k.Table,
			Data: randomBF16(rng, len(k.Data)/c.QKDim*c.VDim)}
		q := randomBF16(rng, p.QElems())
		got := runPrefill(t, m, s, p, q, k, v)
		ref, err := referencePrefill(c, q, k, v, p.Scale)
		require.NoError(t, err)
		e, err := relError(got, ref)
		require.NoError(t, err)
		worst = max(worst, e)
		t.Logf("%s: %s, %d blocks: rel error %.2e", c.Name, p.Kernel(), p.Blocks(), e)
		assert.Less(t, e, attnTolerance, c.Name)
	}
	t.Logf("prefill: worst rel error %.2e over %d cases", worst, len(cases))
}

// prefillTimingCases are the shapes TestPrefillTimingOnDevice times (and
// bench/gpu_prefill_torch.py times through torch's SDPA): chunk x prefix
// for GQA d128 (64/8: Qwen3-235B/Llama-70B-class TP1 heads, and 8/1 at TP8),
// gpt-oss's d64 64/8 with and without its 128-token window, and MLA prefill
// (q/k 192, v 128) at 16 and 128 heads. MOECAST_PREFILL_STAGES="2,3" times
// every listed depth.
func prefillTimingCases(stages []int) []PrefillCase {
	var cs []PrefillCase
	type head struct {
		name              string
		h, kv, dqk, dv, w int
	}
	heads := []head{{"gqa d128 64/8", 64, 8, 128, 128, 0}, {"gqa d128 8/1", 8, 1, 128, 128, 0},
		{"gqa d64 64/8", 64, 8, 64, 64, 0}, {"gqa d64 64/8 w128", 64, 8, 64, 64, 128},
		{"mla 16", 16, 16, 192, 128, 0}, {"mla 128", 128, 128, 192, 128, 0}}
	shapes := [][2]int{{256, 0}, {1024, 0}, {4096, 0}, {16384, 0}, {1024, 8192}, {4096, 32768}, {2048, 131072}}
	for _, st := range stages {
		for _, h := range heads {
			for _, sh := range shapes {
				cs = append(cs, PrefillCase{Name: fmt.Sprintf("%s s%d", h.name, st), Batch: 1, Chunk: sh[0], Prefix: sh[1],
					Heads: h.h, KVHeads: h.kv, QKDim: h.dqk, VDim: h.dv, Window: h.w, Stages: st, Paged: true})
			}
		}
	}
	return cs
}

// TestPrefillTimingOnDevice times prefill attention at a spread of shapes
// (MOECAST_PREFILL_TIMING=FILE.json to run; the results go to FILE): a
// benchmark for the device runs, not a check.
func TestPrefillTimingOnDevice(t *testing.T) {
	path := os.Getenv("MOECAST_PREFILL_TIMING")
	if path == "" {
		t.Skip("MOECAST_PREFILL_TIMING not set")
	}
	m, s := onDeviceAttention(t)
	stages := []int{defaultPrefillStages}
	if v := os.Getenv("MOECAST_PREFILL_STAGES"); v != "" {
		stages = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			stages = append(stages, n)
		}
	}
	var res []prefillResult
	for _, c := range prefillTimingCases(stages) {
		r, err := MeasurePrefill(m, c, 256<<20, s)
		if err != nil {
			t.Logf("%s chunk %d prefix %d: %v", c.Name, c.Chunk, c.Prefix, err)
			continue
		}
		t.Logf("%-22s chunk %5d prefix %6d: %9.1f us (%.1f-%.1f) %6.1f TFLOP/s, %d copies",
			c.Name, c.Chunk, c.Prefix, r.GraphSeconds*1e6, r.GraphMin*1e6, r.GraphMax*1e6, r.FLOPsPerSec/1e12, r.Copies)
		res = append(res, r)
		b, err := json.MarshalIndent(res, "", " ") // after each case: a run cut short keeps what it measured
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
}
