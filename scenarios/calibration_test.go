package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
)

// h200 is an 8x H200 NVLink scenario with the embedded tables; tests edit
// it.
const h200 = `name = "t"
[model]
preset = "kimi-k2.5"
[hardware]
gpu = "h200-sxm"
gpus = 8
fabric = "nvlink4"
calibration = "embedded"
[parallel]
tp = 8
ep = 8
`

// TestCalibrationOtherBox checks that a calibration is only applied to the
// box it was measured on: kernel tables to the same GPU preset, collective
// tables to the same GPU and fabric, each mismatch with a warning that
// names the calibration, where it was measured and the scenario's box.
func TestCalibrationOtherBox(t *testing.T) {
	tests := []struct {
		name           string
		src            string
		kernels, comms bool     // tables applied
		warn           []string // substrings of the one calibration warning per line
	}{
		{name: "same box", src: h200, kernels: true, comms: true},
		{name: "embedded:NAME same box", src: strings.Replace(h200, `"embedded"`, `"embedded:h200-sxm"`, 1), kernels: true, comms: true},
		{name: "fabric changed", src: strings.Replace(h200, `"nvlink4"`, `"pcie-gen4"`, 1), kernels: true,
			warn: []string{"calibration embedded:h200-sxm: ", "collective tables measured on h200-sxm over nvlink4", "h200-sxm over pcie-gen4"}},
		{name: "other GPU", src: strings.Replace(minimal, `"none"`, `"embedded:h200-sxm"`, 1),
			warn: []string{"calibration embedded:h200-sxm: ", "kernel tables measured on GPU h200-sxm", "GPU rtx-pro-6000-server",
				"collective tables measured on h200-sxm over nvlink4", "rtx-pro-6000-server over pcie-gen5"}},
		{name: "file other fabric", src: strings.NewReplacer(`"none"`, `"testdata/allreduce-8gpu.toml"`, `"pcie-gen5"`, `"pcie-gen4"`).Replace(minimal),
			warn: []string{"allreduce-8gpu.toml: 1 collective tables", "rtx-pro-6000-server over pcie-gen5", "rtx-pro-6000-server over pcie-gen4"}},
		{name: "custom_gpu overrides", src: h200 + "[hardware.custom_gpu]\nmemory = \"100GB\"\n", kernels: true, comms: true,
			warn: []string{"calibration embedded:h200-sxm: the kernel tables were measured on the h200-sxm preset, not on the figures of [hardware.custom_gpu]"}},
		{name: "custom_fabric overrides", src: h200 + "[hardware.custom_fabric]\nbandwidth = \"300GB/s\"\n", kernels: true, comms: true,
			warn: []string{"calibration embedded:h200-sxm: its 13 collective tables, measured on the nvlink4 preset, price the collectives they cover, not the figures of [hardware.custom_fabric]; set hardware.custom_fabric.override_calibration = true"}},
		{name: "custom_fabric override_calibration", src: h200 + "[hardware.custom_fabric]\nbandwidth = \"300GB/s\"\noverride_calibration = true\n", kernels: true, comms: false,
			warn: []string{"calibration embedded:h200-sxm: its 13 collective tables are not used: hardware.custom_fabric.override_calibration = true prices the collectives from the figures of [hardware.custom_fabric]"}},
		{name: "file same box", src: strings.Replace(minimal, `"none"`, `"testdata/allreduce-8gpu.toml"`, 1), comms: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.toml", []byte(tt.src))
			require.NoError(t, err)
			assert.Equal(t, tt.kernels, s.Config.KernelTables != nil, "kernel tables applied")
			assert.Equal(t, tt.comms, s.Config.CommTables != nil, "collective tables applied")
			w := strings.Join(s.Warnings, "\n")
			if len(tt.warn) == 0 {
				assert.Empty(t, s.Warnings)
				assert.NotContains(t, s.CalibrationNote, " of ")
			}
			for _, sub := range tt.warn {
				assert.Contains(t, w, sub)
			}

			// What is not applied is priced by the roofline.
			sm, err := s.Sim()
			require.NoError(t, err)
			p, err := sm.Step(8, 2048)
			require.NoError(t, err)
			if src := p.Breakdown[cost.AllReduce].Source; !tt.comms {
				assert.Equal(t, cost.Roofline, src.Kind, src.Describe())
			} else {
				assert.Equal(t, cost.Table, src.Kind, src.Describe())
			}
			if src := p.Breakdown[cost.MoE].Source; !tt.kernels {
				assert.Equal(t, cost.Roofline, src.Kind, src.Describe())
			} else if strings.Contains(strings.Join(s.Calibration, ","), "embedded") {
				assert.Equal(t, cost.Table, src.Kind, src.Describe())
			}

			// SetCalibration("none") drops the warnings again.
			require.NoError(t, s.SetCalibration("none"))
			assert.Empty(t, s.Warnings)
		})
	}
}

// TestCalibrationSingleGPU: a one-GPU scenario has no collectives, so the
// embedded tables' fabric is no reason to warn.
func TestCalibrationSingleGPU(t *testing.T) {
	s, err := Embedded("gpt-oss-120b-h200-tp1")
	require.NoError(t, err)
	assert.NotNil(t, s.Config.KernelTables)
	assert.Empty(t, s.Warnings)
}

// TestCalibrationEmbeddedName checks the "embedded:NAME" spec: an unknown
// name is an error at the key or the flag.
func TestCalibrationEmbeddedName(t *testing.T) {
	_, err := Parse("t.toml", []byte(strings.Replace(minimal, `"none"`, `"embedded:nope"`, 1)))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "t.toml:8: hardware.calibration: "), err.Error())
	assert.Contains(t, err.Error(), "h200-sxm", "lists the embedded calibrations")

	s, err := Default()
	require.NoError(t, err)
	err = s.SetCalibration("embedded:nope")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "--calibration: "), err.Error())
	require.NoError(t, s.SetCalibration("embedded:rtx-pro-6000-server"))
	assert.NotNil(t, s.Config.KernelTables)
	assert.NotNil(t, s.Config.CommTables)
	assert.Empty(t, s.Warnings)
}

// TestCalibrationPerTable checks that the GPU is matched table by table
// (a table's own provenance overrides the file's): of two GEMM tables, the
// one measured on the scenario's GPU answers.
func TestCalibrationPerTable(t *testing.T) {
	const file = `schema = 1
[provenance]
gpu = "rtx-pro-6000-server"
fabric = "pcie-gen5"
date = "2026-11-29"
command = "written for a test"
launch = "unknown"
cache = "unknown"

[[table]]
name = "gemm.h200"
op = "gemm"
dtype = "bf16"
columns = ["n", "k", "m", "latency_us"]
rows = """
7168,2048,1,10
7168,2048,8,11
"""
[table.provenance]
gpu = "h200-sxm"

[[table]]
name = "gemm.rtx"
op = "gemm"
dtype = "bf16"
columns = ["n", "k", "m", "latency_us"]
rows = """
7168,2048,1,20
7168,2048,8,21
"""
`
	path := filepath.Join(t.TempDir(), "two.toml")
	require.NoError(t, os.WriteFile(path, []byte(file), 0o644))
	s, err := Parse("t.toml", []byte(minimal))
	require.NoError(t, err)
	require.NoError(t, s.SetCalibration(path))
	kt, ok := s.Config.KernelTables.(*kernels.Tables)
	require.True(t, ok, "%T", s.Config.KernelTables)
	require.Len(t, kt.GEMMs, 1)
	e, ok := kt.GEMM(kernels.GEMMShape{M: 1, N: 7168, K: 2048, Weight: dtype.BF16Weights})
	require.True(t, ok)
	assert.Equal(t, path+"#gemm.rtx", e.Source.Table)
	assert.Contains(t, s.CalibrationNote, "1 of 2 tables")
	require.Len(t, s.Warnings, 1)
	assert.Contains(t, s.Warnings[0], "1 kernel tables measured on GPU h200-sxm")
}
