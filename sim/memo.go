package sim

import "github.com/moecast/moecast/internal/cost"

// OpMemo remembers, per op of a Sim, the estimate of the last step it was
// priced in, and hands it back while the op's inputs stay the same. A
// serving simulation prices a thousand decode steps that differ only in
// their mean context: the GEMMs, norms, MoE, collectives and sampling
// take the same token counts step after step, and only attention changes.
// Only ops whose estimate is a function of their token count, the pass's
// launch mode and whether the step has prefill chunks (and for MoE, the
// pass's routing load and expert-domain tokens) are memoised; attention,
// indexer, recurrent and prefill-attention ops are always priced. Each op
// keeps one entry for decode-only steps and one for steps with prefill
// chunks. Estimates are pure functions of those inputs, so a memoised
// result equals the priced one bit for bit.
//
// An OpMemo belongs to the Sim that made it and is not safe for
// concurrent use: one per caller (serve.SimCoster keeps one per Run).
type OpMemo struct {
	sim   *Sim
	ents  []opMemoEnt  // 2 per op: [decode-only, with prefill chunks]
	tmpl  stepTemplate // KeyTimes' decode-step template
	loads loadCache    // KeyMemo's routing loads
}

type opMemoKey struct {
	n      int       // tokens of the op's domain
	graph  graphMode // launch mode (collectives price with or without graphs)
	domain int       // MoE: tokens entering the expert domain
	load   load      // MoE: the pass's routing load
}

type opMemoEnt struct {
	ok  bool
	key opMemoKey
	e   cost.Estimate
}

// NewOpMemo returns an empty memo for StepBatchMemo on s.
func (s *Sim) NewOpMemo() *OpMemo {
	return &OpMemo{sim: s, ents: make([]opMemoEnt, 2*s.nops)}
}

// memoable reports whether eval's estimate of an op of kind k depends on
// the pass only through opMemoKey and the decode-only flag.
func (k opKind) memoable() bool {
	switch k {
	case opGEMM, opElementwise, opMoE, opTopK, opSampling, opUnmapped,
		opAllReduce, opAllGather, opReduceScatter, opAllToAll:
		return true
	}
	return false
}

// evalMemo is eval of op i of blk in pass p, through memo when it is not
// nil and the op is memoable.
func (s *Sim) evalMemo(memo *OpMemo, blk *block, i int, p *pass) cost.Estimate {
	var own cost.Estimate
	return *s.evalMemoTo(memo, blk, i, p, &own)
}

// evalMemoTo is evalMemo without copying the estimate: it points at the
// memo's entry (valid until the op is priced again) or, for an op the
// memo does not hold, at *own, which it fills.
func (s *Sim) evalMemoTo(memo *OpMemo, blk *block, i int, p *pass, own *cost.Estimate) *cost.Estimate {
	o := &blk.ops[i]
	if memo == nil || !o.kind.memoable() {
		*own = s.eval(o, p)
		return own
	}
	k := opMemoKey{n: p.tokens(o.dom), graph: p.graph}
	if o.kind == opMoE {
		k.domain, k.load = p.domain, p.load
	}
	slot := 2 * (blk.base + i)
	if p.pre.chunks > 0 {
		slot++
	}
	e := &memo.ents[slot]
	if e.ok && e.key == k {
		return &e.e
	}
	e.ok, e.key, e.e = true, k, s.eval(o, p)
	return &e.e
}
