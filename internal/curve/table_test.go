package curve

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/internal/cost"
)

// TestTableEstimate: the range a query left is a typed field of the
// Source (axis and limit) and its words, whatever else the note says.
func TestTableEstimate(t *testing.T) {
	var tb Table
	tb.Init("f.toml#t", []Axis{{Name: "batch"}, {Name: "kv_len", Extrapolated: true, How: "last segment extended"}},
		[]string{"note one", "note two"}, []float64{0.1, 0.2})
	for _, tc := range []struct {
		name      string
		flags     Flags
		rng       [2]cost.AxisRange
		rangeNote string
		note      string
	}{
		{"inside", 0, [2]cost.AxisRange{}, "", ""},
		{"own note", FirstNote << 1, [2]cost.AxisRange{}, "", "note two"},
		{"below a", FlagsOf(Below, Inside) | FirstNote, [2]cost.AxisRange{{Axis: "batch", Limit: cost.ClampedBelow}},
			"clamped: batch below the measured range", "clamped: batch below the measured range; note one"},
		{"above both", FlagsOf(Above, Above),
			[2]cost.AxisRange{{Axis: "batch", Limit: cost.ClampedAbove}, {Axis: "kv_len", Limit: cost.ExtrapolatedAbove}},
			"clamped: batch above the measured range; extrapolated: kv_len above the measured range (last segment extended)",
			"clamped: batch above the measured range; extrapolated: kv_len above the measured range (last segment extended)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tb.Estimate(2e-6, 3, 4, tc.flags)
			s := e.Source
			assert.Equal(t, cost.Table, s.Kind)
			assert.Equal(t, "f.toml#t", s.Table)
			assert.Equal(t, [2]int{3, 4}, [2]int{s.RowLo, s.RowHi})
			if tc.rangeNote == "" {
				assert.Nil(t, s.Range)
			} else if assert.NotNil(t, s.Range) {
				assert.Equal(t, tc.rng, s.Range.Axes)
				assert.Equal(t, tc.rangeNote, s.Range.Note)
			}
			assert.Equal(t, tc.note, s.Note)
			assert.Equal(t, tc.rangeNote != "", s.OutOfRange())
			assert.InDelta(t, 2e-6*(1-P90([]float64{0.1, 0.2})), float64(e.Lo), 1e-15, "interval from the p90 of the LOO errors")
		})
	}
	assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() { _ = tb.Estimate(1, 1, 1, AboveA|FirstNote) }))
}
