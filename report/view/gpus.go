package view

import (
	"io"
	"math"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/report"
)

// RenderPair writes head, table a, mid, table b and tail, the tables in
// format f.
func RenderPair(w io.Writer, f, head string, a *report.Table, mid string, b *report.Table, tail string) error {
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	if err := a.Render(w, report.Format(f)); err != nil {
		return err
	}
	if _, err := io.WriteString(w, mid); err != nil {
		return err
	}
	if err := b.Render(w, report.Format(f)); err != nil {
		return err
	}
	_, err := io.WriteString(w, tail)
	return err
}

// GPUTable is `moecast gpus`' table of the GPU presets: peaks, memory,
// L2 and usual fabric.
func GPUTable() *report.Table {
	t := &report.Table{Columns: []report.Column{
		{Name: "name"}, {Name: "arch"}, {Name: "sms"},
		{Name: "memory_gb", Text: "%.1f"}, {Name: "dram_bw_tbps", Text: "%.2f"},
		{Name: "bf16_tflops", Text: "%.0f"}, {Name: "fp8_tflops", Text: "%.0f"}, {Name: "fp4_tflops", Text: "%.0f"},
		{Name: "l2_mb", Text: "%.0f"}, {Name: "fabric"}, {Name: "label", Left: true},
	}}
	for _, n := range kernels.GPUNames() {
		g, _ := kernels.LookupGPU(n)
		var fp4, fp8 any
		if g.Peak[dtype.FP8] > 0 { // none on Ampere
			fp8 = float64(g.Peak[dtype.FP8]) / 1e12
		}
		if g.Peak[dtype.FP4] > 0 {
			fp4 = float64(g.Peak[dtype.FP4]) / 1e12
		}
		t.Add(g.Name, string(g.Arch), g.SMs, g.Memory.GB(), float64(g.MemBW)/1e12,
			float64(g.Peak[dtype.BF16])/1e12, fp8, fp4,
			float64(g.L2)/1e6, g.Fabric, g.Label)
	}
	return t
}

// FabricTable is `moecast gpus`' table of the fabric presets.
func FabricTable() *report.Table {
	t := &report.Table{Columns: []report.Column{
		{Name: "name"}, {Name: "bw_gbps", Text: "%.1f"}, {Name: "latency_us", Text: "%.2f"},
		{Name: "p2p"}, {Name: "nvlink"},
		{Name: "allreduce_busbw_gbps", Text: "%.1f"}, {Name: "alltoall_busbw_gbps", Text: "%.1f"},
		{Name: "p2p_bw_gbps", Text: "%.1f"}, {Name: "custom_ar_latency_us", Text: "%.1f"},
	}}
	for _, n := range comm.FabricNames() {
		f, _ := comm.LookupFabric(n)
		t.Add(f.Name, float64(f.BW)/1e9, round6(f.Latency.Us()), f.P2P, f.NVLink,
			float64(f.BusBW)/1e9, float64(f.AllToAllBW)/1e9, float64(f.P2PBW)/1e9, round6(f.CustomARLatency.Us()))
	}
	return t
}

// round6 drops float noise from a unit conversion (7.499999999999999 us).
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
