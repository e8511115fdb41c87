package campaign

import (
	"fmt"
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

// Timing is one measurement in seconds: the median of the graph replays,
// their fastest and slowest, and the eager (direct launch) figure.
type Timing struct {
	Median, Min, Max, Eager float64
}

// CopyResult is the device copy bandwidth.
type CopyResult struct {
	Bytes       float64 // read + written per copy
	BytesPerSec float64 // Bytes / Median
	Timing
}

// MoEResult is one MoE point: the gate_up and down kernels timed apart.
type MoEResult struct {
	Point         MoEPoint
	GateUp, Down  Timing
	Touched       float64 // distinct experts this GPU read, mean over the routings
	WorkingSet    float64 // weight bytes those experts hold (gate_up + down)
	GateUpVariant string  // the kernels the plan chose
	DownVariant   string
	Routings      int // routings rotated over
	CallsPerGraph int
}

// Latency is the layer's time: the two kernels' medians.
func (r MoEResult) Latency() float64 { return r.GateUp.Median + r.Down.Median }

// Result is what a campaign measured.
type Result struct {
	Device   Device
	Versions Versions
	Copy     *CopyResult
	Overhead *Timing // the empty kernel: Median is per node of a replayed graph, Eager per direct launch
	MoE      []MoEResult
	Elapsed  time.Duration
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

func device() (cuda.Device, Device, error) {
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
	dev, err := cuda.GetDevice(0)
	if err != nil {
		return 0, Device{}, err
	}
	if d.Name, err = dev.Name(); err != nil {
		return 0, Device{}, err
	}
	d.UUID = d.UUIDs[0]
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

func timing(r gpu.BenchResult) Timing {
	return Timing{Median: r.GraphSeconds, Min: r.GraphMin, Max: r.GraphMax, Eager: r.LaunchSeconds}
}

// Run measures plan on device 0. Errors from a missing driver or device
// satisfy cuda.NoGPU.
func Run(plan *Plan, o Options) (*Result, error) {
	start := time.Now()
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, d, err := device()
	if err != nil {
		return nil, err
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
	say := func(format string, args ...any) {
		step++
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "calib gpu: [%d/%d] %s\n", step, steps, fmt.Sprintf(format, args...))
		}
	}
	if plan.Copy {
		r, err := gpu.MeasureCopy(m, CopyBytes, s)
		if err != nil {
			return nil, err
		}
		res.Copy = &CopyResult{Bytes: r.Bytes, BytesPerSec: r.BytesPerSec, Timing: timing(r)}
		say("copy %.0f MiB: %.2f TB/s (read + write)", float64(CopyBytes)/(1<<20), r.BytesPerSec/1e12)
	}
	if plan.Overhead {
		t, err := gpu.MeasureEmpty(m, EmptyLaunches, s)
		if err != nil {
			return nil, err
		}
		res.Overhead = &Timing{Median: t.Graph, Min: t.GraphMin, Max: t.GraphMax, Eager: t.Eager}
		say("empty kernel: %.2f us a graph node, %.2f us eager", t.Graph*1e6, t.Eager*1e6)
	}
	for i, p := range plan.MoE {
		mm, sp := p.Model, p.Split
		gu, dn := mm.GateUp(sp), mm.Down(sp)
		local := 0
		if sp.EP > 1 {
			local = mm.LocalExperts(sp)
		}
		seed := uint64(1_000_003*(i+1)) ^ uint64(p.Tokens)
		c := gpu.MoECase{Name: "gate_up", Tokens: p.Tokens, Experts: mm.Experts, TopK: mm.TopK, N: gu.N, K: gu.K,
			Group: mm.Group, Seed: seed, Local: local}
		rg, err := gpu.MeasureMoE(m, c, RotateBytes, s)
		if err != nil {
			return nil, err
		}
		c.Name, c.N, c.K, c.Down = "down", dn.N, dn.K, true
		rd, err := gpu.MeasureMoE(m, c, RotateBytes, s)
		if err != nil {
			return nil, err
		}
		wb := func(sh Shape) float64 { return float64(sh.N*sh.K/2 + sh.N*sh.K/mm.Group*2) }
		r := MoEResult{Point: p, GateUp: timing(rg), Down: timing(rd), Touched: rg.Touched,
			WorkingSet: rg.Touched*wb(gu) + rd.Touched*wb(dn), GateUpVariant: rg.Variant, DownVariant: rd.Variant,
			Routings: rg.Copies, CallsPerGraph: rg.CallsPerGraph}
		res.MoE = append(res.MoE, r)
		say("moe %s tp%d ep%d tokens %d: %.1f us (gate_up %.1f, down %.1f), %.1f experts",
			mm.Name, sp.MoETP, sp.EP, p.Tokens, r.Latency()*1e6, rg.GraphSeconds*1e6, rd.GraphSeconds*1e6, rg.Touched)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
