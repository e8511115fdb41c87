package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/serve"
)

// TestLayoutEngines: each enumerated layout carries the engines that run it
// (serve's engine table): vLLM without data-parallel attention, SGLang
// with DP = 1; Pick keeps the preferred engine where it runs.
func TestLayoutEngines(t *testing.T) {
	require.LessOrEqual(t, len(serve.Engines()), 8, "plan.Engine is a uint8 set")
	got := map[string]string{}
	for _, x := range layouts(4) {
		got[fmt.Sprintf("tp%d dp%d ep%d dpa=%v", x.l.TP, x.l.DP, x.l.EP, x.l.DPAttention)] = x.e.String()
	}
	assert.Equal(t, map[string]string{
		"tp1 dp4 ep1 dpa=false": "vllm",
		"tp1 dp4 ep4 dpa=false": "vllm",
		"tp2 dp2 ep1 dpa=false": "vllm",
		"tp2 dp2 ep4 dpa=false": "vllm",
		"tp4 dp1 ep1 dpa=false": "vllm+sglang",
		"tp4 dp1 ep4 dpa=false": "vllm+sglang",
		"tp4 dp1 ep1 dpa=true":  "sglang",
		"tp4 dp1 ep4 dpa=true":  "sglang",
	}, got)
	cases := []struct {
		name   string
		set    Engine
		prefer serve.Engine
		want   serve.Engine
	}{
		{"both, prefer sglang", 1<<serve.VLLM | 1<<serve.SGLang, serve.SGLang, serve.SGLang},
		{"vllm only", 1 << serve.VLLM, serve.SGLang, serve.VLLM},
		{"sglang only", 1 << serve.SGLang, serve.VLLM, serve.SGLang},
		{"empty", 0, serve.SGLang, serve.SGLang},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.set.Pick(tc.prefer), tc.name)
	}
}
