package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib/campaign"
)

// TestCalibGPUAttentionUsedByPredict: the gqa tables `calib gpu --ops
// attention` writes (from a recorded result) answer predict's decode
// attention for the shipped gpt-oss-120b H200 scenario.
func TestCalibGPUAttentionUsedByPredict(t *testing.T) {
	r := &campaign.Result{Device: campaign.Device{Name: "NVIDIA H200", UUID: "GPU-0", UUIDs: []string{"GPU-0"}, SM: "sm_90",
		SMs: 132, L2Bytes: 60 << 20, Image: "w4a16.sm_90.cubin"}, Versions: campaign.Versions{Driver: "580", CUDA: "13.0", NCCL: "2.28.9"}}
	var res []campaign.AttnResult
	for _, p := range campaign.AttentionPoints(campaign.Options{Quick: true}) {
		s := 8e-6 + float64(p.KVBytes())/3e12
		res = append(res, campaign.AttnResult{Point: p, Timing: campaign.Timing{Median: s, Min: s, Max: s}, BytesPerSec: float64(p.KVBytes()) / s})
	}
	r.Outputs = append(r.Outputs, campaign.AttentionOutput(res))
	f, err := r.File(campaign.Options{Command: "moecast calib gpu --ops attention --out h200-attn.toml"}, time.Now())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200-attn.toml")
	require.NoError(t, f.Write(path))

	code, out, errOut := runCLI(t, "predict", "../../scenarios/gpt-oss-120b-h200-tp1.toml",
		"--calibration", "embedded,"+path, "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	var got struct {
		Points []struct {
			Sources map[string]string `json:"sources"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotEmpty(t, got.Points)
	for _, p := range got.Points {
		assert.True(t, strings.Contains(p.Sources["attention"], path+"#gqa.moecast.d64.kv-bf16"), p.Sources["attention"])
	}
}

// TestCalibGPUMLAModuleUsedByPredict: the mla table `calib gpu --ops
// attention` writes when a GEMM library is there answers predict's MLA
// module for the shipped Kimi-K2.5 H200 TP8 scenario.
func TestCalibGPUMLAModuleUsedByPredict(t *testing.T) {
	r := &campaign.Result{Device: campaign.Device{Name: "NVIDIA H200", UUID: "GPU-0", UUIDs: []string{"GPU-0"}, SM: "sm_90",
		SMs: 132, L2Bytes: 60 << 20, Image: "w4a16.sm_90.cubin"}, Versions: campaign.Versions{Driver: "580", CUDA: "13.0", NCCL: "2.28.9"}}
	var res []campaign.MLAModuleResult
	for _, p := range campaign.MLAModulePoints(campaign.Options{}) {
		s := 60e-6 + float64(p.Batch*p.KVLen)*1152/3e12
		res = append(res, campaign.MLAModuleResult{Point: p, Timing: campaign.Timing{Median: s, Min: s, Max: s}, WorkingSet: 6e7, GEMMs: "cuBLASLt"})
	}
	r.Outputs = append(r.Outputs, campaign.MLAModuleOutput(res))
	f, err := r.File(campaign.Options{Command: "moecast calib gpu --ops attention --out h200-attn.toml"}, time.Now())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200-attn.toml")
	require.NoError(t, f.Write(path))

	code, out, errOut := runCLI(t, "predict", "../../scenarios/kimi-k2.5-h200-nvlink-tp8.toml",
		"--calibration", "embedded,"+path, "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	var got struct {
		Points []struct {
			Sources map[string]string `json:"sources"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotEmpty(t, got.Points)
	for _, p := range got.Points {
		assert.True(t, strings.Contains(p.Sources["attention"], path+"#mla.moecast.bf16.kv-bf16"), p.Sources["attention"])
	}
}
