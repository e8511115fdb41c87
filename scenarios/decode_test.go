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
		{"type", "[parallel]\n\ntp = \"8\"\n", `f.toml:3: parallel.tp: incompatible types`},
		{"syntax", "[parallel]\ntp = = 8\n", `f.toml:2: expected value`},
		{"array type", "[workload]\nbatch = [1, \"2\"]\n", `f.toml:2: workload.batch`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode("f.toml", []byte(tt.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			t.Log(err)
		})
	}
}
