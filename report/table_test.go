package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTableRender(t *testing.T) {
	tb := Table{Columns: []Column{{Name: "name"}, {Name: "step_ms", Text: "%.2f"}, {Name: "n"}, {Name: "fits"}}}
	tb.Add("kimi", 7.123456, 8, true)
	tb.Add("a,b", math.NaN(), 16, false)
	tb.Add("q", nil, 1, true)
	tests := []struct {
		format Format
		want   string
	}{
		{Text, "" +
			"name  step_ms   n  fits\n" +
			"kimi     7.12   8  true\n" +
			"a,b       NaN  16  false\n" +
			"q           -   1  true\n"},
		{CSV, "name,step_ms,n,fits\nkimi,7.123456,8,true\n\"a,b\",NaN,16,false\nq,,1,true\n"},
		{JSON, "[\n" +
			`  {"name": "kimi", "step_ms": 7.123456, "n": 8, "fits": true},` + "\n" +
			`  {"name": "a,b", "step_ms": null, "n": 16, "fits": false},` + "\n" +
			`  {"name": "q", "step_ms": null, "n": 1, "fits": true}` + "\n]\n"},
		{Markdown, "" +
			"| name | step_ms | n | fits |\n" +
			"| :--- | ---: | ---: | :--- |\n" +
			"| kimi | 7.12 | 8 | true |\n" +
			"| a,b | NaN | 16 | false |\n" +
			"| q | - | 1 | true |\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, tb.Render(&b, tt.format))
			assert.Equal(t, tt.want, b.String())
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range []string{"text", "json", "csv"} {
		got, err := ParseFormat(f)
		require.NoError(t, err)
		assert.Equal(t, Format(f), got)
	}
	_, err := ParseFormat("yaml")
	assert.ErrorContains(t, err, `"yaml"`)
}
