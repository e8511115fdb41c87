package calib

import (
	"strings"
	"testing"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func policyMoE(name, dist string, experts int, rows [][]float64) Table {
	return Table{Name: name, Op: "moe",
		Keys:    Keys{Dtype: "int4_wo", Distribution: dist, Experts: experts, TopK: 8, Hidden: 7168, Inter: 2048},
		Columns: []string{"moe_tp", "ep", "tokens", "latency_us"}, Rows: rows}
}

// TestProxyBias: the proxy's latency relative to the engine's at the
// points both measured, the MoE summary also over >= 128 tokens; tables of
// another shape or without common points give nothing.
func TestProxyBias(t *testing.T) {
	engine := []Table{
		policyMoE("engine", "balanced", 384, [][]float64{{1, 8, 1, 100}, {1, 8, 128, 200}, {1, 8, 256, 400}}),
		policyMoE("other-experts", "balanced", 256, [][]float64{{1, 8, 1, 100}}),
	}
	tests := []struct {
		name  string
		proxy Table
		want  []string
	}{
		{"common points", policyMoE("proxy", "uniform", 384, [][]float64{{1, 8, 1, 110}, {1, 8, 128, 100}, {1, 8, 256, 300}, {1, 8, 512, 1}}),
			[]string{ProxyBiasPrefix + "engine: proxy/engine - 1 over 3 common points: median -25.0%, range -50.0% .. 10.0%; moe_tp=1 ep=8 at >= 128 tokens (2 points): median -37.5%, range -50.0% .. -25.0%"}},
		{"no common point", policyMoE("proxy", "uniform", 384, [][]float64{{8, 1, 1, 110}}), nil},
		{"only the engine table of the same shape", policyMoE("proxy", "uniform", 256, [][]float64{{1, 8, 1, 50}}),
			[]string{ProxyBiasPrefix + "other-experts: proxy/engine - 1 over 1 common points: median -50.0%, range -50.0% .. -50.0%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ProxyBias(&tt.proxy, engine)
			require.Len(t, got, len(tt.want))
			for i := range tt.want {
				assert.True(t, strings.HasPrefix(got[i], tt.want[i]), "%s\nwant prefix %s", got[i], tt.want[i])
			}
		})
	}
}

// TestPrefer: the engine's tables come first and answer a query both
// cover; the proxy's stay and answer what the engine's do not cover, and
// carry their bias.
func TestPrefer(t *testing.T) {
	prov := Provenance{GPU: "h200-sxm", Date: "2026-12-01", Command: "x", Launch: "cuda-graph", Cache: "warm"}
	engine := &File{Schema: Schema, Name: "engine", Provenance: prov,
		Tables: []Table{policyMoE("moe.engine", "balanced", 384, [][]float64{{1, 8, 1, 100}, {1, 8, 64, 200}})}}
	proxy := &File{Schema: Schema, Name: "proxy", Provenance: prov,
		Tables: []Table{policyMoE("moe.proxy", "uniform", 384, [][]float64{{1, 8, 1, 50}, {1, 8, 64, 100}, {8, 1, 1, 70}, {8, 1, 64, 90}})}}
	f, err := Prefer("merged", engine, proxy)
	require.NoError(t, err)
	require.Len(t, f.Tables, 2)
	assert.Equal(t, "moe.engine", f.Tables[0].Name)
	assert.Equal(t, "moe.proxy", f.Tables[1].Name)
	assert.Contains(t, strings.Join(f.Effective(&f.Tables[1]).Corrections, "\n"), ProxyBiasPrefix+"moe.engine")

	tests := []struct {
		name      string
		tp, ep    int
		wantTable string
	}{
		{"engine covers ep8", 1, 8, "merged#moe.engine"},
		{"proxy fills tp8", 8, 1, "merged#moe.proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := kernels.MoEShape{Tokens: 1, GlobalTokens: 1, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048 / tt.tp, MoETP: tt.tp, EP: tt.ep, Weight: dtype.INT4G32}
			e, ok := f.KernelTables().MoE(s)
			require.True(t, ok)
			assert.Equal(t, tt.wantTable, e.Source.Table)
		})
	}
}
