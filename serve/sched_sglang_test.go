package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// firstStep counts the prefill chunks of a run's first step.
type firstStep struct {
	linear
	prefills, steps int
}

func (f *firstStep) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	if f.steps == 0 {
		for _, q := range seqs {
			if q.Prefill {
				f.prefills++
			}
		}
	}
	f.steps++
	return f.linear.StepCost(seqs)
}

// TestSGLangAdmitsByRatio: with new-token-ratio admission SGLang admits a
// waiting request only while its prompt plus min(output, 4096) tokens fit
// in the free KV less the running requests' expected further tokens. A
// cache of 20,000 slots and requests of 1000 + 1000 tokens: the first
// prefill batch takes 9 (the 10th's 2000 no longer fits in the 2000 left)
// where admission by the chunk alone takes all 16, which then retract far
// more often (with the ratio decaying, later admissions are optimistic and
// some retractions remain, as in SGLang).
func TestSGLangAdmitsByRatio(t *testing.T) {
	run := func(cons float64) (first, preemptions int) {
		cfg := point(SGLang, 16, 32, 1000, 1000)
		cfg.MaxNumBatchedTokens, cfg.MaxPrefillTokens = 16384, 16384
		cfg.Memory.KVCapacity = 20000 * cfg.Memory.KVBytesPerToken
		cfg.ScheduleConservativeness = cons
		c := &firstStep{linear: realistic}
		r, err := Run(cfg, c)
		require.NoError(t, err)
		return c.prefills, r.Preemptions
	}
	offFirst, offPre := run(0)
	onFirst, onPre := run(1)
	assert.Equal(t, 16, offFirst, "chunk only: every prompt that fits the batch")
	assert.Equal(t, 9, onFirst, "ratio: while prompt + output fit")
	assert.Positive(t, offPre)
	assert.Less(t, onPre, offPre/2, "ratio admission retracts far less")
	_, consPre := run(4) // ratio 1 throughout the first batches: the most conservative
	assert.LessOrEqual(t, consPre, onPre)
}

// TestSGLangRatioDecay: each decode step lowers the ratio by (init -
// min) / 600 from init = 0.7 x schedule_conservativeness to min = 0.14 x
// init; a lone request of 100 output tokens runs 99 decode steps.
func TestSGLangRatioDecay(t *testing.T) {
	for _, cons := range []float64{1, 0.5, 2} {
		cfg := point(SGLang, 1, 1, 10, 100)
		cfg.ScheduleConservativeness = cons
		e, _ := simRun(t, cfg, realistic)
		s := e.inst.sched.(*sglangScheduler)
		init := min(0.7*cons, 1)
		within(t, s.init, init, 1e-12, "init")
		within(t, s.floor, 0.14*init, 1e-12, "floor")
		within(t, s.ratio, init-99*(init-0.14*init)/600, 1e-12, "after 99 decode steps")
	}
	// Long enough, it stops at the floor.
	cfg := point(SGLang, 1, 1, 10, 1000)
	e, _ := simRun(t, cfg, realistic)
	s := e.inst.sched.(*sglangScheduler)
	within(t, s.ratio, s.floor, 1e-12, "at the floor")
}
