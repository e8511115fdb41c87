package campaign

import (
	"github.com/moecast/moecast/internal/unit"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// TestAttentionModelsMatchPresets: the op's model list is the shipped
// presets' attention, so its splits are the ones sim asks for.
func TestAttentionModelsMatchPresets(t *testing.T) {
	for _, m := range gqaModels {
		c, err := model.Preset(m.Name)
		require.NoError(t, err, m.Name)
		assert.Equal(t, model.GQA, c.Attn.Kind, m.Name)
		assert.Equal(t, [3]int{c.Attn.Heads, c.Attn.KVHeads, c.Attn.HeadDim}, [3]int{m.Heads, m.KVHeads, m.HeadDim}, m.Name)
	}
	for _, m := range mlaModels {
		c, err := model.Preset(m.Name)
		require.NoError(t, err, m.Name)
		a := c.Attn
		assert.Equal(t, model.MLA, a.Kind, m.Name)
		assert.Equal(t, []int{a.Heads, c.Hidden, a.QLoRARank, a.KVLoRARank, a.QKNopeDim, a.QKRopeDim, a.VHeadDim},
			[]int{m.Heads, m.Hidden, m.QLoRARank, m.KVLoRARank, m.QKNope, m.QKRope, m.V}, m.Name)
	}
	// Every preset with GQA attention is in the list.
	for _, name := range model.PresetNames() {
		c, err := model.Preset(name)
		require.NoError(t, err)
		if c.Attn.Kind == model.GQA {
			assert.True(t, slices.ContainsFunc(gqaModels, func(m gqaModel) bool { return m.Name == name }), "%s is not measured", name)
		}
	}
}

func TestAttentionPlan(t *testing.T) {
	splits := gqaSplits()
	for _, want := range []gqaSplit{{64, 4, 128}, {16, 1, 128}, {8, 1, 128}, {5, 1, 128}, {40, 8, 128}, {64, 8, 64}, {8, 1, 64}} {
		assert.Contains(t, splits, want)
	}
	assert.Len(t, splits, 18)
	assert.Equal(t, []int{8, 16, 32, 64, 128}, MLAHeads())
	full := AttentionPoints(Options{})
	quick := AttentionPoints(Options{Quick: true})
	assert.Less(t, len(quick), len(full)/4)
	for _, p := range full {
		assert.LessOrEqual(t, p.KVBytes(), int64(maxAttnKVBytes), "%+v", p)
	}
	// Every series has every batch at 1k-16k tokens; the largest caches
	// are left out.
	has := func(ps []attnPoint, q attnPoint) bool { return slices.Contains(ps, q) }
	assert.True(t, has(full, attnPoint{GQA: gqaSplit{64, 4, 128}, Batch: 256, KVLen: 32768}))
	assert.False(t, has(full, attnPoint{GQA: gqaSplit{64, 4, 128}, Batch: 256, KVLen: 131072}))
	assert.True(t, has(full, attnPoint{MLA: true, MLAHeads: 8, Batch: 256, KVLen: 32768}))
	assert.False(t, has(quick, attnPoint{MLA: true, MLAHeads: 8, Batch: 64, KVLen: 4096}), "no MLA core points under --quick")
	assert.Equal(t, int64(256*65536*576*2), attnPoint{MLA: true, MLAHeads: 8, Batch: 256, KVLen: 65536}.KVBytes())
	assert.Equal(t, int64(4*1024*2*4*128*2), attnPoint{GQA: gqaSplit{64, 4, 128}, Batch: 4, KVLen: 1024}.KVBytes())
	plan, err := NewPlan(Options{Quick: true, Ops: []string{opAttention}})
	require.NoError(t, err)
	assert.Equal(t, len(quick)+len(MLAModulePoints(Options{Quick: true})), plan.Steps())
}

// recordedAttention is an attention result as an H200 might give it: 6 us
// plus the KV read at 3.5 TB/s.
func recordedAttention(o Options) []AttnResult {
	var res []AttnResult
	for _, p := range AttentionPoints(o) {
		s := 6e-6 + float64(p.KVBytes())/3.5e12
		res = append(res, AttnResult{Point: p, Timing: unit.Timing{Median: unit.Seconds(s), Min: unit.Seconds(0.98 * s), Max: unit.Seconds(1.05 * s)},
			BytesPerSec: float64(p.KVBytes()) / s, Kernel: "moecast_gqa_decode_d128_s2", Splits: 1})
	}
	return res
}

// TestAttentionFileAnswersSim: the gqa tables written from a recorded
// result load with calib.Load (plausibility checks included) and answer
// the GQA shapes sim asks for every shipped GQA model at attention TP 1-8
// on h200-sxm; the MLA figures go into the method, not a table.
func TestAttentionFileAnswersSim(t *testing.T) {
	r := recorded()
	r.Outputs = []*Output{AttentionOutput(recordedAttention(Options{}))}
	f, err := r.File(Options{Command: "moecast calib gpu --ops attention --out h200.toml"}, time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200-attn.toml")
	require.NoError(t, f.Write(path))
	got, err := calib.Load(path)
	require.NoError(t, err)
	require.Len(t, got.Tables, 2)
	assert.Equal(t, []string{"gqa.moecast.d64.kv-bf16", "gqa.moecast.d128.kv-bf16"}, []string{got.Tables[0].Name, got.Tables[1].Name})
	assert.Contains(t, got.Provenance.Method, "MLA decode attention alone")
	assert.Contains(t, got.Provenance.Method, " 8/1/8192 ")
	assert.NotContains(t, got.Provenance.Method, "attention: MLA/GQA decode KV read rate")
	assert.Contains(t, got.Effective(&got.Tables[0]).Method, "paged bf16 KV cache")
	kt := got.KernelTables()
	for _, m := range gqaModels {
		c, err := model.Preset(m.Name)
		require.NoError(t, err)
		for _, tp := range attentionTPs {
			// sim/ops.go: heads/tp query heads, max(1, kv_heads/tp) KV heads.
			s := kernels.GQAShape{Batch: 64, Context: 8192, Heads: c.Attn.Heads / tp, KVHeads: max(1, c.Attn.KVHeads/tp),
				HeadDim: c.Attn.HeadDim, KV: dtype.KVBF16}
			e, ok := kt.GQA(s)
			require.True(t, ok, "%s tp%d: %+v", m.Name, tp, s)
			want := 6e-6 + float64(attnPoint{GQA: gqaSplit{s.Heads, s.KVHeads, s.HeadDim}, Batch: 64, KVLen: 8192}.KVBytes())/3.5e12
			assert.InDelta(t, want, float64(e.Time), 1e-12, "%s tp%d", m.Name, tp)
			assert.True(t, strings.HasSuffix(e.Source.Table, "#gqa.moecast.d"+strconv.Itoa(c.Attn.HeadDim)+".kv-bf16"), e.Source.Table)
			// Between measured points the lookup interpolates; beyond the
			// largest cache it clamps, and says so.
			s.Batch, s.Context = 256, 131072
			e, ok = kt.GQA(s)
			require.True(t, ok)
			assert.Positive(t, float64(e.Time))
		}
	}
	// An fp8 KV cache is not what was measured.
	_, ok := kt.GQA(kernels.GQAShape{Batch: 1, Context: 1024, Heads: 64, KVHeads: 8, HeadDim: 64, KV: dtype.KVFP8})
	assert.False(t, ok)
	// Through the cost model: the table answers (floored at the DRAM time).
	g, ok := kernels.LookupGPU("h200-sxm")
	require.True(t, ok)
	costs := kernels.Costs{GPU: g, Tables: kt}
	e := costs.GQADecode(kernels.GQAShape{Batch: 16, Context: 16384, Heads: 64, KVHeads: 8, HeadDim: 64, KV: dtype.KVBF16})
	assert.Contains(t, e.Source.Table, "gqa.moecast.d64.kv-bf16")
}

// recordedModules is an MLA module result as an H200 might give it: 40 us
// plus the layer's weights and KV at 3 TB/s.
func recordedModules(o Options) []MLAModuleResult {
	var res []MLAModuleResult
	for _, p := range MLAModulePoints(o) {
		ws := 50e6*float64(p.Heads)/8 + float64(attnPoint{MLA: true, MLAHeads: p.Heads, Batch: p.Batch, KVLen: p.KVLen}.KVBytes())
		s := 40e-6 + ws/3e12
		res = append(res, MLAModuleResult{Point: p, Timing: unit.Timing{Median: unit.Seconds(s), Min: unit.Seconds(s), Max: unit.Seconds(s)}, WorkingSet: ws, Kernels: 11, Layers: 4,
			GEMMs: "cuBLASLt 13.1.0"})
	}
	return res
}

// TestMLAModuleFileAnswersSim: the mla table written from a recorded
// module result loads and answers the MLA module shapes sim asks for
// Kimi-K2.5 and DeepSeek-V3 at attention TP 1-8 (bf16 KV), with the
// models' dims checked; GLM-5's dims are not answered.
func TestMLAModuleFileAnswersSim(t *testing.T) {
	r := recorded()
	r.Outputs = []*Output{AttentionOutput(recordedAttention(Options{Quick: true}))}
	mo := MLAModuleOutput(recordedModules(Options{}))
	r.Outputs[0].Tables = append(r.Outputs[0].Tables, mo.Tables...)
	f, err := r.File(Options{Command: "moecast calib gpu --ops attention --out h200.toml"}, time.Now())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200-attn.toml")
	require.NoError(t, f.Write(path))
	got, err := calib.Load(path)
	require.NoError(t, err)
	require.Len(t, got.Tables, 3)
	assert.Equal(t, "mla", got.Tables[2].Op)
	assert.Contains(t, got.Effective(&got.Tables[2]).Method, "the whole MLA decode module on one GPU")
	assert.Contains(t, got.Effective(&got.Tables[2]).Method, "cuBLASLt 13.1.0")
	kt := got.KernelTables()
	for _, m := range mlaModels {
		c, err := model.Preset(m.Name)
		require.NoError(t, err)
		a := c.Attn
		for _, tp := range attentionTPs {
			// sim/step.go mlaShape: heads per rank, the model's dims.
			s := kernels.MLAShape{Batch: 8, Context: 8192, Heads: a.Heads / tp, KVLoRARank: a.KVLoRARank, QKRopeDim: a.QKRopeDim,
				KV: dtype.KVBF16, TotalHeads: a.Heads, Hidden: c.Hidden, QLoRARank: a.QLoRARank, QKNopeDim: a.QKNopeDim, VHeadDim: a.VHeadDim}
			e, ok := kt.MLAModule(s)
			require.True(t, ok, "%s tp%d", m.Name, tp)
			h := a.Heads / tp
			want := 40e-6 + (50e6*float64(h)/8+float64(attnPoint{MLA: true, MLAHeads: h, Batch: 8, KVLen: 8192}.KVBytes()))/3e12
			assert.InDelta(t, want, float64(e.Time), 1e-12, "%s tp%d", m.Name, tp)
			assert.Contains(t, e.Source.Table, "#mla.moecast.bf16.kv-bf16")
		}
	}
	glm, err := model.Preset("glm-5")
	require.NoError(t, err)
	a := glm.Attn
	_, ok := kt.MLAModule(kernels.MLAShape{Batch: 16, Context: 4096, Heads: a.Heads / 8, KVLoRARank: a.KVLoRARank, QKRopeDim: a.QKRopeDim,
		KV: dtype.KVBF16, Hidden: glm.Hidden, QLoRARank: a.QLoRARank, QKNopeDim: a.QKNopeDim, VHeadDim: a.VHeadDim})
	assert.False(t, ok, "GLM-5's projections differ")
}
