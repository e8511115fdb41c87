package serve

import (
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A turn that waits for others is sent Wait after the last of them
// finishes, whatever its Arrival; independent requests are sent at their
// arrivals meanwhile.
func TestDependentTurns(t *testing.T) {
	for _, tc := range []struct {
		name string
		load listLoad
	}{
		{"chain of turns", listLoad{
			{In: 500, Out: 20},
			{In: 600, Out: 20, After: []int{0}, Wait: 2},
			{In: 700, Out: 20, After: []int{1}, Wait: 0.5},
		}},
		{"join of two", listLoad{
			{In: 500, Out: 200},
			{In: 100, Out: 5},
			{In: 300, Out: 20, After: []int{0, 1}, Wait: 1},
		}},
		{"independent during wait", listLoad{
			{In: 500, Out: 20},
			{In: 600, Out: 20, After: []int{0}, Wait: 3},
			{In: 100, Out: 10, Arrival: 1},
		}},
		{"zero wait", listLoad{
			{In: 500, Out: 20},
			{In: 600, Out: 20, After: []int{0}},
			{In: 600, Out: 20, After: []int{0}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 0, len(tc.load), 1, 1)
			cfg.Load = tc.load
			e, err := simulate(cfg, realistic)
			require.NoError(t, err)
			for i, g := range tc.load {
				q := e.reqs[i]
				if len(g.After) == 0 {
					assert.Equal(t, float64(g.Arrival), q.send, "request %d sent at its arrival", i)
					continue
				}
				ready := 0.0
				for _, a := range g.After {
					p := e.reqs[a]
					ready = max(ready, p.send+p.e2e)
				}
				assert.InDelta(t, ready+float64(g.Wait), q.send, 1e-9, "request %d sent its wait after its last dependency finished", i)
			}
		})
	}
}

// A later turn that repeats the earlier turn's prompt and output finds
// them in the prefix cache.
func TestDependentTurnsReuseContext(t *testing.T) {
	seg := func(ids ...uint64) []Segment {
		s := make([]Segment, len(ids))
		for i, id := range ids {
			s[i] = Segment{ID: id, Tokens: 256}
		}
		return s
	}
	load := listLoad{
		{In: 512, Out: 256, Prefix: seg(1, 2, 3)},                                                // prompt 1,2; output 3
		{In: 1024, Out: 256, Prefix: seg(1, 2, 3, 4, 5), After: []int{0}, Wait: unit.Seconds(1)}, // history 1,2,3 + new 4
	}
	cfg := point(VLLM, 0, 2, 1, 1)
	cfg.Load = load
	r, err := Run(cfg, realistic)
	require.NoError(t, err)
	require.True(t, r.PrefixCache)
	// The second turn finds the first's 512 prompt tokens and its 255
	// computed output tokens in whole blocks of 16: 752.
	assert.InDelta(t, 752.0/(512+1024), r.PrefixHitRate, 1e-12)
}

func TestDependencyValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		load listLoad
		msg  string
	}{
		{"later", listLoad{{In: 1, Out: 1, After: []int{1}}, {In: 1, Out: 1}}, "request 0: waits for request 1"},
		{"self", listLoad{{In: 1, Out: 1}, {In: 1, Out: 1, After: []int{1}}}, "request 1: waits for request 1"},
		{"negative wait", listLoad{{In: 1, Out: 1}, {In: 1, Out: 1, After: []int{0}, Wait: -1}}, "wait -1 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 0, 2, 1, 1)
			cfg.Load = tc.load
			_, err := Run(cfg, realistic)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
