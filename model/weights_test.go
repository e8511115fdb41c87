package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

func mustPreset(t *testing.T, name string) *Config {
	t.Helper()
	c, err := Preset(name)
	require.NoError(t, err)
	return c
}

func sumParams(ls []Linear) float64 {
	var s float64
	for _, l := range ls {
		s += l.Params()
	}
	return s
}

func shardBytes(ls []Linear, tp int) float64 {
	var s float64
	for _, l := range ls {
		in, out := l.ShardDims(tp)
		s += float64(in) * float64(out) * l.Format.BytesPerParam()
	}
	return s
}

// TestKimiK25ReferenceTable checks every row of a table of Kimi-K2.5's
// per-layer sizes, derived by hand from its config.json (ai-dynamo/aiconfigurator @ 095f58a,
// aic-core/src/aiconfigurator_core/model_configs/moonshotai--Kimi-K2.5_config.json)
// and the INT4 group-32 layout of its quantization_config, against the byte
// accounting. Each figure is
// compared within half a unit of its last printed digit.
func TestKimiK25ReferenceTable(t *testing.T) {
	c := mustPreset(t, "kimi-k2.5")
	tp8 := Layout{TP: 8, EP: 1, DP: 1}
	w := c.Weights(tp8)
	moe := float64(c.MoELayers())
	require.Equal(t, 60, c.MoELayers())
	require.Equal(t, 1, c.DenseLayerCount())

	attn := c.AttentionLinears()
	byName := map[string]Linear{}
	for _, l := range attn {
		byName[l.Name] = l
	}
	expert := c.ExpertLinears()
	emb, head := c.EmbeddingLinear(), c.LMHeadLinear()

	rows := []struct {
		name      string
		got, want float64
		halfUnit  float64 // half of the last printed digit of want
	}{
		{"one routed expert params (44.04 M)", sumParams(expert), 44.04e6, 0.005e6},
		{"one routed expert storage (24.8 MB)", sumParams(expert) * c.Quant.RoutedExperts.BytesPerParam(), 24.8e6, 0.05e6},
		{"one routed expert per GPU at TP8 (3.10 MB)", shardBytes(expert, 8), 3.10e6, 0.005e6},
		{"B/param of INT4 g32 bf16 scales (0.5625)", c.Quant.RoutedExperts.BytesPerParam(), 0.5625, 1e-12},
		{"384 experts of one layer params (16.9 G)", sumParams(expert) * 384, 16.9e9, 0.05e9},
		{"384 experts of one layer storage (9.51 GB)", float64(w.Total[ClassRoutedExperts]) / moe, 9.51e9, 0.005e9},
		{"384 experts of one layer per GPU (1.19 GB)", float64(w.PerGPU[ClassRoutedExperts]) / moe, 1.19e9, 0.005e9},
		{"routed experts whole model params (1.015 T)", c.Params().PerClass[ClassRoutedExperts], 1.015e12, 0.0005e12},
		{"routed experts whole model storage (571 GB)", float64(w.Total[ClassRoutedExperts]), 571e9, 0.5e9},
		{"routed experts per GPU at TP8 (71.3 GB)", float64(w.PerGPU[ClassRoutedExperts]), 71.3e9, 0.05e9},
		{"shared expert per layer params (44.04 M)", sumParams(c.SharedExpertLinears()), 44.04e6, 0.005e6},
		{"shared expert per layer bf16 (88 MB)", float64(w.Total[ClassSharedExpert]) / moe, 88e6, 0.5e6},
		{"shared expert per layer per GPU (11 MB)", float64(w.PerGPU[ClassSharedExpert]) / moe, 11e6, 0.5e6},
		{"q_a_proj (11.0 M)", byName["q_a_proj"].Params(), 11.0e6, 0.05e6},
		{"q_b_proj (18.9 M)", byName["q_b_proj"].Params(), 18.9e6, 0.05e6},
		{"kv_a_proj_with_mqa (4.13 M)", byName["kv_a_proj_with_mqa"].Params(), 4.13e6, 0.005e6},
		{"kv_b_proj (8.39 M)", byName["kv_b_proj"].Params(), 8.39e6, 0.005e6},
		{"o_proj (58.7 M)", byName["o_proj"].Params(), 58.7e6, 0.05e6},
		{"MLA projections per layer (101 M)", sumParams(attn), 101e6, 0.5e6},
		{"MLA per layer bf16 (202 MB)", float64(w.Total[ClassAttention]) / float64(c.Layers), 202e6, 0.5e6},
		{"MLA per layer per GPU, q_a and kv_a replicated (≈ 52 MB)", float64(w.PerGPU[ClassAttention]) / float64(c.Layers), 52e6, 0.5e6},
		{"dense layer-0 MLP params (396 M)", sumParams(c.DenseMLPLinears()), 396e6, 0.5e6},
		{"dense layer-0 MLP bf16 (793 MB)", float64(w.Total[ClassDenseMLP]), 793e6, 0.5e6},
		{"dense layer-0 MLP per GPU (99 MB)", float64(w.PerGPU[ClassDenseMLP]), 99e6, 0.5e6},
		{"embedding params (1.17 G)", emb.Params(), 1.17e9, 0.005e9},
		{"lm_head params (1.17 G)", head.Params(), 1.17e9, 0.005e9},
		{"embed + lm_head bf16 (4.7 GB)", float64(w.Total[ClassEmbedding] + w.Total[ClassLMHead]), 4.7e9, 0.05e9},
		{"embed + lm_head per GPU vocab-parallel (0.59 GB)", float64(w.PerGPU[ClassEmbedding] + w.PerGPU[ClassLMHead]), 0.59e9, 0.005e9},
		{"MLA KV per token bf16 (70.3 KB)", float64(c.KVBytesPerToken(dtype.KVBF16)), 70.3e3, 0.05e3},
		{"MLA KV per token fp8 (35.1 KB)", float64(c.KVBytesPerToken(dtype.KVFP8)), 35.1e3, 0.05e3},
		{"MLA KV per token per GPU at TP8, replicated (70.3 KB)", float64(c.KVBytesPerTokenPerGPU(dtype.KVBF16, tp8)), 70.3e3, 0.05e3},
		{"all-reduce payload hidden x bf16 (14,336 B)", float64(c.Hidden) * 2, 14336, 0},
	}
	for _, r := range rows {
		assert.InDelta(t, r.want, r.got, r.halfUnit, "%s: got %.6g, want %.6g ± %.3g", r.name, r.got, r.want, r.halfUnit)
	}
	// Exact integers behind the rows.
	assert.Equal(t, 44040192.0, sumParams(expert))
	assert.Equal(t, 70272.0, float64(c.KVBytesPerToken(dtype.KVBF16)))
}

// TestQuantPerClass checks the per-class formats of each preset's checkpoint
// as its config.json's quantization_config gives them (ai-dynamo/aiconfigurator @ 095f58a,
// aic-core/src/aiconfigurator_core/model_configs/).
func TestQuantPerClass(t *testing.T) {
	bf := dtype.BF16Weights
	fp8 := dtype.FP8Block128
	tests := []struct {
		preset                             string
		routed, shared, attn, dense, other dtype.Format
		method                             string
	}{
		{"kimi-k2.5", dtype.INT4G32, bf, bf, bf, bf, "compressed-tensors pack-quantized"},
		{"kimi-k2", fp8, fp8, fp8, fp8, bf, "fp8 block [128,128]"},
		{"deepseek-v3", fp8, fp8, fp8, fp8, bf, "fp8 block [128,128]"},
		{"deepseek-r1", fp8, fp8, fp8, fp8, bf, "fp8 block [128,128]"},
		{"gpt-oss-120b", dtype.MXFP4, bf, bf, bf, bf, "mxfp4 (experts)"},
		{"qwen3-235b-a22b", bf, bf, bf, bf, bf, "none"},
		{"qwen3-30b-a3b", bf, bf, bf, bf, bf, "none"},
		{"mixtral-8x7b", bf, bf, bf, bf, bf, "none"},
		{"glm-5", bf, bf, bf, bf, bf, "none"},
		{"llama-4-maverick", bf, bf, bf, bf, bf, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			c := mustPreset(t, tt.preset)
			q := c.Quant
			assert.Equal(t, tt.routed, q.RoutedExperts, "routed experts")
			assert.Equal(t, tt.attn, q.Attention, "attention")
			if c.MoE.Shared > 0 {
				assert.Equal(t, tt.shared, q.SharedExpert, "shared expert")
			}
			if c.DenseLayerCount() > 0 {
				assert.Equal(t, tt.dense, q.DenseMLP, "dense MLP")
			}
			for _, f := range []dtype.Format{q.Embedding, q.LMHead, q.Router, q.Base} {
				assert.Equal(t, tt.other, f, "embedding, lm_head, router, base")
			}
			assert.Equal(t, tt.method, q.Method)
		})
	}
}

// TestPublishedParamCounts compares Params with the counts the model cards
// publish (sources inline). Tolerance 0.5 % (cards round to 3 digits).
func TestPublishedParamCounts(t *testing.T) {
	tests := []struct {
		preset        string
		total, active float64
		activeNoEmbed bool // the card's active count excludes the embedding table
		source        string
	}{
		{"deepseek-v3", 671e9, 37e9, false, "DeepSeek-V3 card: 671B total (685B with the 14B MTP module), 37B activated"},
		{"qwen3-235b-a22b", 235e9, 22e9, false, "Qwen3-235B-A22B card: 235B total, 22B activated"},
		{"qwen3-30b-a3b", 30.5e9, 3.3e9, false, "Qwen3-30B-A3B card: 30.5B total, 3.3B activated"},
		{"gpt-oss-120b", 116.83e9, 5.13e9, true, "gpt-oss model card (arXiv 2508.10925) Table 1: 116.83B total, 5.13B active"},
		{"mixtral-8x7b", 46.7e9, 12.9e9, false, "Mixtral of Experts (arXiv 2401.04088): 47B total (46.7B), 13B active (12.9B)"},
		{"llama-4-maverick", 400e9, 17e9, false, "Llama-4-Maverick-17B-128E card: 400B total, 17B active (text model)"},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			c := mustPreset(t, tt.preset)
			p := c.Params()
			active := p.Active
			if tt.activeNoEmbed {
				active -= p.PerClass[ClassEmbedding]
			}
			assert.InEpsilon(t, tt.total, p.Total, 0.005, "total params (%s)", tt.source)
			// Active counts are quoted to 2-3 digits: 2.5 %.
			assert.InEpsilon(t, tt.active, active, 0.025, "active params (%s)", tt.source)
		})
	}
	// Kimi-K2: "1T total, 32B activated" (MoonshotAI/Kimi-K2 README).
	p := mustPreset(t, "kimi-k2").Params()
	assert.InEpsilon(t, 1.03e12, p.Total, 0.01)
	assert.InEpsilon(t, 32.5e9, p.Active, 0.02)
	// DeepSeek-V3's MTP module is quoted at 14B including its own copies of
	// the embedding and output head, which moecast shares with the model.
	c := mustPreset(t, "deepseek-v3")
	pd := c.Params()
	assert.InEpsilon(t, 14e9, pd.MTP+pd.PerClass[ClassEmbedding]+pd.PerClass[ClassLMHead], 0.05)
}

// TestShardingInvariants: for every preset and layout, the per-GPU bytes of
// a class times the ranks sharing it cover the class's total, exactly when
// the split is even; replicated classes are whole on every rank.
func TestShardingInvariants(t *testing.T) {
	layouts := []Layout{
		{TP: 1, EP: 1, DP: 1}, {TP: 2, EP: 1, DP: 1}, {TP: 4, EP: 1, DP: 1}, {TP: 8, EP: 1, DP: 1},
		{TP: 8, EP: 8, DP: 1}, {TP: 4, EP: 2, DP: 1}, {TP: 1, EP: 8, DP: 8, DPAttention: true},
	}
	for _, name := range PresetNames() {
		c := mustPreset(t, name)
		for _, l := range layouts {
			if c.CheckLayout(l) != nil {
				continue
			}
			w := c.Weights(l)
			ranks := float64(l.TP * l.DP)
			for cls := range NumClasses {
				tot, per := float64(w.Total[cls]), float64(w.PerGPU[cls])
				assert.GreaterOrEqual(t, per, 0.0)
				assert.LessOrEqual(t, per, tot*(1+1e-12), "%s %+v %s: per GPU above total", name, l, cls)
				if cls == ClassRoutedExperts {
					// Every expert is held by ExpertTP ranks, each with a
					// 1/ExpertTP slice: the ranks together hold the total,
					// plus the replicated down_proj biases (gpt-oss).
					assert.GreaterOrEqual(t, per*ranks, tot*(1-1e-12), "%s %+v routed experts", name, l)
					if !c.MoE.ExpertBias {
						assert.InEpsilon(t, tot, per*ranks, 1e-9, "%s %+v routed experts", name, l)
					}
				}
			}
			if l.TP == 1 && l.DP == 1 {
				assert.Equal(t, w.Total, w.PerGPU, "%s: one GPU holds everything", name)
			}
			assert.Equal(t, Sum(w.PerGPU), w.PerGPUTotal(true))
			assert.Equal(t, Sum(w.PerGPU)-w.PerGPU[ClassMTP], w.PerGPUTotal(false))
		}
	}
}

func TestExpertPlacement(t *testing.T) {
	c := mustPreset(t, "kimi-k2.5")
	tp8 := c.Weights(Layout{TP: 8, EP: 1, DP: 1})
	ep8 := c.Weights(Layout{TP: 8, EP: 8, DP: 1})
	// TP8 splits each of 384 experts 8 ways; EP8 holds 48 whole experts: the
	// same bytes per GPU, the same attention.
	assert.InEpsilon(t, float64(tp8.PerGPU[ClassRoutedExperts]), float64(ep8.PerGPU[ClassRoutedExperts]), 1e-12)
	assert.Equal(t, tp8.PerGPU[ClassAttention], ep8.PerGPU[ClassAttention])
	assert.Equal(t, 48, Layout{TP: 8, EP: 8, DP: 1}.ExpertsPerRank(384))
	assert.Equal(t, 1, Layout{TP: 8, EP: 8, DP: 1}.ExpertTP())
	assert.Equal(t, 2, Layout{TP: 8, EP: 4, DP: 1}.ExpertTP())
	assert.Equal(t, 8, Layout{TP: 1, EP: 1, DP: 8}.ExpertTP(), "EP off: vLLM flattens TP across DP for MoE")

	// DP attention: attention whole on every rank, experts spread by EP.
	dpa := c.Weights(Layout{TP: 1, EP: 8, DP: 8, DPAttention: true})
	assert.Equal(t, dpa.Total[ClassAttention], dpa.PerGPU[ClassAttention])
	assert.InEpsilon(t, float64(dpa.Total[ClassRoutedExperts])/8, float64(dpa.PerGPU[ClassRoutedExperts]), 1e-12)

	// Mixtral EP8: one whole expert per rank per layer.
	m := mustPreset(t, "mixtral-8x7b")
	mw := m.Weights(Layout{TP: 8, EP: 8, DP: 1})
	oneExpert := sumParams(m.ExpertLinears()) * 2 * float64(m.MoELayers())
	assert.InDelta(t, oneExpert, float64(mw.PerGPU[ClassRoutedExperts]), 1e-3)
}

func TestShardDims(t *testing.T) {
	qkv := Linear{In: 4096, Out: (64 + 2*4) * 128, Split: QKVParallel, Heads: 64, KVHeads: 4, HeadDim: 128, Bias: true}
	tests := []struct {
		name    string
		l       Linear
		tp      int
		in, out int
		bias    int
	}{
		{"column", Linear{In: 10, Out: 30, Split: Column}, 4, 10, 8, 0},
		{"row", Linear{In: 30, Out: 10, Split: Row, Bias: true}, 4, 8, 10, 10},
		{"replicated", Linear{In: 30, Out: 10, Split: Replicated}, 8, 30, 10, 0},
		{"vocab padded to 64", Linear{In: 16, Out: 1000, Split: VocabParallel}, 8, 16, 128, 0},
		{"vocab tp1 unpadded", Linear{In: 16, Out: 1000, Split: VocabParallel}, 1, 16, 1000, 0},
		{"qkv tp2: 32 q + 2 kv heads", qkv, 2, 4096, (32 + 2*2) * 128, (32 + 2*2) * 128},
		{"qkv tp8: kv replicated to 1 per rank", qkv, 8, 4096, (8 + 2*1) * 128, (8 + 2*1) * 128},
		{"qkv tp1", qkv, 1, 4096, 72 * 128, 72 * 128},
	}
	for _, tt := range tests {
		in, out := tt.l.ShardDims(tt.tp)
		assert.Equal(t, [2]int{tt.in, tt.out}, [2]int{in, out}, tt.name)
		assert.Equal(t, tt.bias, tt.l.ShardBias(tt.tp), tt.name)
	}
}

func TestKVBytes(t *testing.T) {
	q := mustPreset(t, "qwen3-235b-a22b")
	// 94 layers x 2 x 4 kv heads x 128 x 2 B = 192,512 B.
	assert.Equal(t, unit.Bytes(192512), q.KVBytesPerToken(dtype.KVBF16))
	assert.Equal(t, unit.Bytes(96256), q.KVBytesPerToken(dtype.KVFP8))
	assert.Equal(t, unit.Bytes(192512/2), q.KVBytesPerTokenPerGPU(dtype.KVBF16, Layout{TP: 2, EP: 1, DP: 1}))
	assert.Equal(t, unit.Bytes(192512/4), q.KVBytesPerTokenPerGPU(dtype.KVBF16, Layout{TP: 4, EP: 1, DP: 1}))
	// TP8 > 4 kv heads: one (replicated) kv head per rank.
	assert.Equal(t, unit.Bytes(192512/4), q.KVBytesPerTokenPerGPU(dtype.KVBF16, Layout{TP: 8, EP: 1, DP: 1}))
	// DP attention: unsplit.
	assert.Equal(t, unit.Bytes(192512), q.KVBytesPerTokenPerGPU(dtype.KVBF16, Layout{TP: 8, EP: 8, DP: 1, DPAttention: true}))

	g := mustPreset(t, "gpt-oss-120b")
	// 36 x 2 x 8 x 64 x 2 = 73,728 B (sliding layers not reduced).
	assert.Equal(t, unit.Bytes(73728), g.KVBytesPerToken(dtype.KVBF16))

	m := mustPreset(t, "deepseek-v3")
	assert.Equal(t, unit.Bytes(61*576), m.KVBytesPerToken(dtype.KVFP8))
	assert.Equal(t, m.KVBytesPerToken(dtype.KVFP8), m.KVBytesPerTokenPerGPU(dtype.KVFP8, Layout{TP: 8, EP: 1, DP: 1}))

	// GLM-5: 78 x 576 x 2 latent + 78 x 132 indexer keys.
	z := mustPreset(t, "glm-5")
	assert.Equal(t, unit.Bytes(78*132), z.IndexerKeyBytesPerToken())
	assert.Equal(t, unit.Bytes(78*576*2+78*132), z.KVBytesPerToken(dtype.KVBF16))
	assert.Zero(t, m.IndexerKeyBytesPerToken())
}

func TestLayerKinds(t *testing.T) {
	ds := mustPreset(t, "deepseek-v3")
	for i, want := range []bool{false, false, false, true, true} {
		assert.Equal(t, want, ds.IsMoELayer(i), "deepseek layer %d", i)
	}
	assert.False(t, ds.IsMoELayer(61), "past the last layer")
	assert.False(t, ds.IsMoELayer(-1))
	assert.Equal(t, 58, ds.MoELayers())
	assert.Equal(t, 3, ds.DenseLayerCount())

	// Qwen3 rule: (i+1) % decoder_sparse_step == 0 unless in mlp_only_layers.
	q := mustPreset(t, "qwen3-30b-a3b")
	q.MoEStep = 2
	q.DenseOnly = []int{3}
	var moe []int
	for i := range 8 {
		if q.IsMoELayer(i) {
			moe = append(moe, i)
		}
	}
	assert.Equal(t, []int{1, 5, 7}, moe)
	assert.Equal(t, 48-q.MoELayers(), q.DenseLayerCount())
	// The dense layers of that variant get an MLP of intermediate_size.
	require.NotNil(t, q.DenseMLPLinears())
	assert.Equal(t, 2*6144, q.DenseMLPLinears()[0].Out)
	assert.Nil(t, mustPreset(t, "qwen3-30b-a3b").DenseMLPLinears())
}

func TestLinearLists(t *testing.T) {
	g := mustPreset(t, "gpt-oss-120b")
	attn := g.AttentionLinears()
	require.Len(t, attn, 2)
	assert.Equal(t, Linear{Name: "qkv_proj", Class: ClassAttention, In: 2880, Out: (64 + 16) * 64, Split: QKVParallel,
		Format: dtype.BF16Weights, Bias: true, Heads: 64, KVHeads: 8, HeadDim: 64}, attn[0])
	assert.Equal(t, Linear{Name: "o_proj", Class: ClassAttention, In: 4096, Out: 2880, Split: Row, Format: dtype.BF16Weights, Bias: true}, attn[1])
	assert.True(t, g.RouterLinear().Bias)
	assert.Nil(t, g.SharedExpertLinears())
	assert.Nil(t, g.MTPLinears())
	ex := g.ExpertLinears()
	assert.Equal(t, 2*2880, ex[0].Out)
	assert.Equal(t, dtype.MXFP4, ex[0].Format)
	assert.True(t, ex[0].Bias)

	ds := mustPreset(t, "deepseek-v3")
	assert.Equal(t, []Linear{{Name: "eh_proj", Class: ClassMTP, In: 2 * 7168, Out: 7168, Split: Replicated, Format: dtype.BF16Weights}}, ds.MTPLinears())
	var names []string
	for _, l := range ds.AttentionLinears() {
		names = append(names, l.Name+"/"+l.Split.String())
	}
	assert.Equal(t, []string{"q_a_proj/replicated", "q_b_proj/column", "kv_a_proj_with_mqa/replicated", "kv_b_proj/column", "o_proj/row"}, names)
	r := ds.RouterLinear()
	assert.Equal(t, Linear{Name: "gate", Class: ClassRouter, In: 7168, Out: 256, Split: Replicated, Format: dtype.BF16Weights, Bias: true}, r)

	// Without q_lora_rank (DeepSeek-V2-Lite style) q is projected directly.
	ds.Attn.QLoRARank = 0
	assert.Equal(t, "q_proj", ds.AttentionLinears()[0].Name)
	assert.Equal(t, 128*192, ds.AttentionLinears()[0].Out)

	z := mustPreset(t, "glm-5")
	zl := z.AttentionLinears()
	require.Len(t, zl, 8)
	assert.Equal(t, "indexer.wq_b", zl[5].Name)
	assert.Equal(t, 32*128, zl[5].Out)
	assert.Equal(t, 2048, zl[5].In)
	assert.Equal(t, 64*(192+256), zl[3].Out, "kv_b_proj")

	// Tied embeddings: lm_head adds no bytes.
	m := mustPreset(t, "mixtral-8x7b")
	w := m.Weights(Layout{TP: 1, EP: 1, DP: 1})
	m.TieEmbeddings = true
	wt := m.Weights(Layout{TP: 1, EP: 1, DP: 1})
	assert.Zero(t, wt.Total[ClassLMHead])
	assert.Equal(t, w.Total[ClassEmbedding], wt.Total[ClassEmbedding])
}

func TestNoNaN(t *testing.T) {
	for _, n := range PresetNames() {
		c := mustPreset(t, n)
		w := c.Weights(Layout{TP: 8, EP: 8, DP: 1})
		for cls := range NumClasses {
			assert.False(t, math.IsNaN(float64(w.PerGPU[cls])) || math.IsInf(float64(w.PerGPU[cls]), 0), "%s %s", n, cls)
		}
	}
}

// TestMarlinPaddedExperts: vLLM's Marlin MXFP4 MoE holds gpt-oss-120b's
// routed experts padded (hidden 2880 -> 3072, each rank's width 1440 ->
// 1536 at TP2): (16/15)^2 x the MXFP4 bytes per GPU, and their biases
// padded with them (w13_bias 2 x 1536, w2_bias 3072); the model's total
// (parameters as the checkpoint holds them) and every other class are
// unchanged. At TP2 EP2 each rank holds 64 whole experts (width 2880 ->
// 2944); an ungated expert pads its one width (2880 -> 2944 at TP1, not
// two halves of 1536); a width of 256 and a hidden of 4096 pad nothing.
func TestMarlinPaddedExperts(t *testing.T) {
	g := mustPreset(t, "gpt-oss-120b")
	m := *g
	m.Quant.RoutedExperts = dtype.MXFP4Marlin
	base := g.Quant.Base.BytesPerParam()
	// per GPU routed-expert bytes: experts x layers x (weights + biases)
	want := func(c *Config, l Layout, h, w int, bias bool) float64 {
		n := float64(l.ExpertsPerRank(c.MoE.Experts)) * float64(c.MoELayers())
		b := 0.0
		if bias {
			b = float64(2*w+h) * base
		}
		return n * (3*float64(h)*float64(w)*c.Quant.RoutedExperts.BytesPerParam() + b)
	}
	tp2 := Layout{TP: 2, EP: 1, DP: 1}
	plain, marlin := g.Weights(tp2), m.Weights(tp2)
	assert.InDelta(t, want(g, tp2, 2880, 1440, true), float64(plain.PerGPU[ClassRoutedExperts]), 1)
	assert.InDelta(t, want(&m, tp2, 3072, 1536, true), float64(marlin.PerGPU[ClassRoutedExperts]), 1)
	assert.Equal(t, plain.Total[ClassRoutedExperts], marlin.Total[ClassRoutedExperts], "the checkpoint's bytes")
	for c := Class(0); c < NumClasses; c++ {
		if c != ClassRoutedExperts {
			assert.Equal(t, plain.PerGPU[c], marlin.PerGPU[c], "class %d", c)
		}
	}
	ep := Layout{TP: 2, EP: 2, DP: 1}
	assert.InDelta(t, want(&m, ep, 3072, 2944, true), float64(m.Weights(ep).PerGPU[ClassRoutedExperts]), 1)

	u := m
	u.MoE.Ungated = true
	tp1 := Layout{TP: 1, EP: 1, DP: 1}
	in, out := marlinPadded(u.ExpertLinears()[0], ClassRoutedExperts, 1)
	assert.Equal(t, [2]int{3072, 2944}, [2]int{in, out}, "ungated up_proj: one width padded")
	assert.InDelta(t, float64(u.Weights(tp1).PerGPU[ClassRoutedExperts]),
		float64(u.MoE.Experts*u.MoELayers())*2*3072*2944*dtype.MXFP4Marlin.BytesPerParam(), 1)

	in, out = marlinPadded(Linear{Split: Row, In: 1280, Out: 4096, Format: dtype.MXFP4Marlin}, ClassRoutedExperts, 5)
	assert.Equal(t, [2]int{256, 4096}, [2]int{in, out}, "a width of 256 and a hidden of 4096 need no padding")
	in, out = marlinPadded(Linear{Split: Row, In: 2880, Out: 2880, Format: dtype.MXFP4Marlin}, ClassMTP, 1)
	assert.Equal(t, [2]int{2944, 3072}, [2]int{in, out}, "an MTP layer's experts are the same layer")
}
