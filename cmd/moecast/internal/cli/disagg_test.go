package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const disaggTOML = `name = "DeepSeek-V3 1P1D"
[model]
preset = "deepseek-v3"
[hardware]
gpu = "h200-sxm"
fabric = "nvlink4"
calibration = "embedded"
[disagg]
transfer = "ib-400"
[disagg.prefill]
tp = 8
[disagg.decode]
tp = 8
ep = 8
[workload]
request_rate = [1]
requests = 60
input_tokens = 2048
output_tokens = 128
`

// simulate on a [disagg] scenario: the JSON's disagg object, the text's
// disagg lines; prefix flags report the hit rate.
func TestSimulateDisagg(t *testing.T) {
	file := filepath.Join(t.TempDir(), "d.toml")
	require.NoError(t, os.WriteFile(file, []byte(disaggTOML), 0o644))
	for _, tc := range []struct {
		name   string
		args   []string
		prefix bool
	}{
		{"disagg", nil, false},
		{"disagg system prompt", []string{"--system-prompt-tokens", "1024"}, true},
		{"disagg system prompt, cache off", []string{"--system-prompt-tokens", "1024", "--no-prefix-cache"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"simulate", file, "--format", "json"}, tc.args...)...)
			require.Equal(t, ExitOK, code, stderr)
			var got struct {
				Points []struct {
					MeanTTFT      *float64 `json:"mean_ttft_ms"`
					PrefixHitRate *float64 `json:"prefix_hit_rate"`
					Disagg        *struct {
						PrefillGPUs int      `json:"prefill_gpus"`
						DecodeGPUs  int      `json:"decode_gpus"`
						Transfer    *float64 `json:"kv_transfer_ms_mean"`
						PrefillUtil *float64 `json:"prefill_utilisation"`
						DecodeUtil  *float64 `json:"decode_utilisation"`
					} `json:"disagg"`
				} `json:"points"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &got))
			require.Len(t, got.Points, 1)
			p := got.Points[0]
			require.NotNil(t, p.Disagg)
			assert.Equal(t, 8, p.Disagg.PrefillGPUs)
			assert.Equal(t, 8, p.Disagg.DecodeGPUs)
			require.NotNil(t, p.Disagg.Transfer)
			assert.Positive(t, *p.Disagg.Transfer)
			require.NotNil(t, p.Disagg.PrefillUtil)
			assert.Greater(t, *p.Disagg.PrefillUtil, 0.0)
			assert.LessOrEqual(t, *p.Disagg.DecodeUtil, 1.0)
			if tc.prefix {
				require.NotNil(t, p.PrefixHitRate)
				assert.Greater(t, *p.PrefixHitRate, 0.4)
			} else {
				assert.Nil(t, p.PrefixHitRate)
			}
		})
	}
	code, stdout, stderr := runCLI(t, "simulate", file)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "disagg    prefill 1x (TP8 EP1 DP1, 8 GPUs), decode 1x (TP8 EP8 DP1, 8 GPUs); KV cache over ib-400")
	assert.Contains(t, stdout, "disagg at 1: prefill 8 GPUs")

	code, _, stderr = runCLI(t, "simulate", file, "--system-prompt-tokens", "5", "--prefix-hit-rate", "0.5")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stderr, "exclude each other")
}
