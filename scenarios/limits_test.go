package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const limitsBase = `name = "x"
[model]
preset = "qwen3-30b-a3b"
[hardware]
gpu = "h100-sxm"
gpus = 2
fabric = "nvlink4"
`

// TestImplausibleHardware: figures of [hardware.custom_gpu] and
// [hardware.custom_fabric] outside their plausible range are refused with
// the file, line and key (they were accepted and priced before).
func TestImplausibleHardware(t *testing.T) {
	for _, tt := range []struct{ name, table, kv, want string }{
		{"dram bandwidth 1e30TB/s", "custom_gpu", `bandwidth = "1e30TB/s"`, `x.toml:9: hardware.custom_gpu.bandwidth: "1e30TB/s" is above the plausible range 10GB/s to 1PB/s`},
		{"dram bandwidth 1B/s", "custom_gpu", `bandwidth = "1B/s"`, `x.toml:9: hardware.custom_gpu.bandwidth: "1B/s" is below the plausible range`},
		{"bf16 overflows", "custom_gpu", `bf16 = "1e300TFLOPS"`, `x.toml:9: hardware.custom_gpu.bf16: "1e300TFLOPS" is above the plausible range 1TFLOP/s to 1EFLOP/s`},
		{"bf16 1 FLOP/s", "custom_gpu", `bf16 = "1FLOPS"`, `x.toml:9: hardware.custom_gpu.bf16: "1FLOPS" is below`},
		{"fp4 1e25", "custom_gpu", `fp4 = "1e25FLOPS"`, `x.toml:9: hardware.custom_gpu.fp4: "1e25FLOPS" is above`},
		{"memory 1 byte", "custom_gpu", `memory = "1B"`, `x.toml:9: hardware.custom_gpu.memory: "1B" is below the plausible range 1GB to 100TB`},
		{"memory 1e30TB", "custom_gpu", `memory = "1e30TB"`, `x.toml:9: hardware.custom_gpu.memory: "1e30TB" is above`},
		{"l2 1TB", "custom_gpu", `l2 = "1TB"`, `x.toml:9: hardware.custom_gpu.l2: "1TB" is above`},
		{"sms 1e6", "custom_gpu", `sms = 1000000`, `x.toml:9: hardware.custom_gpu.sms: "1000000" is above the plausible range 1 to 100000`},
		{"latency 1e300s", "custom_fabric", `latency = "1e300s"`, `x.toml:9: hardware.custom_fabric.latency: "1e300s" is above the plausible range 10.0ns to 10.000ms`},
		{"latency 0", "custom_fabric", `latency = "0us"`, `x.toml:9: hardware.custom_fabric.latency: "0us" is below`},
		{"link 1e-300B/s", "custom_fabric", `bandwidth = "1e-300B/s"`, `x.toml:9: hardware.custom_fabric.bandwidth: "1e-300B/s" is below the plausible range 100MB/s to 100TB/s`},
		{"busbw 1000TB/s", "custom_fabric", `bus_bandwidth = "1000TB/s"`, `x.toml:9: hardware.custom_fabric.bus_bandwidth: "1000TB/s" is above`},
		{"alltoall 1B/s", "custom_fabric", `alltoall_bandwidth = "1B/s"`, `x.toml:9: hardware.custom_fabric.alltoall_bandwidth: "1B/s" is below`},
		{"p2p 1e20", "custom_fabric", `p2p_bandwidth = "1e20B/s"`, `x.toml:9: hardware.custom_fabric.p2p_bandwidth: "1e20B/s" is above`},
		{"busbw above twice the link", "custom_fabric", `bus_bandwidth = "1TB/s"`, `x.toml:9: hardware.custom_fabric.bus_bandwidth: bus_bandwidth 1.00TB/s exceeds twice the link bandwidth 450.0GB/s`},
		{"link below half the preset's busbw", "custom_fabric", `bandwidth = "10GB/s"`, `x.toml:9: hardware.custom_fabric.bandwidth: bus_bandwidth 416.0GB/s exceeds twice the link bandwidth 10.0GB/s`},
		{"custom ar latency 1ns", "custom_fabric", `custom_allreduce_latency = "1ns"`, `x.toml:9: hardware.custom_fabric.custom_allreduce_latency: "1ns" is below`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := limitsBase + "[hardware." + tt.table + "]\n" + tt.kv + "\n"
			_, err := Parse("x.toml", []byte(src))
			require.Error(t, err, src)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "input %s\ngot  %s\nwant %s...", tt.kv, err, tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	// In range: accepted.
	for _, kv := range []string{`[hardware.custom_gpu]` + "\n" + `bandwidth = "2TB/s"` + "\n" + `bf16 = "500TFLOPS"` + "\n" + `fp4 = "0TFLOPS"`,
		`[hardware.custom_fabric]` + "\n" + `latency = "2us"` + "\n" + `bandwidth = "500GB/s"`} {
		_, err := Parse("x.toml", []byte(limitsBase+kv+"\n"))
		assert.NoError(t, err, kv)
	}
}
