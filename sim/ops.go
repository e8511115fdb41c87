package sim

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// This file builds, once in New, the list of ops one layer of each kind
// runs on one rank, with every dimension that does not depend on batch and
// context already split for the layout. Step only fills in token counts and
// the context and calls the cost functions.

// opKind says which cost function evaluates an op.
type opKind uint8

const (
	opGEMM             opKind = iota // kernels.GEMM, M = tokens
	opElementwise                    // kernels.Elementwise over perTok*tokens bytes
	opMLA                            // kernels.MLADecode
	opGQA                            // kernels.GQADecode
	opIndexer                        // DSA indexer key scan: Elementwise over seqs*ctx*perSeqTok bytes
	opMoE                            // kernels.MoE with the pass's routing load
	opTopK                           // router top-k: Elementwise(TopKBytes)
	opSampling                       // kernels.Sampling
	opAllReduce                      // comm.AllReduce over perTok*tokens bytes
	opAllGather                      // comm.AllGather, whole gathered array perTok*tokens
	opReduceScatter                  // comm.ReduceScatter, whole array perTok*tokens
	opAllToAll                       // comm.AllToAll, bytes sent per rank perTok*tokens
	opMLAPrefill                     // kernels.AttentionPrefill, un-absorbed MLA over the chunks
	opGQAPrefill                     // kernels.AttentionPrefill, GQA over the chunks
	opIndexerPrefill                 // DSA indexer scores of the chunks' queries over their keys (GEMM-shaped)
	opRecurrent                      // kernels.RecurrentDecode over the decode tokens (recurrent.go)
	opRecurrentPrefill               // kernels.RecurrentPrefill over the prefill chunks
	opDSV4                           // DeepSeek-V4 decode attention (dsv4.go)
	opDSV4Prefill                    // DeepSeek-V4 prefill attention
	opUnmapped                       // a traced step's kernels that map to no op: kernels.Costs.Unmapped per layer
	opSparseMLA                      // kernels.SparseMLA over every token of the step (DSA layers, Config.SparseMLA)
	opIndexerTopK                    // kernels.IndexerTopK over the decode rows (DSA layers, Config.IndexerTopK)
)

// UnmappedOp is the name of the per-layer op that prices, from an
// "unmapped" calibration table (calib from-trace), the kernels of a traced
// step that map to no modelled op (a framework's glue). Layers have it only
// when such a table is loaded.
const UnmappedOp = "unmapped (trace)"

// domain is which token count of a pass an op's size scales with.
type domain uint8

const (
	domAttn   domain = iota // tokens of one attention group (per rank on the attention side)
	domMLP                  // tokens of one TP group (MLP side: gathered with DP attention)
	domSeq                  // sequences of one attention group (attention kernels, KV)
	domLogits               // positions whose logits are computed (lm_head, sampling)
	domSend                 // tokens one rank dispatches to the experts (all-to-all)
	domDec                  // decode tokens of one attention group (MLA's absorbed W_UK/W_UV)
	domPre                  // prefill tokens of one attention group (prefill attention)
	domPreKV                // prefill tokens plus their prefix (MLA prefill's kv_b_proj)
)

// op is one kernel (or one collective) of a layer on one rank.
type op struct {
	name   string
	kind   opKind
	cat    cost.Category
	dom    domain
	gemm   kernels.GEMMShape // opGEMM: M filled in by Step
	perTok float64           // bytes per token (elementwise, collectives) or per KV position (indexer)
	ranks  int               // collectives
	ep     string            // opAllToAll of an EP exchange: "dispatch" or "combine" (comm.EPShape)
	// Attention: heads/kv heads per rank, head dim; a fraction of the
	// layers of this kind that attend a sliding window.
	heads, kvHeads, headDim int
	vDim                    int  // opGQAPrefill: value head dim
	sparse                  bool // opGQA, opGQAPrefill: reads the sparse top-k tokens only
	slideFrac               float64
	window                  int
	topK                    int // opTopK: experts chosen; opSampling: 1 = greedy
	vocab                   int // opSampling: logits per row
	// module: part of the MLA attention module a calibration table may
	// cover whole (see Sim.evalBlock).
	module bool
	// prefillOnly: only prefill tokens run it (its domain is domPre or
	// domPreKV); a decode step skips it. Set in New.
	prefillOnly bool
	// rec: the per-rank shape of a recurrent op (tokens filled in by eval).
	rec kernels.RecurrentShape
}

// opRef marks, per op of a block, an earlier op of the same pass (in an
// earlier block or earlier in the block) with the same estimate: the
// attention of dense and MoE layers, all-reduces of equal size. Step
// evaluates it once and reuses the estimate through a cache slot (see
// Sim.linkDuplicates).
type opRef struct {
	slot int8 // cache slot this op's estimate is stored in, or -1
	dup  int8 // cache slot to copy the estimate from, or -1
}

// passKind names the token counts a block runs with.
type passKind uint8

const (
	passTarget     passKind = iota // the decode (verify) step of the target model
	passDraftFirst                 // first draft pass: all verified positions
	passDraftRest                  // later draft passes: one token per sequence
	numPasses
)

// block is a group of ops repeated count times per step, e.g. the 60 MoE
// layers of Kimi-K2.5.
type block struct {
	name  string // layer kind shown by Explain: "embed", "dense", "moe", "head", "mtp", ...
	pass  passKind
	count float64
	ops   []op
	// refs[md] links the ops whose estimates equal earlier ones' in
	// steps of link mode md (see Sim.linkDuplicates).
	refs [numModes][]opRef
	// modPos[i] is op i's index among the block's MLA-module ops, or -1;
	// moduleShared[md]: all module ops reuse an earlier block's estimates
	// in steps of link mode md.
	modPos       []int8
	moduleShared [numModes]bool
	// mla: the ops flagged module form the MLA module that a calibrated
	// MLAModule table may replace (see evalBlock).
	mla bool
	// base is the index of the block's first op over all blocks (OpMemo).
	base int
}

// builder accumulates ops for a model and layout.
type builder struct {
	m  *model.Config
	sh shape
	kv dtype.KVCache
	// sparseMLA: DSA layers run as FlashMLA sparse MQA (Config.SparseMLA
	// on a GPU with the kernel).
	sparseMLA bool
	// sparsePrefill: only the prefill chunks of DSA layers run as FlashMLA
	// sparse MQA, decodes keep the MLA decode kernel (Config.SparsePrefill
	// on a GPU with the kernel).
	sparsePrefill bool
	// indexerTopK: DSA layers price their decode top-k as its own kernel
	// (Config.IndexerTopK).
	indexerTopK bool
}

const actBytes = 2 // bf16 activations

func (b *builder) gemm(name string, l model.Linear, tp int, dom domain) op {
	in, out := l.ShardDims(tp)
	return op{name: name, kind: opGEMM, cat: cost.GEMM, dom: dom,
		gemm: kernels.GEMMShape{N: out, K: in, Weight: l.Format}}
}

func elementwise(name string, cat cost.Category, dom domain, perTok float64) op {
	return op{name: name, kind: opElementwise, cat: cat, dom: dom, perTok: perTok}
}

// inModule marks an op as part of the MLA module that aiconfigurator's
// mla_generation_module measures (the attention module's forward: its
// projections, layernorms, rotary, cache write and attention).
func inModule(o op) op {
	o.module = true
	return o
}

// norm is vLLM's fused_add_rms_norm over width: read x and the residual,
// write both (bf16): 8·width bytes per token.
func norm(name string, width int, dom domain) op {
	return elementwise(name, cost.Elementwise, dom, 4*actBytes*float64(width))
}

// tpReduce is the collective that follows a TP-split block (o_proj, MLP):
// the AllReduce of tokens x hidden x 2 B among attention-TP ranks, or with
// DP attention and TP > 1 a reduce-scatter among TP ranks. None at TP = 1.
func (b *builder) tpReduce(name string) []op {
	h := float64(b.m.Hidden) * actBytes
	switch {
	case b.sh.attnTP > 1:
		return []op{{name: name + " allreduce", kind: opAllReduce, cat: cost.AllReduce, dom: domAttn, perTok: h, ranks: b.sh.attnTP}}
	case b.sh.gather > 1:
		return []op{{name: name + " reduce_scatter", kind: opReduceScatter, cat: cost.ReduceScatter, dom: domMLP, perTok: h, ranks: b.sh.tp}}
	}
	return nil
}

// tpGather is the all-gather over TP that brings the attention groups'
// tokens to the TP-split MLP side with DP attention and TP > 1.
func (b *builder) tpGather(name string) []op {
	if b.sh.attnTP == 1 && b.sh.gather > 1 {
		return []op{{name: name + " allgather", kind: opAllGather, cat: cost.AllGather, dom: domMLP,
			perTok: float64(b.m.Hidden) * actBytes, ranks: b.sh.tp}}
	}
	return nil
}

// attention lists one layer's attention module on one rank, from its input
// norm to the collective after o_proj: attention a, a fraction slide of the
// layers attending its sliding window.
func (b *builder) attention(a *model.Attention, slide float64) []op {
	if a.Kind == model.DSV4 {
		return b.dsv4Attention(a)
	}
	m := b.m
	tp := b.sh.attnTP
	ops := []op{norm("input_layernorm", m.Hidden, domAttn)}
	kvElt := b.kv.Bytes()
	if a.Kind == model.MLA {
		h := a.Heads / tp
		var indexer []model.Linear // DSA indexer projections run before attention
		for _, l := range m.AttentionLinears() {
			if isIndexer(l.Name) {
				indexer = append(indexer, l)
			}
		}
		// vLLM's DeepseekV2MLAAttention runs q_a_proj and
		// kv_a_proj_with_mqa as one replicated GEMM (fused_qkv_a_proj)
		// when q_lora_rank is set.
		qkva, fused := m.FusedQKVA()
		ls := m.AttentionLinears()
		for _, l := range ls {
			if isIndexer(l.Name) || (fused && l.Name == "kv_a_proj_with_mqa") {
				continue
			}
			if fused && l.Name == "q_a_proj" {
				f := qkva
				f.Name += " (q_a + kv_a)"
				g := b.gemm(f.Name, f, 1, domAttn)
				g.module = true
				ops = append(ops, g,
					inModule(elementwise("q_a_layernorm", cost.Elementwise, domAttn, 2*actBytes*float64(a.QLoRARank))),
					inModule(elementwise("kv_a_layernorm", cost.Elementwise, domAttn, 2*actBytes*float64(a.KVLoRARank))))
				continue
			}
			switch l.Name {
			case "kv_b_proj":
				// Absorbed decode: W_UK folds into q (per-head bmm
				// nope -> kv_lora) and W_UV unfolds the attention output
				// (kv_lora -> v); kv_b is read in two halves. vLLM's MLA
				// backends dequantize both to the model dtype at load
				// (MLACommonImpl.process_weights_after_loading), so the
				// bmm's read Quant.Base whatever kv_b's storage format.
				wb := m.Quant.Base
				if b.sparseMLA && a.IndexHeads > 0 && a.IndexTopK > 0 {
					ops = append(ops, b.sparseMLAOps(a, h, wb, kvElt, indexer)...)
					continue
				}
				uk, uv := mlaAbsorb(a, h, wb)
				ops = append(ops, op{name: "kv_b_proj W_UK (q absorb)", kind: opGEMM, cat: cost.GEMM, dom: domDec, module: true, gemm: uk})
				for _, o := range mlaRopeCache(a, h, kvElt) {
					ops = append(ops, inModule(o))
				}
				if a.IndexHeads > 0 && a.IndexTopK > 0 {
					ops = append(ops, b.dsaIndexer(a, indexer)...)
				}
				// Prefill chunks run un-absorbed (vLLM MLACommonImpl
				// _forward_prefill): kv_b_proj, in its stored format,
				// up-projects the latent of the chunk and of its cached
				// prefix to per-head k_nope and v, then multi-head
				// attention with q/k dim nope+rope and v dim v_head_dim.
				kvb := l
				kvb.Name = "kv_b_proj (prefill: chunk + prefix, un-absorbed)"
				ops = append(ops, op{name: "mla decode attention", kind: opMLA, cat: cost.Attention, dom: domSeq, module: true, heads: h})
				if b.sparsePrefill && a.IndexHeads > 0 && a.IndexTopK > 0 {
					ops = append(ops, b.sparsePrefillOps(a, h, wb)...)
				} else {
					ops = append(ops,
						b.gemm(kvb.Name, kvb, tp, domPreKV),
						op{name: "mla prefill attention (un-absorbed)", kind: opMLAPrefill, cat: cost.Attention, dom: domPre, heads: h})
				}
				ops = append(ops, op{name: "kv_b_proj W_UV (v unabsorb)", kind: opGEMM, cat: cost.GEMM, dom: domDec, module: true, gemm: uv})
			default:
				g := b.gemm(l.Name, l, tp, domAttn)
				g.module = true
				ops = append(ops, g)
				switch l.Name {
				case "q_a_proj":
					ops = append(ops, inModule(elementwise("q_a_layernorm", cost.Elementwise, domAttn, 2*actBytes*float64(a.QLoRARank))))
				case "kv_a_proj_with_mqa":
					ops = append(ops, inModule(elementwise("kv_a_layernorm", cost.Elementwise, domAttn, 2*actBytes*float64(a.KVLoRARank))))
				}
			}
		}
	} else {
		hq := a.Heads / tp
		hkv := max(1, a.KVHeads/tp)
		for _, l := range m.MixerLinears(&model.LayerKind{Mixer: model.MixAttention, Attn: *a}) {
			ops = append(ops, b.gemm(l.Name, l, tp, domAttn))
			if l.Name != "qkv_proj" {
				continue
			}
			if a.OutputGate {
				ops = append(ops, elementwise("output gate (sigmoid x attn)", cost.Elementwise, domAttn, 3*actBytes*float64(hq*a.HeadDim)))
			}
			w := float64((hq + hkv) * a.HeadDim)
			vd := a.VDim()
			switch {
			case a.QKNorm && a.QKNormTP && tp > 1:
				// the variances of the rank's q and k slices, their sum
				// over the TP ranks (two fp32 per token), then the
				// normalisation: the collective splits the norm in two
				// kernels (model.Attention.QKNormTP)
				ops = append(ops,
					elementwise("q/k norm variance", cost.Elementwise, domAttn, actBytes*w),
					op{name: "q/k norm variance allreduce", kind: opAllReduce, cat: cost.AllReduce, dom: domAttn, perTok: 2 * 4, ranks: tp},
					elementwise("q_norm/k_norm", cost.Elementwise, domAttn, 2*actBytes*w))
			case a.QKNorm:
				ops = append(ops, elementwise("q_norm/k_norm", cost.Elementwise, domAttn, 2*actBytes*w))
			}
			sparse := a.IndexHeads > 0 && a.IndexTopK > 0
			if sparse {
				// The index-key write, the scores of each decode's index
				// heads over every cached index key, and the prefill's
				// (priced as the DSA indexer's).
				ops = append(ops,
					elementwise("indexer k cache write", cost.Elementwise, domAttn, model.IndexKeyBytesPerLayer(a)+actBytes*float64(a.IndexHeadDim)),
					op{name: "indexer scores + top-k", kind: opIndexer, cat: cost.Attention, dom: domSeq, perTok: model.IndexKeyBytesPerLayer(a)},
					op{name: "indexer scores + top-k (prefill)", kind: opIndexerPrefill, cat: cost.Attention, dom: domPre,
						heads: ceilDiv(a.IndexHeads, tp), headDim: a.IndexHeadDim})
			}
			ops = append(ops,
				elementwise("rotary_emb", cost.Elementwise, domAttn, 2*actBytes*w),
				elementwise("kv_cache write (reshape_and_cache)", cost.Elementwise, domAttn, float64(hkv*(a.HeadDim+vd))*(actBytes+kvElt)),
				// With a value head dim unlike the q/k one, the decode
				// kernel is priced at their mean (same KV bytes and FLOPs).
				op{name: "gqa decode attention", kind: opGQA, cat: cost.Attention, dom: domSeq,
					heads: hq, kvHeads: hkv, headDim: (a.HeadDim + vd) / 2, slideFrac: slide, window: a.SlidingWindow, sparse: sparse},
				op{name: "gqa prefill attention", kind: opGQAPrefill, cat: cost.Attention, dom: domPre,
					heads: hq, kvHeads: hkv, headDim: a.HeadDim, vDim: vd, slideFrac: slide, window: a.SlidingWindow, sparse: sparse},
			)
		}
		// o_proj must come after attention: move it to the end.
		for i, o := range ops {
			if o.name == "o_proj" && i != len(ops)-1 {
				copy(ops[i:], ops[i+1:])
				ops[len(ops)-1] = o
				break
			}
		}
	}
	ops = append(ops, b.tpReduce("o_proj")...)
	return ops
}

func isIndexer(name string) bool { return len(name) > 8 && name[:8] == "indexer." }

// mlp lists a SwiGLU MLP split over TP (dense layers, shared expert):
// gate_up GEMM, silu_and_mul, down GEMM, on the MLP-side tokens.
func (b *builder) mlp(prefix string, ls []model.Linear) []op {
	var ops []op
	for _, l := range ls {
		ops = append(ops, b.gemm(prefix+l.Name, l, b.sh.tp, domMLP))
		switch l.Name {
		case "gate_up_proj":
			_, out := l.ShardDims(b.sh.tp)
			ops = append(ops, elementwise(prefix+"silu_and_mul", cost.Elementwise, domMLP, 3*actBytes*float64(out/2)))
		case "up_proj": // ungated MLP (relu2)
			_, out := l.ShardDims(b.sh.tp)
			ops = append(ops, elementwise(prefix+"activation", cost.Elementwise, domMLP, 2*actBytes*float64(out)))
		}
	}
	return ops
}

// layer is one decoder layer of kind k: its token mixer, then its FFN
// (dense MLP, MoE block or none).
func (b *builder) layer(k *model.LayerKind) []op {
	var ops []op
	switch k.Mixer {
	case model.MixAttention:
		ops = b.attention(&k.Attn, k.SlideFrac)
	case model.MixNone:
	default:
		ops = b.recurrent(k)
	}
	if k.FFN == model.FFNNone {
		return ops
	}
	if k.Mixer != model.MixNone {
		ops = append(ops, b.tpGather("attn")...)
	}
	ops = append(ops, norm("post_attention_layernorm", b.m.Hidden, domMLP))
	if k.FFN == model.FFNMoE {
		return append(ops, b.moeBlock()...)
	}
	ops = append(ops, b.mlp("", b.m.FFNLinears(k))...)
	return append(ops, b.tpReduce("mlp")...)
}

// moeBlock is an MoE layer's FFN: router, routed experts (with the exchange
// the layout needs), shared expert and the reduction.
func (b *builder) moeBlock() []op {
	m := b.m
	h := float64(m.Hidden) * actBytes
	var ops []op
	router := b.gemm("router (gate)", m.RouterLinear(), 1, domMLP)
	ops = append(ops, router,
		op{name: "router top-k", kind: opTopK, cat: cost.MoE, dom: domMLP, topK: m.MoE.TopK})
	if b.sh.dpExchange {
		if b.sh.ep > 1 {
			// DeepEP-style dispatch: each rank sends its share of the
			// tokens once to every rank holding one of its experts
			// (perTok scaled by the expected destinations in New).
			ops = append(ops, op{name: "moe dispatch alltoall", kind: opAllToAll, cat: cost.AllToAll, dom: domSend, perTok: h, ranks: b.sh.gpus, ep: "dispatch"})
		} else {
			ops = append(ops, op{name: "moe dp allgather", kind: opAllGather, cat: cost.AllGather, dom: domMLP, perTok: h * float64(b.sh.dp), ranks: b.sh.dp})
		}
	}
	ops = append(ops, op{name: "fused_moe (routed experts)", kind: opMoE, cat: cost.MoE, dom: domMLP})
	if b.sh.dpExchange {
		if b.sh.ep > 1 {
			ops = append(ops, op{name: "moe combine alltoall", kind: opAllToAll, cat: cost.AllToAll, dom: domSend, perTok: h, ranks: b.sh.gpus, ep: "combine"})
		} else {
			ops = append(ops, op{name: "moe dp reduce_scatter", kind: opReduceScatter, cat: cost.ReduceScatter, dom: domMLP, perTok: h * float64(b.sh.dp), ranks: b.sh.dp})
		}
	}
	if se := m.SharedExpertLinears(); len(se) > 0 {
		ops = append(ops, b.mlp("shared_expert.", se)...)
		ops = append(ops, elementwise("shared + routed add", cost.Elementwise, domMLP, 3*h))
	}
	ops = append(ops, b.tpReduce("moe")...)
	return ops
}

// embed is the vocab-parallel embedding lookup and its AllReduce.
func (b *builder) embed() []op {
	h := float64(b.m.Hidden) * actBytes
	ops := []op{elementwise("embed_tokens lookup", cost.Elementwise, domMLP, 2*h)}
	if b.sh.tp > 1 {
		ops = append(ops, op{name: "embed allreduce", kind: opAllReduce, cat: cost.AllReduce, dom: domMLP, perTok: h, ranks: b.sh.tp})
	}
	return ops
}

// head is the final norm, the vocab-parallel lm_head, the logits
// all-gather and the sampler.
func (b *builder) head(lm model.Linear, greedy bool) []op {
	ops := []op{elementwise("final norm", cost.Elementwise, domLogits, 2*actBytes*float64(b.m.Hidden))}
	g := b.gemm("lm_head", lm, b.sh.tp, domLogits)
	ops = append(ops, g)
	if b.sh.tp > 1 {
		// vLLM gathers the bf16 logits of every rank's vocab shard.
		ops = append(ops, op{name: "logits allgather", kind: opAllGather, cat: cost.AllGather, dom: domLogits,
			perTok: float64(g.gemm.N*b.sh.tp) * actBytes, ranks: b.sh.tp})
	}
	s := op{name: "sampler", kind: opSampling, cat: cost.Sampling, dom: domLogits, vocab: lm.Out}
	if greedy {
		s.name, s.topK = "argmax (draft)", 1
	}
	return append(ops, s)
}

// EAGLE-3 draft head assumed (state in the package doc): one Llama-style
// decoder layer at the target hidden size: fc 3·hidden -> hidden fusing
// three target hidden states (first pass only), qkv from 2·hidden (the
// embedding and the fused state) with the target's query heads, 8 kv heads
// of dim 128, o_proj, a SwiGLU MLP of width DenseInter (or 3·hidden when the
// target has none), its own lm_head over a 32,000-token draft vocabulary,
// all bf16 and split over TP like the target.
const (
	eagleKVHeads    = 8
	eagleHeadDim    = 128
	eagleDraftVocab = 32000
)

func (b *builder) eagleLinears() (fc, qkv, o model.Linear, mlp []model.Linear, lm model.Linear) {
	m := b.m
	f := dtype.BF16Weights
	heads := m.Attn.Heads
	fc = model.Linear{Name: "eagle fc", In: 3 * m.Hidden, Out: m.Hidden, Split: model.Replicated, Format: f}
	qkv = model.Linear{Name: "eagle qkv_proj", In: 2 * m.Hidden, Out: (heads + 2*eagleKVHeads) * eagleHeadDim,
		Split: model.QKVParallel, Format: f, Heads: heads, KVHeads: eagleKVHeads, HeadDim: eagleHeadDim}
	o = model.Linear{Name: "eagle o_proj", In: heads * eagleHeadDim, Out: m.Hidden, Split: model.Row, Format: f}
	inter := m.DenseInter
	if inter <= 0 {
		inter = 3 * m.Hidden
	}
	mlp = []model.Linear{
		{Name: "gate_up_proj", In: m.Hidden, Out: 2 * inter, Split: model.Column, Format: f},
		{Name: "down_proj", In: inter, Out: m.Hidden, Split: model.Row, Format: f},
	}
	lm = model.Linear{Name: "eagle lm_head", In: m.Hidden, Out: eagleDraftVocab, Split: model.VocabParallel, Format: f}
	return
}

// eagleLayer is one EAGLE-3 draft pass (without fc).
func (b *builder) eagleLayer() []op {
	m := b.m
	_, qkv, o, mlp, lm := b.eagleLinears()
	tp := b.sh.attnTP
	hq := m.Attn.Heads / tp
	hkv := max(1, eagleKVHeads/tp)
	w := float64((hq + hkv) * eagleHeadDim)
	ops := b.embed()
	ops = append(ops,
		norm("eagle input norms", 2*m.Hidden, domAttn),
		b.gemm(qkv.Name, qkv, tp, domAttn),
		elementwise("eagle rotary_emb", cost.Elementwise, domAttn, 2*actBytes*w),
		elementwise("eagle kv_cache write", cost.Elementwise, domAttn, float64(2*hkv*eagleHeadDim)*(actBytes+b.kv.Bytes())),
		op{name: "eagle gqa decode attention", kind: opGQA, cat: cost.Attention, dom: domSeq, heads: hq, kvHeads: hkv, headDim: eagleHeadDim},
		op{name: "eagle gqa prefill attention", kind: opGQAPrefill, cat: cost.Attention, dom: domPre, heads: hq, kvHeads: hkv, headDim: eagleHeadDim},
		b.gemm(o.Name, o, tp, domAttn),
	)
	ops = append(ops, b.tpReduce("eagle o_proj")...)
	ops = append(ops, b.tpGather("eagle attn")...)
	ops = append(ops, norm("eagle post_attention_layernorm", m.Hidden, domMLP))
	ops = append(ops, b.mlp("eagle ", mlp)...)
	ops = append(ops, b.tpReduce("eagle mlp")...)
	return append(ops, b.head(lm, true)...)
}

// mtpLayer is one pass of a DeepSeek MTP module: embedding, enorm and
// hnorm, eh_proj (2·hidden -> hidden, replicated), one MoE decoder layer,
// shared_head norm and the shared lm_head, greedy draft.
func (b *builder) mtpLayer() []op {
	m := b.m
	ops := b.embed()
	ops = append(ops,
		elementwise("mtp enorm", cost.Elementwise, domAttn, 2*actBytes*float64(m.Hidden)),
		elementwise("mtp hnorm", cost.Elementwise, domAttn, 2*actBytes*float64(m.Hidden)))
	for _, l := range m.MTPLinears() {
		ops = append(ops, b.gemm("mtp "+l.Name, l, 1, domAttn))
	}
	k := model.LayerKind{Mixer: model.MixAttention, Attn: m.Attn, FFN: model.FFNMoE}
	if m.MoE.Experts == 0 {
		k.FFN, k.Inter = model.FFNDense, m.DenseInter
	}
	ops = append(ops, b.layer(&k)...)
	return append(ops, b.head(m.LMHeadLinear(), true)...)
}

// sparseMLAOps is the kv_b part of a DSA layer's attention under
// Config.SparseMLA (vLLM's FLASHMLA_SPARSE backend on a bf16 KV cache,
// vllm/v1/attention/backends/mla/flashmla_sparse.py FlashMLASparseImpl
// forward_mqa / _forward_bf16_kv): every token of the step, decode and
// prefill, is absorbed (W_UK folds q_nope into the latent, W_UV unfolds
// the output) and attends through one flash_mla_sparse_fwd call over its
// index_topk selected latent rows; there is no un-absorbed prefill path
// (vLLM's sparse backends have none: PR #39629, 2026-04, "all prefill
// tokens go through the sparse MQA path, including short sequences").
// The indexer's projections, key-cache write and scores come first, as in
// the dense-MLA layout.
func (b *builder) sparseMLAOps(a *model.Attention, h int, wb dtype.Format, kvElt float64, indexer []model.Linear) []op {
	uk, uv := mlaAbsorb(a, h, wb)
	ops := []op{{name: "kv_b_proj W_UK (q absorb, every token)", kind: opGEMM, cat: cost.GEMM, dom: domAttn, gemm: uk}}
	ops = append(ops, mlaRopeCache(a, h, kvElt)...)
	ops = append(ops, b.dsaIndexer(a, indexer)...)
	return append(ops,
		op{name: "sparse mla attention (FlashMLA sparse MQA, every token)", kind: opSparseMLA, cat: cost.Attention, dom: domAttn, heads: h},
		op{name: "kv_b_proj W_UV (v unabsorb, every token)", kind: opGEMM, cat: cost.GEMM, dom: domAttn, gemm: uv},
	)
}

// sparsePrefillOps is the prefill part of a DSA layer's attention under
// Config.SparsePrefill (SGLang's NSA backend with a FlashMLA prefill
// implementation, kernels.SGLangSparsePrefill): the chunks' tokens are
// absorbed (W_UK, W_UV) and attend their index_topk selected latent rows
// through flash_mla_sparse_fwd, q heads padded to the kernel's tile
// (sgl-project/sglang python/sglang/srt/layers/attention/nsa_backend.py,
// _forward_flashmla_sparse: "FlashMLA sparse kernel requires num_heads to
// be a multiple of 64 (Hopper) or 128 (Blackwell)"). Decodes keep the MLA
// decode kernel (flashmla_kv's split-KV decode).
func (b *builder) sparsePrefillOps(a *model.Attention, h int, wb dtype.Format) []op {
	uk, uv := mlaAbsorb(a, h, wb)
	return []op{
		{name: "kv_b_proj W_UK (prefill: q absorb)", kind: opGEMM, cat: cost.GEMM, dom: domPre, gemm: uk},
		{name: "sparse mla prefill attention (FlashMLA sparse MQA)", kind: opSparseMLA, cat: cost.Attention, dom: domPre, heads: h},
		{name: "kv_b_proj W_UV (prefill: v unabsorb)", kind: opGEMM, cat: cost.GEMM, dom: domPre, gemm: uv},
	}
}

// mlaAbsorb is the shapes of an MLA layer's absorbed kv_b_proj halves on a
// rank of h heads, kv_b read as wb: W_UK folds each head's q_nope into the
// latent (nope -> kv_lora), W_UV unfolds the attention output (kv_lora ->
// v), one batched GEMM over the heads each.
func mlaAbsorb(a *model.Attention, h int, wb dtype.Format) (uk, uv kernels.GEMMShape) {
	return kernels.GEMMShape{N: a.KVLoRARank, K: a.QKNopeDim, Weight: wb, Count: h},
		kernels.GEMMShape{N: a.VHeadDim, K: a.KVLoRARank, Weight: wb, Count: h}
}

// mlaRopeCache is an MLA layer's rotary embedding of q_pe (h heads) and
// k_pe and its write of the latent and k_pe to the KV cache
// (concat_and_cache_mla), kvElt bytes an element, both the dense and the
// sparse path's (the dense path runs them inside the MLA module).
func mlaRopeCache(a *model.Attention, h int, kvElt float64) []op {
	return []op{
		elementwise("rotary_emb", cost.Elementwise, domAttn, 2*2*actBytes*float64(h*a.QKRopeDim+a.QKRopeDim)),
		elementwise("kv_cache write (concat_and_cache_mla)", cost.Elementwise, domAttn,
			float64(a.KVLoRARank+a.QKRopeDim)*(actBytes+kvElt)),
	}
}

// dsaIndexer is a DSA layer's indexer before its attention: the indexer's
// projections, its key-cache write and its scores and top-k, decode and
// prefill.
func (b *builder) dsaIndexer(a *model.Attention, indexer []model.Linear) []op {
	var ops []op
	for _, il := range indexer {
		ops = append(ops, b.gemm(il.Name, il, 1, domAttn))
	}
	ops = append(ops,
		elementwise("indexer k cache write", cost.Elementwise, domAttn, model.IndexKeyBytesPerLayer(a)+actBytes*float64(a.IndexHeadDim)),
		op{name: "indexer scores + top-k", kind: opIndexer, cat: cost.Attention, dom: domSeq, perTok: model.IndexKeyBytesPerLayer(a)})
	if b.indexerTopK {
		// Each decode row's top-k over its sequence's keys, a kernel of
		// its own after the scores (kernels.IndexerTopK).
		ops = append(ops, op{name: "indexer top-k (decode rows)", kind: opIndexerTopK, cat: cost.Attention, dom: domSeq})
	}
	return append(ops,
		op{name: "indexer scores + top-k (prefill)", kind: opIndexerPrefill, cat: cost.Attention, dom: domPre},
	)
}
