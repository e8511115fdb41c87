package scenarios

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/moecast/moecast/internal/infile"
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
	Plan        rawPlan        `toml:"plan"`   // plan.go
	Disagg      *rawDisagg     `toml:"disagg"` // disagg.go
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
	NIC          string     `toml:"nic"`         // the NIC joining nodes of the fabric (ib-400, roce-400, ...)
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
	// This GPU's own measured fractions of its bf16 GEMMs
	// (kernels.GPU.GEMMMem, GEMMCompute).
	GEMMMemEfficiency     *float64 `toml:"gemm_mem_efficiency"`
	GEMMComputeEfficiency *float64 `toml:"gemm_compute_efficiency"`
	// FA2MixedRead is kernels.GPU.FA2MixedRead ("2.96TB/s").
	FA2MixedRead string `toml:"fa2_mixed_read_bandwidth"`
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
	NodeGPUs          *int   `toml:"node_gpus"` // GPUs one node of this fabric joins
	// OverrideCalibration prices the collectives from these figures even
	// where a calibration table covers them (default: the tables win).
	OverrideCalibration *bool `toml:"override_calibration"`
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
	// Serving engine (moecast simulate; serving.go).
	Engine string `toml:"engine"`
	// MoEA2ABackend is the engine's expert-parallel exchange backend
	// (SGLang --moe-a2a-backend, vLLM --all2all-backend; moeA2ABackends).
	MoEA2ABackend       string `toml:"moe_a2a_backend"`
	MaxNumBatchedTokens *int   `toml:"max_num_batched_tokens"`
	MaxNumSeqs          *int   `toml:"max_num_seqs"`
	MixedChunk          *bool  `toml:"mixed_chunk"`
	// AsyncScheduling is vLLM's async scheduling or SGLang's overlap
	// scheduler (off: --disable-overlap-schedule). With SGLang's
	// EAGLE/MTP it also picks the worker: on = the overlapped V2 worker
	// (SGLANG_ENABLE_SPEC_V2=1), off = the synchronous V1 worker
	// (serve.Spec.Sync); unset = the version's default
	// (serve.SpecSyncDefault).
	AsyncScheduling *bool `toml:"async_scheduling"`
	PrefixCaching   *bool `toml:"prefix_caching"`
	// EngineVersion is the engine's version ("0.12.0"): the defaults
	// that changed between versions follow it (serve.AsyncDefault);
	// "" = the newest.
	EngineVersion string `toml:"engine_version"`
	// TokenizeUsPerToken is the API server's tokenisation time per prompt
	// token in microseconds (serve.FrontEnd); 0 = no front end.
	TokenizeUsPerToken *float64 `toml:"tokenize_us_per_token"`
	// ScheduleConservativeness is SGLang's --schedule-conservativeness
	// (serve.Config.ScheduleConservativeness); 0 = admission by the chunk.
	ScheduleConservativeness *float64 `toml:"schedule_conservativeness"`
	// vLLM's --long-prefill-token-threshold, --max-num-partial-prefills
	// and --max-long-partial-prefills (serve.Config); SGLang's
	// --prefill-decode-interval (serve.Config.PrefillDecodeInterval).
	LongPrefillTokenThreshold *int `toml:"long_prefill_token_threshold"`
	MaxNumPartialPrefills     *int `toml:"max_num_partial_prefills"`
	MaxLongPartialPrefills    *int `toml:"max_long_partial_prefills"`
	PrefillDecodeInterval     *int `toml:"prefill_decode_interval"`
	// vLLM's --prefill-schedule-interval
	// (serve.Config.PrefillScheduleInterval).
	PrefillScheduleInterval *int `toml:"prefill_schedule_interval"`
	// vLLM's --num-gpu-blocks-override (serve.Memory.KVCapacity: the KV
	// cache holds this many blocks per GPU instead of what the memory
	// profile leaves).
	NumGPUBlocks *int `toml:"num_gpu_blocks"`
	// SGLang's --scheduler-recv-interval
	// (serve.Config.SchedulerRecvInterval).
	SchedulerRecvInterval *int `toml:"scheduler_recv_interval"`
	// The largest decode step run in a CUDA graph (serve.Config.CUDAGraphMax):
	// SGLang's --cuda-graph-max-bs in requests per attention rank, vLLM's
	// --max-cudagraph-capture-size in tokens.
	CUDAGraphMaxBS          *int `toml:"cuda_graph_max_bs"`
	MaxCUDAGraphCaptureSize *int `toml:"max_cudagraph_capture_size"`
	// vLLM's cudagraph_capture_sizes (serve.Config.CUDAGraphSizes).
	CUDAGraphCaptureSizes *[]int `toml:"cudagraph_capture_sizes"`
	// CUDAGraphMode is vLLM's compilation_config.cudagraph_mode
	// (cudaGraphModes); "" = FULL_AND_PIECEWISE, the default since v0.11.0.
	CUDAGraphMode string `toml:"cudagraph_mode"`
	// MXFP4Activation is the precision MXFP4 routed experts (gpt-oss) take
	// their activations in on sm_100/sm_103: "bf16" (vLLM's default,
	// FlashInfer TRT-LLM mxfp4_bf16) or "mxfp8" (SGLang's default,
	// vLLM's VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1); "" = the engine's
	// default (Serving.MXFP4Activation).
	MXFP4Activation string `toml:"mxfp4_activation"`
	// MXFP4MoEBackend is vLLM's MXFP4 MoE kernel where the server's
	// environment overrides its choice: "marlin" (VLLM_MXFP4_USE_MARLIN=1);
	// "" = the engine's own pick (mxfp4.go).
	MXFP4MoEBackend string `toml:"mxfp4_moe_backend"`
	// NSAPrefillBackend is SGLang's --nsa-prefill-backend, the prefill
	// implementation of its NSA backend for DeepSeek Sparse Attention
	// layers (nsaPrefillBackends); "" = SGLang's default (nsa.go).
	NSAPrefillBackend string `toml:"nsa_prefill_backend"`
}

type rawWorkload struct {
	Batch   []int `toml:"batch"`
	Context *int  `toml:"context"`
	// Serving workload (moecast simulate; serving.go).
	Concurrency  []int     `toml:"concurrency"`
	RequestRate  []float64 `toml:"request_rate"`
	Burstiness   *float64  `toml:"burstiness"`
	Requests     *int      `toml:"requests"`
	InputTokens  *int      `toml:"input_tokens"`
	OutputTokens *int      `toml:"output_tokens"`
	RangeRatio   *float64  `toml:"range_ratio"`
	RangeStyle   string    `toml:"range_style"`
	Seed         *int64    `toml:"seed"`
	// Trace replays a request log (a path relative to the scenario).
	Trace string `toml:"trace"`
	// Shared prompt content, for prefix caching (serve.PrefixLoad).
	SystemPromptTokens *int     `toml:"system_prompt_tokens"`
	PrefixHitRate      *float64 `toml:"prefix_hit_rate"`
	HashBlockTokens    *int     `toml:"hash_block_tokens"`
	// Lengths draws each request's lengths from a file of (input,
	// output) pairs (lengths.go); Turns and ThinkTime make sessions
	// (serve.Workload.Turns).
	Lengths   string `toml:"lengths"`
	Turns     *int   `toml:"turns"`
	ThinkTime string `toml:"think_time"`
}

type rawSpeculative struct {
	Method      string `toml:"method"`
	DraftTokens *int   `toml:"draft_tokens"`
	Acceptance  any    `toml:"acceptance"` // a number or an array of numbers
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
	if err := infile.CheckDepth(file, data, infile.MaxDepth); err != nil {
		return nil, err
	}
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
		// so the message stands without a key; but a number out of range
		// is reported at its own key, which LastKey then is.
		msg, ranged := rangeWords(pe.Message)
		if ranged && pe.LastKey != "" {
			return &Error{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: msg, Err: err}
		}
		return &Error{File: file, Line: pe.Position.Line, Msg: syntaxWords(pe.Message), Err: err}
	}
	if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		key := strings.ReplaceAll(m[2], `\"`, `"`)
		return &Error{File: file, Line: line, Key: key, Msg: typeWords(m[3]), Err: err}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: "), Err: err}
}

var (
	redefined   = regexp.MustCompile(`^Key '(.*)' has already been defined\.?$`)
	outOfRange  = regexp.MustCompile(`^(.*) is out of range for u?int(64|32|16|8)?$`)
	floatRange  = regexp.MustCompile(`^(.*) is out of range for float(64|32)$`)
	unsafeFloat = regexp.MustCompile(`^(.*) is out of the safe float(64|32) range$`)
)

// syntaxWords rewrites the TOML parser's messages that speak Go.
func syntaxWords(msg string) string {
	if m := redefined.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("key %q is defined twice", m[1])
	}
	if w, ok := rangeWords(msg); ok {
		return w
	}
	// The parser's end-of-input rune is 0, which it quotes as if the file
	// held a NUL byte (one it does hold is refused before, by name).
	return strings.ReplaceAll(msg, `'\x00'`, "the end of the file")
}

// rangeWords says the TOML parser's out-of-range messages without Go's
// types ("1e999 is out of range for float64"); ok: msg is one.
func rangeWords(msg string) (string, bool) {
	if m := outOfRange.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is too large for an integer", m[1]), true
	}
	if m := floatRange.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is too large for a number", m[1]), true
	}
	if m := unsafeFloat.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is too large an integer to read exactly as a number with a fraction (write it with an exponent)", m[1]), true
	}
	return "", false
}

// incompatible matches the decoder's words for a value of the wrong type.
var (
	incompatible = regexp.MustCompile(`^incompatible types: TOML value has type (\S+); destination has type (\S+)$`)
	mismatch     = regexp.MustCompile(`^type mismatch for \S+: expected (\S+) but found (\S+)$`)
)

// typeWords says a type mismatch in TOML's words ("is a string, want an
// integer") rather than Go's ("destination has type slice").
func typeWords(msg string) string {
	var got, want string
	if m := incompatible.FindStringSubmatch(msg); m != nil {
		got, want = m[1], m[2]
	} else if m := mismatch.FindStringSubmatch(msg); m != nil {
		got, want = m[2], m[1]
	} else {
		return msg
	}
	words := func(t string) string {
		switch {
		case t == "string":
			return "a string"
		case strings.HasPrefix(t, "int") || t == "integer" || strings.HasPrefix(t, "uint"):
			return "an integer"
		case strings.HasPrefix(t, "float"):
			return "a float"
		case t == "bool" || t == "boolean":
			return "a boolean"
		case t == "slice" || t == "array" || strings.HasPrefix(t, "[]"):
			return "an array"
		case t == "map" || t == "struct" || strings.HasPrefix(t, "map["):
			return "a table"
		}
		return "a " + t
	}
	out := fmt.Sprintf("is %s, want %s", words(got), words(want))
	if words(want) == "a string" && (words(got) == "an integer" || words(got) == "a float") {
		out += ` (a value with a unit is a quoted string, e.g. "96GB", "4.8TB/s", "1.5us")`
	}
	return out
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

// InputError is an error of the input a caller gave the loaders (a file
// that cannot be read, a name that is no shipped scenario, an override, a
// calibration source, an engine command line) that carries no position of
// its own; a positioned one is an *Error, which InputError may wrap. Every
// error of Open, Load, Parse, ReadSource, Source.Parse, SetCalibration,
// PlanSpace, CheckOverride, CheckWork, ReadManifest, ReadEngineArgs and
// Deployment.Scenario is one, so that a caller tells bad input from a
// failure by type (the CLI exits 2 on it). Its text is Err's.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// asInput makes *err an *InputError unless it is nil or one already; the
// exported loaders defer it.
func asInput(err *error) {
	if *err != nil && !errors.As(*err, new(*InputError)) {
		*err = &InputError{Err: *err}
	}
}
