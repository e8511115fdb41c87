package calib

import (
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCutRowsSameDecode: a file decoded with its rows cut out and put back
// (decodeWire) is the file the TOML decoder reads from the whole text, for
// every embedded calibration (where every rows string must be cut: that is
// the speed-up) and for rows strings the cut must leave to the decoder.
func TestCutRowsSameDecode(t *testing.T) {
	const head = "schema = 1\n[provenance]\ngpu = \"h200-sxm\"\n[[table]]\nname = \"a\"\nop = \"moe\"\n"
	tests := []struct {
		name string
		text string
		cut  bool // the rows string is cut
	}{
		{"plain", head + "rows = \"\"\"\n1,2\n# note\n\n3,4\n\"\"\"\n", true},
		{"no final newline", head + "rows = \"\"\"\n1,2\n\"\"\"", true},
		{"empty", head + "rows = \"\"\"\n\"\"\"\n", true},
		{"escape", head + "rows = \"\"\"\n1,\\u0032\n\"\"\"\n", false},
		{"line continuation", head + "rows = \"\"\"\n1,2\\\n  ,3\n\"\"\"\n", false},
		{"crlf", head + "rows = \"\"\"\r\n1,2\r\n\"\"\"\r\n", false},
		{"quote", head + "rows = \"\"\"\n1,\"2\n\"\"\"\n", false},
		{"literal", head + "rows = '''\n1,2\n'''\n", false},
		{"inline", head + "rows = \"1,2\"\n", false},
		{"closing after values", head + "rows = \"\"\"\n1,2\"\"\"\n", false},
		{"in provenance", head + "[table.provenance]\nrows = \"\"\"\n1,2\n\"\"\"\n", false},
		{"inside another string", head + "columns = \"\"\"\nrows = \"\"\"\n1,2\n\"\"\"\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cutRows(tt.text)
			assert.Equal(t, strings.Count(tt.text, "\n"), strings.Count(string(c.text), "\n"), "lines kept")
			assert.Equal(t, tt.cut, len(c.ok) > 0 && c.ok[0], "cut")
			sameDecode(t, []byte(tt.text))
		})
	}
	for _, gpu := range EmbeddedNames() {
		data, err := embeddedFile(gpu)
		require.NoError(t, err)
		c := cutRows(string(data))
		require.NotEmpty(t, c.ok, gpu)
		for i, ok := range c.ok {
			assert.True(t, ok, "%s: table %d: rows not cut", gpu, i+1)
		}
		sameDecode(t, data)
	}
	calibgpu, err := fs.Glob(embedded, "embedded/calibgpu/*.toml")
	require.NoError(t, err)
	for _, p := range calibgpu {
		data, err := embedded.ReadFile(p)
		require.NoError(t, err)
		sameDecode(t, data)
	}
}

// sameDecode checks decodeWire against the decoder on the whole text:
// same document, same undecoded keys, same error.
func sameDecode(t *testing.T, data []byte) {
	t.Helper()
	var got, want wireFile
	gmd, gerr := decodeWire(string(data), &got)
	wmd, werr := toml.Decode(string(data), &want)
	if werr != nil {
		require.Error(t, gerr)
		assert.Equal(t, werr.Error(), gerr.Error())
		return
	}
	require.NoError(t, gerr)
	assert.Equal(t, want, got)
	assert.Equal(t, wmd.Undecoded(), gmd.Undecoded())
}

// TestEmbeddedDeferred: every embedded calibration builds eagerly (so the
// deferred builds of Embedded cannot fail), and the deferred file is the
// eager one: same tables, provenance, rows, and, once built, the same
// leave-one-out errors and series.
func TestEmbeddedDeferred(t *testing.T) {
	for _, gpu := range EmbeddedNames() {
		t.Run(gpu, func(t *testing.T) {
			data, err := embeddedFile(gpu)
			require.NoError(t, err)
			eager, err := embeddedParse(gpu, data, false)
			require.NoError(t, err)
			lazy, err := embeddedParse(gpu, data, true)
			require.NoError(t, err)
			require.Equal(t, len(eager.Tables), len(lazy.Tables))
			assert.Equal(t, eager.Provenance, lazy.Provenance)
			for i := range eager.Tables {
				e, l := &eager.Tables[i], &lazy.Tables[i]
				assert.Equal(t, e.Name, l.Name)
				assert.Equal(t, e.Keys, l.Keys, e.Name)
				assert.Equal(t, e.Columns, l.Columns, e.Name)
				assert.Equal(t, e.Rows, l.Rows, e.Name)
				assert.Equal(t, eager.Effective(e), lazy.Effective(l), e.Name)
				ep, en := e.loo.LOOError()
				lp, ln := l.loo.LOOError()
				assert.Equal(t, [2]float64{ep, float64(en)}, [2]float64{lp, float64(ln)}, "%s: LOO error", e.Name)
				if em, ok := e.loo.(interface {
					Series() ([][2]int, []float64, []float64, []int)
				}); ok {
					a1, a2, a3, a4 := em.Series()
					b1, b2, b3, b4 := l.loo.(interface {
						Series() ([][2]int, []float64, []float64, []int)
					}).Series()
					assert.Equal(t, []any{a1, a2, a3, a4}, []any{b1, b2, b3, b4}, "%s: series", e.Name)
				}
			}
		})
	}
}

// TestParseDigits: the digits fast path of parseRows reads what
// strconv.ParseFloat reads, and leaves every other field to it.
func TestParseDigits(t *testing.T) {
	for _, s := range []string{"0", "7", "007", "512", "1048576", "999999999999999", "536870912"} {
		got, ok := parseDigits(s)
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		assert.True(t, ok, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "1.5", "-3", "+3", "1e3", "1000000000000000", "0x10", "1_000", " 1", "inf"} {
		_, ok := parseDigits(s)
		assert.False(t, ok, "%q", s)
	}
}
