package campaign

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm/ncclrun"
	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/internal/unit"
)

func torchrun(rank, world int) rendezvous.Env {
	return rendezvous.Env{Launcher: rendezvous.Torchrun, Rank: rank, World: world, LocalRank: rank, MasterAddr: "127.0.0.1", MasterPort: 29500, Token: "t"}
}

func TestCommPlan(t *testing.T) {
	// Under a launcher the default is comm alone; other ops are refused.
	p, err := NewPlan(Options{Comm: CommOptions{Ranks: torchrun(1, 8)}})
	require.NoError(t, err)
	require.Len(t, p.Ops, 1)
	assert.True(t, p.Has(opComm))
	assert.Equal(t, len(ncclrun.DefaultPlan(false).Points(8))*2, p.Steps())
	q, err := NewPlan(Options{Quick: true, Ops: []string{"comm"}, GPUs: 4})
	require.NoError(t, err)
	assert.Equal(t, (len(ncclrun.DefaultPlan(true).Points(2))+len(ncclrun.DefaultPlan(true).Points(4)))*2, q.Steps())
	for gpus, want := range map[int][]int{0: {1}, 1: {1}, 2: {2}, 4: {2, 4}, 6: {2, 4, 6}, 8: {2, 4, 8}} {
		assert.Equal(t, want, Options{GPUs: gpus}.commRankCounts(), "--gpus %d", gpus)
	}
	assert.Equal(t, []int{8}, Options{Comm: CommOptions{Ranks: torchrun(0, 8)}}.commRankCounts())

	cases := []struct {
		o    Options
		want string
	}{
		{Options{Ops: []string{"comm", "copy"}, Comm: CommOptions{Ranks: torchrun(0, 2)}},
			"--ops copy under torchrun (2 ranks): only comm runs in several processes"},
		{Options{Ops: []string{"moe"}, GPUs: 2}, "--gpus 2: only the comm op uses several GPUs"},
		{Options{Ops: []string{"comm"}, GPUs: 4, Comm: CommOptions{Ranks: torchrun(0, 2)}},
			"--gpus 4 under torchrun with 2 ranks: each process drives one GPU"},
		{Options{Ops: []string{"comm"}, Comm: CommOptions{Fabric: "ethernet"}}, `--fabric "ethernet": not a fabric preset (pcie-gen4, pcie-gen5, nvlink3, nvlink4, nvlink5, nvlink5-nvl72)`},
	}
	for _, tt := range cases {
		_, err := NewPlan(tt.o)
		assert.ErrorContains(t, err, tt.want, "%+v", tt.o)
	}
	o := Options{Comm: CommOptions{Ranks: torchrun(3, 8)}}
	assert.Equal(t, 3, o.DeviceFor(8), "LOCAL_RANK's GPU")
	assert.Equal(t, 0, o.DeviceFor(1), "one GPU visible per rank")
	assert.Equal(t, 0, Options{GPUs: 8}.DeviceFor(8))
}

// recordedComm is an 8-rank sweep as nvlink4 H200s give it (figures of
// the order of the embedded perf database; the test checks the tables).
func recordedComm(counts ...int) *commResult {
	var res []ncclrun.Result
	for _, ranks := range counts {
		res = append(res, recordedResults(ranks)...)
	}
	return &commResult{Results: res, Ranks: counts[len(counts)-1], Fabric: "nvlink4", NCCL: 22809, Process: "torchrun, one process per GPU",
		Devices: []ncclrun.DeviceInfo{{Rank: 0, UUID: "GPU-0", Name: "NVIDIA H200"}}}
}

func recordedResults(ranks int) []ncclrun.Result {
	var res []ncclrun.Result
	for _, c := range ncclrun.Collectives {
		for _, m := range ncclrun.Modes {
			for _, sz := range []int64{14336, 1 << 20, 1 << 30} {
				eff, count := ncclrun.Shape(c, sz, ranks)
				t := 15e-6 + float64(eff)/300e9 + float64(ranks)*1e-6
				if m == ncclrun.Graph {
					t -= 3e-6
				}
				r := ncclrun.Result{Collective: c, Mode: m, Ranks: ranks, Bytes: eff, Count: count, Time: ncclrun.Timing{Median: unit.Seconds(t), Min: unit.Seconds(t * 0.95), Max: unit.Seconds(t * 1.1)}}
				if ncclrun.InPlaceOK(c) {
					r.InPlace = &ncclrun.Timing{Median: unit.Seconds(t * 1.01), Min: unit.Seconds(t), Max: unit.Seconds(t * 1.2)}
				}
				res = append(res, r)
			}
		}
	}
	return res
}

func TestCommTablesWrittenAndUsed(t *testing.T) {
	out, err := commOutput(recordedComm(2, 8))
	require.NoError(t, err)
	require.Len(t, out.Tables, 8, "one table per collective and mode, rows of both rank counts")
	assert.Len(t, out.Tables[0].Rows, 6)
	r := recorded()
	r.Outputs = append(r.Outputs[:2], out) // copy, overhead, comm
	f, err := r.File(Options{Command: "moecast calib gpu --ops comm --out h200-nccl.toml", Version: "devel"}, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200-nccl.toml")
	require.NoError(t, f.Write(path))
	got, err := calib.Load(path) // builds the tables: plausibility against nvlink4's floor
	require.NoError(t, err)
	require.Len(t, got.Tables, 8)
	tb := got.Tables[0]
	assert.Equal(t, "allreduce", tb.Op)
	assert.Equal(t, calib.Keys{Impl: "nccl", Mode: "eager"}, tb.Keys)
	assert.Equal(t, []string{"ranks", "bytes", "latency_us", "inplace_latency_us"}, tb.Columns)
	p := got.Effective(&tb)
	assert.Equal(t, "nvlink4", p.Fabric)
	assert.Equal(t, "eager", p.Launch)
	assert.Equal(t, 8, p.GPUCount)
	assert.Equal(t, []float64{2, 14336}, tb.Rows[0][:2])
	assert.Contains(t, p.Method, "ranks 2, 8 (GPU-0)")
	at := got.Tables[7]
	assert.Equal(t, "alltoall", at.Op)
	assert.Equal(t, []string{"ranks", "bytes", "latency_us"}, at.Columns, "no in-place all-to-all")

	// predict's box (h200-sxm over nvlink4, 8 GPUs) takes them: a graph
	// run prices an all-to-all from the graph table, an eager one from the
	// eager table.
	sel := calib.Select(calib.Box{GPU: "h200-sxm", Fabric: "nvlink4", GPUs: 8}, got)
	assert.Equal(t, 8, sel.Uses[0].CommUsed)
	ct := got.Comm()
	ct.Graphs = true
	e, ok := ct.AllToAll(8, 1<<20)
	require.True(t, ok)
	assert.InDelta(t, 12e-6+float64(1<<20)/300e9+8e-6, float64(e.Time), 1e-11)
	e, ok = ct.AllToAll(2, 1<<20)
	require.True(t, ok)
	assert.InDelta(t, 12e-6+float64(1<<20)/300e9+2e-6, float64(e.Time), 1e-11)
	assert.Contains(t, e.Source.Table, "#nccl.alltoall.graph")
	ct.Graphs = false
	e, ok = ct.AllToAll(8, 1<<20)
	require.True(t, ok)
	assert.InDelta(t, 15e-6+float64(1<<20)/300e9+8e-6, float64(e.Time), 1e-11)
	// another fabric's box does not
	other := calib.Select(calib.Box{GPU: "h200-sxm", Fabric: "pcie-gen5", GPUs: 8}, got)
	assert.Equal(t, 8, other.Uses[0].CommSkipped)
}

func TestCommOneRankCheck(t *testing.T) {
	out, err := commOutput(recordedComm(1))
	require.NoError(t, err)
	assert.Empty(t, out.Tables, "a one-rank collective moves nothing: no table")
	assert.Contains(t, out.Method[0], "a one-rank check of NCCL")
	assert.Contains(t, out.Lines[len(out.Lines)-1], "1 rank: 24 points, every result exact; a check only")
	r := recorded()
	r.Outputs = append(r.Outputs[:2], out)
	assert.Zero(t, r.TableCount())
	_, err = r.File(Options{}, time.Now())
	assert.ErrorContains(t, err, "nothing measured for a table")
}

func TestCommWrongResults(t *testing.T) {
	c := recordedComm(2)
	c.Results[3].Wrong = 17
	_, err := commOutput(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "comm: NCCL returned wrong results (1 of 24 points): allreduce 14336 B graph: 17 wrong elements (0 in place)")
}
