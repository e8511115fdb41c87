package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLengthsFromDistribution: with Workload.Lengths every request draws
// one of the pairs (seeded: the same seed, the same draws), and each pair
// is drawn about as often as the others.
func TestLengthsFromDistribution(t *testing.T) {
	w := Workload{Requests: 4000, RequestRate: 10, Burstiness: 1, InputTokens: 1, OutputTokens: 1,
		Lengths: []LengthPair{{100, 10}, {2000, 200}, {50, 500}}}
	require.NoError(t, w.validate())
	a := w.Generate(newRand(7))
	b := w.Generate(newRand(7))
	assert.Equal(t, a, b, "seeded")
	seen := map[LengthPair]int{}
	for _, r := range a {
		seen[LengthPair{r.In, r.Out}]++
	}
	require.Len(t, seen, 3, "only the file's pairs")
	for p, n := range seen {
		assert.InDelta(t, 4000.0/3, float64(n), 150, "pair %v drawn %d times", p, n)
	}
	c := w.Generate(newRand(8))
	assert.NotEqual(t, a, c, "another seed, other draws")

	w.Lengths = []LengthPair{{0, 10}}
	assert.ErrorContains(t, w.validate(), "Workload.Lengths")
}

// TestSessions: Turns 3 over 7 requests makes sessions {0,1,2}, {3,4,5},
// {6}: a later turn waits for the turn before it (ThinkTime after), and
// its prompt is that turn's prompt and output plus its own input; its
// Prefix starts with the whole of the turn before.
func TestSessions(t *testing.T) {
	w := Workload{Requests: 7, RequestRate: 2, Burstiness: 1, InputTokens: 100, OutputTokens: 10, Turns: 3, ThinkTime: 1.5}
	require.NoError(t, w.validate())
	reqs := w.Generate(newRand(1))
	describe(w, reqs)
	require.NoError(t, checkLoad(reqs))
	wantIn := []int{100, 210, 320, 100, 210, 320, 100}
	for i, r := range reqs {
		assert.Equal(t, wantIn[i], r.In, "request %d input", i)
		if i%3 == 0 {
			assert.Empty(t, r.After, "request %d starts a session", i)
			continue
		}
		assert.Equal(t, []int{i - 1}, r.After)
		assert.InDelta(t, 1.5, float64(r.Wait), 0)
		prev := reqs[i-1]
		require.Greater(t, len(r.Prefix), len(prev.Prefix))
		assert.Equal(t, prev.Prefix, r.Prefix[:len(prev.Prefix)], "request %d starts with the turn before", i)
		assert.Equal(t, 100+10, r.Prefix[len(r.Prefix)-1].Tokens, "its own input and output")
	}
	assert.Less(t, float64(reqs[0].Arrival), float64(reqs[3].Arrival), "sessions arrive at the rate")

	w.Turns = 100000
	assert.ErrorContains(t, w.validate(), "Workload.Turns")
}

// TestSessionsHitThePrefixCache: later turns find the earlier turns in
// the prefix cache; independent requests of the same lengths find
// nothing. With the cache off, nothing is found either.
func TestSessionsHitThePrefixCache(t *testing.T) {
	run := func(turns int, noCache bool) *Result {
		cfg := point(VLLM, 8, 64, 512, 64)
		cfg.Workload.Turns = turns
		cfg.NoPrefixCache = noCache
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		require.Equal(t, 64, r.Completed)
		return r
	}
	flat := run(1, false)
	sess := run(4, false)
	off := run(4, true)
	assert.Zero(t, flat.PrefixHitRate)
	assert.Greater(t, sess.PrefixHitRate, 0.4, "turns 2-4 reuse 1-3 of their 4 turns' worth")
	assert.Zero(t, off.PrefixHitRate)
}
