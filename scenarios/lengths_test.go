package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/serve"
)

// loadWith writes a scenario (minimal plus extra) and the files beside it
// and loads it.
func loadWith(t *testing.T, extra string, files map[string]string) (*Scenario, error) {
	t.Helper()
	dir := t.TempDir()
	for n, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644))
	}
	p := filepath.Join(dir, "s.toml")
	require.NoError(t, os.WriteFile(p, []byte(minimal+extra), 0o644))
	return Load(p)
}

// TestWorkloadLengths: workload.lengths reads (input, output) pairs from a
// CSV or JSONL file into every point's serve.Workload; the means stand in
// for input_tokens and output_tokens in reports.
func TestWorkloadLengths(t *testing.T) {
	want := []serve.LengthPair{{In: 100, Out: 10}, {In: 300, Out: 30}}
	for name, data := range map[string]string{
		"l.csv":   "id,isl,osl\na,100,10\nb,300,30\n",
		"l.jsonl": "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10}\n\n{\"input_length\": 300, \"output_length\": 30, \"hash_ids\": [1]}\n",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := loadWith(t, "[workload]\nlengths = \""+name+"\"\nturns = 3\nthink_time = \"2s\"\n", map[string]string{name: data})
			require.NoError(t, err)
			assert.Equal(t, want, s.Serving.Lengths)
			assert.Equal(t, 200, s.Serving.InputTokens)
			assert.Equal(t, 20, s.Serving.OutputTokens)
			c := s.serveBase(s.Serving.Points()[0])
			assert.Equal(t, want, c.Workload.Lengths)
			assert.Equal(t, 3, c.Workload.Turns)
			assert.InDelta(t, 2.0, float64(c.Workload.ThinkTime), 0)
		})
	}
}

// TestWorkloadLengthsErrors: each bad input names the file and line (the
// lengths file's own line for its content).
func TestWorkloadLengthsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		files       map[string]string
		want        string
	}{
		{"no header", "[workload]\nlengths = \"l.csv\"\n", map[string]string{"l.csv": "a,b\n1,2\n"}, "l.csv:1: the header names no input and output length column"},
		{"bad length", "[workload]\nlengths = \"l.csv\"\n", map[string]string{"l.csv": "isl,osl\n10,5\n0,5\n"}, "l.csv:3: input 0, output 5 tokens"},
		{"not a number", "[workload]\nlengths = \"l.csv\"\n", map[string]string{"l.csv": "isl,osl\nx,5\n"}, "l.csv:2: lengths \"x\", \"5\" are not integers"},
		{"jsonl missing", "[workload]\nlengths = \"l.jsonl\"\n", map[string]string{"l.jsonl": "{\"input_length\": 5}\n"}, "l.jsonl:1: no input and output lengths"},
		{"empty", "[workload]\nlengths = \"l.csv\"\n", map[string]string{"l.csv": "isl,osl\n"}, "l.csv: no length pairs"},
		{"missing file", "[workload]\nlengths = \"nope.csv\"\n", nil, "s.toml:13: workload.lengths: "},
		{"with input_tokens", "[workload]\ninput_tokens = 5\nlengths = \"l.csv\"\n", map[string]string{"l.csv": "isl,osl\n1,1\n"}, "s.toml:14: workload.lengths: the lengths file sets the lengths"},
		{"turns zero", "[workload]\nturns = 0\n", nil, "s.toml:13: workload.turns: 0 must be in [1, 1024]"},
		{"think without turns", "[workload]\nthink_time = \"1s\"\n", nil, "s.toml:13: workload.think_time: "},
		{"think unit", "[workload]\nturns = 2\nthink_time = \"1\"\n", nil, "s.toml:14: workload.think_time: "},
		{"turns too long", "[workload]\ninput_tokens = 100000\nturns = 200\n", nil, "s.toml:14: workload.turns: 200 turns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadWith(t, tc.extra, tc.files)
			require.Error(t, err)
			var pe *Error
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
