// Package unit defines the typed physical quantities moecast computes with, in
// base SI units: seconds, bytes, floating-point operations, and their rates.
//
// Every cost in moecast is float64 arithmetic in these types, never
// time.Duration. Conversions go through named functions (TransferTime,
// ComputeTime) rather than raw casts so that a reader can check the units.
// Decimal prefixes are SI (GB = 1e9 bytes); binary prefixes are IEC
// (GiB = 2^30 bytes).
package unit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Seconds is a duration in seconds.
type Seconds float64

// Bytes is an amount of memory or data in bytes.
type Bytes float64

// FLOPs is a count of floating-point (or integer tensor) operations; a
// multiply-add counts as 2.
type FLOPs float64

// BytesPerSecond is a bandwidth in bytes per second.
type BytesPerSecond float64

// FLOPsPerSecond is a throughput in operations per second.
type FLOPsPerSecond float64

// Common scale factors.
const (
	Microsecond Seconds = 1e-6
	Millisecond Seconds = 1e-3
	Nanosecond  Seconds = 1e-9

	KB  Bytes = 1e3
	MB  Bytes = 1e6
	GB  Bytes = 1e9
	TB  Bytes = 1e12
	KiB Bytes = 1 << 10
	MiB Bytes = 1 << 20
	GiB Bytes = 1 << 30
	TiB Bytes = 1 << 40

	GBps BytesPerSecond = 1e9
	TBps BytesPerSecond = 1e12

	TFLOPS FLOPsPerSecond = 1e12
)

// TransferTime is the time to move b bytes at bandwidth bw: b / bw seconds.
// A zero or negative bandwidth yields +Inf.
func TransferTime(b Bytes, bw BytesPerSecond) Seconds {
	if bw <= 0 {
		return Seconds(math.Inf(1))
	}
	return Seconds(float64(b) / float64(bw))
}

// ComputeTime is the time to execute f operations at throughput r: f / r
// seconds. A zero or negative throughput yields +Inf.
func ComputeTime(f FLOPs, r FLOPsPerSecond) Seconds {
	if r <= 0 {
		return Seconds(math.Inf(1))
	}
	return Seconds(float64(f) / float64(r))
}

// Ms returns s in milliseconds, for output fields named *_ms.
func (s Seconds) Ms() float64 { return float64(s) * 1e3 }

// Us returns s in microseconds.
func (s Seconds) Us() float64 { return float64(s) * 1e6 }

// GB returns b in decimal gigabytes (1e9 bytes).
func (b Bytes) GB() float64 { return float64(b) / 1e9 }

// String formats a duration with an adaptive unit: "55.0us", "6.81ms", "1.20s".
func (s Seconds) String() string {
	a := math.Abs(float64(s))
	switch {
	case a == 0:
		return "0s"
	case a < 1e-6:
		return strconv.FormatFloat(float64(s)*1e9, 'f', 1, 64) + "ns"
	case a < 1e-3:
		return strconv.FormatFloat(float64(s)*1e6, 'f', 1, 64) + "us"
	case a < 1:
		return strconv.FormatFloat(float64(s)*1e3, 'f', 3, 64) + "ms"
	}
	return strconv.FormatFloat(float64(s), 'f', 3, 64) + "s"
}

// String formats bytes with a decimal unit: "14.3KB", "96.0GB".
func (b Bytes) String() string {
	a := math.Abs(float64(b))
	switch {
	case a < 1e3:
		return strconv.FormatFloat(float64(b), 'f', 0, 64) + "B"
	case a < 1e6:
		return strconv.FormatFloat(float64(b)/1e3, 'f', 1, 64) + "KB"
	case a < 1e9:
		return strconv.FormatFloat(float64(b)/1e6, 'f', 1, 64) + "MB"
	case a < 1e12:
		return strconv.FormatFloat(float64(b)/1e9, 'f', 2, 64) + "GB"
	}
	return strconv.FormatFloat(float64(b)/1e12, 'f', 2, 64) + "TB"
}

// String formats a bandwidth: "1.79TB/s", "64.0GB/s".
func (r BytesPerSecond) String() string {
	if r >= 1e12 {
		return strconv.FormatFloat(float64(r)/1e12, 'f', 2, 64) + "TB/s"
	}
	return strconv.FormatFloat(float64(r)/1e9, 'f', 1, 64) + "GB/s"
}

// String formats a throughput in TFLOP/s: "989.0TFLOP/s".
func (r FLOPsPerSecond) String() string {
	return strconv.FormatFloat(float64(r)/1e12, 'f', 1, 64) + "TFLOP/s"
}

var byteSuffixes = []struct {
	s string
	m float64
}{
	// Longest first so that "GiB" is not read as "G" + "iB".
	{"TiB", float64(TiB)}, {"GiB", float64(GiB)}, {"MiB", float64(MiB)}, {"KiB", float64(KiB)},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1},
}

var timeSuffixes = []struct {
	s string
	m float64
}{
	{"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1},
}

var flopsSuffixes = []struct {
	s string
	m float64
}{
	{"PFLOP/s", 1e15}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9},
	{"PFLOPS", 1e15}, {"TFLOPS", 1e12}, {"GFLOPS", 1e9}, {"FLOP/s", 1}, {"FLOPS", 1},
}

func parseWithSuffix(s, what string, table []struct {
	s string
	m float64
}) (float64, error) {
	t := strings.TrimSpace(s)
	for _, u := range table {
		if strings.HasSuffix(t, u.s) {
			num := strings.TrimSpace(strings.TrimSuffix(t, u.s))
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("invalid %s %q: %q is not a number", what, s, num)
			}
			if v < 0 {
				return 0, fmt.Errorf("invalid %s %q: negative", what, s)
			}
			return v * u.m, nil
		}
	}
	return 0, fmt.Errorf("invalid %s %q: missing unit", what, s)
}

// ParseBytes parses "96GB", "97887MiB", "60 MiB", "512B". A unit is required.
func ParseBytes(s string) (Bytes, error) {
	v, err := parseWithSuffix(s, "size", byteSuffixes)
	return Bytes(v), err
}

// ParseSeconds parses "55us", "0.7µs", "6.81ms", "1s". A unit is required.
func ParseSeconds(s string) (Seconds, error) {
	v, err := parseWithSuffix(s, "duration", timeSuffixes)
	return Seconds(v), err
}

// ParseBandwidth parses "4.8TB/s", "64GB/s", "450 GB/s". A unit is required.
func ParseBandwidth(s string) (BytesPerSecond, error) {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, "/s") {
		return 0, fmt.Errorf("invalid bandwidth %q: want a unit such as TB/s or GB/s", s)
	}
	b, err := parseWithSuffix(strings.TrimSuffix(t, "/s"), "bandwidth", byteSuffixes)
	if err != nil {
		return 0, fmt.Errorf("invalid bandwidth %q: want a unit such as TB/s or GB/s", s)
	}
	return BytesPerSecond(b), nil
}

// ParseFLOPs parses a throughput such as "989TFLOPS" or "2250 TFLOP/s".
func ParseFLOPs(s string) (FLOPsPerSecond, error) {
	v, err := parseWithSuffix(s, "throughput", flopsSuffixes)
	return FLOPsPerSecond(v), err
}

// Timing is one timed measurement, seconds a call: the median, least and
// most over the timed replays of a captured CUDA graph, a direct (eager)
// launch's, and the calls one replay holds (kernels/gpu and calib gpu's
// campaign).
type Timing struct {
	Median, Min, Max, Eager Seconds
	Calls                   int
}
