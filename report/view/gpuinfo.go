package view

import (
	"fmt"
	"io"

	"github.com/moecast/moecast/report"
)

// GPUInfo is `moecast gpu info`: the CUDA driver, NCCL and the GPUs that
// moecast can use on this machine, as the CLI read them.
type GPUInfo struct {
	DriverVersion int    // cuDriverGetVersion: 1000*major + 10*minor
	DriverPath    string // the libcuda.so.1 loaded
	// NCCL is the text report's nccl line after "nccl    " ("2.27.3
	// (path)", "not loaded: ..."); "" when not asked (JSON, CSV).
	NCCL    string
	Devices []GPUDevice
}

// GPUDevice is one GPU of GPUInfo.
type GPUDevice struct {
	Ordinal      int
	Name         string
	Major, Minor int // compute capability
	SMs          int
	MemoryBytes  float64
	L2Bytes      int
	SmemPerBlock int    // bytes, opt-in maximum
	W4A16Image   string // the kernel image moecast would load, or "none: why"
}

// Table is the devices' table: one row per GPU.
func (g *GPUInfo) Table() *report.Table {
	t := &report.Table{Columns: []report.Column{
		{Name: "device"}, {Name: "name", Left: true}, {Name: "sm"}, {Name: "sms"},
		{Name: "memory_gib", Text: "%.1f"}, {Name: "l2_mib", Text: "%.0f"}, {Name: "smem_per_block_kib"},
		{Name: "w4a16_image", Left: true},
	}}
	for _, d := range g.Devices {
		t.Add(d.Ordinal, d.Name, fmt.Sprintf("sm_%d%d", d.Major, d.Minor), d.SMs, d.MemoryBytes/(1<<30), float64(d.L2Bytes)/(1<<20),
			d.SmemPerBlock/1024, d.W4A16Image)
	}
	return t
}

// Views of gpu info: the text report heads the table with the driver and
// NCCL lines; JSON and CSV are the table.
func (g *GPUInfo) Views() report.Views {
	return report.Views{Render: func(w io.Writer, f report.Format) error {
		if f == report.Text {
			if _, err := fmt.Fprintf(w, "driver  CUDA %d.%d (%s)\nnccl    %s\n\n", g.DriverVersion/1000, g.DriverVersion%1000/10, g.DriverPath, g.NCCL); err != nil {
				return err
			}
		}
		return g.Table().Render(w, f)
	}}
}
