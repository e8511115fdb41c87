package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
)

// CalibGPU is `calib gpu`'s measurement report: the device and software,
// then each op's one-line results and table in the order measured, then
// what moecast does not measure yet. Text only; the line saying what was
// written is the command's.
type CalibGPU struct {
	Device, UUID       string
	Driver, CUDA, NCCL string
	Elapsed            unit.Seconds
	Ops                []CalibGPUOp
	NotMeasured        []string
}

// CalibGPUOp is one op's output: its lines and, when set, its table.
type CalibGPUOp struct {
	Lines  []string
	Report *report.Table
}

// Views of the measurement report.
func (c *CalibGPU) Views() report.Views {
	return report.Views{Text: c.Text}
}

// Text writes the report.
func (c *CalibGPU) Text(w io.Writer) error {
	fmt.Fprintf(w, "calib gpu: %s (%s), driver %s, CUDA %s, NCCL %s; %.1f s\n", c.Device, c.UUID,
		c.Driver, c.CUDA, c.NCCL, float64(c.Elapsed))
	for _, op := range c.Ops {
		for _, l := range op.Lines {
			fmt.Fprintln(w, l)
		}
		if op.Report != nil {
			if err := op.Report.Render(w, report.Text); err != nil {
				return err
			}
		}
	}
	if len(c.NotMeasured) > 0 {
		fmt.Fprintf(w, "not measured: %s\n", strings.Join(c.NotMeasured, "; "))
	}
	return nil
}
