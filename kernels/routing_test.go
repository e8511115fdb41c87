package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// skewedPair is a balanced table and its power-law sibling of one origin
// (the perf database measures both for each MoE shape), plus a power-law
// table of another engine, ranked into one set.
func skewedPair(t *testing.T) (*Tables, *MoETable) {
	t.Helper()
	key := MoEKey{Quant: "int4_wo", Experts: 16, TopK: 2, Hidden: 64, Inter: 32}
	mk := func(dist, engine string, scale float64) *MoETable {
		pts := []MoEPoint{
			{Tokens: 1, MoETP: 1, EP: 1, Latency: us * scaleSec(10*scale), Row: 1},
			{Tokens: 4, MoETP: 1, EP: 1, Latency: us * scaleSec(40*scale), Row: 2},
			{Tokens: 16, MoETP: 1, EP: 1, Latency: us * scaleSec(100*scale), Row: 3},
			{Tokens: 4, MoETP: 1, EP: 2, Latency: us * scaleSec(30*scale), Row: 4},
			{Tokens: 16, MoETP: 1, EP: 2, Latency: us * scaleSec(60*scale), Row: 5},
		}
		k := key
		k.Distribution = dist
		tb, err := NewMoETable("perfdb#moe."+engine+"."+dist, k, pts)
		require.NoError(t, err)
		tb.SetOrigin(engine, "0.5.14", false, engine+" moe rows")
		return tb
	}
	bal := mk("balanced", "sglang", 1)
	ts := &Tables{MoEs: []*MoETable{
		mk("power_law_1.2", "vllm", 9), // another engine's: never this table's sibling
		bal,
		mk("power_law_1.01", "sglang", 0.5),
	}}
	ts.Rank()
	return ts, bal
}

func scaleSec(f float64) unit.Seconds { return unit.Seconds(f) }

func skewedQuery(tokens, ep int, routing string) MoEShape {
	return MoEShape{GlobalTokens: tokens, Tokens: tokens, Experts: 16, TopK: 2, Hidden: 64, Inter: 32, MoETP: 1, EP: ep,
		Weight: dtype.INT4G32, Engine: "sglang", Routing: routing}
}

// TestMoESkewedRouting: a query that names a power-law distribution reads
// the chosen balanced table's sibling of that distribution at its own
// tokens (no uniform-routing remap); without one, with another alpha, or
// with DeepEP dispatch it reads the balanced rows as before; another
// engine's power-law table is never the sibling.
func TestMoESkewedRouting(t *testing.T) {
	ts, bal := skewedPair(t)
	uniform, ok := ts.MoE(skewedQuery(4, 1, ""))
	require.True(t, ok)
	assert.Equal(t, "perfdb#moe.sglang.balanced", uniform.Source.Table)
	assert.NotContains(t, uniform.Source.Note, "power-law")

	e, ok := ts.MoE(skewedQuery(4, 1, "power_law_1.01"))
	require.True(t, ok)
	assert.Equal(t, "perfdb#moe.sglang.power_law_1.01", e.Source.Table)
	assert.InDelta(t, float64(20*us), float64(e.Time), 1e-15, "the sibling's own row at T = 4 (40 us x 0.5)")
	assert.Contains(t, e.Source.Note, "power-law rows")
	assert.NotEqual(t, uniform.Time, e.Time)

	// EP rows: the sibling's series at (1, 2), at T = 16.
	e, ok = ts.MoE(skewedQuery(16, 2, "power_law_1.01"))
	require.True(t, ok)
	assert.InDelta(t, float64(30*us), float64(e.Time), 1e-15)

	// DeepEP: the dispatched split reads the balanced rows.
	q := skewedQuery(16, 2, "power_law_1.01")
	q.DeepEP = true
	d, ok := ts.MoE(q)
	require.True(t, ok)
	assert.Equal(t, "perfdb#moe.sglang.balanced", d.Source.Table)

	// An alpha the origin did not measure: the balanced rows.
	e, ok = ts.MoE(skewedQuery(4, 1, "power_law_1.2"))
	require.True(t, ok)
	assert.Equal(t, uniform, e)

	assert.Len(t, ts.skewed[bal], 1, "only the same origin's power-law table is linked")
}

// TestMoESkewedLinksPerSelection: the power-law links belong to the set
// of tables ranked, not to the shared tables. A cached calibration's
// tables are shared by every selection (calib.Select), which may rank and
// look up in parallel (a serving sweep): ranking a second set that holds
// the balanced table without its sibling, or ranking sets side by side,
// leaves the first set's skewed reads as they were. Before, Rank wrote the
// link into the shared table: the second Rank unlinked the first set's
// sibling, and parallel Ranks wrote one map at once (a "concurrent map
// writes" crash of the test suite).
func TestMoESkewedLinksPerSelection(t *testing.T) {
	ts, bal := skewedPair(t)
	want, ok := ts.MoE(skewedQuery(4, 1, "power_law_1.01"))
	require.True(t, ok)
	require.Equal(t, "perfdb#moe.sglang.power_law_1.01", want.Source.Table)

	alone := &Tables{MoEs: []*MoETable{bal}}
	alone.Rank()
	got, ok := ts.MoE(skewedQuery(4, 1, "power_law_1.01"))
	require.True(t, ok)
	assert.Equal(t, want, got, "another selection's Rank leaves this one's links")
	b, ok := alone.MoE(skewedQuery(4, 1, "power_law_1.01"))
	require.True(t, ok)
	assert.Equal(t, "perfdb#moe.sglang.balanced", b.Source.Table, "a set without the sibling reads the balanced rows")

	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				u := &Tables{MoEs: append([]*MoETable(nil), ts.MoEs...)}
				u.Rank()
			}
		}()
	}
	for range 8 {
		<-done
	}
	got, ok = ts.MoE(skewedQuery(4, 1, "power_law_1.01"))
	require.True(t, ok)
	assert.Equal(t, want, got)
}

// TestPerfDBRouting: each family's alpha as aiconfigurator's SDK sets it.
func TestPerfDBRouting(t *testing.T) {
	for arch, want := range map[string]string{
		"DeepseekV3ForCausalLM":              "power_law_1.01",
		"GlmMoeDsaForCausalLM":               "power_law_1.01",
		"KimiK25ForConditionalGeneration":    "power_law_1.01",
		"GptOssForCausalLM":                  "power_law_1.2",
		"MiniMaxM2ForCausalLM":               "power_law_1.2",
		"Qwen3MoeForCausalLM":                "power_law_1.2",
		"Qwen3_5MoeForConditionalGeneration": "power_law_1.2",
		"Qwen3_5MoeForCausalLM":              "power_law_1.2",
		"LlamaForCausalLM":                   "",
	} {
		assert.Equal(t, want, PerfDBRouting(arch), arch)
	}
}
