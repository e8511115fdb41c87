package campaign

import (
	"fmt"
	"github.com/moecast/moecast/internal/unit"

	"github.com/moecast/moecast/kernels/gpu"
)

// copyBytes is the buffer the copy bandwidth is measured over (each of
// source and destination).
const copyBytes = 2 << 30

// emptyLaunches is the launches of the empty kernel per timing.
const emptyLaunches = 2000

// copyResult is the device copy bandwidth.
type copyResult struct {
	Bytes       float64 // read + written per copy
	BytesPerSec float64 // Bytes / Median
	unit.Timing
}

// copyOp measures device-to-device copy bandwidth.
type copyOp struct{}

func (copyOp) Name() string                 { return opCopy }
func (copyOp) Steps(o Options) (int, error) { return 1, nil }
func (copyOp) Tables() bool                 { return false }

func (copyOp) Run(e *Env) (*Output, error) {
	r, err := gpu.MeasureCopy(e.W4A16, copyBytes, e.Stream)
	if err != nil {
		return nil, err
	}
	c := &copyResult{Bytes: r.Bytes, BytesPerSec: r.BytesPerSec, Timing: timing(r)}
	e.Say("copy %.0f MiB: %.2f TB/s (read + write)", float64(copyBytes)/(1<<20), r.BytesPerSec/1e12)
	return copyOutput(c), nil
}

func copyOutput(c *copyResult) *Output {
	return &Output{Op: opCopy, Data: c,
		Method: []string{fmt.Sprintf("device copy %.2f TB/s read + write (moecast_copy over 2 x %d MiB, graph replays %.2f-%.2f TB/s)",
			c.BytesPerSec/1e12, copyBytes>>20, c.Bytes/float64(c.Max)/1e12, c.Bytes/float64(c.Min)/1e12)},
		Lines: []string{fmt.Sprintf("copy      %.2f TB/s read + write", c.BytesPerSec/1e12)}}
}

// overheadOp measures a kernel that does nothing, launched eagerly back to
// back from the host and replayed from a graph.
type overheadOp struct{}

func (overheadOp) Name() string                 { return opOverhead }
func (overheadOp) Steps(o Options) (int, error) { return 1, nil }
func (overheadOp) Tables() bool                 { return false }

func (overheadOp) Run(e *Env) (*Output, error) {
	t, err := gpu.MeasureEmpty(e.W4A16, emptyLaunches, e.Stream)
	if err != nil {
		return nil, err
	}
	e.Say("empty kernel: %.2f us a graph node, %.2f us eager", float64(t.Median)*1e6, float64(t.Eager)*1e6)
	return overheadOutput(&t), nil
}

// overheadOutput: Median is per node of a replayed graph, Eager per direct
// launch.
func overheadOutput(t *unit.Timing) *Output {
	return &Output{Op: opOverhead, Data: t,
		Method: []string{fmt.Sprintf("empty kernel %.2f us a node of a replayed graph (the gap between graph-replayed kernels; %.2f-%.2f us), %.2f us a direct launch from the host",
			float64(t.Median)*1e6, float64(t.Min)*1e6, float64(t.Max)*1e6, float64(t.Eager)*1e6)},
		Lines: []string{fmt.Sprintf("launch    %.2f us a graph node, %.2f us eager", float64(t.Median)*1e6, float64(t.Eager)*1e6)}}
}
