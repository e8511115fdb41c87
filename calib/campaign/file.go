package campaign

import (
	"fmt"
	"strings"
	"time"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels"
)

// File turns r into a calibration file: every op's tables, with the file's
// provenance naming the device, the software, the command, the method (the
// ops' sentences) and what was not measured.
func (r *Result) File(o Options, now time.Time) (*calib.File, error) {
	preset := o.GPU
	if preset == "" {
		preset = PresetFor(r.Device.Name)
	}
	if preset == "" {
		return nil, fmt.Errorf("device %q matches no GPU preset: name one with --gpu (%s)", r.Device.Name,
			strings.Join(kernels.GPUNames(), ", "))
	}
	if _, ok := kernels.LookupGPU(preset); !ok {
		return nil, fmt.Errorf("--gpu %q: not a GPU preset (%s)", preset, strings.Join(kernels.GPUNames(), ", "))
	}
	date, err := o.date(now)
	if err != nil {
		return nil, err
	}
	var method []string
	var tables []calib.Table
	for _, out := range r.Outputs {
		method = append(method, out.Method...)
		tables = append(tables, out.Tables...)
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("nothing measured for a table")
	}
	if nm := NotMeasuredList(); len(nm) > 0 {
		method = append(method, "not measured: "+strings.Join(nm, "; "))
	}
	prov := calib.Provenance{
		GPU:        preset,
		GPULabel:   fmt.Sprintf("%s (%s, %d SMs; measured %s; visible %s)", r.Device.Name, r.Device.SM, r.Device.SMs, r.Device.UUID, strings.Join(r.Device.UUIDs, " ")),
		GPUCount:   len(r.Device.UUIDs),
		GPUL2Bytes: float64(r.Device.L2Bytes),
		Driver:     r.Versions.Driver,
		CUDA:       r.Versions.CUDA + " (driver API)",
		NCCL:       r.Versions.NCCL,
		Kernel:     "moecast w4a16 (kernels/gpu, " + r.Device.Image + ")",
		Date:       date,
		Command:    strings.TrimSpace(o.Command + " (moecast " + o.Version + ")"),
		Launch:     "cuda-graph",
		Cache:      "flushed",
		Method:     "moecast calib gpu: " + strings.Join(method, "; "),
	}
	return &calib.File{Schema: calib.Schema, Provenance: prov, Tables: tables}, nil
}
