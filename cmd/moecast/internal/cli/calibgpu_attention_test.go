package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/calib/campaign"
	"github.com/moecast/moecast/internal/unit"
)

// TestCalibGPUAttentionUsedByPredict: the gqa tables `calib gpu --ops
// attention` writes (from a recorded result) answer predict's decode
// attention for the shipped gpt-oss-120b H200 scenario.
func TestCalibGPUAttentionUsedByPredict(t *testing.T) {
	var res []campaign.AttnResult
	for _, p := range campaign.AttentionPoints(campaign.Options{Quick: true}) {
		s := 8e-6 + float64(p.KVBytes())/3e12
		res = append(res, campaign.AttnResult{Point: p, Timing: unit.Timing{Median: unit.Seconds(s), Min: unit.Seconds(s), Max: unit.Seconds(s)}, BytesPerSec: float64(p.KVBytes()) / s})
	}
	path := writeRecorded(t, "moecast calib gpu --ops attention --out h200.toml", campaign.AttentionOutput(res))
	srcs, _ := predictSources(t, "../../../../scenarios/gpt-oss-120b-h200-tp1.toml", "embedded,"+path)
	for _, src := range srcs {
		assert.True(t, strings.Contains(src["attention"], path+"#gqa.moecast.d64.kv-bf16"), src["attention"])
	}
}

// TestCalibGPUMLAModuleUsedByPredict: the mla table `calib gpu --ops
// attention` writes when a GEMM library is there answers predict's MLA
// module for the shipped Kimi-K2.5 H200 TP8 scenario.
func TestCalibGPUMLAModuleUsedByPredict(t *testing.T) {
	var res []campaign.MLAModuleResult
	for _, p := range campaign.MLAModulePoints(campaign.Options{}) {
		s := 60e-6 + float64(p.Batch*p.KVLen)*1152/3e12
		res = append(res, campaign.MLAModuleResult{Point: p, Timing: unit.Timing{Median: unit.Seconds(s), Min: unit.Seconds(s), Max: unit.Seconds(s)}, WorkingSet: 6e7, GEMMs: "cuBLASLt"})
	}
	path := writeRecorded(t, "moecast calib gpu --ops attention --out h200.toml", campaign.MLAModuleOutput(res))
	srcs, _ := predictSources(t, "../../../../scenarios/kimi-k2.5-h200-nvlink-tp8.toml", "embedded,"+path)
	for _, src := range srcs {
		assert.True(t, strings.Contains(src["attention"], path+"#mla.moecast.bf16.kv-bf16"), src["attention"])
	}
}
