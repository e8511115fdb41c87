package calib

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
)

// selFile is a calibration of one GEMM table (dtype bf16) and one NCCL
// all-reduce table, measured on gpu over fabric, with latencies scaled by
// k so that answers tell the files apart.
func selFile(t *testing.T, name, gpu, fabric string, k float64) *File {
	t.Helper()
	src := fmt.Sprintf(`schema = 1
[provenance]
gpu = %q
fabric = %q
date = "2026-11-30"
command = "written for a test"
launch = "cuda-graph"
cache = "unknown"

[[table]]
name = "gemm"
op = "gemm"
dtype = "bf16"
columns = ["n", "k", "m", "latency_us"]
rows = """
7168,2048,1,%g
7168,2048,8,%g
"""

[[table]]
name = "ar"
op = "allreduce"
impl = "nccl"
columns = ["ranks", "bytes", "latency_us"]
rows = """
8,1024,%g
8,4096,%g
"""
`, gpu, fabric, 10*k, 11*k, 20*k, 21*k)
	f, err := Parse(name, []byte(src))
	require.NoError(t, err)
	return f
}

func TestSelectBox(t *testing.T) {
	f := selFile(t, "a.toml", "h200-sxm", "nvlink4", 1)
	gemm := kernels.GEMMShape{M: 1, N: 7168, K: 2048, Weight: dtype.BF16Weights}
	for _, tc := range []struct {
		name           string
		box            Box
		kernels, colls bool
		kFrom, cFrom   []string
	}{
		{"same box", Box{GPU: "h200-sxm", Fabric: "nvlink4", GPUs: 8}, true, true, nil, nil},
		{"other fabric", Box{GPU: "h200-sxm", Fabric: "pcie-gen5", GPUs: 8}, true, false, nil, []string{"h200-sxm over nvlink4"}},
		{"other gpu", Box{GPU: "h100-sxm", Fabric: "nvlink4", GPUs: 8}, false, false, []string{"h200-sxm"}, []string{"h200-sxm over nvlink4"}},
		{"one gpu: collectives kept, unused", Box{GPU: "h200-sxm", GPUs: 1}, true, true, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Select(tc.box, f)
			require.Len(t, s.Uses, 1)
			u := s.Uses[0]
			assert.Equal(t, "a.toml", u.Name)
			assert.Equal(t, 2, u.Tables)
			assert.Equal(t, tc.kernels, s.Kernels() != nil)
			assert.Equal(t, tc.colls, s.Comm(true) != nil)
			assert.Equal(t, tc.kFrom, u.KernelFrom)
			assert.Equal(t, tc.cFrom, u.CommFrom)
			assert.Equal(t, b2i(tc.kernels)+b2i(tc.colls), u.Used())
			if tc.kernels {
				e, ok := s.Kernels().GEMM(gemm)
				require.True(t, ok)
				assert.Equal(t, "a.toml#gemm", e.Source.Table)
			}
		})
	}
	assert.Nil(t, Select(Box{GPU: "h200-sxm"}).Kernels(), "no file, no tables")
}

// TestSelectLayers: a later file's table replaces an earlier one of the
// same op and keys; the earlier file's other tables stay.
func TestSelectLayers(t *testing.T) {
	box := Box{GPU: "h200-sxm", Fabric: "nvlink4", GPUs: 8}
	a := selFile(t, "a.toml", "h200-sxm", "nvlink4", 1)
	b := selFile(t, "b.toml", "h200-sxm", "nvlink4", 2)
	// c measures the all-reduce only, and over another fabric for its gemm
	// table to be left out.
	c := selFile(t, "c.toml", "h100-sxm", "nvlink4", 3)
	c.Tables[1].Provenance.GPU = "h200-sxm"

	gemm := kernels.GEMMShape{M: 1, N: 7168, K: 2048, Weight: dtype.BF16Weights}
	answer := func(s *Selection) (string, string) {
		g, ok := s.Kernels().GEMM(gemm)
		require.True(t, ok)
		ar, ok := s.Comm(true).AllReduce(comm.NCCL, 8, 1024)
		require.True(t, ok)
		return g.Source.Table, ar.Source.Table
	}

	s := Select(box, a, b)
	g, ar := answer(s)
	assert.Equal(t, "b.toml#gemm", g)
	assert.Equal(t, "b.toml#ar", ar)
	assert.Equal(t, 0, s.Uses[0].Replaced)
	assert.Equal(t, 2, s.Uses[1].Replaced)
	assert.Len(t, s.Kernels().(*kernels.Tables).GEMMs, 1, "replaced, not kept behind")

	s = Select(box, a, c)
	g, ar = answer(s)
	assert.Equal(t, "a.toml#gemm", g, "c's gemm table was measured on another GPU")
	assert.Equal(t, "c.toml#ar", ar)
	assert.Equal(t, 1, s.Uses[1].Replaced)
	assert.Equal(t, 1, s.Uses[1].KernelSkipped)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A prefill table from the user's traces (calib from-trace, op prefill)
// layered over the embedded measured ones: it replaces the embedded table
// of its keys and answers first; an embedded table of other keys (a
// sliding window) stays and answers its shapes.
func TestSelectPrefillLayers(t *testing.T) {
	head := `schema = 1
[provenance]
gpu = "h200-sxm"
date = "2026-12-02"
command = "written for a test"
launch = "cuda-graph"
cache = "unknown"
`
	table := func(name string, window, us int) string {
		w := ""
		if window > 0 {
			w = fmt.Sprintf("window = %d\n", window)
		}
		return fmt.Sprintf(`
[[table]]
name = %q
op = "prefill"
kv_dtype = "bf16"
head_dim = 128
v_head_dim = 128
%scolumns = ["heads", "kv_heads", "chunk", "prefix", "latency_us"]
rows = """
16,4,1024,0,%d
16,4,1024,8192,%d
"""
`, name, w, us, 10*us)
	}
	emb, err := Parse("embedded:h200-sxm", []byte(head+table("prefill.d128", 0, 30)+table("prefill.d128.w128", 128, 40)))
	require.NoError(t, err)
	user, err := Parse("mine.toml", []byte(head+table("prefill.trace.bf16.d128", 0, 18)))
	require.NoError(t, err)
	s := Select(Box{GPU: "h200-sxm", GPUs: 1}, emb, user)
	assert.Equal(t, 1, s.Uses[1].Replaced)
	kt := s.Kernels().(*kernels.Tables)
	require.Len(t, kt.Prefills, 2)
	assert.Equal(t, "mine.toml#prefill.trace.bf16.d128", kt.Prefills[0].Name(), "the user's table first")

	shape := kernels.PrefillShape{Chunks: 1, Tokens: 1024, Keys: 1024, MeanChunk: 1024, MeanKV: 1024, Heads: 16, KVHeads: 4,
		QKDim: 128, VDim: 128, KVBytes: 2, KV: "bf16"}
	for _, tc := range []struct {
		name   string
		window int
		table  string
		us     float64
	}{
		{"full attention: the user's traced table", 0, "mine.toml#prefill.trace.bf16.d128", 18},
		{"sliding window: the embedded window table", 128, "embedded:h200-sxm#prefill.d128.w128", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := shape
			q.Window = tc.window
			e, ok := kt.Prefill(q)
			require.True(t, ok)
			assert.Equal(t, tc.table, e.Source.Table)
			assert.InDelta(t, tc.us*1e-6, float64(e.Time), 1e-12)
		})
	}
}

// TestSelectSourcePolicy: through Select, a file the user passed outranks
// the embedded H200 calibration, whatever the order of the sources for a
// table of other keys (a later source replaces an earlier one's tables of
// the same op and keys: layering), and among the embedded tables the
// scenario's engine's MoE row answers (SGLang's for an SGLang run, though
// vLLM's comes first in the file); each answer's Source.Policy says why.
func TestSelectSourcePolicy(t *testing.T) {
	emb, err := Embedded("h200-sxm")
	require.NoError(t, err)
	require.NotNil(t, emb)
	const head = `schema = 1
[provenance]
gpu = "h200-sxm"
date = "2026-12-02"
command = "moecast calib gpu"
launch = "cuda-graph"
cache = "flushed"
`
	// the user's own calib gpu table of Kimi-K2.5's MoE: uniform routing,
	// the keys of the embedded calib gpu table, which it replaces
	user, err := Parse("mine.toml", []byte(head+`
[[table]]
name = "moe.mine"
op = "moe"
dtype = "int4_wo"
distribution = "uniform"
experts = 384
topk = 8
hidden = 7168
inter = 2048
columns = ["tokens", "moe_tp", "ep", "latency_us"]
rows = """
1,1,8,11
64,1,8,111
"""
`))
	require.NoError(t, err)
	// the user's MLA module table, without the projection dims the
	// embedded tables key (so none replaces another), answering the same
	// DeepSeek-dims query
	userMLA, err := Parse("mla.toml", []byte(head+`
[[table]]
name = "mla.mine"
op = "mla"
dtype = "bf16"
kv_dtype = "bf16"
kv_lora_rank = 512
qk_rope_dim = 64
columns = ["heads", "batch", "kv_len", "latency_us"]
rows = """
16,1,1024,33
16,8,1024,44
16,1,4096,55
16,8,4096,66
"""
`))
	require.NoError(t, err)
	box := Box{GPU: "h200-sxm", Fabric: "nvlink4", GPUs: 8}
	moe := kernels.MoEShape{Tokens: 1, GlobalTokens: 1, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048,
		MoETP: 1, EP: 8, Weight: dtype.INT4G32}
	mla := kernels.MLAShape{Batch: 1, Context: 1024, Heads: 16, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVBF16,
		Hidden: 7168, QLoRARank: 1536, QKNopeDim: 128, VHeadDim: 128}
	for _, engine := range []string{"vllm", "sglang"} {
		moe.Engine, mla.Engine = engine, engine
		e, ok := Select(box, emb).Kernels().MoE(moe)
		require.True(t, ok)
		assert.Equal(t, "embedded:h200-sxm#moe."+map[string]string{"vllm": "vllm-0.24.0", "sglang": "sglang-0.5.14"}[engine]+
			".int4_wo.e384.k8.h7168.i2048.balanced", e.Source.Table)
		assert.Equal(t, "perfdb "+engine+" "+map[string]string{"vllm": "0.24.0", "sglang": "0.5.14"}[engine]+
			" moe rows (measured on the scenario's engine: outranks the proxy kernels)", e.Source.Policy)

		e, ok = Select(box, emb, user).Kernels().MoE(moe)
		require.True(t, ok)
		assert.Equal(t, "mine.toml#moe.mine", e.Source.Table)
		assert.InDelta(t, 11e-6, float64(e.Time), 1e-12)
		assert.Equal(t, "calib gpu moe rows (the user's calibration: outranks the embedded tables)", e.Source.Policy)

		e, ok = Select(box, emb).Kernels().MLAModule(mla)
		require.True(t, ok)
		assert.Equal(t, "embedded:h200-sxm#mla.vllm-0.24.0.bf16.kv-bf16", e.Source.Table)
		for _, order := range [][]*File{{emb, userMLA}, {userMLA, emb}} {
			e, ok := Select(box, order...).Kernels().MLAModule(mla)
			require.True(t, ok)
			assert.Equal(t, "mla.toml#mla.mine", e.Source.Table)
			assert.InDelta(t, 33e-6, float64(e.Time), 1e-12)
			assert.Contains(t, e.Source.Policy, "(the user's calibration: outranks the embedded tables)")
		}
	}
	// an SGLang run of the MLA module: the perf database has vLLM's rows
	// only; they answer and say so
	mla.Engine = "sglang"
	e, ok := Select(box, emb).Kernels().MLAModule(mla)
	require.True(t, ok)
	assert.Equal(t, "embedded:h200-sxm#mla.vllm-0.24.0.bf16.kv-bf16", e.Source.Table)
	assert.Contains(t, e.Source.Policy, "another engine's measured kernels")
}
