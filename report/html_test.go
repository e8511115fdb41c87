package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtures holds one chart of each kind, small enough to read.
func fixtures() []Chart {
	return []Chart{
		&LineChart{Title: "Decode step time", X: Axis{Label: "batch", Unit: "sequences", Log: true}, Y: Axis{Label: "step time", Unit: "ms"},
			Series: []Series{{Name: "step", X: []float64{1, 8, 64}, Y: []float64{15, 28, 79}, Lo: []float64{14, 25, 70}, Hi: []float64{17, 31, 87}}}},
		&StackedBars{Title: "Step time by category", X: Axis{Label: "batch"}, Labels: []string{"1", "8"}, Y: Axis{Label: "time", Unit: "ms"},
			Stacks: []Stack{{Name: "moe", Values: []float64{3, 13}}, {Name: "allreduce", Values: []float64{3.3, 5.5}}}},
		&Pareto{Title: "Pareto front", X: Axis{Label: "speed per user", Unit: "tokens/s", Log: true}, Y: Axis{Label: "output per GPU", Unit: "tokens/s", Log: true},
			Others: []ParetoPoint{{Name: "c", X: 10, Y: 50}}, Front: []ParetoPoint{{Name: "a", X: 12, Y: 300}, {Name: "b", X: 60, Y: 40}},
			Best: &ParetoPoint{Name: "a", X: 12, Y: 300}},
		&GroupedBars{Title: "Measured and predicted", X: Axis{Label: "category"}, Labels: []string{"moe", "allreduce"}, Y: Axis{Label: "time", Unit: "ms"},
			Bars: []Stack{{Name: "measured", Values: []float64{3, 6.8}}, {Name: "predicted", Values: []float64{2.5, 5.5}}}},
	}
}

// TestChartData: the table of a chart holds the numbers it plots, with
// the units in the column names.
func TestChartData(t *testing.T) {
	want := map[string]string{
		"line": "series,batch_sequences,step_time_ms,step_time_ms_lo,step_time_ms_hi\n" +
			"step,1,15,14,17\nstep,8,28,25,31\nstep,64,79,70,87\n",
		"stacked-bars": "batch,moe_ms,allreduce_ms\n1,3,3.3\n8,13,5.5\n",
		"grouped-bars": "category,measured_ms,predicted_ms\nmoe,3,2.5\nallreduce,6.8,5.5\n",
		"pareto":       "point,set,speed_per_user_tokens_per_s,output_per_gpu_tokens_per_s\na,best,12,300\na,front,12,300\nb,front,60,40\n",
	}
	for _, c := range fixtures() {
		var b bytes.Buffer
		require.NoError(t, c.Data().Render(&b, CSV))
		assert.Equal(t, want[c.Kind()], b.String(), c.Kind())
	}
}

var pathData = regexp.MustCompile(`<path d="M[^"]+"`)

// TestSVGRenders is the render smoke test of each chart kind: an SVG
// document with its axes' labels (units included), drawn paths and no
// NaN.
func TestSVGRenders(t *testing.T) {
	for _, c := range fixtures() {
		t.Run(c.Kind(), func(t *testing.T) {
			svg, err := SVG(c)
			require.NoError(t, err)
			s := string(svg)
			assert.True(t, strings.HasPrefix(s, "<svg "), "no XML prolog inline: %.40s", s)
			assert.True(t, strings.HasSuffix(strings.TrimSpace(s), "</svg>"))
			assert.Contains(t, s, `viewBox="0 0 `)
			assert.GreaterOrEqual(t, len(pathData.FindAllString(s, -1)), 5, "axes, ticks and data are drawn")
			assert.NotContains(t, s, "NaN")
			assert.NotContains(t, s, "Inf")
			for _, label := range map[string][]string{"line": {"batch (sequences)", "step time (ms)"},
				"stacked-bars": {"time (ms)", "moe", "allreduce"}, "pareto": {"speed per user (tokens/s)", "output per GPU (tokens/s)", "best"},
				"grouped-bars": {"time (ms)", "measured", "predicted"}}[c.Kind()] {
				assert.Contains(t, s, label)
			}
		})
	}
}

func TestSVGRefusesBadNumbers(t *testing.T) {
	for _, tt := range []struct {
		name  string
		chart Chart
		want  string
	}{
		{"nan", &LineChart{X: Axis{Label: "x"}, Y: Axis{Label: "y"}, Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1, math.NaN()}}}}, "is NaN"},
		{"inf", &StackedBars{X: Axis{Label: "b"}, Labels: []string{"1"}, Y: Axis{Label: "t", Unit: "ms"}, Stacks: []Stack{{Name: "a", Values: []float64{math.Inf(1)}}}}, "is +Inf"},
		{"log zero", &LineChart{X: Axis{Label: "x", Log: true}, Y: Axis{Label: "y"}, Series: []Series{{Name: "s", X: []float64{0, 2}, Y: []float64{1, 1}}}}, "on a log axis"},
		{"bar lengths", &GroupedBars{X: Axis{Label: "c"}, Labels: []string{"a", "b"}, Y: Axis{Label: "t", Unit: "ms"}, Bars: []Stack{{Name: "m", Values: []float64{1}}}}, "1 values for 2 groups"},
		{"lengths", &LineChart{X: Axis{Label: "x"}, Y: Axis{Label: "y"}, Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1, 1}, Lo: []float64{1}, Hi: []float64{1}}}}, "mismatched lengths"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SVG(tt.chart)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestPageSelfContained: one document with the header, the warnings on
// top, one inline SVG per chart with its table, and nothing fetched from
// anywhere (no src/href, no @import, no url(...)).
func TestPageSelfContained(t *testing.T) {
	p := &Page{Title: "moecast predict: <x>", Header: []Field{{Label: "scenario", Value: "a & b"}, {Label: "box", Value: "8x h200-sxm"}},
		Warnings: []string{"batch 128: does not fit"}}
	for _, c := range fixtures() {
		p.Sections = append(p.Sections, Section{Title: c.Kind(), Text: "about " + c.Kind(), Chart: c})
	}
	tb := &Table{Columns: []Column{{Name: "k"}, {Name: "v", Text: "%.1f"}}}
	tb.Add("x", 1.25)
	p.Sections = append(p.Sections, Section{Title: "table", Tables: []Titled{{Caption: "cap", Table: tb}}})
	var b bytes.Buffer
	require.NoError(t, p.Write(&b))
	s := b.String()
	assert.True(t, strings.HasPrefix(s, "<!DOCTYPE html>"))
	assert.Contains(t, s, "<title>moecast predict: &lt;x&gt;</title>", "text is escaped")
	assert.Contains(t, s, "<dd>a &amp; b</dd>")
	assert.Less(t, strings.Index(s, `id="warnings"`), strings.Index(s, "<section>"), "warnings come first")
	n := len(fixtures())
	assert.Equal(t, n, strings.Count(s, "<svg "))
	assert.Equal(t, n, strings.Count(s, `<figure class="chart"`))
	assert.Equal(t, n+1, strings.Count(s, "<table>"), "a table under each chart, and the section's")
	assert.Contains(t, s, `<td class="num">1.2</td>`)
	for _, bad := range []string{" src=", " href=", "@import", "url(", "<script", "<link"} {
		assert.NotContains(t, s, bad)
	}
}
