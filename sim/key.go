package sim

import (
	"math"
	"math/bits"
)

// StepKey is what the cost of a step depends on: the token counts, mean
// contexts and prefill sums of each pass the step is priced at (after the
// sequences are spread over the attention groups), and whether prefill
// chunks are in it. Two batches with equal keys have equal StepBatch Step
// and Breakdown, so a caller may cache them by key (a serving simulation
// meets the same shape many times: its decode contexts differ from step to
// step, but their mean repeats). Keys are comparable.
type StepKey struct {
	passes [numPasses]pass
	md     linkMode
}

// Key returns the StepKey of seqs, checking them as StepBatch does.
func (s *Sim) Key(seqs []Seq) (StepKey, error) {
	var k StepKey
	err := s.KeyMemoN(seqs, 1, nil, &k)
	return k, err
}

// KeyMemo is Key into *k, through memo (nil or another Sim's is not
// used): each pass's MoE routing load, a pure function of the pass's
// expert-domain tokens, is taken from the last step keyed with memo when
// those tokens are the same.
func (s *Sim) KeyMemo(seqs []Seq, memo *OpMemo, k *StepKey) error {
	return s.KeyMemoN(seqs, 1, memo, k)
}

// KeyMemoN is KeyMemo of n copies of seqs one after another (n >= 1: a
// step that prices every DP rank at the busiest rank's batch), without
// their being written out.
func (s *Sim) KeyMemoN(seqs []Seq, n int, memo *OpMemo, k *StepKey) error {
	*k = StepKey{}
	m, err := s.summariseN(seqs, n)
	if err != nil {
		return err
	}
	var lc *loadCache
	if memo != nil && memo.sim == s {
		lc = &memo.loads
	}
	for p := passKind(0); p < numPasses; p++ {
		if s.usedPasses&(1<<p) != 0 {
			s.passTo(&m, p, lc, &k.passes[p])
		}
	}
	g := s.graphModeOf(&m, &k.passes[passTarget])
	for p := range k.passes {
		k.passes[p].graph = g
	}
	k.md = modeOf(&m)
	return nil
}

// Hash is a 64-bit hash of k for a caller's own table of one Sim's keys:
// equal keys have equal hashes (a float zero hashes as +0), unequal keys
// of one Sim almost never do, so a caller still compares the keys (==) of
// a hit. It reads only the fields the others follow from: a pass's
// sequences, queries, mean contexts, graph mode and prefill part (when it
// has chunks: without, the part is zero); Key computes its token counts
// (dec, attn, mlp, logits, send, domain) and routing load from those and
// the Sim's layout. It costs a few multiplications a pass, where a Go
// map's generic hash of a StepKey walks its fields one call at a time
// (most of a serving simulation's memo lookups).
func (k *StepKey) Hash() uint64 {
	h := uint64(k.md) ^ 0x9e3779b97f4a7c15
	for i := range k.passes {
		p := &k.passes[i]
		h = hashMix(h, uint64(p.seq), uint64(p.queries))
		h = hashMix(h, uint64(p.ctx), uint64(p.idxCtx))
		h = hashMix(h, uint64(p.winCtx), uint64(p.graph))
		if q := &p.pre; q.chunks != 0 {
			h = hashMix(h, uint64(q.chunks), uint64(q.tokens))
			h = hashMix(h, uint64(q.prefix), uint64(q.meanChunk))
			h = hashMix(h, uint64(q.keys), uint64(q.winKeys))
			h = hashMix(h, uint64(q.idxKeys), floatBits(q.pairs))
			h = hashMix(h, floatBits(q.winPairs), floatBits(q.idxPairs))
		}
	}
	return h ^ h>>32
}

// hashMix folds two words into h (a multiply-xorshift round, as wyhash's).
func hashMix(h, a, b uint64) uint64 {
	hi, lo := bits.Mul64(h^a^0xa0761d6478bd642f, b^0xe7037ed1a0b428db)
	return hi ^ lo
}

// floatBits is f's bits with -0 as +0 (they compare equal).
func floatBits(f float64) uint64 {
	if f == 0 {
		return 0
	}
	return math.Float64bits(f)
}
