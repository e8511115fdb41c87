package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDevicePreset: device names as the tools print them map to presets
// where one fits, never to another part.
func TestDevicePreset(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"NVIDIA H100 80GB HBM3", "h100-sxm"},
		{"NVIDIA  H200", "h200-sxm"},
		{"NVIDIA B200", "b200-sxm"},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server"},
		{"h200-sxm", "h200-sxm"},
		{"NVIDIA H100 PCIe", ""},
		{"NVIDIA H100 NVL", ""},
		{"NVIDIA A100-SXM4-80GB", ""},
		{"NVIDIA H200 NVL", ""},
		{"Tesla", ""},
		{"", ""},
		// By the words of a preset's label (as calib gpu named them).
		{"NVIDIA B300 SXM", "b300-sxm"},
		{"NVIDIA GB200", "gb200"},
	} {
		got, ok := DevicePreset(tt.in)
		assert.Equal(t, tt.want, got, tt.in)
		assert.Equal(t, tt.want != "", ok, tt.in)
	}
}
