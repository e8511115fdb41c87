package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepKeyHash: equal keys hash equal (a zero of either sign alike),
// and the distinct keys of many decode, mixed and prefill steps of every
// setup get distinct hashes.
func TestStepKeyHash(t *testing.T) {
	hashes := map[uint64]StepKey{}
	keys := 0
	for _, st := range setups {
		s := st.sim(t)
		for _, b := range []int{1, 2, 7, 64, 300} {
			for ctx := 1000; ctx < 1040; ctx++ {
				for _, seqs := range [][]Seq{decodes(b, ctx, s.queries),
					append(decodes(b, ctx, s.queries), Seq{Query: 512, Context: ctx, Prefill: true}),
					{{Query: ctx, Prefill: true}, {Query: b, Context: 8, Prefill: true}}} {
					k, err := s.Key(seqs)
					require.NoError(t, err)
					again, err := s.Key(seqs)
					require.NoError(t, err)
					require.Equal(t, k.Hash(), again.Hash())
					if old, ok := hashes[k.Hash()]; ok {
						require.Equal(t, old, k, "%s: two keys share hash %x", st.name, k.Hash())
						continue
					}
					hashes[k.Hash()] = k
					keys++
				}
			}
		}
	}
	assert.Greater(t, keys, 1000)
	var k StepKey
	neg := k
	neg.passes[0].load.Pairs = math.Copysign(0, -1)
	require.Equal(t, k, neg)
	assert.Equal(t, k.Hash(), neg.Hash(), "-0 and +0 compare equal and must hash equal")
	one := k
	one.passes[2].pre.pairs = 1
	assert.NotEqual(t, k.Hash(), one.Hash())
}
