package campaign

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// testdata/h200-attn-req3.toml is `moecast calib gpu --ops attention` as
// the H200 wrote it (attn req-3, 2026-12-01: 41.8 s): the recorded
// measurement loads (plausibility checks included), its rows respect the
// hardware, and it answers the shipped models' attention at TP 1-8.
func TestRecordedH200Attention(t *testing.T) {
	f, err := calib.Load("testdata/h200-attn-req3.toml")
	require.NoError(t, err)
	require.Len(t, f.Tables, 3)
	g, ok := kernels.LookupGPU("h200-sxm")
	require.True(t, ok)
	for _, tb := range f.Tables {
		c := map[string]int{}
		for i, n := range tb.Columns {
			c[n] = i
		}
		prev := map[[3]float64]float64{}
		for _, r := range tb.Rows {
			lat := r[c["latency_us"]] * 1e-6
			var kv float64
			var key [3]float64
			switch tb.Op {
			case "gqa":
				kv = r[c["batch"]] * r[c["kv_len"]] * 2 * r[c["kv_heads"]] * float64(tb.Keys.HeadDim) * 2
				key = [3]float64{r[c["heads"]], r[c["kv_heads"]], r[c["batch"]]}
			case "mla":
				kv = r[c["batch"]] * r[c["kv_len"]] * 576 * 2
				key = [3]float64{r[c["heads"]], 0, r[c["batch"]]}
				assert.Greater(t, r[c["working_set_bytes"]], kv, "the module reads its weights too")
			}
			assert.Less(t, kv/lat, float64(g.MemBW), "%s row %v reads the cache faster than HBM", tb.Name, r)
			// Longer caches never take less time (3% replay noise allowed).
			if p, ok := prev[key]; ok {
				assert.GreaterOrEqual(t, lat, 0.97*p, "%s row %v", tb.Name, r)
			}
			prev[key] = lat
		}
	}
	kt := f.KernelTables()
	for _, m := range gqaModels {
		c, err := model.Preset(m.Name)
		require.NoError(t, err)
		for _, tp := range attentionTPs {
			e, ok := kt.GQA(kernels.GQAShape{Batch: 32, Context: 4096, Heads: c.Attn.Heads / tp, KVHeads: max(1, c.Attn.KVHeads/tp),
				HeadDim: c.Attn.HeadDim, KV: dtype.KVBF16})
			require.True(t, ok, "%s tp%d", m.Name, tp)
			assert.Positive(t, float64(e.Time))
		}
	}
	for _, m := range mlaModels {
		c, err := model.Preset(m.Name)
		require.NoError(t, err)
		a := c.Attn
		for _, tp := range attentionTPs {
			e, ok := kt.MLAModule(kernels.MLAShape{Batch: 32, Context: 4096, Heads: a.Heads / tp, KVLoRARank: a.KVLoRARank,
				QKRopeDim: a.QKRopeDim, KV: dtype.KVBF16, Hidden: c.Hidden, QLoRARank: a.QLoRARank, QKNopeDim: a.QKNopeDim, VHeadDim: a.VHeadDim})
			require.True(t, ok, "%s tp%d", m.Name, tp)
			assert.Positive(t, float64(e.Time))
		}
	}
}
