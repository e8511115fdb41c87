package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLengthRangeStyles: each style draws every length inside its own
// range and reaches both ends of it.
func TestLengthRangeStyles(t *testing.T) {
	cases := []struct {
		name           string
		style          RangeStyle
		r              float64
		in, out        int
		wantIn, wantOu [2]int
	}{
		{"symmetric", RangeSymmetric, 0.5, 1000, 3, [2]int{500, 1500}, [2]int{1, 5}},
		{"symmetric fixed", RangeSymmetric, 0, 1000, 3, [2]int{1000, 1000}, [2]int{3, 3}},
		// InferenceX: [int(0.8 L), L]; int(2.4) = 2.
		{"below 0.8", RangeBelow, 0.8, 1000, 3, [2]int{800, 1000}, [2]int{2, 3}},
		{"below 0.8 odd", RangeBelow, 0.8, 1023, 7, [2]int{818, 1023}, [2]int{5, 7}},
		{"below fixed", RangeBelow, 1, 1000, 3, [2]int{1000, 1000}, [2]int{3, 3}},
		// SGLang's default ratio 0: [max(0, 1), L].
		{"below 0", RangeBelow, 0, 1000, 3, [2]int{1, 1000}, [2]int{1, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := Workload{Requests: 20000, InputTokens: tc.in, OutputTokens: tc.out, RangeRatio: tc.r, RangeStyle: tc.style}
			reqs := make([]Request, w.Requests)
			drawLengths(w, newRand(1), reqs)
			in, out := [2]int{1 << 30, 0}, [2]int{1 << 30, 0}
			for _, q := range reqs {
				in = [2]int{min(in[0], q.In), max(in[1], q.In)}
				out = [2]int{min(out[0], q.Out), max(out[1], q.Out)}
			}
			assert.Equal(t, tc.wantIn, in, "input range")
			assert.Equal(t, tc.wantOu, out, "output range")
		})
	}
}

func TestRangeStyleNames(t *testing.T) {
	for i, n := range RangeStyles {
		s, err := ParseRangeStyle(n)
		require.NoError(t, err)
		assert.Equal(t, RangeStyle(i), s)
		assert.Equal(t, n, s.String())
	}
	_, err := ParseRangeStyle("above")
	assert.ErrorContains(t, err, `"above"`)
}

// TestBelowRangeDesynchronises: a closed loop of fixed-length requests
// runs in lockstep waves (all C prefilled in one step, finishing in one
// step, sent back together), so TTFT at C = 8 is about twice C = 4's.
// InferenceX's client draws every output length on [0.8 L, L]: the
// requests of a wave finish at different steps, their successors arrive
// one or a few at a time, and each prefill step carries a few requests
// beside the running decodes.
func TestBelowRangeDesynchronises(t *testing.T) {
	for _, e := range []Engine{VLLM, SGLang} {
		t.Run(e.String(), func(t *testing.T) {
			ttft := map[RangeStyle][2]float64{}
			for _, style := range []RangeStyle{RangeSymmetric, RangeBelow} {
				var got [2]float64
				for k, c := range []int{4, 8} {
					cfg := point(e, c, 10*c, 1024, 1024)
					if style == RangeBelow {
						cfg.Workload.RangeStyle, cfg.Workload.RangeRatio = RangeBelow, 0.8
					}
					run, res := simRun(t, cfg, realistic)
					got[k] = float64(res.TTFT.Mean)
					waves := distinct(run, 0, 10*c, firstToken)
					if style == RangeSymmetric {
						assert.Equal(t, 10, waves, "fixed lengths at C=%d: 10 waves of C prefilled together", c)
					} else {
						assert.Greater(t, waves, 30, "one-sided range at C=%d: first tokens spread over many steps", c)
					}
				}
				ttft[style] = got
			}
			fixed, below := ttft[RangeSymmetric], ttft[RangeBelow]
			assert.Greater(t, fixed[1]/fixed[0], 1.8, "fixed lengths: TTFT(C=8) ~ 2 x TTFT(C=4), got %v", fixed)
			assert.Less(t, below[1]/below[0], 1.4, "one-sided range: TTFT(C=8) / TTFT(C=4), got %v", below)
			assert.Less(t, below[1], fixed[1]/2, "one-sided range: TTFT at C=8 below half the lockstep one")
		})
	}
}
