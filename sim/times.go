package sim

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// StepTimes is the time of one engine step and its time per category:
// StepBatch's Step.Time and Breakdown[c].Time, bit for bit, without the
// intervals, bytes, FLOPs and sources (what a serving simulation reads).
type StepTimes struct {
	Step unit.Seconds
	Cats [cost.NumCategories]unit.Seconds
}

// KeyTimes prices the step whose StepKey is k (Key of its sequences) into
// out, through memo (see OpMemo; nil or another Sim's is not used): the
// times StepBatchMemo gives for the same sequences, bit for bit.
//
// Decode-only steps whose passes differ only in their mean contexts (a
// closed loop's decode steps between two changes of the batch) share a
// template in memo: the per-layer time, host launch time and eager launch
// time of every op whose estimate does not depend on the contexts (GEMMs,
// norms, MoE, collectives, sampling: the ops OpMemo holds, and the ops
// that copy theirs), recorded on the first such step. Later steps price
// again only the ops that do depend on them (attention, the MLA module
// whose calibrated time splits over its ops, indexers) and add every op's
// time, in op order, into its category as accum does, so each category's
// sum is the same float sum.
func (s *Sim) KeyTimes(k *StepKey, memo *OpMemo, out *StepTimes) {
	if memo != nil && memo.sim != s {
		memo = nil
	}
	var a timeAccum
	switch {
	case memo == nil || k.md != modeDecode:
		s.evalPassesTimes(&k.passes, k.md, memo, &a, nil)
	case memo.tmpl.ok && memo.tmpl.key == tmplKeyOf(&k.passes):
		if k.passes[passTarget].graph == graphFull {
			s.replayGraphTimes(&k.passes, memo, &a)
		} else {
			s.replayTimes(&k.passes, memo, &a)
		}
	default:
		t := &memo.tmpl
		t.ok, t.key = false, tmplKeyOf(&k.passes)
		if t.ops == nil {
			t.ops = make([]tmplOp, s.nops)
			t.mods = make([]tmplModule, len(s.blocks))
		}
		s.evalPassesTimes(&k.passes, k.md, memo, &a, t)
		t.ok = true
	}
	if s.cfg.LaunchAhead {
		a.ahead()
	}
	a.finish(out)
}

// stepTemplate is OpMemo's decode-step template (KeyTimes).
type stepTemplate struct {
	ok  bool
	key [numPasses]pass // the passes it was recorded at, contexts zeroed
	ops []tmplOp        // by op index over all blocks (block.base + i)
	// konst[slot]: the op that fills cache slot slot is constant.
	konst [maxShared]bool
	mods  []tmplModule // by block: its MLA module's constant parts
}

// tmplModule is what a decode-step template keeps of a block's MLA
// module (evalModule): the module ops' own times where constant (konst)
// and the projections' rooflines.
type tmplModule struct {
	konst  [maxModuleOps]bool
	own    [maxModuleOps]unit.Seconds
	roofs  [8]kernels.ProjRoof // evalModule's projections, at most 8
	nroofs int
}

// tmplOp is one op of a decode-step template: konst says its estimate
// does not depend on the pass's contexts, and then time is its estimate's
// time, host its eager host time and launch its eager launch time.
type tmplOp struct {
	konst        bool
	time, host   unit.Seconds
	launch       unit.Seconds
	launchTimeOK bool // launch > 0 (addLaunch adds only then)
}

// tmplKeyOf is passes with the decodes' mean contexts zeroed: what every
// estimate but the context-dependent ones is a function of in a
// decode-only step.
func tmplKeyOf(passes *[numPasses]pass) [numPasses]pass {
	k := *passes
	for i := range k {
		k[i].ctx, k[i].idxCtx, k[i].winCtx = 0, 0, 0
	}
	return k
}

// timeAccum is accum's times alone: the same additions in the same order.
type timeAccum struct {
	t    [cost.NumCategories]unit.Seconds
	host unit.Seconds
}

// add is accum.add's time.
func (a *timeAccum) add(c cost.Category, t unit.Seconds, n float64) {
	if n <= 0 || c >= cost.NumCategories {
		return
	}
	w := unit.Seconds(n)
	a.t[c] += t * w
}

// ahead is accum.ahead's time.
func (a *timeAccum) ahead() {
	var gpu unit.Seconds
	for c := range a.t {
		gpu += a.t[c]
	}
	d := a.host - gpu
	if d <= 0 {
		return
	}
	a.add(cost.Launch, d, 1)
}

// finish is accum.finish's times.
func (a *timeAccum) finish(out *StepTimes) {
	out.Step = 0
	for c := range a.t {
		out.Cats[c] = a.t[c]
		out.Step += a.t[c]
	}
}

// evalPassesTimes is evalMix's times over passes in link mode md; with
// rec it records the decode-step template.
func (s *Sim) evalPassesTimes(passes *[numPasses]pass, md linkMode, memo *OpMemo, a *timeAccum, rec *stepTemplate) {
	var cache [maxShared]cost.Estimate
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		p := &passes[blk.pass]
		refs := blk.refs[md]
		var mod [maxModuleOps]cost.Estimate
		module := blk.mla && s.cfg.KernelTables != nil && !blk.moduleShared[md]
		if module {
			if md == modeDecode {
				s.evalModule(blk, p, &mod, memo)
				if rec != nil {
					s.recordModule(blk, p, memo, &rec.mods[bi])
				}
			} else {
				s.evalModuleMixed(blk, p, &mod, memo)
			}
		}
		decode := p.pre.chunks == 0
		for i := range blk.ops {
			o := &blk.ops[i]
			if decode && o.prefillOnly {
				continue
			}
			r := refs[i]
			var own cost.Estimate
			var e *cost.Estimate
			konst := false
			switch {
			case r.dup >= 0:
				e = &cache[r.dup]
				konst = rec != nil && rec.konst[r.dup]
			case module && o.module:
				e = &mod[blk.modPos[i]]
			default:
				e = s.evalMemoTo(memo, blk, i, p, &own)
				konst = memo != nil && o.kind.memoable()
			}
			if r.slot >= 0 {
				cache[r.slot] = *e
				if rec != nil {
					rec.konst[r.slot] = konst
				}
			}
			a.add(o.cat, e.Time, blk.count)
			var host, launch unit.Seconds
			if p.graph == graphNone || (p.graph == graphPiecewise && o.cat == cost.Attention) {
				if s.cfg.LaunchAhead {
					host = s.eager.HostTime(*e)
					a.host += host * unit.Seconds(blk.count)
				} else if l := s.eager.LaunchCost(*e); l.Time > 0 {
					launch = l.Time
					a.add(cost.Launch, launch, blk.count)
				}
			}
			if rec != nil {
				rec.ops[blk.base+i] = tmplOp{konst: konst, time: e.Time, host: host, launch: launch, launchTimeOK: launch > 0}
			}
		}
	}
}

// replayTimes is evalPassesTimes of a decode-only step whose template
// memo holds (tmplKeyOf(passes) equals its key): constant ops add their
// recorded times, the others are priced as evalPassesTimes prices them.
func (s *Sim) replayTimes(passes *[numPasses]pass, memo *OpMemo, a *timeAccum) {
	t := &memo.tmpl
	var cache [maxShared]cost.Estimate
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		p := &passes[blk.pass]
		refs := blk.refs[modeDecode]
		var mod [maxModuleOps]cost.Estimate
		var modOf *[maxModuleOps]cost.Estimate // the block's module estimates, when it has them
		if blk.mla && s.cfg.KernelTables != nil && !blk.moduleShared[modeDecode] {
			s.evalModule(blk, p, &mod, memo)
			modOf = &mod
		}
		eager := p.graph == graphNone || p.graph == graphPiecewise
		for i := range blk.ops {
			o := &blk.ops[i]
			if o.prefillOnly {
				continue
			}
			to := &t.ops[blk.base+i]
			if to.konst {
				a.add(o.cat, to.time, blk.count)
				if eager && (p.graph == graphNone || o.cat == cost.Attention) {
					if s.cfg.LaunchAhead {
						a.host += to.host * unit.Seconds(blk.count)
					} else if to.launchTimeOK {
						a.add(cost.Launch, to.launch, blk.count)
					}
				}
				continue
			}
			var own cost.Estimate
			e := s.opEstimate(blk, i, refs[i], p, &cache, modOf, memo, &own)
			a.add(o.cat, e.Time, blk.count)
			if eager && (p.graph == graphNone || o.cat == cost.Attention) {
				if s.cfg.LaunchAhead {
					a.host += s.eager.HostTime(*e) * unit.Seconds(blk.count)
				} else if l := s.eager.LaunchCost(*e); l.Time > 0 {
					a.add(cost.Launch, l.Time, blk.count)
				}
			}
		}
	}
}

// recordModule fills m with blk's MLA-module constants in pass p (see
// evalModule): the own times of the module ops memo holds (memoable) and
// the projections' rooflines.
func (s *Sim) recordModule(blk *block, p *pass, memo *OpMemo, m *tmplModule) {
	*m = tmplModule{}
	n := 0
	for i := range blk.ops {
		o := &blk.ops[i]
		if !o.module {
			continue
		}
		if memo != nil && o.kind.memoable() {
			m.konst[n] = true
			m.own[n] = s.evalMemo(memo, blk, i, p).Time
		}
		n++
		if o.kind == opGEMM && m.nroofs < len(m.roofs) {
			g := o.gemm
			g.M = p.tokens(o.dom)
			m.roofs[m.nroofs] = s.costs.ProjRoof(g)
			m.nroofs++
		}
	}
}

// moduleTimes is evalModule's times of blk's MLA-module ops in pass p
// (in their order), from the template's constants m.
func (s *Sim) moduleTimes(blk *block, p *pass, m *tmplModule, memo *OpMemo, out *[maxModuleOps]unit.Seconds) {
	var attn kernels.MLAShape
	var sum unit.Seconds
	n := 0
	for i := range blk.ops {
		o := &blk.ops[i]
		if !o.module {
			continue
		}
		t := m.own[n]
		if !m.konst[n] {
			t = s.evalMemo(memo, blk, i, p).Time
		}
		out[n] = t
		sum += t
		n++
		if o.kind == opMLA {
			attn = s.mlaShape(o, p)
		}
	}
	t, ok := s.costs.MLAModuleRoofs(attn, m.roofs[:m.nroofs])
	if !ok || sum <= 0 {
		return
	}
	for k := range n {
		w := out[k] / sum
		out[k] = t.Time * w
	}
}

// replayGraphTimes is replayTimes of a step that replays a full CUDA graph
// (no launch time per op): times alone, the MLA modules from the
// template's constants (moduleTimes).
func (s *Sim) replayGraphTimes(passes *[numPasses]pass, memo *OpMemo, a *timeAccum) {
	t := &memo.tmpl
	var cache [maxShared]unit.Seconds
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		p := &passes[blk.pass]
		refs := blk.refs[modeDecode]
		var mod [maxModuleOps]unit.Seconds
		module := blk.mla && s.cfg.KernelTables != nil && !blk.moduleShared[modeDecode]
		if module {
			s.moduleTimes(blk, p, &t.mods[bi], memo, &mod)
		}
		for i := range blk.ops {
			o := &blk.ops[i]
			if o.prefillOnly {
				continue
			}
			to := &t.ops[blk.base+i]
			if to.konst {
				a.add(o.cat, to.time, blk.count)
				continue
			}
			r := refs[i]
			var et unit.Seconds
			switch {
			case r.dup >= 0:
				et = cache[r.dup]
			case module && o.module:
				et = mod[blk.modPos[i]]
			default:
				var own cost.Estimate
				et = s.evalMemoTo(memo, blk, i, p, &own).Time
			}
			if r.slot >= 0 {
				cache[r.slot] = et
			}
			a.add(o.cat, et, blk.count)
		}
	}
}
