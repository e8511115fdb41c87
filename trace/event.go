// Package trace reads torch.profiler (Kineto) Chrome-trace files as vLLM and
// SGLang write them, and breaks them down into steps and operation categories.
//
// The Reader streams a plain or gzipped trace one event at a time, with a
// hand-written scanner, and never holds the file or all its events in memory.
// A Classifier maps kernel names to (category, op) through ordered regex rules
// (rules.toml, embedded; --rules adds to them). An analyzer delimits steps
// (one file per delimiter: step_vllm.go, step_sglang.go, step_torch.go,
// step_user.go behind the delimiter interface; without annotations
// step_graph.go, then step_gap.go), attributes graph-replayed kernels
// through the launch's correlation id, and accumulates per step the wall,
// busy, idle, per-category and exposed times and the step's kernels with
// their identity (StepKernel: name, category, op, count, total), which
// `validate` holds against predicted ops. Summarize and AnalyzeFiles turn
// that into per-rank summaries; package report renders them. This package
// imports nothing of calib, sim or report.
//
// Units: Kineto writes "ts" and "dur" in microseconds; the Reader converts
// them once, at the wire boundary, to a Time (an instant, seconds since the
// trace's time origin) and a unit.Seconds (a span), the unit `moecast
// predict` computes in. Instants and spans are types apart: Time.Sub gives
// a unit.Seconds, Time.Add takes one (as golang.org/x/exp/trace's Time and
// time.Duration). Categories are those of internal/cost, shared with
// `moecast predict`.
package trace

import "github.com/moecast/moecast/internal/unit"

// Event is the unit the Reader yields and the analyzer consumes; the fields
// below mirror the Kineto Chrome-trace format as the traces in testdata
// (AMD-AGI/TraceLens @ 171dd74, facebookresearch/HolisticTraceAnalysis @
// f4d0062) write it.

// Time is a trace instant, Kineto's "ts": a point, not a span. It is a type
// apart from the spans (unit.Seconds): the span between two instants is
// Sub, an instant plus a span is Add, and Seconds gives the time since the
// trace's origin; instants compare with < and ==. Its unit is the
// microseconds the trace writes, so that instants of epoch size (Kineto's
// ts are about 1.8e15 us since 1970) keep the precision of the file rather
// than lose a rounding to seconds; do not read it as a number outside this
// package: every span leaves the package in unit.Seconds.
type Time float64

// Sub returns the span t - u.
func (t Time) Sub(u Time) unit.Seconds { return secondsFromMicros(float64(t - u)) }

// Add returns the instant d after t.
func (t Time) Add(d unit.Seconds) Time { return t + Time(d.Us()) }

// Seconds returns the time since the trace's origin.
func (t Time) Seconds() unit.Seconds { return secondsFromMicros(float64(t)) }

// timeFromMicros and secondsFromMicros convert the wire's microseconds: the
// Reader calls them once per event, nothing else reads microseconds.
func timeFromMicros(us float64) Time            { return Time(us) }
func secondsFromMicros(us float64) unit.Seconds { return unit.Seconds(us / 1e6) }

// Phase is the Chrome-trace "ph" field.
type Phase byte

const (
	PhaseComplete   Phase = 'X'
	PhaseInstant    Phase = 'i'
	PhaseFlowStart  Phase = 's'
	PhaseFlowFinish Phase = 'f'
	PhaseMetadata   Phase = 'M'
)

// Cat is the event category ("cat").
type Cat uint8

const (
	CatOther Cat = iota
	CatKernel
	CatMemcpy // gpu_memcpy
	CatMemset // gpu_memset
	CatRuntime
	CatDriver
	CatCPUOp
	CatUserAnnotation
	CatGPUUserAnnotation
	CatPythonFunction
	CatFlow // ac2g and other flow categories
)

// Event is one element of traceEvents, converted from the wire form.
// Strings are interned by the Reader: equal names share storage.
type Event struct {
	Index  int64 // position in traceEvents, from 0
	Offset int64 // byte offset of the event in the uncompressed JSON
	Ph     Phase
	Cat    Cat
	CatRaw string // the "cat" string as written
	Name   string
	Pid    int64        // process id; GPU events: device index; non-numeric pids read as -1
	Tid    int64        // thread id; GPU events: stream; non-numeric tids read as -1
	TS     Time         // start ("ts")
	Dur    unit.Seconds // span ("dur")
	ID     int64        // flow id ("id") for s/f events

	// Selected args; zero when absent.
	Correlation  int64
	ExternalID   int64
	Stream       int64
	Device       int64
	Grid, Block  [3]int32
	Bytes        int64  // gpu_memcpy / gpu_memset "bytes"
	Collective   string // "Collective name"
	InMsgNelems  int64
	OutMsgNelems int64
	GroupSize    int32
	DType        string // "dtype" of a collective
}

// End is TS + Dur.
func (e *Event) End() Time { return e.TS.Add(e.Dur) }
