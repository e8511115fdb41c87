package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
)

// CalibShow is `calib show`: a calibration file's provenance and, per
// table, the series a lookup must match, the range of its interpolated
// axes, its row count and leave-one-out interpolation error. Text only.
func CalibShow(f *calib.File) report.Views {
	return report.Views{Text: func(w io.Writer) error { return calibText(w, f) }}
}

func calibText(w io.Writer, f *calib.File) error {
	fmt.Fprintf(w, "calibration %s (schema %d): %d tables, %d rows\n", f.Name, f.Schema, len(f.Tables), f.Rows())
	fmt.Fprintln(w, "provenance:")
	writeProvenance(w, "  ", f.Provenance)
	for _, c := range f.Coverage() {
		fmt.Fprintf(w, "\ntable %s: %s %s\n", c.Name, c.Op, c.Keys)
		fmt.Fprintf(w, "  rows %d, leave-one-out error p90 %.1f%% over %d interior points", c.Rows, 100*c.LOO, c.LOOPoints)
		if c.L2Resident > 0 {
			fmt.Fprintf(w, ", %d rows L2-resident", c.L2Resident)
		}
		fmt.Fprintln(w)
		p := c.Provenance
		fmt.Fprintf(w, "  measured: %s, %s, %s, launch %s, cache %s", nonEmpty(p.Date), nonEmpty(p.Engine+" "+p.EngineVersion), nonEmpty(p.Kernel), p.Launch, p.Cache)
		if p.NCCL != "" {
			fmt.Fprintf(w, ", NCCL %s", p.NCCL)
		}
		if p.Source == "" && p.Command != "" {
			fmt.Fprintf(w, "\n  command: %s\n", p.Command)
		} else {
			fmt.Fprintf(w, "\n  source: %s\n", nonEmpty(p.Source))
		}
		for _, sc := range c.Series {
			var axes []string
			for _, a := range sc.Axes {
				axes = append(axes, fmt.Sprintf("%s %s..%s (%d values)", a.Name, axisValue(a.Name, a.Lo), axisValue(a.Name, a.Hi), a.Distinct))
			}
			fmt.Fprintf(w, "  %-40s %4d points  %s\n", sc.Key, sc.Points, strings.Join(axes, ", "))
		}
		for _, corr := range p.Corrections {
			fmt.Fprintf(w, "  correction: %s\n", corr)
		}
	}
	return nil
}

func axisValue(name string, v float64) string {
	if name == "bytes" {
		return unit.Bytes(v).String()
	}
	return fmt.Sprintf("%g", v)
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return strings.TrimSpace(s)
}

func writeProvenance(w io.Writer, ind string, p calib.Provenance) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%s%-15s %s\n", ind, k, v)
		}
	}
	gpu := p.GPU
	if p.GPULabel != "" {
		gpu += " (" + p.GPULabel + ")"
	}
	if p.GPUCount > 0 {
		gpu += fmt.Sprintf(", %d GPUs", p.GPUCount)
	}
	if p.GPUL2Bytes > 0 {
		gpu += ", L2 " + unit.Bytes(p.GPUL2Bytes).String()
	}
	line("gpu", gpu)
	line("fabric", p.Fabric)
	line("driver", p.Driver)
	line("cuda", p.CUDA)
	line("nccl", p.NCCL)
	line("engine", strings.TrimSpace(p.Engine+" "+p.EngineVersion))
	line("kernel", p.Kernel)
	line("date", p.Date)
	line("source", p.Source)
	line("license", p.License)
	line("command", p.Command)
	line("launch", p.Launch)
	line("cache", p.Cache)
	line("method", p.Method)
	for _, c := range p.Corrections {
		line("correction", c)
	}
}
