// Package trace reads torch.profiler (Kineto) Chrome-trace files as vLLM and
// SGLang write them, and breaks them down into steps and operation categories.
//
// The Reader streams a plain or gzipped trace one event at a time, with a
// hand-written scanner, and never holds the file or all its events in memory.
// A Classifier maps kernel names to (category, op) through ordered regex rules
// (rules.toml, embedded; --rules adds to them). An Analyzer delimits steps
// from engine annotations, CUDA-graph launches or idle gaps, attributes
// graph-replayed kernels through the launch's correlation id, and accumulates
// per step the wall, busy, idle, per-category and exposed times. Summarize and
// AnalyzeFiles turn that into the per-rank summaries of `moecast trace`.
//
// Units: trace instants (Time) and spans (Duration) are microseconds, as
// Kineto writes "ts" and "dur"; summaries convert to milliseconds in fields
// named *_ms. Categories are those of internal/cost, shared with `moecast
// predict`.
package trace

// Event is the unit the Reader yields and the Analyzer consumes; the fields
// below mirror REFERENCE.md §2.1 of the Kineto format.

// Time is a trace instant in microseconds since the trace's time origin, as
// Kineto writes "ts". It is a type apart from Duration.
type Time float64

// Duration is a span in microseconds, as Kineto writes "dur".
type Duration float64

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
	Pid    int64 // process id; GPU events: device index; non-numeric pids read as -1
	Tid    int64 // thread id; GPU events: stream; non-numeric tids read as -1
	TS     Time
	Dur    Duration
	ID     int64 // flow id ("id") for s/f events

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
func (e *Event) End() Time { return e.TS + Time(e.Dur) }
