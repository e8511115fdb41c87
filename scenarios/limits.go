package scenarios

import (
	"fmt"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// Plausible ranges of the figures of [hardware.custom_gpu] and
// [hardware.custom_fabric]. A value outside its range is a typo or a unit
// slip ("1.8GB/s" for "1.8TB/s", "1e30TB/s"), not hardware, and would
// print a plausible-looking but meaningless prediction; it is refused with
// its position. The ranges are wide: an order of magnitude or more beyond
// the slowest and fastest parts in the presets and in public datasheets
// (2026: DRAM from ~100 GB/s on small parts to 8 TB/s on B300; dense
// tensor peaks from ~10 TFLOP/s to ~10 PFLOP/s FP4; 16-288 GB; links from
// PCIe 3.0 x1, ~1 GB/s, to NVLink 5, 900 GB/s; NCCL hop latencies 0.6-1
// us, network hops 2-10 us).
type limit struct {
	lo, hi float64
	unit   string // how to print lo and hi
}

var (
	gpuMemoryLimit    = limit{1e9, 100e12, "bytes"}   // 1 GB .. 100 TB
	gpuBandwidthLimit = limit{10e9, 1000e12, "B/s"}   // 10 GB/s .. 1000 TB/s
	gpuFLOPsLimit     = limit{1e12, 1e18, "FLOP/s"}   // 1 TFLOP/s .. 1 EFLOP/s
	gpuL2Limit        = limit{1 << 20, 64e9, "bytes"} // 1 MiB .. 64 GB
	gpuSMsLimit       = limit{1, 100000, ""}          // streaming multiprocessors
	fabricBWLimit     = limit{100e6, 100e12, "B/s"}   // 100 MB/s .. 100 TB/s
	fabricLatLimit    = limit{10e-9, 10e-3, "s"}      // 10 ns .. 10 ms
	customARLatLimit  = limit{100e-9, 10e-3, "s"}     // 100 ns .. 10 ms
)

// Plausible ranges of rates and serving objectives. A request rate below
// one an hour leaves a simulation of idle hours (and, near 1e-300, one
// whose clock no longer advances); above 1e6/s is "all at once", which
// concurrency says. One billion GPUs at 1,000 output tokens/s bound a
// target; a latency objective between 1 us and one hour.
var (
	requestRateLimit  = limit{1.0 / 3600, 1e6, "/s"}
	targetOutputLimit = limit{1e-3, 1e12, "tok/s"}
	perUserLimit      = limit{1e-3, 1e6, "tok/s"}
	sloLatencyLimit   = limit{1e-6, 3600, "s"}
)

// check is nil when v is within l, else an error in the key's words.
func (l limit) check(v float64, given string) error {
	if v >= l.lo && v <= l.hi {
		return nil
	}
	side := "below"
	if v > l.hi {
		side = "above"
	}
	return fmt.Errorf("%s is %s the plausible range %s to %s: check the number and its unit",
		given, side, l.format(l.lo), l.format(l.hi))
}

func (l limit) format(v float64) string {
	switch l.unit {
	case "bytes":
		return scaled(v, "B", 1e3)
	case "B/s":
		return scaled(v, "B/s", 1e3)
	case "FLOP/s":
		return scaled(v, "FLOP/s", 1e3)
	case "s":
		return unit.Seconds(v).String()
	case "/s", "tok/s":
		return fmt.Sprintf("%.3g%s", v, l.unit)
	}
	return fmt.Sprintf("%g", v)
}

// scaled prints v with a decimal SI prefix: 1e9 B -> "1GB".
func scaled(v float64, u string, step float64) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for v >= step && i < len(prefixes)-1 {
		v /= step
		i++
	}
	return fmt.Sprintf("%g%s%s", v, prefixes[i], u)
}

// checkGPULimits refuses implausible figures among the keys of
// [hardware.custom_gpu] that the file gives.
func (s *Scenario) checkGPULimits(g *kernels.GPU) error {
	const k = "hardware.custom_gpu."
	d := s.doc
	cg := d.raw.Hardware.CustomGPU
	checks := []struct {
		key, given string
		v          float64
		l          limit
	}{
		{"memory", cg.Memory, float64(g.Memory), gpuMemoryLimit},
		{"bandwidth", cg.Bandwidth, float64(g.MemBW), gpuBandwidthLimit},
		{"fa2_mixed_read_bandwidth", cg.FA2MixedRead, float64(g.FA2MixedRead), gpuBandwidthLimit},
		{"bf16", cg.BF16, float64(g.Peak[dtype.BF16]), gpuFLOPsLimit},
		{"fp8", cg.FP8, float64(g.Peak[dtype.FP8]), gpuFLOPsLimit},
		{"int8", cg.INT8, float64(g.Peak[dtype.INT8]), gpuFLOPsLimit},
		{"fp4", cg.FP4, float64(g.Peak[dtype.FP4]), gpuFLOPsLimit},
		{"l2", cg.L2, float64(g.L2), gpuL2Limit},
		{"sms", fmt.Sprint(g.SMs), float64(g.SMs), gpuSMsLimit},
	}
	for _, c := range checks {
		if !s.Given(k + c.key) {
			continue
		}
		if c.key != "memory" && c.key != "bandwidth" && c.key != "bf16" && c.key != "sms" && c.v == 0 {
			continue // 0 = fall back to bf16 / unknown
		}
		if err := c.l.check(c.v, fmt.Sprintf("%q", c.given)); err != nil {
			return d.wrap(k+c.key, err)
		}
	}
	return nil
}

// checkFabricLimits refuses implausible figures among the keys of
// [hardware.custom_fabric] that the file gives.
func (s *Scenario) checkFabricLimits(f *comm.Fabric) error {
	const k = "hardware.custom_fabric."
	d := s.doc
	cf := d.raw.Hardware.CustomFabric
	checks := []struct {
		key, given string
		v          float64
		l          limit
	}{
		{"bandwidth", cf.Bandwidth, float64(f.BW), fabricBWLimit},
		{"bus_bandwidth", cf.BusBandwidth, float64(f.BusBW), fabricBWLimit},
		{"alltoall_bandwidth", cf.AllToAllBandwidth, float64(f.AllToAllBW), fabricBWLimit},
		{"p2p_bandwidth", cf.P2PBandwidth, float64(f.P2PBW), fabricBWLimit},
		{"latency", cf.Latency, float64(f.Latency), fabricLatLimit},
		{"custom_allreduce_latency", cf.CustomARLatency, float64(f.CustomARLatency), customARLatLimit},
	}
	for _, c := range checks {
		if !s.Given(k + c.key) {
			continue
		}
		if err := c.l.check(c.v, fmt.Sprintf("%q", c.given)); err != nil {
			return d.wrap(k+c.key, err)
		}
	}
	// No collective moves data faster than twice the link: NCCL's bus
	// bandwidth is algbw x 2(n-1)/n, and even with in-switch reduction
	// (NVLS) each GPU sends and receives the buffer once at link speed,
	// so busbw < 2 x BW; all-to-all and peer copies cross the link once.
	for _, c := range checks[1:4] {
		if (s.Given(k+c.key) || s.Given(k+"bandwidth")) && c.v > 2*float64(f.BW) {
			key := c.key
			if !s.Given(k + key) {
				key = "bandwidth"
			}
			return d.errorf(k+key, "%s %s exceeds twice the link bandwidth %s: no collective moves data that fast over its links",
				c.key, unit.BytesPerSecond(c.v), f.BW)
		}
	}
	return nil
}
