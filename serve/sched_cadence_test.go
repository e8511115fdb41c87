package serve

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cadenceTrace is two long decodes sent at t = 0 (the balancer gives one
// to each of the 2 DP ranks), then prompts of 2048 tokens every 0.5 s,
// each prefilled in chunks under a budget of 1024: every prompt lands on
// a rank that is decoding. burst sends the prompts three at a time.
func cadenceTrace(interval int, burst bool) Config {
	tr := []TraceRequest{{Arrival: 0, InputTokens: 64, OutputTokens: 600}, {Arrival: 0, InputTokens: 64, OutputTokens: 600}}
	for i := range 6 {
		at := 0.5 * float64(1+i)
		if burst {
			at = 0.5 * float64(1+i/3)
		}
		tr = append(tr, TraceRequest{Arrival: at, InputTokens: 2048, OutputTokens: 4})
	}
	cfg := point(VLLM, 0, len(tr), 64, 600)
	cfg.Workload.Trace = tr
	cfg.MaxNumBatchedTokens = 1024
	cfg.Memory.Groups = 2
	cfg.PrefillScheduleInterval = interval
	return cfg
}

// prefillSteps lists the steps (0-based, from the first) with prefill
// chunks, and whether every step up to the last of them decoded.
func prefillSteps(rec *stepLog) (steps []int, decoding bool) {
	decoding = true
	for i, ch := range rec.chunks {
		if len(ch) > 0 {
			steps = append(steps, i)
		}
	}
	for i := 1; len(steps) > 0 && i <= steps[len(steps)-1]; i++ {
		decoding = decoding && rec.decodes[i] > 0
	}
	return steps, decoding
}

// TestVLLMPrefillScheduleInterval: with --prefill-schedule-interval N on
// DP ranks, prefill chunks (a new prompt's and a chunked prompt's next)
// run only on the steps whose wave counter is a multiple of N, while the
// decodes run in every step; with N = 1 the chunks run back to back,
// off the cadence too.
func TestVLLMPrefillScheduleInterval(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rec := &stepLog{linear: realistic}
			r, err := Run(cadenceTrace(n, false), rec)
			require.NoError(t, err)
			assert.Equal(t, 8, r.Completed)
			steps, decoding := prefillSteps(rec)
			assert.True(t, decoding, "every step decodes")
			off := 0
			for _, i := range steps {
				if i%4 != 0 && i%n != 0 {
					t.Errorf("interval %d: prefill chunks in step %d", n, i)
				}
				if i%4 != 0 {
					off++
				}
			}
			if n == 1 {
				assert.Positive(t, off, "interval 1: chunks off a 4-step cadence")
			}
			// 6 prompts of 2048 tokens in steps of at most 1023 prefill
			// tokens (a decode takes one of the budget): 3 chunks each.
			assert.Len(t, steps, 1+6*3, "the first step's prefills and 3 chunks a prompt")
		})
	}
}

// TestVLLMPrefillScheduleIntervalNoDecode: a rank with nothing decoding
// is never held: its prompts' chunks run back to back whatever the
// interval, as with none.
func TestVLLMPrefillScheduleIntervalNoDecode(t *testing.T) {
	run := func(n int) []int {
		cfg := point(VLLM, 0, 2, 4096, 8)
		cfg.Workload.Trace = []TraceRequest{{Arrival: 0, InputTokens: 4096, OutputTokens: 8}, {Arrival: 0, InputTokens: 4096, OutputTokens: 8}}
		cfg.MaxNumBatchedTokens = 1024
		cfg.Memory.Groups = 2
		cfg.PrefillScheduleInterval = n
		rec := &stepLog{linear: realistic}
		_, err := Run(cfg, rec)
		require.NoError(t, err)
		steps, _ := prefillSteps(rec)
		return steps
	}
	assert.Equal(t, []int{0, 1, 2, 3}, run(4), "interval 4: four chunks in four steps")
	assert.Equal(t, run(1), run(4))
}

// TestVLLMPrefillScheduleIntervalCapacityBound: a cadence step that
// leaves requests waiting (prefill_capacity_bound) lets the next steps
// take prefills until a prefill step empties the queue: a burst of three
// prompts is prefilled in consecutive steps, spaced prompts only on the
// cadence.
func TestVLLMPrefillScheduleIntervalCapacityBound(t *testing.T) {
	off := func(burst bool) int {
		rec := &stepLog{linear: realistic}
		r, err := Run(cadenceTrace(4, burst), rec)
		require.NoError(t, err)
		assert.Equal(t, 8, r.Completed)
		steps, _ := prefillSteps(rec)
		n := 0
		for _, i := range steps {
			if i%4 != 0 {
				n++
			}
		}
		return n
	}
	assert.Zero(t, off(false), "spaced prompts: prefill on the cadence only")
	assert.Positive(t, off(true), "a burst: prefill off the cadence while requests wait")
}

// TestVLLMPrefillScheduleIntervalOff: interval 0 and 1 are vLLM's
// default (never throttled), and one engine without DP ranks ignores the
// interval (vLLM's base EngineCore never throttles): the results are
// those of today, field for field.
func TestVLLMPrefillScheduleIntervalOff(t *testing.T) {
	base, err := Run(cadenceTrace(0, false), realistic)
	require.NoError(t, err)
	one, err := Run(cadenceTrace(1, false), realistic)
	require.NoError(t, err)
	assert.Equal(t, base, one, "interval 1 = interval 0")
	four, err := Run(cadenceTrace(4, false), realistic)
	require.NoError(t, err)
	assert.NotEqual(t, base.TPOT, four.TPOT, "interval 4 on DP ranks changes the run")

	single := func(n int) *Result {
		cfg := cadenceTrace(n, false)
		cfg.Memory.Groups = 1
		r, err := Run(cfg, realistic)
		require.NoError(t, err)
		return r
	}
	assert.Equal(t, single(1), single(4), "no DP: interval ignored")

	pooled := func(n int) *Result {
		cfg := cadenceTrace(n, false)
		cfg.PooledDP = true
		r, err := Run(cfg, perGroup{realistic, 2})
		require.NoError(t, err)
		return r
	}
	assert.NotEqual(t, pooled(1).TPOT, pooled(4).TPOT, "pooled DP ranks: the one scheduler keeps the cadence")
}
