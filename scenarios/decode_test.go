package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyLines(t *testing.T) {
	src := `name = "x"

[model]
preset = "kimi-k2.5"
[parallel]
tp = 8
  ep = 8
[hardware.custom_gpu]
memory = "96GB"
[workload]
batch = [
  1,
  2,
]
context = 2048
`
	got := keyLines([]byte(src))
	want := map[string]int{
		"name": 1, "model": 3, "model.preset": 4, "parallel": 5, "parallel.tp": 6,
		"parallel.ep": 7, "hardware.custom_gpu.memory": 9, "workload.batch": 11, "workload.context": 15,
	}
	for k, l := range want {
		assert.Equal(t, l, got[k], "line of %s (all: %v)", k, got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown key", "name = \"x\"\n[parallel]\ntp = 8\ntpp = 2\n", `f.toml:4: unknown key "parallel.tpp"`},
		{"unknown table", "[paralel]\ntp = 8\n", `f.toml:1: unknown key "paralel"`},
		{"type", "[parallel]\n\ntp = \"8\"\n", `f.toml:3: parallel.tp: is a string, want an integer`},
		{"syntax", "[parallel]\ntp = = 8\n", `f.toml:2: expected value`},
		{"array type", "[workload]\nbatch = [1, \"2\"]\n", `f.toml:2: workload.batch`},
		// No Go in the words (destination has type slice, rawGPU, int64).
		{"scalar for array", "[workload]\nbatch = 8\n", `f.toml:2: workload.batch: is an integer, want an array`},
		{"float for integer", "[workload]\nbatch = [1.5]\n", `f.toml:2: workload.batch: is a float, want an integer`},
		{"number for unit string", "[hardware.custom_gpu]\nbandwidth = 3\n", `f.toml:2: hardware.custom_gpu.bandwidth: is an integer, want a string (a value with a unit is a quoted string`},
		{"integer for table", "[hardware]\ncustom_gpu = 3\n", `f.toml:2: hardware.custom_gpu: is an integer, want a table`},
		{"string for boolean", "[runtime]\ncuda_graphs = \"yes\"\n", `f.toml:2: runtime.cuda_graphs: is a string, want a boolean`},
		{"key twice", "name = \"x\"\nname = \"y\"\n", `f.toml:2: key "name" is defined twice`},
		{"integer overflow", "[workload]\ncontext = 99999999999999999999\n", `f.toml:2: workload.context: 99999999999999999999 is too large for an integer`},
		// The key of an out-of-range value is named, whichever key came
		// before it.
		{"int64 overflow after a key", "[disagg.prefill]\nworkers = 1\nmax_num_seqs = 9223372036854775808\n", `f.toml:3: disagg.prefill.max_num_seqs: 9223372036854775808 is too large for an integer`},
		{"int64 overflow first in table", "[runtime]\nmax_num_seqs = -9223372036854775809\nengine = \"vllm\"\n", `f.toml:2: runtime.max_num_seqs: -9223372036854775809 is too large for an integer`},
		{"integer beyond a float's exact range", "[disagg.decode]\ntp = 1\ngpu_memory_utilization = 9223372036854775807\n", `f.toml:3: disagg.decode.gpu_memory_utilization: 9223372036854775807 is too large an integer to read exactly as a number with a fraction`},
		{"float overflow", "[runtime]\ngpu_memory_utilization = 1e999\n", `f.toml:2: runtime.gpu_memory_utilization: 1e999 is too large for a number`},
		// Session 9: a file cut short read "but got '\x00' instead", a NUL
		// byte the file does not have (the parser's end-of-input rune).
		{"cut in a table name", "name = \"x\"\n[mod", `f.toml:2: expected '.' or ']' to end table name, but got the end of the file instead`},
		{"cut in a string", "name = \"x", `f.toml:1: unexpected EOF; expected '"'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode("f.toml", []byte(tt.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, gos := range []string{"destination has type", "int64", "float64", "scenarios.", "Key '", `\x00`} {
				assert.NotContains(t, err.Error(), gos)
			}
			t.Log(err)
		})
	}
}
