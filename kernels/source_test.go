package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// policyMoE is a uniform-routing MoE table of the hand shape (16 experts,
// top-2) with latencies scale x 10 us a token at 1-8 tokens, one series
// per expert-TP split in splits (default moe_tp 1), with its origin set.
func policyMoE(t *testing.T, name, engine string, user bool, scale float64, splits ...int) *MoETable {
	t.Helper()
	if len(splits) == 0 {
		splits = []int{1}
	}
	var pts []MoEPoint
	row := 1
	for _, tp := range splits {
		for _, tok := range []int{1, 2, 4, 8} {
			pts = append(pts, MoEPoint{Tokens: tok, MoETP: tp, EP: 1, Latency: unit.Seconds(scale * float64(tok) * 10e-6), Row: row})
			row++
		}
	}
	tb, err := NewMoETable(name, MoEKey{Quant: "int4_wo", Experts: 16, TopK: 2, Hidden: 64, Inter: 32, Distribution: "uniform"}, pts)
	require.NoError(t, err)
	label := "calib gpu moe rows"
	if engine != "" {
		label = "perfdb " + engine + " 0.1 moe rows"
	}
	tb.SetOrigin(engine, "0.1", user, label)
	return tb
}

// TestSourcePolicy: the engine-measured table outranks the proxy where both
// cover a shape (whatever their stack order), the proxy fills a shape the
// engine table lacks and says why, the scenario's engine's table outranks
// another engine's, and the user's calibration outranks all.
func TestSourcePolicy(t *testing.T) {
	proxy := policyMoE(t, "emb#moe.proxy", "", false, 1, 1, 2) // splits moe_tp 1 and 2
	vllm := policyMoE(t, "emb#moe.vllm", "vllm", false, 2)     // moe_tp 1 only
	sgl := policyMoE(t, "emb#moe.sglang", "sglang", false, 3)  // moe_tp 1 only
	user := policyMoE(t, "mine.toml#moe", "", true, 4)         // the user's calib gpu, moe_tp 1

	for _, tc := range []struct {
		name      string
		tables    []*MoETable
		engine    string
		tp        int
		table     string
		us        float64
		policyHas string
	}{
		{"engine table over proxy", []*MoETable{proxy, vllm}, "vllm", 1, "emb#moe.vllm", 80,
			"perfdb vllm 0.1 moe rows (measured on the scenario's engine: outranks the proxy kernels)"},
		{"engine table over proxy, no engine given", []*MoETable{proxy, vllm}, "", 1, "emb#moe.vllm", 80,
			"perfdb vllm 0.1 moe rows (engine-measured: outranks the proxy kernels)"},
		{"proxy fills a split the engine lacks", []*MoETable{proxy, vllm}, "vllm", 2, "emb#moe.proxy", 40,
			"calib gpu moe rows (moecast's proxy kernels: no engine-measured table covers this shape)"},
		{"scenario's engine over another engine", []*MoETable{vllm, sgl, proxy}, "sglang", 1, "emb#moe.sglang", 120,
			"perfdb sglang 0.1 moe rows (measured on the scenario's engine"},
		{"another engine's table over the proxy, and says so", []*MoETable{vllm, proxy}, "sglang", 1, "emb#moe.vllm", 80,
			"perfdb vllm 0.1 moe rows (another engine's measured kernels: no table of the scenario's engine covers this shape"},
		{"user calibration over all", []*MoETable{vllm, sgl, proxy, user}, "vllm", 1, "mine.toml#moe", 160,
			"calib gpu moe rows (the user's calibration: outranks the embedded tables)"},
		{"user calibration over all, another engine", []*MoETable{user, vllm, sgl, proxy}, "sglang", 1, "mine.toml#moe", 160,
			"the user's calibration"},
		{"where the user's table lacks the split, the embedded policy", []*MoETable{user, vllm, proxy}, "vllm", 2, "emb#moe.proxy", 40,
			"moecast's proxy kernels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := &Tables{MoEs: append([]*MoETable(nil), tc.tables...)}
			ts.Rank()
			q := moeQuery(4, tc.tp)
			q.Engine = tc.engine
			e, ok := ts.MoE(q)
			require.True(t, ok)
			assert.Equal(t, tc.table, e.Source.Table)
			assert.InDelta(t, tc.us*1e-6, float64(e.Time), 1e-12)
			assert.Contains(t, e.Source.Policy, tc.policyHas)
			assert.Contains(t, e.Source.Describe(), "; chosen: "+e.Source.Policy)
		})
	}
}

// TestRank: user tables first in their own order, then engine-measured,
// then proxy; stable within each class.
func TestRank(t *testing.T) {
	p1 := policyMoE(t, "p1", "", false, 1)
	v := policyMoE(t, "v", "vllm", false, 1)
	p2 := policyMoE(t, "p2", "", false, 1)
	u1 := policyMoE(t, "u1", "", true, 1)
	s := policyMoE(t, "s", "sglang", false, 1)
	u2 := policyMoE(t, "u2", "vllm", true, 1)
	ts := &Tables{MoEs: []*MoETable{p1, v, p2, u1, s, u2}}
	ts.Rank()
	var names []string
	for _, tb := range ts.MoEs {
		names = append(names, tb.Name())
	}
	assert.Equal(t, []string{"u1", "u2", "v", "s", "p1", "p2"}, names)
}

// TestSourcePolicyThroughCosts: Costs.Engine reaches every op's table
// lookup (MoE, GQA, MLA module, GEMM, prefill), so an SGLang run reads
// SGLang's table where vLLM's comes first in the stack.
func TestSourcePolicyThroughCosts(t *testing.T) {
	gqa := func(name, engine string, scale float64) *GQATable {
		tb, err := NewGQATable(name, GQAKey{HeadDim: 128, KV: "bf16"}, []GQAPoint{
			{Heads: 16, KVHeads: 1, Batch: 1, KVLen: 1024, Latency: unit.Seconds(scale * 10e-6), Row: 1},
			{Heads: 16, KVHeads: 1, Batch: 8, KVLen: 4096, Latency: unit.Seconds(scale * 80e-6), Row: 2},
		})
		require.NoError(t, err)
		tb.SetOrigin(engine, "0.1", false, engine+" gqa rows")
		return tb
	}
	mla := func(name, engine string, scale float64) *MLATable {
		tb, err := NewMLATable(name, MLAKey{GEMMDtype: "bf16", KV: "bf16", KVLoRARank: 512, QKRopeDim: 64}, []MLAPoint{
			{Heads: 16, Batch: 1, KVLen: 1024, Latency: unit.Seconds(scale * 50e-6), Row: 1},
			{Heads: 16, Batch: 8, KVLen: 4096, Latency: unit.Seconds(scale * 200e-6), Row: 2},
		})
		require.NoError(t, err)
		tb.SetOrigin(engine, "0.1", false, engine+" mla rows")
		return tb
	}
	gemm := func(name, engine string, scale float64) *GEMMTable {
		tb, err := NewGEMMTable(name, "bf16", []GEMMPoint{
			{M: 1, N: 4096, K: 4096, Latency: unit.Seconds(scale * 20e-6), Row: 1},
			{M: 64, N: 4096, K: 4096, Latency: unit.Seconds(scale * 30e-6), Row: 2},
		})
		require.NoError(t, err)
		tb.SetOrigin(engine, "0.1", false, engine+" gemm rows")
		return tb
	}
	pre := func(name, engine string, scale float64) *PrefillTable {
		tb := engPrefill(t, name, engine, scale)
		tb.SetOrigin(engine, "0.1", false, engine+" prefill rows")
		return tb
	}
	ts := &Tables{
		MoEs:     []*MoETable{policyMoE(t, "moe.vllm", "vllm", false, 1), policyMoE(t, "moe.sglang", "sglang", false, 2)},
		GQAs:     []*GQATable{gqa("gqa.vllm", "vllm", 1), gqa("gqa.sglang", "sglang", 2)},
		MLAs:     []*MLATable{mla("mla.vllm", "vllm", 1), mla("mla.sglang", "sglang", 2)},
		GEMMs:    []*GEMMTable{gemm("gemm.vllm", "vllm", 1), gemm("gemm.sglang", "sglang", 2)},
		Prefills: []*PrefillTable{pre("prefill.vllm", "vllm", 1), pre("prefill.sglang", "sglang", 2)},
	}
	ts.Rank()
	for _, engine := range []string{"vllm", "sglang"} {
		c := Costs{GPU: gpu(t, "h200-sxm"), Graphs: true, Tables: ts, Engine: engine}
		own := func(t *testing.T, table, policy string) {
			t.Helper()
			assert.Equal(t, "."+engine, table[len(table)-len(engine)-1:], table)
			assert.Contains(t, policy, "(measured on the scenario's engine")
		}
		e := c.MoE(moeQuery(4, 1))
		own(t, e.Source.Table, e.Source.Policy)
		e = c.GQADecode(GQAShape{Batch: 1, Context: 1024, Heads: 16, KVHeads: 1, HeadDim: 128})
		own(t, e.Source.Table, e.Source.Policy)
		e, ok := c.MLAModule(MLAShape{Batch: 1, Context: 1024, Heads: 16, KVLoRARank: 512, QKRopeDim: 64}, nil)
		require.True(t, ok)
		own(t, e.Source.Table, e.Source.Policy)
		e = c.GEMM(GEMMShape{M: 8, N: 4096, K: 4096, Weight: dtype.BF16Weights})
		own(t, e.Source.Table, e.Source.Policy)
		e = c.AttentionPrefill(PrefillShape{Chunks: 1, Tokens: 1024, MeanChunk: 1024, MeanKV: 1024, Heads: 8, KVHeads: 1, QKDim: 128, VDim: 128, KVBytes: 2})
		own(t, e.Source.Table, e.Source.Policy)
	}
}

// TestSourcePolicyDoesNotAllocate: the choice, another engine's table
// passed over included, allocates nothing.
func TestSourcePolicyDoesNotAllocate(t *testing.T) {
	ts := &Tables{MoEs: []*MoETable{policyMoE(t, "v", "vllm", false, 1), policyMoE(t, "p", "", false, 1), policyMoE(t, "s", "sglang", false, 1)}}
	ts.Rank()
	q := moeQuery(4, 1)
	q.Engine = "sglang"
	var sink unit.Seconds
	n := testing.AllocsPerRun(200, func() {
		e, _ := ts.MoE(q)
		sink += e.Time
	})
	assert.Zero(t, n)
}

// TestRankNewestVersionFirst: among the embedded tables of one engine a
// newer version ranks first, in the places that engine's tables hold.
func TestRankNewestVersionFirst(t *testing.T) {
	mk := func(name, engine, version string) *MoETable {
		tb := policyMoE(t, name, engine, false, 1)
		tb.SetOrigin(engine, version, false, name)
		return tb
	}
	ts := &Tables{MoEs: []*MoETable{mk("v0.9", "vllm", "0.9.2"), mk("s", "sglang", "0.5.14"), mk("v0.24", "vllm", "0.24.0"),
		mk("p", "", ""), mk("v0.10", "vllm", "0.10.1rc1")}}
	ts.Rank()
	var names []string
	for _, tb := range ts.MoEs {
		names = append(names, tb.Name())
	}
	assert.Equal(t, []string{"v0.24", "s", "v0.10", "v0.9", "p"}, names)
	assert.Equal(t, 1, compareVersions("0.24.0", "0.5.14"))
	assert.Equal(t, -1, compareVersions("0.5", "0.5.1"))
	assert.Equal(t, 0, compareVersions("1.2", "1.2"))
	// a vLLM run reads the newest vLLM table
	q := moeQuery(4, 1)
	q.Engine = "vllm"
	e, ok := ts.MoE(q)
	require.True(t, ok)
	assert.Equal(t, "v0.24", e.Source.Table)
}

// TestGQAIndex: once ranked, a GQA query reads only the tables of its
// head dim and KV dtype, and gets what the policy's choice over every
// table gives (user, engine and proxy tables of several keys, each
// engine, queries inside and outside their ranges). The table picked for
// a query less its batch and context is remembered (picks): every
// batch and context after the first answers from the pick, and a pick
// keyed without the engine or the heads gives another table's or another
// grid's answer here.
func TestGQAIndex(t *testing.T) {
	gqa := func(name, engine string, user bool, key GQAKey, scale float64) *GQATable {
		tb, err := NewGQATable(name, key, []GQAPoint{
			{Heads: 16, KVHeads: 1, Batch: 1, KVLen: 1024, Latency: unit.Seconds(scale * 10e-6), Row: 1},
			{Heads: 16, KVHeads: 1, Batch: 8, KVLen: 4096, Latency: unit.Seconds(scale * 80e-6), Row: 2},
			{Heads: 8, KVHeads: 1, Batch: 1, KVLen: 1024, Latency: unit.Seconds(scale * 7e-6), Row: 3},
			{Heads: 8, KVHeads: 1, Batch: 8, KVLen: 4096, Latency: unit.Seconds(scale * 50e-6), Row: 4},
		})
		require.NoError(t, err)
		if engine != "" || user {
			tb.SetOrigin(engine, "0.1", user, name+" rows")
		}
		return tb
	}
	k128, k128f, k64 := GQAKey{HeadDim: 128, KV: "bf16"}, GQAKey{HeadDim: 128, KV: "fp8"}, GQAKey{HeadDim: 64, KV: "bf16"}
	ts := &Tables{GQAs: []*GQATable{
		gqa("proxy128", "", false, k128, 1), gqa("vllm64", "vllm", false, k64, 2), gqa("sglang128", "sglang", false, k128, 3),
		gqa("vllm128f", "vllm", false, k128f, 4), gqa("user64", "", true, k64, 5), gqa("vllm128", "vllm", false, k128, 6),
		gqa("proxy64", "", false, k64, 7),
	}}
	ts.Rank()
	answered := 0
	for _, engine := range []string{"", "vllm", "sglang", "trtllm"} {
		for _, hd := range []int{64, 128, 96} {
			for _, kv := range []dtype.KVCache{dtype.KVBF16, dtype.KVFP8} {
				for _, heads := range []int{8, 16, 32} {
					for _, q := range [][2]int{{1, 512}, {4, 2048}, {64, 10000}} {
						s := GQAShape{Batch: q[0], Context: q[1], Heads: heads, KVHeads: 1, HeadDim: hd, KV: kv, Engine: engine}
						want, wok := choose(ts.GQAs, s, engine, (*GQATable).Lookup)
						got, ok := ts.GQA(s)
						require.Equal(t, wok, ok, "%+v", s)
						require.Equal(t, want, got, "%+v", s)
						assert.LessOrEqual(t, len(ts.gqaTables(s)), 3, "%+v", s)
						if ok {
							answered++
						}
					}
				}
			}
		}
	}
	assert.Greater(t, answered, 50)
	picks := 0
	ts.picks.Range(func(_, _ any) bool { picks++; return true })
	assert.Equal(t, 4*3*2*3, picks, "one pick per engine, head dim, KV dtype and heads")
	s := GQAShape{Batch: 0, Context: 512, Heads: 8, KVHeads: 1, HeadDim: 128, KV: dtype.KVBF16}
	_, ok := ts.GQA(s)
	assert.False(t, ok, "batch 0 is no table's")
	// Another query's pick under this query's hash (a collision) is not
	// used: the query is answered as choose answers it.
	s = GQAShape{Batch: 4, Context: 2048, Heads: 16, KVHeads: 1, HeadDim: 128, KV: dtype.KVBF16, Engine: "vllm"}
	k := gqaPickKey{heads: s.Heads, kvHeads: s.KVHeads, headDim: s.HeadDim, kv: s.KV, engine: s.Engine}
	other := *ts.GQAs[0]
	ts.picks.Store(k.hash(), &gqaPick{key: gqaPickKey{heads: 99}, t: &other, g: other.series.grids[0], policy: "wrong"})
	want, _ := choose(ts.GQAs, s, s.Engine, (*GQATable).Lookup)
	got, ok := ts.GQA(s)
	require.True(t, ok)
	assert.Equal(t, want, got, "collision")
}

// TestMLAModulePicks: once ranked, an MLA-module query answers from the
// table the policy's choice over every table gives, remembered per query
// less its batch and context (picks): engine tables of both engines,
// a user table, bf16-KV and fp8-KV tables with different heads and dims,
// legacy-collected rows, fp8-KV queries answered from a bf16-KV series
// (lookupFP8FromBF16), and queries no table covers. A pick keyed without
// the engine, the heads or the KV dtype, or one that forgets it answers
// from a bf16-KV series, answers another table's rows here.
func TestMLAModulePicks(t *testing.T) {
	mla := func(name, engine string, user bool, kv string, heads []int, hidden int, legacy bool, scale float64) *MLATable {
		var pts []MLAPoint
		row := 0
		for _, h := range heads {
			for _, b := range []int{1, 8, 64} {
				for _, l := range []int{1024, 8192} {
					row++
					pts = append(pts, MLAPoint{Heads: h, Batch: b, KVLen: l, Row: row,
						Latency: unit.Seconds(scale * float64(h) * (20e-6 + float64(b*l)*1e-9))})
				}
			}
		}
		tb, err := NewMLATable(name, MLAKey{GEMMDtype: "bf16", KV: kv, KVLoRARank: 512, QKRopeDim: 64, Hidden: hidden}, pts)
		require.NoError(t, err)
		if engine != "" || user {
			tb.SetOrigin(engine, "0.1", user, name+" rows")
		}
		tb.LegacyCollector = legacy
		tb.MemBW = 4.8e12
		return tb
	}
	ts := &Tables{MLAs: []*MLATable{
		mla("proxy.bf16", "", false, "bf16", []int{16, 32, 64}, 0, false, 1),
		mla("sglang.bf16", "sglang", false, "bf16", []int{16, 32}, 7168, true, 2),
		mla("vllm.fp8", "vllm", false, "fp8", []int{32}, 7168, false, 3),
		mla("vllm.bf16", "vllm", false, "bf16", []int{16, 64}, 7168, true, 4),
		mla("user.fp8", "", true, "fp8", []int{64}, 0, false, 5),
		mla("other.bf16", "vllm", false, "bf16", []int{16}, 4096, false, 6),
	}}
	ts.Rank()
	answered, fromBF16 := 0, 0
	for _, engine := range []string{"", "vllm", "sglang"} {
		for _, kv := range []dtype.KVCache{dtype.KVBF16, dtype.KVFP8} {
			for _, heads := range []int{16, 32, 64, 128} {
				for _, hidden := range []int{7168, 4096} {
					for _, keep := range []bool{false, true} {
						for _, q := range [][2]int{{1, 512}, {4, 2048}, {64, 10000}, {8, 3000}} {
							s := MLAShape{Batch: q[0], Context: q[1], Heads: heads, KVLoRARank: 512, QKRopeDim: 64, KV: kv,
								TotalHeads: 128, Hidden: hidden, Engine: engine, KeepCollectorBias: keep}
							want, wok := choose(ts.MLAs, s, engine, (*MLATable).Lookup)
							if !wok {
								want, wok = choose(ts.MLAs, s, engine, (*MLATable).lookupFP8FromBF16)
								if wok {
									fromBF16++
								}
							}
							got, ok := ts.MLAModule(s)
							require.Equal(t, wok, ok, "%+v", s)
							require.Equal(t, want, got, "%+v", s)
							if ok {
								answered++
							}
						}
					}
				}
			}
		}
	}
	assert.Greater(t, answered, 100)
	assert.Positive(t, fromBF16, "some fp8 queries answer from a bf16-KV series")
	s := MLAShape{Batch: 0, Context: 512, Heads: 16, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVBF16}
	_, ok := ts.MLAModule(s)
	assert.False(t, ok, "batch 0 is no table's")
	// Another query's pick under this query's hash (a collision) is not
	// used.
	s.Batch, s.Engine = 8, "vllm"
	k := s
	k.Batch, k.Context = 0, 0
	ts.picks.Store(mlaPickHash(&k), &mlaPick{key: MLAShape{Heads: 99}, t: ts.MLAs[len(ts.MLAs)-1], policy: "wrong"})
	want, wok := choose(ts.MLAs, s, s.Engine, (*MLATable).Lookup)
	got, ok := ts.MLAModule(s)
	require.True(t, wok)
	require.True(t, ok)
	assert.Equal(t, want, got, "collision")
}
