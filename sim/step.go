package sim

import (
	"math"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// Point is the prediction for one (batch, context).
type Point struct {
	Batch, Context  int
	Step            cost.Estimate // the decode step (verify step with spec decode)
	TPOT            unit.Seconds  // Step / TokensPerStep
	TokensPerStep   float64       // expected tokens per sequence per step (1 without spec decode)
	TokensPerSecond float64       // batch x TokensPerStep / Step
	PerUser         float64       // TokensPerStep / Step
	Breakdown       [cost.NumCategories]cost.Estimate
	Memory          Memory
	Fits            bool
}

// Sim evaluates decode steps for one validated Config. It is safe for
// concurrent use.
type Sim struct {
	cfg   Config
	sh    shape
	costs kernels.Costs
	comm  comm.Comm
	// eager and commEager are costs and comm without CUDA graphs: for
	// steps the engine runs eagerly, or attention run eagerly between
	// piecewise graphs (see graphMode).
	eager     kernels.Costs
	commEager comm.Comm
	route     routing
	blocks    []block
	nops      int // ops over all blocks (block.base: the first's index)
	mem       memoryModel
	tps       float64 // tokens per step
	queries   int     // K+1 or 1
	// sendDest: expected ranks one token is dispatched to (all-to-all).
	sendDest float64
	// usedPasses has bit k set when a block runs pass k.
	usedPasses uint8
	// idxTopK is the model's sparse-attention top-k (model.SparseTopK).
	idxTopK int
}

// New validates cfg and precomputes everything that does not depend on
// batch and context. Errors are *model.FieldError naming the argument ("batch", "context").
func New(cfg Config) (*Sim, error) {
	sh, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, sh: sh, idxTopK: cfg.Model.SparseTopK()}
	s.costs = kernels.Costs{GPU: cfg.GPU, Eff: cfg.Efficiency, Graphs: cfg.Graphs, Tables: cfg.KernelTables, Engine: cfg.Engine,
		AnyEngineMLAPrefill: cfg.AnyEngineMLAPrefill}
	if s.costs.Eff.Mem == 0 {
		s.costs.Eff = kernels.EfficiencyFor(cfg.GPU)
	}
	s.comm = comm.Comm{Fabric: cfg.Fabric, Graphs: cfg.Graphs, Tables: cfg.CommTables, Policy: cfg.AllReducePolicy, NIC: cfg.NIC}
	s.eager, s.commEager = s.costs, s.comm
	s.eager.Graphs, s.commEager.Graphs = false, false
	if cfg.EngineLaunch {
		s.eager.HostLaunch = kernels.EngineHostLaunch(cfg.Engine)
	}
	m := cfg.Model
	s.route = newRouting(m.MoE.Experts, m.MoE.TopK, sh.ep)
	s.sendDest = float64(sh.ep) * s.route.hitSlot * float64(sh.moeTP)
	s.tps = cfg.Spec.TokensPerStep()
	s.queries = cfg.Spec.queryTokens()

	b := &builder{m: m, sh: sh, kv: cfg.KVCache,
		sparseMLA:     cfg.SparseMLA && kernels.SparseMLAHeadTile(cfg.GPU.Arch) > 0,
		sparsePrefill: cfg.SparsePrefill && !cfg.SparseMLA && kernels.SparseMLAHeadTile(cfg.GPU.Arch) > 0,
		indexerTopK:   cfg.IndexerTopK}
	add := func(name string, pass passKind, count float64, ops []op, mla bool) {
		if count > 0 && len(ops) > 0 {
			s.blocks = append(s.blocks, block{name: name, pass: pass, count: count, ops: ops, mla: mla})
		}
	}
	mla := m.Attn.Kind == model.MLA
	add("embed", passTarget, 1, b.embed(), false)
	for _, k := range m.LayerKinds() {
		ops := b.layer(&k)
		if s.costs.HasUnmapped() {
			ops = append(ops, op{name: UnmappedOp, kind: opUnmapped, cat: cost.Other, dom: domAttn})
		}
		add(k.Name, passTarget, float64(k.Count), ops, k.Mixer == model.MixAttention && k.Attn.Kind == model.MLA)
	}
	add("head", passTarget, 1, b.head(m.LMHeadLinear(), false), false)
	k := float64(cfg.Spec.DraftTokens)
	switch cfg.Spec.Method {
	case SpecMTP:
		layer := b.mtpLayer()
		add("mtp pass 1", passDraftFirst, 1, layer, mla)
		add("mtp pass 2..K", passDraftRest, k-1, layer, mla)
	case SpecEAGLE3:
		fc, _, _, _, _ := b.eagleLinears()
		add("eagle3 fc", passDraftFirst, 1, []op{b.gemm(fc.Name, fc, 1, domAttn)}, false)
		layer := b.eagleLayer()
		add("eagle3 pass 1", passDraftFirst, 1, layer, false)
		add("eagle3 pass 2..K", passDraftRest, k-1, layer, false)
	}
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		nmod := 0
		for i := range blk.ops {
			if blk.ops[i].module {
				nmod++
			}
		}
		if len(blk.ops) > maxBlockOps || nmod > maxModuleOps {
			return nil, fieldErrorf("Model", "internal: %d ops (%d in the MLA module) in one layer exceed %d (%d)",
				len(blk.ops), nmod, maxBlockOps, maxModuleOps)
		}
	}
	for bi := range s.blocks {
		for i := range s.blocks[bi].ops {
			o := &s.blocks[bi].ops[i]
			o.prefillOnly = o.dom == domPre || o.dom == domPreKV
		}
	}
	s.linkDuplicates()
	for bi := range s.blocks {
		s.usedPasses |= 1 << s.blocks[bi].pass
		s.blocks[bi].base = s.nops
		s.nops += len(s.blocks[bi].ops)
	}
	s.mem = newMemoryModel(&s.cfg, sh)
	return s, nil
}

// maxBlockOps bounds the ops of one block so Step can keep their estimates
// in a fixed array on the stack; maxShared bounds the cache of estimates
// shared between ops (linkDuplicates).
const (
	maxBlockOps  = 64
	maxShared    = 48
	maxModuleOps = 16
)

// linkDuplicates fills each block's refs so that Step evaluates every
// distinct op of a pass once: an op whose estimate is bound to equal that of
// an earlier op of the same pass (same evalKey) reads it from a cache slot
// instead of being evaluated again. The earlier op may sit in an earlier
// block (the dense and MoE layers' attention) or earlier in the same block
// (Kimi-K2.5 TP8: the embedding, o_proj, MLP and MoE all-reduces, the input
// and post-attention norms). The cache is filled in op order within one
// Step and never outlives it, so results are exactly those of evaluating
// every op.
func (s *Sim) linkDuplicates() {
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		blk.modPos = make([]int8, len(blk.ops))
		n := int8(0)
		for i := range blk.ops {
			blk.modPos[i] = -1
			if blk.ops[i].module {
				blk.modPos[i] = n
				n++
			}
		}
	}
	for md := linkMode(0); md < numModes; md++ {
		s.linkMode(md)
	}
}

// linkMode fills the blocks' refs[md] and moduleShared[md].
func (s *Sim) linkMode(md linkMode) {
	slots := 0
	keys := make([][]op, len(s.blocks))
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		blk.refs[md] = make([]opRef, len(blk.ops))
		keys[bi] = make([]op, len(blk.ops))
		for i := range blk.refs[md] {
			blk.refs[md][i] = opRef{slot: -1, dup: -1}
			keys[bi][i] = s.evalKey(blk.ops[i], blk.pass, md)
		}
	}
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		refs := blk.refs[md]
		for i := range blk.ops {
			module := blk.ops[i].module
			for bj := 0; bj <= bi && refs[i].dup < 0; bj++ {
				prev := &s.blocks[bj]
				if prev.pass != blk.pass {
					continue
				}
				// MLA-module ops are shared only between whole modules
				// of equal blocks (see below), never inside one block.
				if module && (bj == bi || prev.mla != blk.mla) {
					continue
				}
				end := len(prev.ops)
				if bj == bi {
					end = i
				}
				prefs := prev.refs[md]
				for j := range end {
					if keys[bj][j] != keys[bi][i] || prefs[j].dup >= 0 {
						continue
					}
					if prefs[j].slot < 0 {
						if slots == maxShared {
							break
						}
						prefs[j].slot = int8(slots)
						slots++
					}
					refs[i].dup = prefs[j].slot
					break
				}
			}
		}
		// The MLA module is calibrated whole: either every module op
		// reuses an earlier block's (already calibrated) estimate, or
		// none does and the block looks the module up itself.
		shared, fresh := 0, 0
		for i := range blk.ops {
			if blk.ops[i].module {
				if refs[i].dup >= 0 {
					shared++
				} else {
					fresh++
				}
			}
		}
		blk.moduleShared[md] = shared > 0 && fresh == 0
		if shared > 0 && fresh > 0 {
			for i := range blk.ops {
				if blk.ops[i].module {
					refs[i].dup = -1
				}
			}
		}
	}
}

// evalKey is what op o's estimate in a pass of kind k depends on: o without
// its name and category (which only say how it is shown and where its time
// is booked), with its token domain replaced by sameTokens'. Two ops of one
// pass with equal keys get equal estimates from eval.
func (s *Sim) evalKey(o op, k passKind, md linkMode) op {
	o.name, o.cat = "", 0
	if o.ep != "" && !s.spansNodes(o.ranks) && s.cfg.MoEA2A == A2ANone {
		o.ep = "" // within a node dispatch and combine cost the same (comm.Comm.EP)
	}
	o.dom = s.sameTokens(o.dom, k, md)
	return o
}

// spansNodes reports whether ranks span nodes with a NIC between them
// (Config.NIC), where collectives are priced across nodes.
func (s *Sim) spansNodes(ranks int) bool {
	g := s.cfg.Fabric.NodeGPUs
	return g > 0 && ranks > g && s.cfg.NIC.BW > 0
}

// sameTokens returns the domain that stands for d in passes of kind k
// under link mode md: two domains map to the same one only when Sim.pass
// gives them equal token counts at every batch of that mode, by these
// identities of pass:
//
//	send   = ceil(mlp/TP)             = mlp with TP = 1
//	mlp    = attn·gather              = attn with gather = 1
//
// and, without prefill chunks (decode steps, and the later draft passes,
// which run one token per sequence):
//
//	logits = mlp (target pass), seq·gather otherwise = mlp with 1 query token
//	dec    = attn
//	attn   = seq·queries              = seq with 1 query token
func (s *Sim) sameTokens(d domain, k passKind, md linkMode) domain {
	q := s.passQueries(k)
	noPrefill := md == modeDecode || k == passDraftRest
	if d == domSend && s.sh.tp <= 1 {
		d = domMLP
	}
	if noPrefill && d == domLogits && (k == passTarget || q == 1) {
		d = domMLP
	}
	if d == domMLP && s.sh.gather == 1 {
		d = domAttn
	}
	if noPrefill && d == domDec {
		d = domAttn
	}
	if d == domDec && q == 1 {
		d = domSeq
	}
	if noPrefill && d == domAttn && q == 1 {
		d = domSeq
	}
	return d
}

// pass holds the token counts of one kind of forward pass over a step's
// batch, for the busiest attention group (Sim.pass).
type pass struct {
	seq, queries int // decode sequences per attention group, query tokens per decode
	dec          int // decode tokens on the attention side: seq·queries
	attn, mlp    int // tokens on the attention side and on the MLP side of a rank
	logits       int // positions whose logits are computed
	send         int // tokens a rank dispatches (all-to-all)
	domain       int // tokens entering the expert domain (all DP groups)
	// ctx is the decodes' mean context; idxCtx and winCtx the means of
	// the contexts capped at the DSA top-k and the sliding window.
	ctx, idxCtx, winCtx int
	pre                 prefillPart
	load                load
	graph               graphMode
}

// passQueries is the number of query tokens per sequence in a pass of
// kind k: one in the later draft passes, K+1 (or 1) otherwise.
func (s *Sim) passQueries(k passKind) int {
	if k == passDraftRest {
		return 1
	}
	return s.queries
}

// ceilDiv is ceil(a/b) for a >= 0, b >= 1 (a when b <= 1), without the
// overflow of (a+b-1)/b near math.MaxInt.
func ceilDiv(a, b int) int {
	if b <= 1 {
		return a
	}
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

func (p *pass) tokens(d domain) int {
	switch d {
	case domAttn:
		return p.attn
	case domMLP:
		return p.mlp
	case domSeq:
		return p.seq
	case domLogits:
		return p.logits
	case domSend:
		return p.send
	case domDec:
		return p.dec
	case domPre:
		return p.pre.tokens
	case domPreKV:
		return p.pre.tokens + p.pre.prefix
	}
	return 0
}

// Step evaluates one decode step at batch sequences of context tokens each
// (batch in [1, MaxBatchSize], context in [1, MaxContext]): StepBatch over
// batch decodes at context, with TPOT, throughput and memory added.
// It does not allocate.
func (s *Sim) Step(batch, context int) (Point, error) {
	if batch <= 0 || batch > MaxBatchSize {
		return Point{}, fieldErrorf("batch", "must be in [1, %d], got %d", MaxBatchSize, batch)
	}
	if context <= 0 || context > MaxContext {
		return Point{}, fieldErrorf("context", "must be in [1, %d] tokens, got %d", MaxContext, context)
	}
	pt := Point{Batch: batch, Context: context, TokensPerStep: s.tps}
	m := s.uniform(batch, context)
	s.evalMix(&m, &pt, nil)
	if pt.Step.Time > 0 {
		pt.TPOT = pt.Step.Time / unit.Seconds(s.tps)
		pt.PerUser = s.tps / float64(pt.Step.Time)
		pt.TokensPerSecond = float64(batch) * pt.PerUser
	}
	pt.Memory, pt.Fits = s.mem.at(batch, context)
	return pt, nil
}

// evalBlock evaluates the ops of one block (one layer of a kind) in pass p
// and adds each, times the block's count, to a (when a is not nil) and
// writes it to out[i] (when out is not nil). An op whose estimate equals
// that of an earlier op of its pass (see linkDuplicates) reads it from
// cache; ops that later ones reuse store theirs there.
//
// With calibration tables and an MLA model, the MLA module is looked up
// whole (kernels.Costs.MLAModule, floored at the DRAM time of its
// projections and attention) and, when the table covers it, its time
// replaces the times of the module's ops (projection GEMMs, the absorbed
// W_UK/W_UV bmm's, attention, and the module's own q_a/kv_a layernorms,
// rotary and cache write, which the measured module forward includes),
// shared among them in proportion to their own estimates, so the
// gemm/attention/elementwise split follows those; Source.Note says so.
func (s *Sim) evalBlock(blk *block, md linkMode, p *pass, cache *[maxShared]cost.Estimate, a *accum, out []Op, memo *OpMemo) {
	if blk.mla && s.cfg.KernelTables != nil && !blk.moduleShared[md] {
		var mod [maxModuleOps]cost.Estimate
		if md == modeDecode {
			s.evalModule(blk, p, &mod, memo)
		} else {
			s.evalModuleMixed(blk, p, &mod, memo)
		}
		s.evalOps(blk, blk.refs[md], p, cache, &mod, a, out, memo)
		return
	}
	s.evalOps(blk, blk.refs[md], p, cache, nil, a, out, memo)
}

// opEstimate is op i of blk on pass p under its share ref r: the shared
// estimate an earlier op left in cache (r.dup), the block's calibrated
// MLA-module estimate (mod, when not nil, for a module op), or its own
// (evalMemoTo into own); an op that others share (r.slot) leaves its
// estimate in cache. evalOps' and replayTimes' loops both take it.
func (s *Sim) opEstimate(blk *block, i int, r opRef, p *pass, cache *[maxShared]cost.Estimate, mod *[maxModuleOps]cost.Estimate, memo *OpMemo, own *cost.Estimate) *cost.Estimate {
	var e *cost.Estimate
	switch {
	case r.dup >= 0:
		e = &cache[r.dup]
	case mod != nil && blk.ops[i].module:
		e = &mod[blk.modPos[i]]
	default:
		e = s.evalMemoTo(memo, blk, i, p, own)
	}
	if r.slot >= 0 {
		cache[r.slot] = *e
	}
	return e
}

// evalOps is evalBlock's loop; mod, when not nil, holds the block's
// calibrated MLA-module estimates; memo, when not nil, the caller's op
// memo (see OpMemo).
func (s *Sim) evalOps(blk *block, refs []opRef, p *pass, cache *[maxShared]cost.Estimate, mod *[maxModuleOps]cost.Estimate, a *accum, out []Op, memo *OpMemo) {
	decode := p.pre.chunks == 0
	for i := range blk.ops {
		o := &blk.ops[i]
		if decode && o.prefillOnly {
			continue // costs nothing without prefill chunks
		}
		var own cost.Estimate
		e := s.opEstimate(blk, i, refs[i], p, cache, mod, memo, &own)
		if a != nil {
			a.add(o.cat, e, blk.count)
		}
		if out != nil {
			out[i].Estimate = *e
		}
		if p.graph == graphNone || (p.graph == graphPiecewise && o.cat == cost.Attention) {
			if s.cfg.LaunchAhead {
				// the step's launch time comes at its end (accum.ahead)
				if a != nil {
					a.host += s.eager.HostTime(*e) * unit.Seconds(blk.count)
				}
				if out != nil {
					out[i].Launch = s.eager.HostTime(*e) // scaled by explainMix
				}
				continue
			}
			launch := s.eager.LaunchCost(*e)
			if a != nil {
				a.addLaunch(launch, blk.count)
			}
			if out != nil {
				out[i].Launch = launch.Time
			}
		}
	}
}

// evalModule fills mod with the estimates of blk's MLA-module ops (in
// their order), replaced by the calibrated module time when the table
// covers it (see evalBlock).
func (s *Sim) evalModule(blk *block, p *pass, mod *[maxModuleOps]cost.Estimate, memo *OpMemo) {
	var projBuf [8]kernels.GEMMShape
	proj := projBuf[:0]
	var attn kernels.MLAShape
	var sum unit.Seconds
	n := 0
	for i := range blk.ops {
		o := &blk.ops[i]
		if !o.module {
			continue
		}
		mod[n] = s.evalMemo(memo, blk, i, p)
		sum += mod[n].Time
		n++
		switch o.kind {
		case opGEMM:
			if len(proj) < cap(proj) {
				g := o.gemm
				g.M = p.tokens(o.dom)
				proj = append(proj, g)
			}
		case opMLA:
			attn = s.mlaShape(o, p)
		}
	}
	t, ok := s.costs.MLAModule(attn, proj)
	if !ok || sum <= 0 {
		return
	}
	n = 0
	for i := range blk.ops {
		o := &blk.ops[i]
		if !o.module {
			continue
		}
		e := &mod[n]
		n++
		w := e.Time / sum
		e.Time = t.Time * w
		e.Lo = t.Lo * w
		e.Hi = t.Hi * w
		e.Source = t.Source
		// The attention op keeps the table's own note (clamping, L2,
		// floor); the others say where their share comes from.
		if o.kind != opMLA || t.Source.Note == "" {
			e.Source.Note = noteMLAModule
		}
		if o.kind != opMLA { // the query's range is the attention op's
			e.Source.Range = nil
		}
	}
}

// evalModuleMixed is evalModule for a step with prefill chunks: the
// module table measures decode steps, so each module op costs its
// calibrated estimate over the step's decodes alone plus its own
// estimate's increase from those decodes to the whole step (the prefill
// tokens' share of the projections, norms, rotary and cache write). A
// step whose chunks shrink to nothing tends to the decode step.
func (s *Sim) evalModuleMixed(blk *block, p *pass, mod *[maxModuleOps]cost.Estimate, memo *OpMemo) {
	dp := *p
	dp.pre = prefillPart{}
	dp.attn = dp.dec
	var dec [maxModuleOps]cost.Estimate
	if dp.seq > 0 {
		s.evalModule(blk, &dp, &dec, memo)
	}
	n := 0
	for i := range blk.ops {
		o := &blk.ops[i]
		if !o.module {
			continue
		}
		own, base := s.evalMemo(memo, blk, i, p), s.evalMemo(memo, blk, i, &dp)
		e := dec[n]
		if e.Time == 0 {
			e.Source = own.Source
		}
		e.Time += own.Time - base.Time
		e.Lo = min(e.Lo+own.Lo-base.Lo, e.Time)
		e.Hi = max(e.Hi+own.Hi-base.Hi, e.Time)
		e.Bytes += own.Bytes - base.Bytes
		e.FLOPs += own.FLOPs - base.FLOPs
		e.Kernels = max(e.Kernels, own.Kernels)
		mod[n] = e
		n++
	}
}

const noteMLAModule = "share of the MLA module table time (projections, norms, rotary, cache write, attention), split by the ops' own estimates; table notes on the attention op"

func (s *Sim) mlaShape(o *op, p *pass) kernels.MLAShape {
	a := &s.cfg.Model.Attn
	ctx := p.ctx
	if s.idxCap() > 0 {
		ctx = p.idxCtx // DSA: attention reads the top-k selected tokens
	}
	return kernels.MLAShape{Batch: p.seq, Context: ctx, Heads: o.heads * p.queries,
		KVLoRARank: a.KVLoRARank, QKRopeDim: a.QKRopeDim, KV: s.cfg.KVCache, TotalHeads: a.Heads * p.queries,
		Hidden: s.cfg.Model.Hidden, QLoRARank: a.QLoRARank, QKNopeDim: a.QKNopeDim, VHeadDim: a.VHeadDim,
		KeepCollectorBias: s.cfg.MLACollectorBias}
}

// indexerTopKShape is the decode top-k of pass p (opIndexerTopK): one row
// per verified position of each decode sequence (vLLM's num_rows =
// decodes x next_n), each over its sequence's keys, taken as the decodes'
// mean context (p.ctx): a batch whose contexts straddle index_topk is
// priced as if every row had the mean, both for the keys and for whether
// the rows rank at all: within one wave the rows last as long as the
// longest, which the mean underprices, and rows that fit in index_topk
// are priced where the mean does not fit (an approximation, not a fit).
func (s *Sim) indexerTopKShape(p *pass) kernels.IndexerTopKShape {
	return kernels.IndexerTopKShape{Rows: p.seq * p.queries, Keys: p.ctx, TopK: s.cfg.Model.Attn.IndexTopK}
}

// sparseMLAShape is the sparse MLA attention of n query tokens (opSparseMLA).
func (s *Sim) sparseMLAShape(o *op, p *pass, n int) kernels.SparseMLAShape {
	a := &s.cfg.Model.Attn
	seqs := p.tokens(domSeq) + p.pre.chunks
	if o.dom == domPre {
		seqs = p.pre.chunks // prefill tokens only (Config.SparsePrefill)
	}
	return kernels.SparseMLAShape{Tokens: n, Seqs: seqs, Heads: o.heads, TopK: a.IndexTopK,
		QKDim: a.KVLoRARank + a.QKRopeDim, VDim: a.KVLoRARank}
}

// eval is the per-layer estimate of one op in pass p.
func (s *Sim) eval(o *op, p *pass) cost.Estimate {
	n := p.tokens(o.dom)
	if n <= 0 {
		return cost.Estimate{} // no token of the step runs this op (a prefill op in a decode step, ...)
	}
	c := &s.comm
	if p.graph == graphNone {
		c = &s.commEager
	}
	switch o.kind {
	case opGEMM:
		g := o.gemm
		g.M = n
		return s.costs.GEMM(g)
	case opElementwise:
		return s.costs.Elementwise(unit.Bytes(o.perTok * float64(n)))
	case opIndexer:
		return s.costs.Elementwise(unit.Bytes(o.perTok * float64(p.seq) * float64(p.ctx)))
	case opMLA:
		return s.costs.MLADecode(s.mlaShape(o, p))
	case opGQA:
		g := kernels.GQAShape{Batch: p.seq, Context: p.ctx, Heads: o.heads * p.queries, KVHeads: o.kvHeads,
			HeadDim: o.headDim, KV: s.cfg.KVCache}
		if o.sparse {
			g.Context = p.idxCtx // sparse attention reads the selected tokens
			return s.costs.GQADecode(g)
		}
		full := s.gqaDecode(g, p)
		if o.slideFrac <= 0 || o.window <= 0 || p.winCtx >= p.ctx {
			return full
		}
		g.Context = p.winCtx
		return blend(full, s.gqaDecode(g, p), o.slideFrac)
	case opSparseMLA:
		return s.costs.SparseMLA(s.sparseMLAShape(o, p, n))
	case opIndexerTopK:
		return s.costs.IndexerTopK(s.indexerTopKShape(p))
	case opMLAPrefill:
		a := &s.cfg.Model.Attn
		ps := s.prefillShape(p, o.heads, o.heads, a.QKNopeDim+a.QKRopeDim, a.VHeadDim, actBytes)
		if c := s.idxCap(); c > 0 {
			ps.Keys, ps.Pairs, ps.TopK = p.pre.idxKeys, p.pre.idxPairs, c
		}
		return s.costs.AttentionPrefill(ps)
	case opGQAPrefill:
		vd := o.vDim
		if vd == 0 {
			vd = o.headDim
		}
		ps := s.prefillShape(p, o.heads, o.kvHeads, o.headDim, vd, s.cfg.KVCache.Bytes())
		ps.KV = s.cfg.KVCache.String()
		if o.sparse {
			ps.Keys, ps.Pairs = p.pre.idxKeys, p.pre.idxPairs
			return s.costs.AttentionPrefill(ps)
		}
		full := s.costs.AttentionPrefill(ps)
		if o.slideFrac <= 0 || o.window <= 0 {
			return full
		}
		ps.Keys, ps.Pairs, ps.Window = p.pre.winKeys, p.pre.winPairs, o.window
		return blend(full, s.costs.AttentionPrefill(ps), o.slideFrac)
	case opIndexerPrefill:
		// Scores of every query token's index heads against the keys it
		// sees (causal): a GEMM of (tokens·heads) x keys x head_dim in
		// fp8 (DeepSeek-V3.2's lightning indexer runs in FP8), with the
		// mean causal key count per query as N; the keys are read once.
		a := &s.cfg.Model.Attn
		heads, dim := a.IndexHeads, a.IndexHeadDim
		if o.heads > 0 {
			heads, dim = o.heads, o.headDim
		}
		keys := int(math.Ceil(p.pre.pairs / float64(p.pre.tokens)))
		if o.window > 1 { // DeepSeek-V4: scores against the compressed keys
			keys = max(1, keys/o.window)
		}
		return s.costs.GEMM(kernels.GEMMShape{M: p.pre.tokens * heads, N: keys, K: dim, Weight: dtype.FP8Block128})
	case opMoE:
		m := s.cfg.Model
		l := &p.load
		tokens := p.domain
		if s.sh.dpExchange && s.sh.ep > 1 {
			tokens = int(math.Ceil(l.Tokens))
		}
		inter := ceilDiv(m.MoE.Inter, s.sh.moeTP)
		if m.MoE.Ungated {
			// up and down only: 2·H·I weights, priced as a gated expert
			// of 2/3 the width (3·H·I' = 2·H·I bytes and FLOPs).
			inter = max(1, (2*inter+2)/3)
		}
		hidden := m.ExpertHidden()
		if m.Quant.RoutedExperts == dtype.MXFP4Marlin {
			// vLLM's Marlin MXFP4 layer stores its weights padded: hidden
			// to a multiple of 256, the per-rank expert width to 128
			// (mxfp4_round_up_hidden_size_and_intermediate_size,
			// vllm/model_executor/layers/fused_moe/oracle/mxfp4.py @
			// 001eda3; Mxfp4MoEMethod.create_weights,
			// quantization/mxfp4.py @ 007d500), and runs the padded GEMMs.
			hidden, inter = ceilDiv(hidden, 256)*256, ceilDiv(inter, 128)*128
		}
		return s.costs.MoE(kernels.MoEShape{
			Tokens: tokens, Pairs: l.Pairs, ExpertsTouched: l.Touched,
			Hidden: hidden, Inter: inter, Weight: m.Quant.RoutedExperts,
			GlobalTokens: p.domain, Experts: m.MoE.Experts, TopK: m.MoE.TopK, MoETP: s.sh.moeTP, EP: s.sh.ep,
			DeepEP:  s.cfg.MoEA2A != A2ANone && s.sh.dpExchange && s.sh.ep > 1,
			Routing: s.cfg.MoERouting,
		})
	case opRecurrent, opRecurrentPrefill:
		return s.evalRecurrent(o, p)
	case opDSV4, opDSV4Prefill:
		return s.evalDSV4(o, p)
	case opTopK:
		return s.costs.Elementwise(kernels.TopKBytes(n, s.cfg.Model.MoE.Experts, o.topK))
	case opUnmapped:
		return s.costs.Unmapped(n)
	case opSampling:
		return s.costs.Sampling(kernels.SamplingShape{Batch: n, Vocab: o.vocab, Greedy: o.topK == 1})
	case opAllReduce:
		return c.AllReduce(s.cfg.AllReduce, o.ranks, unit.Bytes(o.perTok*float64(n)))
	case opAllGather:
		return c.AllGather(o.ranks, unit.Bytes(o.perTok*float64(n)))
	case opReduceScatter:
		return c.ReduceScatter(o.ranks, unit.Bytes(o.perTok*float64(n)))
	case opAllToAll:
		b := unit.Bytes(o.perTok * s.sendDest * float64(n))
		if o.ep == "" {
			return c.AllToAll(o.ranks, b)
		}
		m := s.cfg.Model
		return c.EP(comm.EPShape{Phase: o.ep, Impl: s.cfg.MoEA2A.impl(p.pre.chunks == 0), Ranks: o.ranks, TokensPerRank: n,
			Hidden: m.Hidden, TopK: m.MoE.TopK, Experts: m.MoE.Experts, BytesPerRank: b})
	}
	return cost.Estimate{}
}

// prefillShape is pass p's prefill chunks as a kernels.PrefillShape with
// the given per-rank heads and dims (full causal keys and pairs).
func (s *Sim) prefillShape(p *pass, heads, kvHeads, qk, v int, kvBytes float64) kernels.PrefillShape {
	meanKV := 0
	if p.pre.chunks > 0 {
		meanKV = ceilDiv(p.pre.keys, p.pre.chunks)
	}
	return kernels.PrefillShape{Chunks: p.pre.chunks, Tokens: p.pre.tokens, Keys: p.pre.keys, Pairs: p.pre.pairs,
		MeanChunk: p.pre.meanChunk, Heads: heads, KVHeads: kvHeads, QKDim: qk, VDim: v, KVBytes: kvBytes, MeanKV: meanKV}
}

// blend is (1-f)·a + f·b: a kind of layer of which a fraction f runs the
// b variant (sliding-window attention layers).
func blend(a, b cost.Estimate, f float64) cost.Estimate {
	g := 1 - f
	out := a
	out.Time = unit.Seconds(g)*a.Time + unit.Seconds(f)*b.Time
	out.Lo = unit.Seconds(g)*a.Lo + unit.Seconds(f)*b.Lo
	out.Hi = unit.Seconds(g)*a.Hi + unit.Seconds(f)*b.Hi
	out.Bytes = unit.Bytes(g)*a.Bytes + unit.Bytes(f)*b.Bytes
	out.FLOPs = unit.FLOPs(g)*a.FLOPs + unit.FLOPs(f)*b.FLOPs
	out.Kernels = g*a.Kernels + f*b.Kernels
	return out
}

// accum sums op estimates per category.
type accum struct {
	t, lo, hi [cost.NumCategories]unit.Seconds
	bytes     [cost.NumCategories]unit.Bytes
	flops     [cost.NumCategories]unit.FLOPs
	kernels   [cost.NumCategories]float64
	src       [cost.NumCategories]cost.Source
	srcTime   [cost.NumCategories]unit.Seconds // time of the op whose source is kept
	mixed     [cost.NumCategories]bool
	// host is the host time of the step's eagerly launched kernels
	// (Config.LaunchAhead), booked by ahead.
	host unit.Seconds
}

// ahead books the launch time of a step whose eager kernels the host
// issues ahead of the GPU (Config.LaunchAhead): the host time beyond the
// step's GPU time, max(0, host - GPU), and returns it.
func (a *accum) ahead() unit.Seconds {
	var gpu unit.Seconds
	for c := range a.t {
		gpu += a.t[c]
	}
	d := a.host - gpu
	if d <= 0 {
		return 0
	}
	e := cost.Estimate{Time: d, Lo: d * unit.Seconds(kernels.LatencySpread.Lo), Hi: d * unit.Seconds(kernels.LatencySpread.Hi),
		Source: cost.Source{Kind: cost.Fixed, Formula: formulaLaunchAhead}}
	a.addLaunch(e, 1)
	return d
}

// formulaLaunchAhead describes the launch time under Config.LaunchAhead.
const formulaLaunchAhead = "max(0, sum(kernels x t_host_launch) - step GPU time): host runs ahead of the GPU"

// add adds n times e to category c. The category's source is that of its
// largest op; when ops of different source kinds (table, roofline) meet,
// the category is marked mixed.
func (a *accum) add(c cost.Category, e *cost.Estimate, n float64) {
	if n <= 0 || c >= cost.NumCategories {
		return
	}
	w := unit.Seconds(n)
	a.t[c] += e.Time * w
	a.lo[c] += e.Lo * w
	a.hi[c] += e.Hi * w
	a.bytes[c] += e.Bytes * unit.Bytes(n)
	a.flops[c] += e.FLOPs * unit.FLOPs(n)
	a.kernels[c] += e.Kernels * n
	if e.Time*w > a.srcTime[c] {
		if a.srcTime[c] > 0 && a.src[c].Kind != e.Source.Kind {
			a.mixed[c] = true
		}
		a.src[c] = e.Source
		a.srcTime[c] = e.Time * w
	} else if e.Time > 0 && a.src[c].Kind != e.Source.Kind {
		a.mixed[c] = true
	}
}

func (a *accum) addLaunch(e cost.Estimate, n float64) {
	if e.Time > 0 {
		a.add(cost.Launch, &e, n)
	}
}

const noteMixed = "ops of this category come from tables and rooflines; source of the largest op shown (see --explain)"

// finish returns the breakdown and the step estimate (see the package doc
// for how intervals combine).
func (a *accum) finish(pt *Point) {
	br := &pt.Breakdown
	step := &pt.Step
	var dlo2, dhi2 float64
	for c := range br {
		e := &br[c]
		e.Time, e.Lo, e.Hi = a.t[c], a.lo[c], a.hi[c]
		e.Bytes, e.FLOPs, e.Kernels = a.bytes[c], a.flops[c], a.kernels[c]
		e.Source = a.src[c]
		if a.mixed[c] {
			e.Source.Note = noteMixed
		}
		step.Time += e.Time
		step.Bytes += e.Bytes
		step.FLOPs += e.FLOPs
		step.Kernels += e.Kernels
		dlo := float64(e.Time - e.Lo)
		dhi := float64(e.Hi - e.Time)
		dlo2 += dlo * dlo
		dhi2 += dhi * dhi
	}
	step.Lo = step.Time - unit.Seconds(math.Sqrt(dlo2))
	step.Hi = step.Time + unit.Seconds(math.Sqrt(dhi2))
	step.Source = cost.Source{Kind: cost.Roofline, Formula: formulaStep}
	for c := range br {
		if br[c].Source.Kind == cost.Table && br[c].Time > 0 {
			step.Source.Kind = cost.Table
			step.Source.Note = "calibration tables used where they cover an op; roofline elsewhere"
			break
		}
	}
}

const formulaStep = "sum of op estimates (no overlap); interval: linear within a category, quadrature across"

// gqaDecode prices a pass's GQA decodes: as in a decode-only step, or,
// under vLLM with a prefill chunk in the pass on a GPU whose
// FlashAttention-2 mixed-batch read rate is measured
// (kernels.GPU.FA2MixedRead), ungrouped (kernels.GQADecodeMixedFA2).
func (s *Sim) gqaDecode(g kernels.GQAShape, p *pass) cost.Estimate {
	e := s.costs.GQADecode(g)
	if p.pre.chunks > 0 && s.cfg.Engine == "vllm" {
		return s.costs.GQADecodeMixedFA2(g, e)
	}
	return e
}
