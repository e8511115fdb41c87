package serve

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/model"
)

// replay is a point whose workload is the given log.
func replay(tr []TraceRequest) Config {
	cfg := point(VLLM, 0, len(tr), 1, 1)
	cfg.Workload.Trace = tr
	return cfg
}

func TestReplayMatchesGeneratedWorkload(t *testing.T) {
	// A log of 64 requests of 512 in / 64 out, all at t = 0, is the
	// generated closed loop of the same shape, figure for figure.
	tr := make([]TraceRequest, 64)
	for i := range tr {
		tr[i] = TraceRequest{InputTokens: 512, OutputTokens: 64}
	}
	got, err := Run(replay(tr), realistic)
	require.NoError(t, err)
	want, err := Run(point(VLLM, 0, 64, 512, 64), realistic)
	require.NoError(t, err)
	assert.Equal(t, want.TTFT, got.TTFT)
	assert.Equal(t, want.TPOT, got.TPOT)
	assert.Equal(t, want.E2EL, got.E2EL)
	assert.True(t, math.IsInf(got.RequestRate, 1), "all at t = 0")
}

func TestReplayArrivalsAndLengths(t *testing.T) {
	// Two requests far apart never share a step: each TTFT is its own
	// isolated prefill, and the second's length is its own.
	tr := []TraceRequest{{Arrival: 0, InputTokens: 100, OutputTokens: 5}, {Arrival: 100, InputTokens: 4000, OutputTokens: 5}}
	e, r := simRun(t, replay(tr), realistic)
	assert.Equal(t, 4100, r.TotalInputTokens)
	assert.Greater(t, e.reqs[1].ttft, e.reqs[0].ttft, "the longer prompt prefills longer")
	within(t, e.reqs[1].send, 100, 0, "sent at its arrival")
	within(t, r.RequestRate, 1.0/100, 1e-12, "offered rate: (n-1) / last arrival")
	assert.False(t, r.Overloaded, "a replay is never judged overloaded")
}

func TestReplayValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   []TraceRequest
		n    int
	}{
		{"count", []TraceRequest{{Arrival: 0, InputTokens: 1, OutputTokens: 1}}, 2},
		{"backwards", []TraceRequest{{Arrival: 1, InputTokens: 1, OutputTokens: 1}, {Arrival: 0.5, InputTokens: 1, OutputTokens: 1}}, 2},
		{"nan", []TraceRequest{{Arrival: math.NaN(), InputTokens: 1, OutputTokens: 1}}, 1},
		{"negative", []TraceRequest{{Arrival: -1, InputTokens: 1, OutputTokens: 1}}, 1},
		{"infinite", []TraceRequest{{Arrival: math.Inf(1), InputTokens: 1, OutputTokens: 1}}, 1},
		{"beyond the clock's resolution", []TraceRequest{{Arrival: 0, InputTokens: 1, OutputTokens: 1}, {Arrival: 1e300, InputTokens: 1, OutputTokens: 1}}, 2},
		{"zero output", []TraceRequest{{Arrival: 0, InputTokens: 1, OutputTokens: 0}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replay(tc.tr)
			cfg.Workload.Requests = tc.n
			_, err := Run(cfg, realistic)
			var fe *model.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "Workload.Trace", fe.Field)
		})
	}
}
