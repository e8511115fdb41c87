package sim

import (
	"fmt"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// Op is one op of one layer of a kind, as `moecast predict --explain`
// prints it.
type Op struct {
	Layer    string        // layer kind: "embed", "dense", "moe", "head", "mtp pass 1", ...
	Name     string        // e.g. "q_b_proj", "fused_moe (routed experts)"
	Category cost.Category // where its time goes in the breakdown
	Shape    string        // per-rank shape, e.g. "M=1 N=1536 K=7168 bf16"
	// Count is how many times the op runs per step (the layers of its kind).
	Count float64
	// Estimate is one occurrence: Time, Lo/Hi, Bytes, FLOPs, Source.
	Estimate cost.Estimate
	// Launch is the host launch time beyond the op's own time, per
	// occurrence (eager mode only; 0 with CUDA graphs).
	Launch unit.Seconds
}

// Explain lists each op of one layer of each kind at (batch, context):
// the same evaluation as Step, unaggregated. Summing
// Count x (Estimate.Time + Launch) over the ops gives Step's time.
func (s *Sim) Explain(batch, context int) ([]Op, error) {
	if _, err := s.Step(batch, context); err != nil {
		return nil, err
	}
	m := s.uniform(batch, context)
	return s.explainMix(&m), nil
}

// ExplainBatch is Explain for a step over seqs (StepBatch): ops that no
// token of the step runs (prefill attention in a decode step) are left
// out.
func (s *Sim) ExplainBatch(seqs []Seq) ([]Op, error) {
	m, err := s.summarise(seqs)
	if err != nil {
		return nil, err
	}
	return s.explainMix(&m), nil
}

func (s *Sim) explainMix(m *mix) []Op {
	var passes [numPasses]pass
	for k := passKind(0); k < numPasses; k++ {
		passes[k] = s.pass(m, k)
	}
	g := s.graphModeOf(m, &passes[passTarget])
	for k := range passes {
		passes[k].graph = g
	}
	md := modeOf(m)
	var ops []Op
	var cache [maxShared]cost.Estimate
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		p := &passes[blk.pass]
		out := make([]Op, len(blk.ops))
		s.evalBlock(blk, md, p, &cache, nil, out, nil)
		for i := range blk.ops {
			o := &blk.ops[i]
			if p.tokens(o.dom) <= 0 {
				continue
			}
			out[i].Layer, out[i].Name, out[i].Category = blk.name, o.name, o.cat
			out[i].Shape, out[i].Count = s.shapeString(o, p), blk.count
			ops = append(ops, out[i])
		}
	}
	if s.cfg.LaunchAhead {
		s.spreadLaunch(ops)
	}
	return ops
}

// spreadLaunch turns the ops' host launch times (Launch, as evalOps
// leaves it under Config.LaunchAhead) into their shares of the step's
// launch time, max(0, host - GPU), in proportion to their host time, so
// that Count x (Time + Launch) still sums to the step.
func (s *Sim) spreadLaunch(ops []Op) {
	var host, gpu unit.Seconds
	for i := range ops {
		host += unit.Seconds(ops[i].Count) * ops[i].Launch
		gpu += unit.Seconds(ops[i].Count) * ops[i].Estimate.Time
	}
	f := unit.Seconds(0)
	if host > gpu {
		f = (host - gpu) / host
	}
	for i := range ops {
		ops[i].Launch *= f
	}
}

// shapeString describes an op's per-rank shape in pass p.
func (s *Sim) shapeString(o *op, p *pass) string {
	n := p.tokens(o.dom)
	switch o.kind {
	case opGEMM:
		g := o.gemm
		str := fmt.Sprintf("M=%d N=%d K=%d %s", n, g.N, g.K, g.Weight.Name)
		if g.Count > 1 {
			str += fmt.Sprintf(" x%d heads (bmm)", g.Count)
		}
		return str
	case opElementwise:
		return fmt.Sprintf("%d tokens, %s", n, unit.Bytes(o.perTok*float64(n)))
	case opIndexer:
		return fmt.Sprintf("%d seqs x %d keys, %s", p.seq, p.ctx, unit.Bytes(o.perTok*float64(p.seq)*float64(p.ctx)))
	case opMLA:
		m := s.mlaShape(o, p)
		return fmt.Sprintf("batch=%d ctx=%d heads=%d (x%d queries) latent=%d+%d kv=%s", m.Batch, m.Context,
			o.heads, p.queries, m.KVLoRARank, m.QKRopeDim, m.KV)
	case opGQA:
		str := fmt.Sprintf("batch=%d ctx=%d q_heads=%d (x%d queries) kv_heads=%d dim=%d kv=%s", p.seq, p.ctx,
			o.heads, p.queries, o.kvHeads, o.headDim, s.cfg.KVCache)
		if o.slideFrac > 0 && o.window > 0 {
			str += fmt.Sprintf("; %.0f%% of layers window %d", 100*o.slideFrac, o.window)
		}
		return str
	case opMoE:
		m := s.cfg.Model
		return fmt.Sprintf("tokens=%d pairs=%.1f experts=%.1f of %d/rank h=%d inter=%d %s ep=%d moe_tp=%d",
			p.domain, p.load.Pairs, p.load.Touched, m.MoE.Experts/s.sh.ep, m.Hidden,
			ceilDiv(m.MoE.Inter, s.sh.moeTP), m.Quant.RoutedExperts.Name, s.sh.ep, s.sh.moeTP)
	case opUnmapped:
		return fmt.Sprintf("%d tokens", n)
	case opTopK:
		return fmt.Sprintf("%d tokens, top-%d of %d", n, o.topK, s.cfg.Model.MoE.Experts)
	case opSampling:
		kind := "top-k/top-p"
		if o.topK == 1 {
			kind = "greedy"
		}
		return fmt.Sprintf("rows=%d vocab=%d %s (%s)", n, o.vocab, kind, kernels.SamplingBytes(kernels.SamplingShape{Batch: n, Vocab: o.vocab, Greedy: o.topK == 1}))
	case opAllReduce, opAllGather, opReduceScatter:
		return fmt.Sprintf("%d ranks, %s", o.ranks, unit.Bytes(o.perTok*float64(n)))
	case opAllToAll:
		return fmt.Sprintf("%d ranks, %s sent per rank (%d tokens x %.2f destinations)", o.ranks,
			unit.Bytes(o.perTok*s.sendDest*float64(n)), n, s.sendDest)
	case opIndexerTopK:
		t := s.indexerTopKShape(p)
		return fmt.Sprintf("%d rows x %d keys, top-%d", t.Rows, t.Keys, t.TopK)
	case opSparseMLA:
		m := s.sparseMLAShape(o, p, n)
		return fmt.Sprintf("%d tokens x %d q heads (padded to %d) x top-%d, MQA %d/%d", m.Tokens, m.Heads,
			kernels.SparseMLAPaddedHeads(m.Heads, s.cfg.GPU.Arch), m.TopK, m.QKDim, m.VDim)
	case opMLAPrefill:
		return fmt.Sprintf("%d chunks, %d tokens (mean %d), %d keys, %.4g causal pairs, q_heads=%d kv_heads=%d",
			p.pre.chunks, p.pre.tokens, p.pre.meanChunk, p.pre.keys, p.pre.pairs, o.heads, max(o.kvHeads, o.heads))
	case opGQAPrefill:
		return fmt.Sprintf("%d chunks, %d tokens (mean %d), %d keys, %.4g causal pairs, q_heads=%d kv_heads=%d dim=%d kv=%s",
			p.pre.chunks, p.pre.tokens, p.pre.meanChunk, p.pre.keys, p.pre.pairs, o.heads, o.kvHeads, o.headDim, s.cfg.KVCache)
	case opIndexerPrefill:
		return fmt.Sprintf("%d tokens x %d heads x %.4g causal pairs", p.pre.tokens, s.cfg.Model.Attn.IndexHeads, p.pre.pairs)
	case opRecurrent:
		r := o.rec
		return fmt.Sprintf("%d seqs, %d tokens, %d heads, state %dx%d x %d B", p.seq, p.dec, r.Heads, r.KDim, r.VDim, r.StateBytes)
	case opRecurrentPrefill:
		r := o.rec
		return fmt.Sprintf("%d chunks, %d tokens, %d heads, state %dx%d, chunk %d", p.pre.chunks, p.pre.tokens, r.Heads, r.KDim, r.VDim, r.Chunk)
	case opDSV4:
		return fmt.Sprintf("batch=%d ctx=%d -> %d compressed (1:%d) + %d window entries, heads=%d (x%d queries)", p.seq, p.ctx,
			dsv4Entries(p.ctx, o.window, o.topK), max(o.window, 1), p.winCtx, o.heads, p.queries)
	case opDSV4Prefill:
		return fmt.Sprintf("%d chunks, %d tokens, compression 1:%d (+ window), heads=%d", p.pre.chunks, p.pre.tokens, max(o.window, 1), o.heads)
	}
	return ""
}

// LaunchMode says how the engine launches the kernels of a step over
// seqs, as StepBatch prices it (graphModeOf): "full CUDA graph",
// "piecewise CUDA graphs, attention eager" or "eager (no CUDA graph)", and
// for an eager launch which host cost each kernel pays (Config.EngineLaunch,
// LaunchAhead).
func (s *Sim) LaunchMode(seqs []Seq) (string, error) {
	m, err := s.summarise(seqs)
	if err != nil {
		return "", err
	}
	target := s.pass(&m, passTarget)
	var launch string
	switch {
	case s.cfg.EngineLaunch && s.cfg.LaunchAhead:
		launch = "the engine's measured host time per kernel, issued ahead: max(0, host - GPU) added"
	case s.cfg.EngineLaunch:
		launch = "the engine's measured host time per kernel beyond its own time"
	default:
		launch = "kernels.HostLaunchLatency per kernel beyond its own time"
	}
	switch s.graphModeOf(&m, &target) {
	case graphFull:
		return "full CUDA graph", nil
	case graphPiecewise:
		return "piecewise CUDA graphs, attention eager (" + launch + ")", nil
	}
	return "eager, no CUDA graph (" + launch + ")", nil
}
