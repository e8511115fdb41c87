// CONTRACT SKETCH: the event the streaming reader yields and the analysis
// consumes. Fields may be added; names must not change.
package trace

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
