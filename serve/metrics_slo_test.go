package serve

import (
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/model"
)

func TestInteractivityAndGoodput(t *testing.T) {
	cfg := point(VLLM, 8, 200, 1000, 100)
	cfg.Workload.RangeRatio = 0.5
	e, err := simulate(cfg, realistic)
	require.NoError(t, err)
	r := e.result()
	// by hand: P90 of e2e/out, numpy-linear
	per := make([]float64, len(e.reqs))
	for i, q := range e.reqs {
		per[i] = q.e2e / float64(q.out)
	}
	st := statsOf(per)
	assert.InDelta(t, 1/float64(st.P90), r.Interactivity, 1e-9)
	assert.Zero(t, r.Goodput, "no SLOs, no goodput")

	for _, tc := range []struct {
		name string
		slo  SLO
		good func(q request) bool
	}{
		{"ttft", SLO{TTFT: r.TTFT.Median}, func(q request) bool { return q.ttft <= float64(r.TTFT.Median) }},
		{"tpot", SLO{TPOT: r.TPOT.Median}, func(q request) bool {
			return (q.e2e-q.ttft)/float64(q.gen-1) <= float64(r.TPOT.Median)
		}},
		{"all met", SLO{TTFT: 1e3, TPOT: 1e3, E2EL: 1e3}, func(request) bool { return true }},
		{"none met", SLO{E2EL: unit.Seconds(1e-9)}, func(request) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.SLO = tc.slo
			e, err := simulate(c, realistic)
			require.NoError(t, err)
			got := e.result()
			want := 0
			for _, q := range e.reqs {
				if tc.good(q) {
					want++
				}
			}
			assert.Equal(t, want, got.GoodRequests)
			assert.InDelta(t, float64(want)/float64(got.Duration), got.Goodput, 1e-9)
		})
	}
	cfg.SLO.TTFT = -1
	_, err = Run(cfg, realistic)
	var fe *model.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "SLO.TTFT", fe.Field)
}
