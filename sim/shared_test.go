package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// TestSameTokens: domains that sameTokens maps together have equal token
// counts in Sim.pass, for every setup, pass in use and batch.
func TestSameTokens(t *testing.T) {
	domains := []domain{domAttn, domMLP, domSeq, domLogits, domSend}
	for _, st := range setups {
		s := st.sim(t)
		for k := passKind(0); k < numPasses; k++ {
			if s.usedPasses&(1<<k) == 0 {
				continue
			}
			for batch := 1; batch <= 300; batch++ {
				p := s.pass(batch, 2048, k)
				for _, a := range domains {
					for _, b := range domains {
						if s.sameTokens(a, k) == s.sameTokens(b, k) {
							require.Equal(t, p.tokens(a), p.tokens(b), "%s pass %d batch %d domains %d, %d", st.name, k, batch, a, b)
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
		b.refs = make([]opRef, len(b.ops))
		for j := range b.refs {
			b.refs[j] = opRef{slot: -1, dup: -1}
		}
		b.moduleShared = false
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
					for _, r := range b.refs {
						if r.dup >= 0 {
							shared++
						}
					}
				}
				ref := withoutSharing(s)
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
			if o.kind == opAllReduce && b.refs[i].dup < 0 {
				fresh++
			}
		}
	}
	assert.Equal(t, 1, fresh)
}
