package calib

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
)

func TestLegacyMLA(t *testing.T) {
	tests := []struct {
		name                         string
		gpu, engine, version, origin string
		want                         bool
	}{
		{"gb200 perfdb vllm rows", "gb200", "vllm", "0.24.0", "perfdb vllm 0.24.0 mla rows", true},
		{"b300 perfdb vllm rows", "b300-sxm", "vllm", "0.24.0", "perfdb vllm 0.24.0 mla rows", true},
		{"b200 0.24.0: re-collected", "b200-sxm", "vllm", "0.24.0", "perfdb vllm 0.24.0 mla rows", false},
		{"b200 older release: legacy", "b200-sxm", "vllm", "0.22.0", "perfdb vllm 0.22.0 mla rows", true},
		{"moecast's own kernels", "gb200", "", "", "calib gpu mla rows", false},
		{"an engine trace, not the perf database", "gb200", "vllm", "0.24.0", "vllm 0.24.0 mla rows", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, LegacyMLA(tc.gpu, tc.engine, tc.version, tc.origin))
		})
	}
}

// The embedded calibrations mark their MLA module tables by collector:
// gb200's are legacy, b200-sxm's (re-collected) are not.
func TestEmbeddedLegacyMLA(t *testing.T) {
	for _, tc := range []struct {
		gpu  string
		want bool
	}{{"gb200", true}, {"gb300", true}, {"b300-sxm", true}, {"b200-sxm", false}} {
		t.Run(tc.gpu, func(t *testing.T) {
			f, err := Embedded(tc.gpu)
			require.NoError(t, err)
			kt, ok := f.KernelTables().(*kernels.Tables)
			require.True(t, ok)
			n := 0
			for _, m := range kt.MLAs {
				if strings.Contains(m.Name(), "mla.vllm-") {
					n++
					assert.Equal(t, tc.want, m.LegacyCollector, m.Name())
				}
			}
			assert.Positive(t, n, "vLLM MLA module tables")
		})
	}
}
