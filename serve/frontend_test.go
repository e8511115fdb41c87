package serve

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// distinct is the number of distinct values of f over requests [lo, hi).
func distinct(e *run, lo, hi int, f func(q *request) float64) int {
	seen := map[float64]bool{}
	for i := lo; i < hi; i++ {
		seen[f(&e.reqs[i])] = true
	}
	return len(seen)
}

func firstToken(q *request) float64 { return q.send + q.ttft }
func finish(q *request) float64     { return q.send + q.e2e }

// TestFrontEndDesynchronises: in a closed loop of fixed-length requests the
// engine alone runs lockstep waves (all C prefilled in one step, finished
// in one step, sent back together). With the API server handing requests
// over one at a time the first wave's prefill is split over several steps;
// under vLLM, which runs the early requests' decodes beside the later
// prefills, the requests then finish at different steps. SGLang runs a
// prefill batch without the decodes (mixed chunks off), so the early
// request loses its lead and the wave finishes together again.
func TestFrontEndDesynchronises(t *testing.T) {
	cases := []struct {
		e            Engine
		wantFinishes int // distinct finish times of 64 requests with the front end
	}{
		{VLLM, 16}, // each wave: the first request, then the other 7, one step apart
		{SGLang, 8},
	}
	for _, tc := range cases {
		t.Run(tc.e.String(), func(t *testing.T) {
			cfg := point(tc.e, 8, 64, 1024, 64)
			off, _ := simRun(t, cfg, realistic)
			assert.Equal(t, 1, distinct(off, 0, 8, firstToken), "without a front end the first wave prefills in one step")
			assert.Equal(t, 8, distinct(off, 0, 64, finish), "without a front end: 8 waves of 8")
			cfg.FrontEnd = FrontEnd{PerInputToken: TokenizeTime}
			on, _ := simRun(t, cfg, realistic)
			assert.Equal(t, 2, distinct(on, 0, 8, firstToken), "the first request alone, then the 7 tokenised during its prefill")
			assert.Equal(t, tc.wantFinishes, distinct(on, 0, 64, finish))
			assert.Greater(t, on.reqs[0].ttft, 1024*float64(TokenizeTime), "the first request waits for its own tokenisation")
		})
	}
}

// TestFrontEndSerialises: requests sent together are tokenised one after
// the other, so the k-th is handed to the engine at k x (PerRequest + in x
// PerInputToken), and the engine sees it at its first step boundary after.
func TestFrontEndSerialises(t *testing.T) {
	cases := []struct {
		name     string
		fe       FrontEnd
		in       int
		wantSend []float64 // handover times of requests 0..3
	}{
		{"per token", FrontEnd{PerInputToken: 1e-3}, 100, []float64{0.1, 0.2, 0.3, 0.4}},
		{"per request", FrontEnd{PerRequest: 0.05}, 100, []float64{0.05, 0.1, 0.15, 0.2}},
		{"both", FrontEnd{PerRequest: 0.05, PerInputToken: 1e-3}, 200, []float64{0.25, 0.5, 0.75, 1.0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A long, cheap decode keeps the engine stepping every 1 ms.
			cfg := point(VLLM, 4, 4, tc.in, 2000)
			cfg.FrontEnd = tc.fe
			c := linear{Fixed: 1e-3}
			e, _ := simRun(t, cfg, c)
			for i, want := range tc.wantSend {
				// Handed over at want, prefilled in the step that starts at
				// the next 1 ms boundary, first token at its end.
				got := e.reqs[i].ttft
				assert.GreaterOrEqual(t, got, want+1e-3-1e-9, "request %d", i)
				assert.LessOrEqual(t, got, want+2e-3+1e-9, "request %d", i)
			}
		})
	}
}

// TestFrontEndOpenLoop: requests far apart never queue at the API server:
// each TTFT is its own tokenisation plus its prefill step.
func TestFrontEndOpenLoop(t *testing.T) {
	cfg := point(VLLM, 0, 3, 2000, 4)
	cfg.Workload.Trace = []TraceRequest{{Arrival: 0, InputTokens: 2000, OutputTokens: 4}, {Arrival: 100, InputTokens: 2000, OutputTokens: 4}, {Arrival: 200, InputTokens: 2000, OutputTokens: 4}}
	cfg.FrontEnd = FrontEnd{PerInputToken: TokenizeTime}
	e, _ := simRun(t, cfg, realistic)
	pre := realistic.Fixed + 2000*realistic.PerPrefill
	for i := range e.reqs {
		within(t, e.reqs[i].ttft, 2000*float64(TokenizeTime)+pre, 1e-9, "TTFT")
	}
	require.False(t, math.IsNaN(e.reqs[2].ttft))
}
