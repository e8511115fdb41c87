package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGPUsGolden(t *testing.T) {
	for _, f := range []string{"text", "json", "csv"} {
		code, out, errOut := runCLI(t, "gpus", "--format", f)
		require.Equal(t, ExitOK, code, errOut)
		assert.Empty(t, errOut)
		golden(t, "gpus."+f+".golden", out)
	}
}

func TestGPUsJSON(t *testing.T) {
	_, out, _ := runCLI(t, "gpus", "--format", "json")
	var v struct {
		GPUs []struct {
			Name       string   `json:"name"`
			MemoryGB   float64  `json:"memory_gb"`
			BF16TFLOPS float64  `json:"bf16_tflops"`
			FP4TFLOPS  *float64 `json:"fp4_tflops"`
		} `json:"gpus"`
		Fabrics []struct {
			Name   string  `json:"name"`
			BWGBps float64 `json:"bw_gbps"`
			P2P    bool    `json:"p2p"`
		} `json:"fabrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Len(t, v.GPUs, 8)
	require.Len(t, v.Fabrics, 6)
	assert.Equal(t, "h200-sxm", v.GPUs[2].Name)
	assert.InDelta(t, 989, v.GPUs[2].BF16TFLOPS, 1e-9)
	assert.Nil(t, v.GPUs[2].FP4TFLOPS, "no fp4 tensor cores on Hopper")
	assert.Equal(t, "nvlink5", v.Fabrics[4].Name)
	assert.InDelta(t, 900, v.Fabrics[4].BWGBps, 1e-9)
	assert.Equal(t, "gb200", v.GPUs[6].Name)
}

func TestGPUsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"gpus", "--format", "xml"},
		{"gpus", "extra"},
		{"gpus", "--nope"},
	} {
		code, out, errOut := runCLI(t, args...)
		assert.Equal(t, ExitInput, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Contains(t, errOut, "moecast: ", "%v", args)
	}
}
