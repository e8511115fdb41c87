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
// ops' sentences) and what was not measured. Its errors are the options'
// (an *InputError: no preset for the device, a bad date, nothing measured
// for a table).
func (r *Result) File(o Options, now time.Time) (_ *calib.File, err error) {
	defer asInput(&err)
	preset, err := o.preset(r.Device.Name)
	if err != nil {
		return nil, err
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

// PresetError is a device no GPU preset names, and no --gpu: the file
// cannot say which GPU it is for (the caller's input to fix).
type PresetError struct{ Device string }

func (e *PresetError) Error() string {
	return fmt.Sprintf("device %q matches no GPU preset: name one with --gpu (%s)", e.Device, strings.Join(kernels.GPUNames(), ", "))
}

// preset is the GPU preset the file is for: o.GPU, else the one whose
// label names device.
func (o Options) preset(device string) (string, error) {
	preset := o.GPU
	if preset == "" {
		preset, _ = kernels.DevicePreset(device)
	}
	if preset == "" {
		return "", &PresetError{Device: device}
	}
	if _, ok := kernels.LookupGPU(preset); !ok {
		return "", fmt.Errorf("--gpu %q: not a GPU preset (%s)", preset, strings.Join(kernels.GPUNames(), ", "))
	}
	return preset, nil
}

// writesFile says whether this process writes a file from plan: not a rank
// other than 0 of a job, nor a run whose only op is comm on one rank (a
// check without a table).
func (p *Plan) writesFile(o Options) bool {
	if o.multiProcess() && o.Comm.Ranks.Rank != 0 {
		return false
	}
	for _, op := range p.Ops {
		if op.Tables() && (op.Name() != opComm || o.commRanks() > 1) {
			return true
		}
	}
	return false
}

// checkDevice fails before anything is measured when the file plan would
// write could not name the GPU it is for.
func (p *Plan) checkDevice(o Options, device string) error {
	if !p.writesFile(o) {
		return nil
	}
	_, err := o.preset(device)
	return err
}
