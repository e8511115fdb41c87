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

// stepRecorder keeps the prefill chunks of a run's first step.
type stepRecorder struct {
	linear
	first []int
	steps int
}

func (f *stepRecorder) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	if f.steps == 0 {
		for _, q := range seqs {
			if q.Prefill {
				f.first = append(f.first, q.Query)
			}
		}
	}
	f.steps++
	return f.linear.StepCost(seqs)
}

// TestSGLangDPAttentionRanks: with DP attention SGLang runs one scheduler
// per attention rank, each with chunked_prefill_size / dp_size tokens
// (server_args.py). chunked_prefill_size 8192 and 8 prompts of 4096
// tokens: one scheduler (no DP attention) takes two whole prompts; four
// ranks take four chunks of 2048, one each, and carry four chunks in
// progress; every request still completes.
func TestSGLangDPAttentionRanks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups int
		want   []int
	}{
		{"one scheduler", 1, []int{4096, 4096}},
		{"four DP ranks", 4, []int{2048, 2048, 2048, 2048}},
		{"eight DP ranks", 8, []int{1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(SGLang, 8, 16, 4096, 8)
			cfg.MaxNumBatchedTokens, cfg.MaxPrefillTokens = 8192, 16384
			cfg.Memory.Groups = tc.groups
			rec := &stepRecorder{linear: realistic}
			r, err := Run(cfg, rec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, rec.first, "first step's prefill chunks")
			assert.Equal(t, 16, r.Completed)
		})
	}
}

// TestSGLangDPAttentionConservativeness: DP attention scales
// schedule_conservativeness by 0.3 (server_args.py), so the new-token
// ratio starts at 0.7 x 0.3.
func TestSGLangDPAttentionConservativeness(t *testing.T) {
	cfg := point(SGLang, 1, 1, 10, 2)
	cfg.ScheduleConservativeness = 1
	cfg.Memory.Groups = 4
	e, _ := simRun(t, cfg, realistic)
	for _, in := range e.dp.in {
		within(t, in.sched.(*sglangScheduler).init, 0.7*0.3, 1e-12, "init")
	}
	cfg.PooledSGLangDP = true
	e, _ = simRun(t, cfg, realistic)
	within(t, e.inst.sched.(*sglangScheduler).init, 0.7*0.3, 1e-12, "pooled init")
}
