package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepKeyHash: equal keys hash equal (a zero of either sign alike),
// and the distinct keys of many decode, mixed and prefill steps of each
// setup get distinct hashes (a cache holds one Sim's keys).
func TestStepKeyHash(t *testing.T) {
	keys := 0
	for _, st := range setups {
		hashes := map[uint64]StepKey{}
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
	k.passes[0].pre.chunks = 1
	neg := k
	neg.passes[0].pre.pairs = math.Copysign(0, -1)
	require.Equal(t, k, neg)
	assert.Equal(t, k.Hash(), neg.Hash(), "-0 and +0 compare equal and must hash equal")
	one := k
	one.passes[0].pre.pairs = 1
	assert.NotEqual(t, k.Hash(), one.Hash())
}
