package campaign

import (
	"fmt"
	"github.com/moecast/moecast/internal/unit"
	"os"
	"regexp"
	"runtime"
	"time"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/kernels/gpu"
)

// Device is the measured GPU and the box it sits in.
type Device struct {
	Name    string   // as the driver reports it ("NVIDIA H200")
	UUID    string   // of the measured device (device 0)
	UUIDs   []string // of every visible device
	SM      string   // "sm_90"
	SMs     int
	L2Bytes int64
	Image   string // the W4A16 image loaded (cubin or PTX)
}

// Versions are the software the measurements ran on.
type Versions struct {
	Driver string // NVIDIA driver ("580.159.04"), from /proc/driver/nvidia/version
	CUDA   string // the driver API's CUDA version ("13.0")
	NCCL   string // "2.28.9", or why it was not loaded
}

// Result is what a campaign measured: one Output per op, in plan order.
type Result struct {
	Device   Device
	Versions Versions
	Outputs  []*Output
	Elapsed  time.Duration
}

// Output is the named op's output, or nil.
func (r *Result) Output(op string) *Output {
	for _, o := range r.Outputs {
		if o.Op == op {
			return o
		}
	}
	return nil
}

var nvidiaVersion = regexp.MustCompile(`Kernel Module(?: for [^ ]+)?\s+([0-9][0-9.]+)`)

// driverVersion reads the NVIDIA driver version the kernel module reports.
func driverVersion() string {
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return "unknown (no /proc/driver/nvidia/version)"
	}
	if m := nvidiaVersion.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "unknown (/proc/driver/nvidia/version not understood)"
}

func versions() Versions {
	v := Versions{Driver: driverVersion(), CUDA: "unknown", NCCL: "not loaded"}
	if d, err := cuda.DriverVersion(); err == nil {
		v.CUDA = fmt.Sprintf("%d.%d", d/1000, d%1000/10)
	}
	if err := cuda.InitNCCL(); err != nil {
		v.NCCL = "not loaded: " + err.Error()
	} else if n, err := cuda.NCCLVersion(); err == nil {
		v.NCCL = fmt.Sprintf("%d.%d.%d", n/10000, n/100%100, n%100)
	}
	return v
}

// device describes the visible GPUs and opens the one the campaign
// measures (ordinal from Options.DeviceFor).
func device(o Options) (cuda.Device, Device, error) {
	n, err := cuda.DeviceCount()
	if err != nil {
		return 0, Device{}, err
	}
	if n == 0 {
		return 0, Device{}, fmt.Errorf("no CUDA device visible")
	}
	var d Device
	for i := 0; i < n; i++ {
		dev, err := cuda.GetDevice(i)
		if err != nil {
			return 0, Device{}, err
		}
		u, err := dev.UUID()
		if err != nil {
			return 0, Device{}, err
		}
		d.UUIDs = append(d.UUIDs, u)
	}
	ord := o.DeviceFor(n)
	if ord >= n {
		return 0, Device{}, fmt.Errorf("local rank %d: device %d is not visible (%d GPUs)", ord, ord, n)
	}
	dev, err := cuda.GetDevice(ord)
	if err != nil {
		return 0, Device{}, err
	}
	if d.Name, err = dev.Name(); err != nil {
		return 0, Device{}, err
	}
	d.UUID = d.UUIDs[ord]
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return 0, Device{}, err
	}
	d.SM = fmt.Sprintf("sm_%d%d", major, minor)
	if d.SMs, err = dev.Attribute(cuda.AttrMultiprocessorCount); err != nil {
		return 0, Device{}, err
	}
	l2, err := dev.Attribute(cuda.AttrL2CacheSize)
	if err != nil {
		return 0, Device{}, err
	}
	d.L2Bytes = int64(l2)
	return dev, d, nil
}

func timing(r gpu.BenchResult) unit.Timing {
	return resultTiming(r.GraphSeconds, r.GraphMin, r.GraphMax, r.LaunchSeconds, r.CallsPerGraph)
}

// resultTiming is a kernels/gpu result's seconds (median, least and most
// of its graph replays, one eager launch) and calls a replay as one timing.
func resultTiming(median, least, most, eager float64, calls int) unit.Timing {
	return unit.Timing{Median: unit.Seconds(median), Min: unit.Seconds(least), Max: unit.Seconds(most), Eager: unit.Seconds(eager), Calls: calls}
}

// Run measures plan on device 0 (under a multi-process launcher, the
// local rank's device: Options.DeviceFor). Errors from a missing driver or device
// satisfy cuda.NoGPU; a device no GPU preset names, when the run writes a
// file and o.GPU is empty, is a *PresetError before anything is measured.
func Run(plan *Plan, o Options) (*Result, error) {
	start := time.Now()
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, d, err := device(o)
	if err != nil {
		return nil, err
	}
	if err := plan.checkDevice(o, d.Name); err != nil {
		return nil, err // a *PresetError: name the GPU with --gpu
	}
	ctx, err := dev.Retain()
	if err != nil {
		return nil, err
	}
	defer dev.Release()
	if err := ctx.SetCurrent(); err != nil {
		return nil, err
	}
	m, err := gpu.Load(dev)
	if err != nil {
		return nil, err
	}
	d.Image = m.Image
	s, err := cuda.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	defer s.Destroy()
	res := &Result{Device: d, Versions: versions()}
	step, steps := 0, plan.Steps()
	e := &Env{Dev: dev, Device: d, Stream: s, W4A16: m, Options: o, say: func(line string) {
		step++
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "calib gpu: [%d/%d] %s\n", step, steps, line)
		}
	}}
	for _, op := range plan.Ops {
		opStart, opStep := time.Now(), step
		out, err := op.Run(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.Name(), err)
		}
		out.Op, out.Elapsed = op.Name(), time.Since(opStart)
		if o.Progress != nil { // the per-op split of the campaign's time
			fmt.Fprintf(o.Progress, "calib gpu: %s: %d steps in %.1f s\n", op.Name(), step-opStep, out.Elapsed.Seconds())
		}
		res.Outputs = append(res.Outputs, out)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
