package campaign

import (
	"fmt"
	"time"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// Op is one measurement of the campaign, named by --ops. The ops run in
// the order of registry, each on device 0 with its context current.
type Op interface {
	// Name is the --ops name ("moe").
	Name() string
	// Steps is the number of timed measurements the op makes under o (one
	// progress line each), or what is wrong with o for this op.
	Steps(o Options) (int, error)
	// Tables says whether the op writes calibration tables (a file needs
	// at least one).
	Tables() bool
	// Run measures. It calls e.Say once per step.
	Run(e *Env) (*Output, error)
}

// Env is what an op measures with: device 0, whose primary context is
// current on the calling OS thread (locked for the whole campaign), a
// non-blocking stream, the W4A16 module (kernels/gpu), the options.
type Env struct {
	Dev     cuda.Device
	Device  Device
	Stream  cuda.Stream
	W4A16   *gpu.Module
	Options Options
	say     func(line string)
}

// Say prints one progress line (one step of the op).
func (e *Env) Say(format string, args ...any) {
	if e.say != nil {
		e.say(fmt.Sprintf(format, args...))
	}
}

// Output is what one op measured.
type Output struct {
	Op string
	// Tables go into the calibration file (their own provenance says how
	// they were measured; the file's provenance fills the rest).
	Tables []calib.Table
	// Method holds sentences for the file's provenance method (figures
	// that have no table in schema 1: copy bandwidth, launch costs).
	Method []string
	// Lines are printed by `calib gpu` (one-line results).
	Lines []string
	// Report, when set, is printed by `calib gpu` as a table.
	Report *report.Table
	// Data is the op's results (MoEResults, ...), for tests and callers.
	Data any
	// Elapsed is the op's wall time in Run (buffers, warm-up and timing
	// together): where a campaign's minutes go.
	Elapsed time.Duration
}
