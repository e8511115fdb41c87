package sim

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// This file builds the ops of the recurrent token mixers (Gated DeltaNet,
// KDA, Mamba-2; model/layers.go) and prices their state updates.

// Chunk lengths of the chunked prefill kernels: vLLM's
// chunk_gated_delta_rule and chunk_kda (fla ops) use 64-token chunks
// (vllm-project/vllm @ 8744bb0, vllm/model_executor/layers/fla/ops/chunk.py);
// Mamba-2 uses the config's chunk_size (Nemotron-H: 128), model.Recurrent.Chunk.
const deltaChunk = 64

// recurrent lists one recurrent-mixer layer's ops on one rank: input norm,
// projections (split over attention TP like attention), the causal conv,
// the state update (decode recurrence over the decode tokens, chunked
// algorithm over the prefill tokens), the gated output norm, the output
// projection and its reduction.
func (b *builder) recurrent(k *model.LayerKind) []op {
	m := b.m
	tp := b.sh.attnTP
	r := k.Rec
	ops := []op{norm("input_layernorm", m.Hidden, domAttn)}
	var out []op
	for _, l := range m.MixerLinears(k) {
		switch l.Name {
		case "conv1d":
			_, w := l.ShardDims(tp)
			ops = append(ops, elementwise("causal_conv1d", cost.Elementwise, domAttn, actBytes*float64(w)*float64(r.Conv+1)))
		case "out_proj", "o_proj":
			out = append(out, b.gemm(l.Name, l, tp, domAttn))
		default:
			ops = append(ops, b.gemm(l.Name, l, tp, domAttn))
		}
	}
	heads := ceilDiv(r.Heads, tp)
	chunk := deltaChunk
	if r.Chunk > 0 {
		chunk = r.Chunk
	}
	shape := kernels.RecurrentShape{Heads: heads, KDim: r.KDim, VDim: r.VDim, StateBytes: r.StateBytes, Chunk: chunk,
		GDN: k.Mixer == model.MixGDN, KHeads: ceilDiv(r.KHeads, tp)}
	name := k.Mixer.String()
	ops = append(ops,
		op{name: name + " recurrent update (decode)", kind: opRecurrent, cat: cost.Attention, dom: domDec, rec: shape},
		op{name: name + " chunked scan (prefill)", kind: opRecurrentPrefill, cat: cost.Attention, dom: domPre, rec: shape},
		elementwise("gated output norm", cost.Elementwise, domAttn, 3*actBytes*float64(heads*r.VDim)),
	)
	ops = append(ops, out...)
	return append(ops, b.tpReduce(out[0].name)...)
}

// evalRecurrent prices a recurrent op in pass p.
func (s *Sim) evalRecurrent(o *op, p *pass) cost.Estimate {
	sh := o.rec
	sh.Roofline = s.cfg.GDNRoofline
	if o.kind == opRecurrent {
		sh.Seqs, sh.Tokens, sh.Chunk = p.seq, p.dec, 0
		return s.costs.RecurrentDecode(sh)
	}
	sh.Seqs, sh.Tokens = p.pre.chunks, p.pre.tokens
	return s.costs.RecurrentPrefill(sh)
}
