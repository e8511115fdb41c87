package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
)

// ep16 is DeepSeek-V3 with wide EP over two HGX H200 nodes (8 GPUs each on
// nvlink4): DP attention, EP16.
const ep16 = `name = "ep16"
[model]
preset = "deepseek-v3"
[hardware]
gpu = "h200-sxm"
gpus = 16
NIC
calibration = "embedded"
[parallel]
tp = 1
dp = 16
ep = 16
dp_attention = true
`

// dispatch is the MoE dispatch all-to-all of a decode step of batch 256
// at context 2048.
func dispatch(t *testing.T, src string) (cost.Estimate, []string) {
	t.Helper()
	s, err := Parse("ep16.toml", []byte(src))
	require.NoError(t, err)
	sm, err := s.Sim()
	require.NoError(t, err)
	ops, err := sm.Explain(256, 2048)
	require.NoError(t, err)
	for _, o := range ops {
		if o.Name == "moe dispatch alltoall" {
			return o.Estimate, s.Warnings
		}
	}
	t.Fatal("no moe dispatch alltoall")
	return cost.Estimate{}, nil
}

// TestWideEPAcrossNodes: EP16 over 2x8 H200 prices its dispatch across the
// NIC when hardware.nic names one: the embedded DeepEP tables cover 8 ranks
// only, so the NIC roofline answers and its source names the NIC; half of
// each rank's tokens leave the node, so it costs more than the one-node
// pricing (and less over a faster NIC). Without hardware.nic the layout is
// priced as one node, with a warning.
func TestWideEPAcrossNodes(t *testing.T) {
	one, warns := dispatch(t, strings.Replace(ep16, "NIC\n", "", 1))
	assert.NotContains(t, one.Source.Describe(), "NIC")
	require.NotEmpty(t, warns)
	assert.Contains(t, strings.Join(warns, "\n"), "set hardware.nic")

	ib400, warns := dispatch(t, strings.Replace(ep16, "NIC", `nic = "ib-400"`, 1))
	for _, w := range warns {
		assert.NotContains(t, w, "span", "no one-node warning with a NIC")
	}
	d := ib400.Source.Describe()
	assert.Contains(t, d, "all-to-all across nodes", d)
	assert.Contains(t, d, "across 2 nodes of 8 GPUs: NIC ib-400", d)
	assert.Contains(t, d, "InfiniBand NDR 400 Gb/s", d)
	assert.Greater(t, float64(ib400.Time), float64(one.Time), "the NIC (50 GB/s) is slower than NVLink")

	ib800, _ := dispatch(t, strings.Replace(ep16, "NIC", `nic = "ib-800"`, 1))
	assert.Less(t, float64(ib800.Time), float64(ib400.Time), "a faster NIC")
}
