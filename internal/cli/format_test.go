package cli

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTableRender(t *testing.T) {
	tb := table{Columns: []column{{Name: "name"}, {Name: "step_ms", Text: "%.2f"}, {Name: "n"}, {Name: "fits"}}}
	tb.add("kimi", 7.123456, 8, true)
	tb.add("a,b", math.NaN(), 16, false)
	tb.add("q", nil, 1, true)
	tests := []struct{ format, want string }{
		{formatText, "" +
			"name  step_ms   n  fits\n" +
			"kimi     7.12   8  true\n" +
			"a,b       NaN  16  false\n" +
			"q           -   1  true\n"},
		{formatCSV, "name,step_ms,n,fits\nkimi,7.123456,8,true\n\"a,b\",NaN,16,false\nq,,1,true\n"},
		{formatJSON, "[\n" +
			`  {"name": "kimi", "step_ms": 7.123456, "n": 8, "fits": true},` + "\n" +
			`  {"name": "a,b", "step_ms": null, "n": 16, "fits": false},` + "\n" +
			`  {"name": "q", "step_ms": null, "n": 1, "fits": true}` + "\n]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, tb.render(&b, tt.format))
			assert.Equal(t, tt.want, b.String())
		})
	}
}

func TestCheckFormat(t *testing.T) {
	for _, f := range []string{"text", "json", "csv"} {
		assert.NoError(t, checkFormat(f))
	}
	err := checkFormat("yaml")
	require.Error(t, err)
	var ie *InputError
	assert.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), `"yaml"`)
}
