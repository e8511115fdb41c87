package validate

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormatsRegistered(t *testing.T) {
	names := FormatNames()
	for _, want := range []string{"sglang", "vllm"} {
		assert.Contains(t, names, want)
	}
	// SGLang's keys are a superset of the vLLM detection: it goes first.
	assert.Less(t, indexOf(names, "sglang"), indexOf(names, "vllm"))
	for _, f := range Formats() {
		assert.NotEmpty(t, f.Looks, "%s: Looks is what an unknown file's error lists", f.Name)
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func TestRegisterFormatRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Format
	}{
		{"duplicate", Format{Name: "vllm", Detect: func(*Sniff) bool { return false }, Read: func(string, []byte) ([]BenchResult, error) { return nil, nil }}},
		{"no parser", Format{Name: "nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Panics(t, func() { RegisterFormat(tc.f) })
		})
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		has      string
		want     bool
		array    bool
	}{
		{"object", `{"a": 1}`, "a", true, false},
		{"null is absent", `{"a": null}`, "a", false, false},
		{"jsonl first line", "{\"a\": 1}\n{\"b\": 2}\n", "a", true, false},
		{"array first element", `[{"a": 1}, {"b": 2}]`, "a", true, true},
		{"csv", "a,b\n1,2\n", "a", false, false},
		{"bom and space", "\xef\xbb\xbf \n{\"a\": Infinity}", "a", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSniff("f", []byte(tc.in))
			assert.Equal(t, tc.want, s.Has(tc.has))
			assert.Equal(t, tc.array, s.IsArray())
		})
	}
}

func TestReadBenchAsAndFS(t *testing.T) {
	_, err := ReadBenchAs("nope", "x.json", []byte("{}"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `x.json: format: unknown result format "nope"; want one of `)

	fsys := fstest.MapFS{
		"runs/a.json": {Data: []byte(`{"mean_ttft_ms": 1, "completed": 2, "total_input_tokens": 20, "total_output_tokens": 20}`)},
		"runs/b":      {Data: []byte("x")},
	}
	rs, err := ReadBenchFS(fsys, "runs/a.json")
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, "runs/a.json", rs[0].File)
	assert.InDelta(t, 10, rs[0].InputTokens, 1e-9)

	_, err = ReadBenchFS(fsys, "runs")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "runs: "), err.Error())
	assert.Contains(t, err.Error(), "directory")
	_, err = ReadBenchFS(fsys, "missing.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.json: ")
}
