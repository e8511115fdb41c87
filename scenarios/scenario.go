// Package scenarios loads moecast scenario files: TOML documents that name a
// model, a GPU box, a parallel layout, runtime settings, a workload (batch
// sizes and context length) and speculative decoding, and turns them into a
// validated sim.Config. It also embeds the scenarios shipped in this
// directory; the first, kimi-k2.5-rtx-pro-6000-pcie-tp8.toml, is the default
// that `moecast predict` runs without an argument.
//
// The loader is strict: a key that nothing reads is an error, and every
// error names the file, the line and the key ("x.toml:12: parallel.tp: ...").
// Values with units are strings parsed by internal/unit ("96GB", "4.8TB/s",
// "500TFLOPS", "1.5us"); GB is 1e9 bytes, GiB 2^30. The schema, with every
// key's type, unit and default, is in README.md.
package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"

	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
)

// DefaultName is the embedded scenario `moecast predict` runs by default.
const DefaultName = "kimi-k2.5-rtx-pro-6000-pcie-tp8"

// embedded holds the shipped scenarios and the model configs they read.
//
//go:embed *.toml configs/*.json
var embedded embed.FS

// StdinName is the file name of a scenario read from standard input, in
// error messages ("<stdin>:12: parallel.tp: ..."); relative paths in it
// resolve against the current directory.
const StdinName = "<stdin>"

// embeddedPrefix marks a scenario read from the binary in error messages.
const embeddedPrefix = "embedded:"

// Scenario is a loaded, validated scenario.
type Scenario struct {
	Name string // the name key, or the file's base name when absent
	File string // the path it was read from, or "embedded:<name>.toml"

	// noGEMMBatch: the gemm-batch-efficiency mechanism is off; customGEMM
	// holds the custom GPU's own GEMM fractions while the custom-gpu-gemm
	// mechanism is off (Config.GPU's are zero then).
	noGEMMBatch bool
	customGEMM  *[2]float64
	// fa2MixedRead holds the GPU's FA2MixedRead while the fa2-mixed-gqa
	// mechanism is off (Config.GPU's is zero then).
	fa2MixedRead *unit.BytesPerSecond
	// cudaMemory holds the GPU's CUDAMemory while the cuda-memory
	// mechanism is off (Config.GPU's is zero then).
	cudaMemory *unit.Bytes

	// ModelRef is the model as written: a preset name or a config.json path
	// (resolved against the scenario's directory).
	ModelRef string
	// Calibration is hardware.calibration as given, one element per
	// source ("embedded", "none" or a path); CalibrationNote says what it
	// resolved to (which tables, or "roofline only"); CalibrationUses
	// names each calibration file consulted and what it gave, in order.
	Calibration     []string
	CalibrationNote string
	CalibrationUses []calib.Use

	// KVCacheFromCheckpoint: model.kv_cache was absent or "auto" and the
	// KV-cache dtype is the one the checkpoint declares
	// (model.Quant.KVCache).
	KVCacheFromCheckpoint bool

	Batches []int // workload.batch
	Context int   // workload.context, tokens

	// Serving is the serving workload and engine (moecast simulate).
	Serving Serving
	// Plan is [plan] with the request shape, for `moecast plan` (plan.go).
	Plan Plan
	// Disagg is [disagg], a disaggregated deployment (disagg.go); nil
	// for one aggregated instance ([parallel]).
	Disagg *DisaggSpec

	// specOff holds [speculative] while the speculative mechanism is
	// off (mechanisms.go).
	specOff sim.Spec

	// Config is the sim configuration; sim.New(Config) has accepted it.
	Config sim.Config

	// Warnings are non-fatal remarks on the scenario (a key ignored, a
	// calibration missing), printed by the CLI below its output.
	Warnings []string

	calWarnings []string // the Warnings that setCalibration added
	doc         *doc
	fsys        fs.FS  // where relative paths resolve; nil means the OS file system
	dir         string // the scenario's directory (OS path or path inside fsys)
	// root is the directory on disk that fsys reads ("" when fsys is not
	// a directory on disk: the shipped scenarios and corpus).
	root string
	// modelFile is model.config as read (a path in fsys, else on disk).
	modelFile string
}

// InputFiles are the files on disk the scenario was read from and reads:
// the scenario file, model.config, each calibration file and
// workload.trace. A command's output must be none of them. Files of a
// file system that is not on disk (the shipped scenarios) are not named.
func (s *Scenario) InputFiles() []string {
	var out []string
	add := func(p string) { // p as the scenario names it: in fsys, else on disk
		switch {
		case p == "":
		case s.fsys == nil:
			out = append(out, p)
		case s.root != "":
			out = append(out, filepath.Join(s.root, filepath.FromSlash(p)))
		}
	}
	if s.File != infile.Stdin && !strings.HasPrefix(s.File, embeddedPrefix) {
		add(s.File)
	}
	add(s.modelFile)
	if t := s.Serving.Trace; t != "" {
		if s.fsys != nil {
			add(path.Clean(path.Join(s.dir, t)))
		} else {
			add(s.osPath(t))
		}
	}
	for _, u := range s.CalibrationUses {
		if !strings.HasPrefix(u.Name, "embedded") {
			out = append(out, u.Name)
		}
	}
	return out
}

// Load reads and validates the scenario file at path. Relative paths inside
// it (model.config, hardware.calibration) resolve against its directory.
func Load(path string) (_ *Scenario, err error) {
	defer asInput(&err)
	data, err := infile.ReadFile(path, nil, infile.MaxScenario)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse validates the scenario in data. name is the file name used in error
// messages and the base for relative paths (its directory; the current
// directory when name has none).
func Parse(name string, data []byte) (_ *Scenario, err error) {
	defer asInput(&err)
	return parse(name, data, nil, dirOf(name))
}

// parseFS reads and validates the scenario at p inside fsys; its relative
// paths resolve inside fsys (a corpus shipped in the binary).
func parseFS(fsys fs.FS, p string) (*Scenario, error) {
	data, err := infile.ReadFS(fsys, p, infile.MaxScenario)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return parse(p, data, fsys, path.Dir(p))
}

// ReadRelative reads a file named in the scenario (workload.trace): p
// resolves against the scenario's directory, in its file system. It
// returns the data and the resolved name.
func (s *Scenario) ReadRelative(p string) ([]byte, string, error) {
	if s.fsys != nil {
		q := path.Clean(path.Join(s.dir, p))
		data, err := infile.ReadFS(s.fsys, q, infile.MaxRequestLog)
		return data, q, err
	}
	q := s.osPath(p)
	data, err := infile.ReadFile(q, nil, infile.MaxRequestLog)
	return data, q, err
}

// Default is the embedded default scenario (DefaultName).
func Default() (*Scenario, error) { return Embedded(DefaultName) }

// Embedded loads a shipped scenario by name ("qwen3-235b-h100-tp4", with or
// without ".toml").
func Embedded(name string) (_ *Scenario, err error) {
	defer asInput(&err)
	file := strings.TrimSuffix(name, ".toml") + ".toml"
	data, err := embedded.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("no shipped scenario %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return parse(embeddedPrefix+file, data, embedded, ".")
}

// Names lists the shipped scenarios, sorted, without ".toml".
func Names() []string {
	ents, _ := fs.Glob(embedded, "*.toml")
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = strings.TrimSuffix(e, ".toml")
	}
	sort.Strings(names)
	return names
}

// EmbeddedSource returns the text of a shipped scenario (for docs and
// tests).
func EmbeddedSource(name string) ([]byte, error) {
	return embedded.ReadFile(strings.TrimSuffix(name, ".toml") + ".toml")
}

// Open loads arg as a scenario file if such a file exists, else as the name
// of a shipped scenario.
func Open(arg string) (_ *Scenario, err error) {
	defer asInput(&err)
	if _, err := os.Stat(arg); err != nil && errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(arg, `/\`) {
		if s, eerr := Embedded(arg); eerr == nil {
			return s, nil
		}
		return nil, fmt.Errorf("read scenario: %w (nor is %q a shipped scenario: %s)", err, arg, strings.Join(Names(), ", "))
	}
	return Load(arg)
}

func parse(file string, data []byte, fsys fs.FS, dir string) (*Scenario, error) {
	return parseWith(file, data, fsys, dir, nil)
}

// dirOf is the directory of an OS path, "." when it has none.
func dirOf(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	return path.Dir(name)
}

// Sim builds the simulator for the scenario's Config. A configuration error
// from sim comes back as an *Error with the scenario line of its key.
func (s *Scenario) Sim() (*sim.Sim, error) {
	sm, err := sim.New(s.Config)
	if err != nil {
		return nil, s.KeyError(err)
	}
	return sm, nil
}

// KeyError maps an error that names a field (*model.FieldError from sim or serve,
// *model.LayoutError) to an *Error with the file, the scenario key that
// sets the field and its line. Other errors are returned with the file
// name in front.
func (s *Scenario) KeyError(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	var fe *model.FieldError
	if errors.As(err, &fe) {
		if key, ok := s.simKey(fe.Field); ok {
			return s.keyError(key, fe.Msg, err)
		}
	}
	if ke := s.serveKeyError(err); ke != nil {
		return ke
	}
	var le *model.LayoutError
	if errors.As(err, &le) {
		if key, ok := s.simKey("Layout." + le.Field); ok {
			return &Error{File: s.File, Line: s.doc.line(key), Key: key, Msg: le.Msg, Err: err}
		}
	}
	return &Error{File: s.File, Msg: err.Error(), Err: err}
}

// simKey is the scenario key that sets sim.Config field f: simKeys's,
// except that the layout of a disaggregated scenario's own instance is
// its decode pool's ([disagg.decode], buildDisagg), which has no
// [parallel].
func (s *Scenario) simKey(f string) (string, bool) {
	key, ok := simKeys[f]
	if ok && s.Disagg != nil && (key == "parallel" || strings.HasPrefix(key, "parallel.")) {
		key = "disagg.decode" + strings.TrimPrefix(key, "parallel")
	}
	return key, ok
}

// simKeys maps the fields that sim's FieldErrors name (sim.Config fields
// and Step's arguments) to the scenario keys that set them.
var simKeys = map[string]string{
	"Model":                "model",
	"KVCache":              "model.kv_cache",
	"GPUs":                 "hardware.gpus",
	"GPU":                  "hardware.gpu",
	"Fabric":               "hardware.fabric",
	"Layout":               "parallel",
	"Layout.TP":            "parallel.tp",
	"Layout.DP":            "parallel.dp",
	"Layout.EP":            "parallel.ep",
	"AllReduce":            "runtime.allreduce",
	"GPUMemoryUtilization": "runtime.gpu_memory_utilization",
	"Spec.Method":          "speculative.method",
	"Spec.DraftTokens":     "speculative.draft_tokens",
	"Spec.Acceptance":      "speculative.acceptance",
	"batch":                "workload.batch",
	"context":              "workload.context",
}

// Line is the 1-based line that sets key ("parallel.tp"), or of its
// enclosing table, or 0 when neither is in the file.
func (s *Scenario) Line(key string) int { return s.doc.line(key) }

// Given reports whether key is set in the file (rather than defaulted).
func (s *Scenario) Given(key string) bool {
	_, ok := s.doc.lines[key]
	return ok
}
