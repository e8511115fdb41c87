package sim

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// This file builds and prices DeepSeek-V4's attention (model.DSV4; see
// model/hf_deepseekv4.go): per layer, the compressed entries it reads
// (min(context/4, index_topk) on the compressed sparse layers,
// context/128 on the heavily compressed ones, none on window-only layers)
// plus the last sliding_window raw tokens, over one shared K=V head.

// dsv4Attention lists one DeepSeek-V4 attention layer on one rank, with
// the hyper-connection mixing around it and around the FFN.
func (b *builder) dsv4Attention(a *model.Attention) []op {
	m := b.m
	tp := b.sh.attnTP
	hq := a.Heads / tp
	rope := a.QKRopeDim
	ops := []op{norm("attn_norm", m.Hidden, domAttn)}
	if hc := m.HCMult; hc > 1 {
		// mHC post+pre of the attention and of the FFN: read the hc
		// residual streams and the block output, write the streams and
		// the next block input (bf16).
		per := float64(2*hc+2) * float64(m.Hidden) * actBytes
		ops = append(ops,
			elementwise("mHC post+pre (attention)", cost.Elementwise, domAttn, per),
			elementwise("mHC post+pre (ffn)", cost.Elementwise, domAttn, per))
	}
	var out []op
	for _, l := range m.MixerLinears(&model.LayerKind{Mixer: model.MixAttention, Attn: *a}) {
		switch l.Name {
		case "wo_a":
			// o_groups bmm's over the rank's groups.
			g := max(a.OGroups/tp, 1)
			out = append(out, op{name: l.Name, kind: opGEMM, cat: cost.GEMM, dom: domAttn,
				gemm: kernels.GEMMShape{N: a.OLoRARank, K: l.In, Weight: l.Format, Count: g}})
		case "wo_b":
			out = append(out, b.gemm(l.Name, l, tp, domAttn))
		default:
			ops = append(ops, b.gemm(l.Name, l, tp, domAttn))
		}
	}
	kvElt := b.kv.Bytes()
	ops = append(ops,
		elementwise("q_norm + kv_norm", cost.Elementwise, domAttn, 2*actBytes*float64(a.QLoRARank+a.HeadDim)),
		elementwise("rotary_emb", cost.Elementwise, domAttn, 2*2*actBytes*float64(hq*rope+rope)),
		elementwise("kv_cache write (window + compressor state)", cost.Elementwise, domAttn, float64(a.HeadDim)*(actBytes+kvElt)*2),
	)
	if a.IndexHeads > 0 {
		ops = append(ops,
			op{name: "indexer scores + top-k (compressed keys)", kind: opIndexer, cat: cost.Attention, dom: domSeq, perTok: model.IndexKeyBytesPerLayer(a)},
			op{name: "indexer scores + top-k (prefill)", kind: opIndexerPrefill, cat: cost.Attention, dom: domPre, heads: a.IndexHeads, headDim: a.IndexHeadDim, window: a.Compress})
	}
	ops = append(ops,
		op{name: "dsv4 decode attention (compressed + window)", kind: opDSV4, cat: cost.Attention, dom: domSeq, heads: hq, window: a.Compress, topK: a.IndexTopK},
		op{name: "dsv4 prefill attention (compressed + window)", kind: opDSV4Prefill, cat: cost.Attention, dom: domPre, heads: hq, window: a.Compress, topK: a.IndexTopK},
	)
	ops = append(ops, out...)
	return append(ops, b.tpReduce("wo_b")...)
}

// dsv4Entries is the compressed entries a layer of ratio r reads at
// context ctx: none for r <= 1, min(ctx/r, topK) with a top-k, else ctx/r.
func dsv4Entries(ctx, r, topK int) int {
	if r <= 1 {
		return 0
	}
	n := ctx / r
	if topK > 0 && n > topK {
		n = topK
	}
	return n
}

// evalDSV4 prices a DeepSeek-V4 attention op in pass p: decode as absorbed
// MLA over the compressed entries plus the window (o.window holds the
// ratio); prefill as attention over the chunks' keys scaled the same way.
func (s *Sim) evalDSV4(o *op, p *pass) cost.Estimate {
	a := &s.cfg.Model.Attn
	hd, rope := a.HeadDim, a.QKRopeDim
	if o.kind == opDSV4 {
		ctx := dsv4Entries(p.ctx, o.window, o.topK) + p.winCtx
		return s.costs.MLADecode(kernels.MLAShape{Batch: p.seq, Context: max(ctx, 1), Heads: o.heads * p.queries,
			KVLoRARank: hd - rope, QKRopeDim: rope, KV: s.cfg.KVCache, TotalHeads: a.Heads * p.queries, Hidden: s.cfg.Model.Hidden})
	}
	ps := s.prefillShape(p, o.heads, 1, hd, hd, s.cfg.KVCache.Bytes())
	tok := float64(p.pre.tokens)
	comp := 0.0
	if o.window > 1 {
		comp = p.pre.pairs / float64(o.window)
		if o.topK > 0 {
			comp = math.Min(comp, tok*float64(o.topK))
		}
	}
	ps.Pairs = comp + p.pre.winPairs
	ps.Keys = p.pre.keys/max(o.window, 1) + p.pre.winKeys
	if o.window <= 1 {
		ps.Keys = p.pre.winKeys
	}
	return s.costs.AttentionPrefill(ps)
}
