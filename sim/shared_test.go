package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// testMixes are step batches of every kind: decodes only (uniform and
// with mixed contexts), prefill chunks only, and both.
func testMixes(s *Sim) [][]Seq {
	q := s.queries
	dec := func(n, ctx int) []Seq {
		out := make([]Seq, n)
		for i := range out {
			out[i] = Seq{Query: q, Context: ctx + 7*i}
		}
		return out
	}
	return [][]Seq{
		dec(1, 100), dec(3, 2048), dec(32, 8192), dec(257, 100),
		{{Query: 512, Prefill: true}},
		{{Query: 2048, Context: 4096, Prefill: true}, {Query: 100, Prefill: true}},
		append(dec(31, 2048), Seq{Query: 1500, Context: 300, Prefill: true}),
		append(dec(5, 9000), Seq{Query: 1, Context: 20, Prefill: true}),
	}
}

// TestSameTokens: domains that sameTokens maps together have equal token
// counts in Sim.pass, for every setup, pass in use, link mode and batch.
func TestSameTokens(t *testing.T) {
	domains := []domain{domAttn, domMLP, domSeq, domLogits, domSend, domDec, domPre, domPreKV}
	for _, st := range setups {
		s := st.sim(t)
		var mixes []mix
		for batch := 1; batch <= 300; batch++ {
			mixes = append(mixes, s.uniform(batch, 2048))
		}
		for _, seqs := range testMixes(s) {
			m, err := s.summarise(seqs)
			require.NoError(t, err)
			mixes = append(mixes, m)
		}
		for k := passKind(0); k < numPasses; k++ {
			if s.usedPasses&(1<<k) == 0 {
				continue
			}
			for mi := range mixes {
				m := &mixes[mi]
				md := modeOf(m)
				p := s.pass(m, k)
				for _, a := range domains {
					for _, b := range domains {
						if s.sameTokens(a, k, md) == s.sameTokens(b, k, md) {
							require.Equal(t, p.tokens(a), p.tokens(b), "%s pass %d mix %d domains %d, %d", st.name, k, mi, a, b)
						}
					}
				}
			}
		}
	}
}

// withoutSharing is s with every op evaluated on its own (no cache slots).
func withoutSharing(s *Sim) *Sim {
	c := *s
	c.blocks = slices.Clone(s.blocks)
	for i := range c.blocks {
		b := &c.blocks[i]
		for md := range b.refs {
			b.refs[md] = make([]opRef, len(b.ops))
			for j := range b.refs[md] {
				b.refs[md][j] = opRef{slot: -1, dup: -1}
			}
		}
		b.moduleShared = [numModes]bool{}
	}
	return &c
}

// TestSharedEstimatesExact: evaluating each distinct op once and reusing its
// estimate gives exactly the Step and Explain of evaluating every op, in
// every setup (eager and CUDA graphs), with and without a calibrated MLA
// module and a measured all-reduce.
func TestSharedEstimatesExact(t *testing.T) {
	shared := 0
	for _, st := range setups {
		for _, graphs := range []bool{true, false} {
			for _, tables := range []bool{false, true} {
				st.graphs = graphs
				c := st.config(t)
				if tables {
					c.KernelTables = mlaTable{t: 300 * unit.Microsecond}
					c.CommTables = measuredAR{t: 55 * unit.Microsecond}
				}
				s, err := New(c)
				require.NoError(t, err, st.name)
				for _, b := range s.blocks {
					for _, refs := range b.refs {
						for _, r := range refs {
							if r.dup >= 0 {
								shared++
							}
						}
					}
				}
				ref := withoutSharing(s)
				for i, seqs := range testMixes(s) {
					var got, want BatchResult
					require.NoError(t, s.StepBatch(seqs, &got))
					require.NoError(t, ref.StepBatch(seqs, &want))
					require.Equal(t, want, got, "%s graphs=%v tables=%v mix %d", st.name, graphs, tables, i)
					gotOps, err := s.ExplainBatch(seqs)
					require.NoError(t, err)
					wantOps, err := ref.ExplainBatch(seqs)
					require.NoError(t, err)
					require.Equal(t, wantOps, gotOps, "%s graphs=%v tables=%v mix %d", st.name, graphs, tables, i)
				}
				for _, batch := range []int{1, 3, 32, 257} {
					for _, ctx := range []int{100, 8192} {
						got, err := s.Step(batch, ctx)
						require.NoError(t, err)
						want, err := ref.Step(batch, ctx)
						require.NoError(t, err)
						require.Equal(t, want, got, "%s graphs=%v tables=%v batch %d ctx %d", st.name, graphs, tables, batch, ctx)
						gotOps, err := s.Explain(batch, ctx)
						require.NoError(t, err)
						wantOps, err := ref.Explain(batch, ctx)
						require.NoError(t, err)
						require.Equal(t, wantOps, gotOps, "%s graphs=%v tables=%v batch %d ctx %d", st.name, graphs, tables, batch, ctx)
					}
				}
			}
		}
	}
	assert.Positive(t, shared, "some ops are shared")
}

// TestKimiSharesAllReduces: in Kimi-K2.5 TP8 the embedding, o_proj, MLP and
// MoE all-reduces (same ranks and bytes) are evaluated once per step.
func TestKimiSharesAllReduces(t *testing.T) {
	s := kimiRTX.sim(t)
	fresh := 0
	for _, b := range s.blocks {
		for i, o := range b.ops {
			if o.kind == opAllReduce && b.refs[modeDecode][i].dup < 0 {
				fresh++
			}
		}
	}
	assert.Equal(t, 1, fresh)
}
