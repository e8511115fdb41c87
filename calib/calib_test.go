package calib

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

var ncclFixtures = []string{
	"testdata/nccl-tests/all_reduce_perf_8xh100.txt",
	"testdata/nccl-tests/all_reduce_perf_2xh100.txt",
	"testdata/nccl-tests/all_gather_perf_8xh100.txt",
}

func perfdbOpts(gpu string) PerfDBOptions {
	return PerfDBOptions{GPU: gpu, Source: "ai-dynamo/aiconfigurator @ 095f58a", License: "Apache-2.0", Date: "2026-08-21", Command: "test"}
}

// roundTrip writes f, loads it back and checks that every table holds the
// same values, keys and provenance.
func roundTrip(t *testing.T, f *File) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cal.toml")
	require.NoError(t, f.Write(path))
	g, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, len(f.Tables), len(g.Tables))
	assert.Equal(t, f.Provenance, g.Provenance)
	for i := range f.Tables {
		a, b := f.Tables[i], g.Tables[i]
		assert.Equal(t, a.Name, b.Name)
		assert.Equal(t, a.Op, b.Op)
		assert.Equal(t, a.Keys, b.Keys)
		assert.Equal(t, a.Columns, b.Columns)
		assert.Equal(t, a.Rows, b.Rows, "table %s: values change through the file", a.Name)
		assert.Equal(t, a.Provenance, b.Provenance)
	}
	return g
}

func TestNCCLTestsImportRoundTrip(t *testing.T) {
	f, err := ImportNCCLTests(ncclFixtures, NCCLTestsOptions{GPU: "h100-sxm", Fabric: "nvlink4", Date: "2026-11-29", Command: "test"})
	require.NoError(t, err)
	require.Len(t, f.Tables, 2)
	ag, ar := f.Tables[0], f.Tables[1]
	assert.Equal(t, "nccl.allgather", ag.Name)
	assert.Equal(t, "nccl.allreduce", ar.Name)
	assert.Equal(t, []string{"ranks", "bytes", "latency_us", "inplace_latency_us"}, ar.Columns)
	assert.Len(t, ar.Rows, 42, "21 sizes at 2 and at 8 ranks")
	// The first row of the 8-rank all-reduce file: 512 B, 15.59 / 15.39 us.
	assert.Equal(t, []float64{8, 512, 15.59, 15.39}, ar.Rows[21])
	assert.Equal(t, 2.0, ar.Rows[0][0], "rows sorted by ranks")
	assert.Equal(t, "2.29.2", f.Provenance.NCCL, "nccl-library=22902")
	assert.Equal(t, "NVIDIA H100 80GB HBM3", f.Provenance.GPULabel)
	assert.Equal(t, 8, f.Provenance.GPUCount)
	assert.Equal(t, "eager", ar.Provenance.Launch, "graph: 0")
	assert.Contains(t, ar.Provenance.Source, "all_reduce_perf_8xh100.txt")
	g := roundTrip(t, f)

	// The loaded file answers lookups from its rows.
	lk := g.CommTables()
	require.NotNil(t, lk)
	assert.Nil(t, g.KernelTables(), "no kernel tables")
	e, ok := lk.AllReduce(comm.NCCL, 8, 512)
	require.True(t, ok)
	assert.Equal(t, 15.59*unit.Microsecond, e.Time)
	assert.Equal(t, cost.Table, e.Source.Kind)
	assert.Contains(t, e.Source.Table, "#nccl.allreduce")
	assert.Equal(t, 22, e.Source.RowLo)
	_, ok = lk.AllReduce(comm.NCCL, 4, 512)
	assert.False(t, ok, "4 ranks not measured")
}

func TestPerfDBImportRoundTrip(t *testing.T) {
	f, err := ImportPerfDB("testdata/perfdb", perfdbOpts("h200-sxm"))
	require.NoError(t, err)
	var names []string
	for _, tb := range f.Tables {
		names = append(names, tb.Name)
	}
	assert.Equal(t, []string{
		"nccl.allreduce", "nccl.allgather", "allreduce.vllm.graph", "allreduce.vllm.eager",
		"ep.deepep_ll.dispatch.sglang-0.5.12", "ep.deepep_ll.combine.sglang-0.5.12", "moe.vllm.int4_wo.e384.balanced",
	}, names)
	assert.Equal(t, "nvlink4", f.Provenance.Fabric)
	assert.Equal(t, 8, f.Provenance.GPUCount)
	assert.Equal(t, float64(60*unit.MiB), f.Provenance.GPUL2Bytes, "L2 from the kernels preset")
	moe := f.Tables[6]
	assert.Equal(t, Keys{Dtype: "int4_wo", Distribution: "balanced", Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048}, moe.Keys)
	assert.Equal(t, "cuda-graph", moe.Provenance.Launch)
	assert.Equal(t, "warm", moe.Provenance.Cache)
	assert.Contains(t, strings.Join(moe.Provenance.Corrections, "\n"), "L2 bias")
	assert.Contains(t, strings.Join(moe.Provenance.Corrections, "\n"), "routing bias")
	// ms -> us: the first int4 row at 1 token, moe_tp 1, ep 8.
	lat := moe.Column("latency_us")
	assert.Greater(t, lat[0], 10.0)
	// nccl all-reduce half at 8 GPUs, 256 elements = 512 B.
	ar := f.Tables[0]
	assert.Equal(t, []float64{8, 512}, ar.Rows[0][:2])
	g := roundTrip(t, f)
	require.NotNil(t, g.KernelTables())
	require.NotNil(t, g.CommTables())
}

// TestPerfDBWorkingSet checks the L2 marking against a hand computation.
func TestPerfDBWorkingSet(t *testing.T) {
	f, err := ImportPerfDB("testdata/perfdb", perfdbOpts("h200-sxm"))
	require.NoError(t, err)
	moe := f.Tables[6]
	tok, tp, ep, ws, l2 := moe.Column("tokens"), moe.Column("moe_tp"), moe.Column("ep"), moe.Column("working_set_bytes"), moe.Column("l2_resident")
	perExpert := 3 * 7168 * 2048 * 0.5625 // int4 g32: 24.77 MB
	for i := range tok {
		distinct := math.Min(8*tok[i], 384)
		want := distinct / ep[i] * perExpert / tp[i]
		assert.InDelta(t, want, ws[i], 1, "row %d", i+1)
		assert.Equal(t, want <= float64(60*unit.MiB), l2[i] == 1, "row %d: ws %.0f", i+1, want)
	}
	// tokens=1, moe_tp=1, ep=8: one expert per rank at most -> 8/8 x 24.8 MB fits.
	assert.Equal(t, 1.0, l2[0])
}

func TestPerfDBMLA(t *testing.T) {
	f, err := ImportPerfDB("testdata/perfdb", perfdbOpts("rtx-pro-6000-server"))
	require.NoError(t, err)
	require.Len(t, f.Tables, 1)
	m := f.Tables[0]
	assert.Equal(t, "mla.vllm.bf16.kv-bf16", m.Name)
	assert.Equal(t, "pcie-gen5", f.Provenance.Fabric)
	// heads 8, batch 1, kv 256: weights (q_a 11.01M + kv_a 4.13M + q_b 2.36M
	// + kv_b 1.05M + o 7.34M params) x 2 B + 256 x 576 x 2 B of KV.
	params := 7168.0*1536 + 7168*576 + 1536*8*192 + 512*8*256 + 8*128*7168
	want := params*2 + 256*576*2
	assert.InDelta(t, want, m.Rows[0][4], 1)
	assert.Equal(t, 1.0, m.Rows[0][5], "51.8 MB fits the 128 MB L2")
	g := roundTrip(t, f)
	e, ok := g.KernelTables().MLAModule(kernels.MLAShape{Batch: 8, Context: 2048, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVBF16, TotalHeads: 64})
	require.True(t, ok)
	assert.Greater(t, float64(e.Time), 0.0)
	assert.Contains(t, e.Source.Note, "L2-resident")
	assert.Equal(t, Keys{Dtype: "bf16", KVDtype: "bf16", Hidden: 7168, KVLoRARank: 512, QKRopeDim: 64, QLoRARank: 1536, QKNopeDim: 128, VHeadDim: 128}, m.Keys)
	// Kimi-K2.5 has DeepSeek-V3's MLA dims: the table answers.
	kimi := kernels.MLAShape{Batch: 8, Context: 2048, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVBF16, TotalHeads: 64,
		Hidden: 7168, QLoRARank: 1536, QKNopeDim: 128, VHeadDim: 128}
	_, ok = g.KernelTables().MLAModule(kimi)
	assert.True(t, ok)
	// GLM-5 shares the latent and rope widths but not the projections
	// (hidden 6144, q_lora 2048, qk_nope 192, v_head 256): no answer.
	glm := kimi
	glm.Hidden, glm.QLoRARank, glm.QKNopeDim, glm.VHeadDim = 6144, 2048, 192, 256
	_, ok = g.KernelTables().MLAModule(glm)
	assert.False(t, ok)
}

func TestPerfDBNeedsGPUWhenSeveral(t *testing.T) {
	_, err := ImportPerfDB("testdata/perfdb", perfdbOpts(""))
	assert.ErrorContains(t, err, "several GPUs (h200-sxm, rtx-pro-6000-server): choose one with --gpu")
	_, err = ImportPerfDB("testdata/perfdb", perfdbOpts("b200-sxm"))
	assert.ErrorContains(t, err, `no files for GPU "b200-sxm"`)
}

// TestEmbeddedNames: the GPUs with an embedded calibration.
func TestEmbeddedNames(t *testing.T) {
	assert.Equal(t, []string{"a100-sxm", "b200-sxm", "b300-sxm", "gb200", "gb300", "h100-sxm", "h200-sxm", "rtx-pro-6000-server"}, EmbeddedNames())
}

// TestEmbeddedTreeUpToDate re-imports the calibrations embedded from the
// parquet tree (aiconfigurator's systems/ extracted at
// ../../shared/data/aiconfigurator, as the go:generate lines read it;
// skipped without it) and compares the TOML.
func TestEmbeddedTreeUpToDate(t *testing.T) {
	const dir = "../../shared/data/aiconfigurator"
	if !IsPerfDBTree(dir) {
		t.Skipf("aiconfigurator checkout not present at %s", dir)
	}
	for _, gpu := range []string{"a100-sxm", "b200-sxm", "b300-sxm", "gb200", "gb300", "h100-sxm", "h200-sxm", "rtx-pro-6000-server"} {
		t.Run(gpu, func(t *testing.T) {
			f, err := ImportPerfDB(dir, PerfDBOptions{GPU: gpu,
				Source:  "ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/ (parquet)",
				License: "Apache-2.0", Date: "2026-08-21",
				Command: "moecast calib import perfdb aiconfigurator --gpu " + gpu + " -o " + gpu + ".toml.zst"})
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, f.Encode(&b))
			want, err := embeddedFile(gpu)
			require.NoError(t, err)
			if !bytes.Equal(want, b.Bytes()) {
				t.Fatalf("embedded/%s.toml.zst is stale: run go generate ./calib and review the diff", gpu)
			}
		})
	}
}

// TestEmbeddedNewSystems: the calibrations imported from the parquet tree
// load (zstd), carry their system's fabric and cover MoE, MLA, GQA decode
// attention, custom all-reduce and DeepEP where the system has them.
func TestEmbeddedNewSystems(t *testing.T) {
	tests := []struct {
		gpu, fabric string
		ops         []string
	}{
		{"a100-sxm", "nvlink3", []string{"moe", "allreduce", "gqa"}},
		{"b300-sxm", "nvlink5", []string{"moe", "mla", "gqa", "allreduce", "ep"}},
		{"gb200", "nvlink5-nvl72", []string{"moe", "mla", "gqa", "allreduce", "ep"}},
		{"gb300", "nvlink5-nvl72", []string{"moe", "mla", "gqa", "allreduce", "ep"}},
	}
	for _, tt := range tests {
		t.Run(tt.gpu, func(t *testing.T) {
			f, err := Embedded(tt.gpu)
			require.NoError(t, err)
			require.NotNil(t, f)
			ops := map[string]bool{}
			for i := range f.Tables {
				ops[f.Tables[i].Op] = true
				assert.Equal(t, tt.fabric, f.Effective(&f.Tables[i]).Fabric, f.Tables[i].Name)
			}
			for _, op := range tt.ops {
				assert.True(t, ops[op], "op %s", op)
			}
		})
	}
}

func TestEmbedded(t *testing.T) {
	f, err := Embedded("h200-sxm")
	require.NoError(t, err)
	require.NotNil(t, f)
	assert.Equal(t, "embedded:h200-sxm", f.Name)
	none, err := Embedded("tpu-v5")
	assert.NoError(t, err)
	assert.Nil(t, none)
	_, err = Open("embedded:tpu-v5")
	assert.ErrorContains(t, err, "no embedded calibration")

	// Kimi-K2.5 routed experts with EP8 on H200, one token: the perf
	// database measured vLLM's own layer there, so its row answers ahead of
	// `calib gpu`'s proxy table (embedded/calibgpu/h200-sxm.toml, merged
	// under it by Prefer), which keeps its bias against it in corrections.
	const engineMoE = "moe.vllm-0.24.0.int4_wo.e384.k8.h7168.i2048.balanced"
	s := kernels.MoEShape{Tokens: 1, GlobalTokens: 1, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048, MoETP: 1, EP: 8, Weight: dtype.INT4G32}
	e, ok := f.KernelTables().MoE(s)
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#"+engineMoE, e.Source.Table)
	row := rowOf(t, f, engineMoE, e.Source.RowLo)
	assert.Equal(t, []float64{1, 8, 1}, row[:3], "moe_tp, ep, tokens")
	assert.InDelta(t, row[3]*1e-6, float64(e.Time), 1e-15)
	assert.Equal(t, "Apache-2.0", f.Effective(tableOf(t, f, engineMoE)).License)
	proxy := f.Effective(tableOf(t, f, "moe.moecast_w4a16.int4_wo.e384.uniform"))
	assert.Equal(t, "2026-12-03", proxy.Date)
	assert.Contains(t, strings.Join(proxy.Corrections, "\n"), ProxyBiasPrefix+engineMoE)

	// Prefill attention of one 4096-token chunk with no prefix, Qwen3-235B's
	// 64/4 heads at d128 (TP1): the perf database measured vLLM's own
	// prefill kernel there (context_attention_perf), so its row answers,
	// exactly, ahead of `calib gpu`'s prefill table, which carries its bias
	// against it.
	const enginePrefill = "prefill.vllm-0.24.0.d128.kv-bf16"
	pe, ok := f.KernelTables().Prefill(kernels.PrefillShape{Chunks: 1, Tokens: 4096, MeanChunk: 4096, MeanKV: 4096,
		Heads: 64, KVHeads: 4, QKDim: 128, VDim: 128, KVBytes: 2})
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#"+enginePrefill, pe.Source.Table)
	prow := rowOf(t, f, enginePrefill, pe.Source.RowLo)
	assert.Equal(t, []float64{64, 4, 4096, 0}, prow[:4], "heads, kv_heads, chunk, prefix")
	assert.InDelta(t, prow[4]*1e-6, float64(pe.Time), 1e-15)
	pproxy := f.Effective(tableOf(t, f, "prefill.moecast.d128.kv-bf16"))
	assert.Contains(t, strings.Join(pproxy.Corrections, "\n"), ProxyBiasPrefix+enginePrefill)

	// The same chunk after 32768 cached tokens: the engine rows measured
	// prefix 0 only, calib gpu's the prefixes; its answer, scaled to the
	// engine's level at prefix 0, prices the prefix's keys.
	long := kernels.PrefillShape{Chunks: 1, Tokens: 4096, MeanChunk: 4096, MeanKV: 4096 + 32768,
		Heads: 64, KVHeads: 4, QKDim: 128, VDim: 128, KVBytes: 2}
	pl, ok := f.KernelTables().Prefill(long)
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#prefill.moecast.d128.kv-bf16", pl.Source.Table)
	assert.Contains(t, pl.Source.Note, "the prefix is beyond embedded:h200-sxm#"+enginePrefill)
	assert.Contains(t, pl.Source.Note, "scaled by the ratio")
	long.MeanKV = 4096
	proxy0, ok := tableByName(f, "prefill.moecast.d128.kv-bf16").Lookup(long)
	require.True(t, ok)
	long.MeanKV = 4096 + 32768
	proxyLong, _ := tableByName(f, "prefill.moecast.d128.kv-bf16").Lookup(long)
	assert.InDelta(t, float64(proxyLong.Time)*float64(pe.Time)/float64(proxy0.Time), float64(pl.Time), 1e-12)
	assert.Greater(t, float64(pl.Time), 4*float64(pe.Time), "32k cached keys cost several times the 4k chunk alone")
	// SGLang runs: SGLang's own row answers the chunk with no prefix
	long.MeanKV, long.Engine = 4096, "sglang"
	ps, ok := f.KernelTables().Prefill(long)
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#prefill.sglang-0.5.14.d128.kv-bf16", ps.Source.Table)

	assert.Less(t, e.Lo, e.Time)
	assert.Greater(t, e.Hi, e.Time)

	// All-reduce of one Kimi decode token (14,336 B) at 8 ranks, custom.
	c, ok := f.CommTables().AllReduce(comm.OneShot, 8, 14336)
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#allreduce.vllm.graph", c.Source.Table)
	ce, ok := f.CommTablesFor(false).AllReduce(comm.OneShot, 8, 14336)
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#allreduce.vllm.eager", ce.Source.Table)
	assert.Greater(t, ce.Time, c.Time, "eager custom all-reduce is slower")
}

// TestEmbeddedMoECorrection checks the routing correction on every
// embedded balanced MoE table: uniform routing never touches more experts
// than the table's balanced routing, so a corrected lookup at T tokens never
// exceeds the most the table measured up to T; and at one token (both
// routings touch topk experts) it is the table's own value.
func TestEmbeddedMoECorrection(t *testing.T) {
	for _, gpu := range EmbeddedNames() {
		f, err := Embedded(gpu)
		require.NoError(t, err)
		for _, tb := range f.Kernels().MoEs {
			if tb.Key.Distribution != "balanced" {
				continue
			}
			splits, _, _, _ := tb.Series()
			for _, sp := range splits {
				raw := func(T int) float64 { // the uncorrected table value at T
					u := *tb
					u.Key.Distribution = "uniform"
					e, _ := u.Lookup(moeShape(tb, sp, T))
					return float64(e.Time)
				}
				runMax := 0.0
				for T := 1; T <= 1024; T++ {
					e, ok := tb.Lookup(moeShape(tb, sp, T))
					require.True(t, ok)
					runMax = math.Max(runMax, raw(T))
					if T == 1 {
						assert.Equal(t, raw(1), float64(e.Time))
					}
					assert.LessOrEqual(t, float64(e.Time), runMax*(1+1e-12), "%s %s split %v T=%d", gpu, tb.Name(), sp, T)
				}
			}
		}
	}
}

func moeShape(tb *kernels.MoETable, sp [2]int, T int) kernels.MoEShape {
	return kernels.MoEShape{GlobalTokens: T, Tokens: T, Experts: tb.Key.Experts, TopK: tb.Key.TopK, Hidden: tb.Key.Hidden,
		Inter: tb.Key.Inter / sp[0], MoETP: sp[0], EP: sp[1], Weight: weightFor(tb.Key.Quant)}
}

func weightFor(q string) dtype.Format {
	switch q {
	case "int4_wo":
		return dtype.INT4G32
	case "fp8_block":
		return dtype.FP8Block128
	}
	return dtype.Format{Name: q}
}

func TestCoverage(t *testing.T) {
	f, err := ImportNCCLTests(ncclFixtures, NCCLTestsOptions{GPU: "h100-sxm", Date: "2026-11-29", Command: "test"})
	require.NoError(t, err)
	cov := f.Coverage()
	require.Len(t, cov, 2)
	ar := cov[1]
	assert.Equal(t, "impl=nccl", ar.Keys)
	assert.Equal(t, 42, ar.Rows)
	require.Len(t, ar.Series, 2)
	assert.Equal(t, "ranks=2", ar.Series[0].Key)
	assert.Equal(t, AxisRange{Name: "bytes", Lo: 512, Hi: 536870912, Distinct: 21}, ar.Series[1].Axes[0])
	assert.Equal(t, 38, ar.LOOPoints, "19 interior points per rank count")
	assert.Greater(t, ar.LOO, 0.0)
}

func TestWriteIsAtomicAndValidates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.toml")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	bad := &File{Schema: Schema, Provenance: Provenance{GPU: "x", Date: "d", Command: "c", Launch: "eager", Cache: "warm"},
		Tables: []Table{{Name: "t", Op: "allreduce", Keys: Keys{Impl: "nccl"}, Columns: []string{"ranks", "bytes", "latency_us"},
			Rows: [][]float64{{8, 1024, -3}}}}}
	err := bad.Write(path)
	assert.ErrorContains(t, err, "latency_us must be positive")
	got, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(got), "a failed write leaves the old file")
}

// TestEmbeddedMoENeverBeatsDRAM: through kernels.Costs (which floors every
// table result), a calibrated MoE layer is never faster than streaming the
// expert weights it reads from DRAM at the GPU's peak bandwidth, although
// the source's L2-resident rows are (the bias the floor corrects).
func TestEmbeddedMoENeverBeatsDRAM(t *testing.T) {
	checked := 0
	for _, gpu := range EmbeddedNames() {
		f, err := Embedded(gpu)
		require.NoError(t, err)
		g, ok := kernels.LookupGPU(gpu)
		require.True(t, ok)
		c := &kernels.Costs{GPU: g, Graphs: true, Tables: f.KernelTables()}
		for _, split := range [][2]int{{1, 8}, {8, 1}} {
			for _, T := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
				s := kernels.MoEShape{Tokens: T, GlobalTokens: T, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048 / split[0],
					MoETP: split[0], EP: split[1], Weight: dtype.INT4G32}
				s.ExpertsTouched = kernels.UniformDistinctExperts(float64(T), 384, 8) / float64(split[1])
				s.Pairs = float64(T*8) / float64(split[1])
				e := c.MoE(s)
				if e.Source.Kind != cost.Table {
					continue
				}
				checked++
				floor := unit.TransferTime(kernels.MoEBytes(s), g.MemBW)
				assert.GreaterOrEqual(t, float64(e.Time), float64(floor), "%s split %v T=%d: %s", gpu, split, T, e.Source.Describe())
			}
		}
	}
	assert.Positive(t, checked, "some MoE queries answered from tables")
}

func TestParseGEMMAndGQATables(t *testing.T) {
	src := `schema = 1
[provenance]
gpu = "h200-sxm"
date = "2026-11-29"
command = "hand-made test table"
launch = "cuda-graph"
cache = "flushed"

[[table]]
name = "gemm.bf16"
op = "gemm"
dtype = "bf16"
columns = ["n", "k", "m", "latency_us"]
rows = """
7168,2048,1,8
7168,2048,64,12
"""

[[table]]
name = "gqa"
op = "gqa"
kv_dtype = "bf16"
head_dim = 128
columns = ["heads", "kv_heads", "batch", "kv_len", "latency_ms"]
rows = """
16,1,1,1024,0.010
16,1,1,4096,0.020
"""
`
	f, err := Parse("hand.toml", []byte(src))
	require.NoError(t, err)
	kt := f.KernelTables()
	require.NotNil(t, kt)
	assert.Nil(t, f.CommTables())
	e, ok := kt.GEMM(kernels.GEMMShape{M: 64, N: 7168, K: 2048, Weight: dtype.BF16Weights})
	require.True(t, ok)
	assert.Equal(t, 12*unit.Microsecond, e.Time)
	assert.Equal(t, "hand.toml#gemm.bf16", e.Source.Table)
	e, ok = kt.GQA(kernels.GQAShape{Batch: 1, Context: 4096, Heads: 16, KVHeads: 1, HeadDim: 128, KV: dtype.KVBF16})
	require.True(t, ok)
	assert.InDelta(t, 20e-6, float64(e.Time), 1e-15, "latency_ms converted")
	assert.Equal(t, 2, e.Source.RowLo)
	_ = roundTrip(t, f)
}

func tableOf(t *testing.T, f *File, name string) *Table {
	t.Helper()
	for i := range f.Tables {
		if f.Tables[i].Name == name {
			return &f.Tables[i]
		}
	}
	t.Fatalf("no table %s in %s", name, f.Name)
	return nil
}

func rowOf(t *testing.T, f *File, name string, row int) []float64 {
	t.Helper()
	return tableOf(t, f, name).Rows[row-1]
}

// The tables calib from-trace writes for prefill and mixed steps (issue
// 25): prefill attention by chunk and prefix (op prefill, as calib gpu
// measures it), and the unmapped per-layer cost by tokens, parsed, built
// and answering their lookups.
func TestParseTracedPrefillAndUnmappedTables(t *testing.T) {
	src := `schema = 1
[provenance]
gpu = "h200-sxm"
date = "2026-12-02"
command = "moecast calib from-trace a.json.gz b.json.gz"
launch = "eager"
cache = "unknown"

[[table]]
name = "prefill.trace.bf16.d128"
op = "prefill"
kv_dtype = "bf16"
head_dim = 128
v_head_dim = 128
columns = ["heads", "kv_heads", "chunk", "prefix", "latency_us"]
rows = """
16,4,1024,0,18.2
16,4,4096,0,151.8
"""

[[table]]
name = "unmapped.trace"
op = "unmapped"
columns = ["tokens", "latency_us"]
rows = """
1024,72.5
4096,200.3
"""
`
	f, err := Parse("trace.toml", []byte(src))
	require.NoError(t, err)
	kt, ok := f.KernelTables().(*kernels.Tables)
	require.True(t, ok)
	e, ok := kt.Prefill(kernels.PrefillShape{Chunks: 2, Tokens: 8192, Keys: 8192, MeanChunk: 4096, MeanKV: 4096, Heads: 16, KVHeads: 4, QKDim: 128, VDim: 128, KV: "bf16"})
	require.True(t, ok)
	assert.InDelta(t, 2*151.8e-6, float64(e.Time), 1e-12, "two chunks of the measured size")
	e, ok = kt.Unmapped(1024)
	require.True(t, ok)
	assert.InDelta(t, 72.5e-6, float64(e.Time), 1e-12)
	assert.Equal(t, "trace.toml#unmapped.trace", e.Source.Table)
	_ = roundTrip(t, f)

	for _, tc := range []struct{ name, old, new, want string }{
		{"unmapped with keys", "op = \"unmapped\"", "op = \"unmapped\"\ndtype = \"bf16\"", "op unmapped takes no keys"},
		{"prefill without v_head_dim", "v_head_dim = 128\n", "", "keys kv_dtype, head_dim and v_head_dim are required"},
		{"prefill negative prefix", "16,4,1024,0,18.2", "16,4,1024,-512,18.2", "prefix must be"},
		{"the former op gqa_prefill", `op = "prefill"`, `op = "gqa_prefill"`, `op "gqa_prefill" is no longer read: use op "prefill"`},
		{"unmapped fractional tokens", "1024,72.5", "1024.5,72.5", "tokens must be a positive integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("trace.toml", []byte(strings.Replace(src, tc.old, tc.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// tableByName is the built prefill table of f named name.
func tableByName(f *File, name string) *kernels.PrefillTable {
	for _, tb := range f.Kernels().Prefills {
		if tb.Name() == f.Name+"#"+name {
			return tb
		}
	}
	return nil
}

// TestPerfDBDeepEPNormal: DeepEP normal rows become one ep table per phase
// (impl deepep_normal) holding transmit + notify time of the rows at
// DeepEP's default 20 SMs, ranks = node_num x GPUs per node; the rows at
// other SM counts are left out.
func TestPerfDBDeepEPNormal(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "systems"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "comm"), 0o755))
	sys, err := os.ReadFile("testdata/perfdb/systems/h200_sxm.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "systems", "h200_sxm.yaml"), sys, 0o644))
	csv := "framework,version,device,op_name,kernel_source,node_num,hidden_size,num_token,num_topk,num_experts,dispatch_sms,dispatch_transmit_us,dispatch_notify_us,combine_sms,combine_transmit_us,combine_notify_us\n" +
		"sglang,0.5.12,NVIDIA H200,normal,deepep,1,7168,128,8,256,4,300,0,4,500,0\n" +
		"sglang,0.5.12,NVIDIA H200,normal,deepep,1,7168,128,8,256,20,100,2.5,20,150,1\n" +
		"sglang,0.5.12,NVIDIA H200,normal,deepep,1,7168,1024,8,256,20,400,0,20,700,0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "comm", "h200_sxm__sglang_0.5.12_wideep_deepep_normal_perf.csv"), []byte(csv), 0o644))
	f, err := ImportPerfDB(dir, perfdbOpts("h200-sxm"))
	require.NoError(t, err)
	require.Len(t, f.Tables, 2)
	for i, want := range []struct {
		phase string
		lat   []float64
	}{{"dispatch", []float64{102.5, 400}}, {"combine", []float64{151, 700}}} {
		tb := f.Tables[i]
		assert.Equal(t, "ep.deepep_normal."+want.phase+".sglang-0.5.12", tb.Name)
		assert.Equal(t, Keys{Impl: "deepep_normal", Phase: want.phase}, tb.Keys)
		assert.Equal(t, want.lat, tb.Column("latency_us"))
		assert.Equal(t, []float64{8, 8}, tb.Column("ranks"))
		assert.Equal(t, []float64{128, 1024}, tb.Column("tokens_per_rank"))
		assert.Contains(t, strings.Join(tb.Provenance.Corrections, "\n"), "transmit_us + "+want.phase+"_notify_us")
	}
	g := roundTrip(t, f)
	lk, ok := g.CommTables().(comm.EPLookup)
	require.True(t, ok)
	e, ok := lk.EP("deepep_normal", "combine", 8, 128, 7168, 8, 256)
	require.True(t, ok)
	assert.InDelta(t, 151e-6, float64(e.Time), 1e-12)
	_, ok = lk.EP("deepep_ll", "combine", 8, 128, 7168, 8, 256)
	assert.False(t, ok, "no low-latency table here")
}
