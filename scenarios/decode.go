package scenarios

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// raw mirrors the TOML file. It is decoded strictly (every key in the file
// must land in a field) and converted once, in build.go, into a Scenario.
// Optional scalars are pointers so that "absent" (take the default) and
// "given" differ.
type raw struct {
	Name        string         `toml:"name"`
	Model       rawModel       `toml:"model"`
	Hardware    rawHardware    `toml:"hardware"`
	Parallel    rawParallel    `toml:"parallel"`
	Runtime     rawRuntime     `toml:"runtime"`
	Workload    rawWorkload    `toml:"workload"`
	Speculative rawSpeculative `toml:"speculative"`
	Plan        rawPlan        `toml:"plan"` // plan.go
}

type rawModel struct {
	Preset  string `toml:"preset"`
	Config  string `toml:"config"`
	KVCache string `toml:"kv_cache"`
}

type rawHardware struct {
	GPU          string     `toml:"gpu"`
	GPUs         *int       `toml:"gpus"`
	Fabric       string     `toml:"fabric"`
	Calibration  any        `toml:"calibration"` // a string or an array of strings
	CustomGPU    *rawGPU    `toml:"custom_gpu"`
	CustomFabric *rawFabric `toml:"custom_fabric"`
}

// rawGPU is [hardware.custom_gpu]: a GPU not in the presets, or overrides of
// the preset named by hardware.gpu. Values carry units ("96GB", "1.792TB/s",
// "500TFLOPS").
type rawGPU struct {
	Name      string `toml:"name"`
	Label     string `toml:"label"`
	Arch      string `toml:"arch"`
	Memory    string `toml:"memory"`
	Bandwidth string `toml:"bandwidth"`
	BF16      string `toml:"bf16"`
	FP8       string `toml:"fp8"`
	INT8      string `toml:"int8"`
	FP4       string `toml:"fp4"`
	L2        string `toml:"l2"`
	SMs       *int   `toml:"sms"`
}

// rawFabric is [hardware.custom_fabric]: an interconnect not in the
// presets, or overrides of the one named by hardware.fabric.
type rawFabric struct {
	Name              string `toml:"name"`
	Bandwidth         string `toml:"bandwidth"`          // per GPU, per direction
	Latency           string `toml:"latency"`            // one hop
	BusBandwidth      string `toml:"bus_bandwidth"`      // NCCL all-reduce busbw, large messages
	AllToAllBandwidth string `toml:"alltoall_bandwidth"` // NCCL all-to-all busbw, large messages
	P2PBandwidth      string `toml:"p2p_bandwidth"`      // custom all-reduce peer bandwidth
	CustomARLatency   string `toml:"custom_allreduce_latency"`
	P2P               *bool  `toml:"p2p"`
	NVLink            *bool  `toml:"nvlink"`
}

type rawParallel struct {
	TP          *int  `toml:"tp"`
	EP          *int  `toml:"ep"`
	DP          *int  `toml:"dp"`
	DPAttention *bool `toml:"dp_attention"`
}

type rawRuntime struct {
	CUDAGraphs           *bool    `toml:"cuda_graphs"`
	AllReduce            string   `toml:"allreduce"`
	GPUMemoryUtilization *float64 `toml:"gpu_memory_utilization"`
}

type rawWorkload struct {
	Batch   []int `toml:"batch"`
	Context *int  `toml:"context"`
	// The request shape of `moecast plan` (plan.go); `moecast simulate`
	// reads the same keys.
	InputTokens  *int `toml:"input_tokens"`
	OutputTokens *int `toml:"output_tokens"`
}

type rawSpeculative struct {
	Method      string    `toml:"method"`
	DraftTokens *int      `toml:"draft_tokens"`
	Acceptance  []float64 `toml:"acceptance"`
}

// doc is a decoded file: its raw values and the line of every key, so that
// an error found later (by the loader, by model or by sim) can point at the
// line that set the value.
type doc struct {
	file  string
	raw   raw
	lines map[string]int // dotted key ("parallel.tp", "parallel") -> 1-based line
	// overridden lists the keys an Override set (override.go): their
	// errors name no line, since the file's line holds another value.
	overridden []string
}

// Error is a scenario error tied to a position: "file:line: key: msg".
// Line is 0 when the key is absent from the file (a default was used);
// Key is empty for syntax errors.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
	Err  error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	// One line, always: the TOML parser may quote input that holds a newline.
	b.WriteString(oneLine.Replace(e.Msg))
	return b.String()
}

var oneLine = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`)

func (e *Error) Unwrap() error { return e.Err }

// errorf builds an Error for key, with the line where key (or, failing
// that, its nearest enclosing table) is set.
func (d *doc) errorf(key string, format string, args ...any) error {
	return &Error{File: d.file, Line: d.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// wrap builds an Error for key around err.
func (d *doc) wrap(key string, err error) error {
	return &Error{File: d.file, Line: d.line(key), Key: key, Msg: err.Error(), Err: err}
}

// line is the line of key, or of its nearest enclosing table that appears in
// the file, or 0.
func (d *doc) line(key string) int {
	if slices.Contains(d.overridden, key) {
		return 0
	}
	for k := key; k != ""; {
		if l, ok := d.lines[k]; ok {
			return l
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// decode parses data strictly: syntax and type errors carry the line; a key
// that no field reads is an error naming the key and its line.
func decode(file string, data []byte) (*doc, error) {
	d := &doc{file: file}
	md, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(&d.raw)
	if err != nil {
		return nil, tomlError(file, err)
	}
	d.lines = keyLines(data)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return nil, &Error{File: file, Line: d.line(k), Msg: fmt.Sprintf("unknown key %q", k)}
	}
	return d, nil
}

// typeErr matches the decoder's type errors, which are plain errors:
// `toml: line 7 (last key "parallel.tp"): incompatible types: ...`.
var typeErr = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "((?:[^"\\]|\\.)*)"\): (.*)$`)

// tomlError turns a BurntSushi/toml error into an *Error with the file and
// line.
func tomlError(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// A syntax error: LastKey is only the last key parsed before it,
		// so the message stands without a key.
		return &Error{File: file, Line: pe.Position.Line, Msg: pe.Message, Err: err}
	}
	if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		key := strings.ReplaceAll(m[2], `\"`, `"`)
		return &Error{File: file, Line: line, Key: key, Msg: m[3], Err: err}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: "), Err: err}
}

// errProbe is what probe returns: the decoder then reports the position of
// the key being decoded.
var errProbe = errors.New("probe")

// probe is a toml.Unmarshaler that always fails, so that the decoder's
// ParseError tells the line of the key it was given. BurntSushi/toml keeps
// key positions private; this reads them through its public error path.
type probe struct{}

func (*probe) UnmarshalTOML(any) error { return errProbe }

// keyLines returns the 1-based line of every key and table in data (which
// has already parsed without error), keyed by the dotted key.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var top map[string]toml.Primitive
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		return lines
	}
	for _, key := range md.Keys() {
		prim, ok := top[key[0]]
		for _, k := range key[1:] {
			if !ok {
				break
			}
			var m map[string]toml.Primitive
			if md.PrimitiveDecode(prim, &m) != nil {
				ok = false
				break
			}
			prim, ok = m[k]
		}
		if !ok {
			continue
		}
		var pe toml.ParseError
		if err := md.PrimitiveDecode(prim, &probe{}); errors.As(err, &pe) && pe.Position.Line > 0 {
			lines[key.String()] = pe.Position.Line
		}
	}
	return lines
}
