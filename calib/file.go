// Package calib reads and writes moecast calibration files, imports
// measurements into them (nccl-tests output, the aiconfigurator perf
// database) and turns them into the tables that kernels and comm consult
// before their rooflines (kernels.Lookup, comm.Lookup).
//
// A calibration file is one TOML document (docs/calibration.md): a schema
// version, a file-level [provenance], and [[table]] entries, each with its
// op, the fixed keys it was measured for, its columns (units in their
// names: latency_us, bytes, tokens) and its rows as CSV inside a multi-line
// string, one measured point per line, so that a diff shows changed points
// and every error names its file:line. Every table carries its own
// provenance (GPU, fabric, versions, engine, date, command or source, how it
// was measured, corrections applied); fields a table leaves out are taken
// from the file-level provenance.
//
// Only op-level measurements go in: a calibration never fits end-to-end
// step times.
package calib

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"

	"github.com/klauspost/compress/zstd"
	"github.com/moecast/moecast/internal/infile"
)

// Schema is the calibration file schema this moecast reads and writes.
const Schema = 1

// Provenance says where a table's numbers come from and how they were
// measured.
type Provenance struct {
	GPU           string  `toml:"gpu,omitempty"`            // GPU preset name: "h200-sxm"
	GPULabel      string  `toml:"gpu_label,omitempty"`      // device name the tool reported
	GPUCount      int     `toml:"gpu_count,omitempty"`      // GPUs in the measured box
	GPUL2Bytes    float64 `toml:"gpu_l2_bytes,omitempty"`   // L2 size used to mark L2-resident rows
	Fabric        string  `toml:"fabric,omitempty"`         // "pcie-gen5", "nvlink4", ...
	Driver        string  `toml:"driver,omitempty"`         // NVIDIA driver version
	CUDA          string  `toml:"cuda,omitempty"`           // CUDA runtime version
	NCCL          string  `toml:"nccl,omitempty"`           // NCCL version
	Engine        string  `toml:"engine,omitempty"`         // serving engine the kernels come from: "vllm"
	EngineVersion string  `toml:"engine_version,omitempty"` // its version
	Kernel        string  `toml:"kernel,omitempty"`         // kernel or backend measured
	Date          string  `toml:"date,omitempty"`           // measurement date (YYYY-MM-DD)
	Command       string  `toml:"command,omitempty"`        // command that made this file or table
	Source        string  `toml:"source,omitempty"`         // upstream data: repository @ commit, path
	License       string  `toml:"license,omitempty"`        // license of the upstream data
	Launch        string  `toml:"launch,omitempty"`         // "cuda-graph", "eager" or "unknown"
	Cache         string  `toml:"cache,omitempty"`          // "flushed", "warm" (not flushed) or "unknown"
	Method        string  `toml:"method,omitempty"`         // how measured, in words
	// Corrections lists the corrections applied to the numbers (or marked
	// on rows) and the biases of the source they answer.
	Corrections []string `toml:"corrections,omitempty"`
}

// merge returns p with its empty fields taken from parent.
func (p Provenance) merge(parent Provenance) Provenance {
	s := func(a, b string) string {
		if a == "" {
			return b
		}
		return a
	}
	p.GPU, p.GPULabel, p.Fabric = s(p.GPU, parent.GPU), s(p.GPULabel, parent.GPULabel), s(p.Fabric, parent.Fabric)
	p.Driver, p.CUDA, p.NCCL = s(p.Driver, parent.Driver), s(p.CUDA, parent.CUDA), s(p.NCCL, parent.NCCL)
	p.Engine, p.EngineVersion, p.Kernel = s(p.Engine, parent.Engine), s(p.EngineVersion, parent.EngineVersion), s(p.Kernel, parent.Kernel)
	p.Date, p.Command, p.Source, p.License = s(p.Date, parent.Date), s(p.Command, parent.Command), s(p.Source, parent.Source), s(p.License, parent.License)
	p.Launch, p.Cache, p.Method = s(p.Launch, parent.Launch), s(p.Cache, parent.Cache), s(p.Method, parent.Method)
	if p.GPUCount == 0 {
		p.GPUCount = parent.GPUCount
	}
	if p.GPUL2Bytes == 0 {
		p.GPUL2Bytes = parent.GPUL2Bytes
	}
	if len(p.Corrections) == 0 {
		p.Corrections = parent.Corrections
	}
	return p
}

// check reports the first required field that is missing or invalid.
func (p Provenance) check() error {
	switch {
	case p.GPU == "":
		return errors.New("provenance: gpu is missing")
	case p.Date == "":
		return errors.New("provenance: date is missing")
	case p.Source == "" && p.Command == "":
		return errors.New("provenance: needs source or command (where the numbers come from)")
	}
	switch p.Launch {
	case "cuda-graph", "eager", "unknown":
	case "":
		return errors.New(`provenance: launch is missing ("cuda-graph", "eager" or "unknown")`)
	default:
		return fmt.Errorf(`provenance: launch %q: want "cuda-graph", "eager" or "unknown"`, p.Launch)
	}
	switch p.Cache {
	case "flushed", "warm", "unknown":
	case "":
		return errors.New(`provenance: cache is missing ("flushed", "warm" or "unknown")`)
	default:
		return fmt.Errorf(`provenance: cache %q: want "flushed", "warm" or "unknown"`, p.Cache)
	}
	if p.GPUCount < 0 || p.GPUL2Bytes < 0 || math.IsNaN(p.GPUL2Bytes) {
		return errors.New("provenance: gpu_count and gpu_l2_bytes must not be negative")
	}
	return nil
}

// Table is one calibration table: an op, the fixed keys it was measured
// for, and its measured rows.
type Table struct {
	Name string
	Op   string // gemm, moe, mla, gqa, prefill, elementwise, unmapped, allreduce, allgather, reducescatter, alltoall, ep, gdn
	Keys Keys
	// Columns name the row values, units in the names (latency_us, bytes).
	Columns []string
	// Rows hold the measured points in column order; row i is Rows[i] and
	// is called row i+1 in Sources.
	Rows       [][]float64
	Provenance Provenance // as written; Effective merges the file's

	loo      looer // the built table (after Parse or Load)
	line     int   // line of the [[table]] header (0 when built in memory)
	rowLines []int // file line of each row (nil when built in memory)
	// src is the file an importer read the rows from (rowLines are then
	// that file's lines); "" for a loaded calibration file.
	src string
	// lazy: the table is a stub of an indexed embedded calibration
	// (EmbeddedTables): name, op, keys, GPU and fabric; its columns, rows
	// and provenance are read on its first lookup.
	lazy *lazyTable
}

// Keys are a table's fixed parameters; which apply depends on the op.
type Keys struct {
	Dtype        string `toml:"dtype,omitempty"`        // gemm: weight format; moe: quant; mla: projection dtype
	KVDtype      string `toml:"kv_dtype,omitempty"`     // mla, gqa: KV cache dtype
	Impl         string `toml:"impl,omitempty"`         // collectives: nccl, vllm, sglang, trtllm, oneshot, twoshot, auto; ep: deepep_ll
	Mode         string `toml:"mode,omitempty"`         // collectives: graph, eager or empty
	Phase        string `toml:"phase,omitempty"`        // ep: dispatch or combine; gdn: prefill or decode
	Distribution string `toml:"distribution,omitempty"` // moe: routing distribution
	Experts      int    `toml:"experts,omitempty"`      // moe
	TopK         int    `toml:"topk,omitempty"`         // moe
	Hidden       int    `toml:"hidden,omitempty"`       // moe, mla
	Inter        int    `toml:"inter,omitempty"`        // moe: full expert FFN width
	KVLoRARank   int    `toml:"kv_lora_rank,omitempty"` // mla
	QKRopeDim    int    `toml:"qk_rope_dim,omitempty"`  // mla
	QLoRARank    int    `toml:"q_lora_rank,omitempty"`  // mla (optional, with hidden, qk_nope_dim, v_head_dim)
	QKNopeDim    int    `toml:"qk_nope_dim,omitempty"`  // mla
	VHeadDim     int    `toml:"v_head_dim,omitempty"`   // mla, prefill, gdn
	HeadDim      int    `toml:"head_dim,omitempty"`     // gqa, prefill, gdn: (q/k) head dim
	Window       int    `toml:"window,omitempty"`       // prefill: sliding window (keys; none when absent)
}

// eachSet calls str for each non-empty string key and num for each
// non-zero integer key, with its TOML name, in the order the file writes
// them (the one list of key names for writing and for display).
func (k Keys) eachSet(str func(name, v string), num func(name string, v int)) {
	for _, f := range []struct{ name, v string }{
		{"dtype", k.Dtype}, {"kv_dtype", k.KVDtype}, {"impl", k.Impl},
		{"mode", k.Mode}, {"phase", k.Phase}, {"distribution", k.Distribution},
	} {
		if f.v != "" {
			str(f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"experts", k.Experts}, {"topk", k.TopK}, {"hidden", k.Hidden}, {"inter", k.Inter},
		{"kv_lora_rank", k.KVLoRARank}, {"qk_rope_dim", k.QKRopeDim}, {"q_lora_rank", k.QLoRARank},
		{"qk_nope_dim", k.QKNopeDim}, {"v_head_dim", k.VHeadDim}, {"head_dim", k.HeadDim},
		{"window", k.Window},
	} {
		if f.v != 0 {
			num(f.name, f.v)
		}
	}
}

// File is a loaded or imported calibration.
type File struct {
	Schema     int
	Provenance Provenance
	Tables     []Table
	// Name is where the file came from ("embedded:h200-sxm" or its path);
	// Sources name tables as Name#table.
	Name string
	// Warnings are an importer's remarks on what it read (a device name
	// that matches no GPU preset, a fabric not given, a systems file
	// missing); they are not written to the file.
	Warnings []string

	kt *kernels.Tables
	ct *comm.Tables
	// deferred: the MoE, GQA and GDN tables build their curves on first use
	// (Embedded sets it; TestEmbeddedDeferred builds them all eagerly)
	deferred bool
	// embedded: built into moecast (Embedded), not a file the user passed;
	// its kernel tables rank below the user's (kernels.Origin)
	embedded bool
}

// Effective is the table's provenance with the file's filling the gaps.
func (f *File) Effective(t *Table) Provenance { return t.Provenance.merge(f.Provenance) }

// Load reads, validates and builds the calibration file at path.
func Load(path string) (*File, error) {
	data, err := infile.ReadFile(path, nil, infile.MaxCalibration)
	if err != nil {
		return nil, fmt.Errorf("calibration file: %w", err)
	}
	if strings.HasSuffix(path, ".zst") {
		if data, err = unzstd(path, data); err != nil {
			return nil, err
		}
	}
	return Parse(path, data)
}

// unzstd decompresses the calibration file path, whose compressed bytes
// are data, to at most infile.MaxCalibration bytes, the bound on a plain
// one: a zstd frame can repeat far more than it holds (a 120 KB file of
// RLE blocks decompresses to 4 GB), and DecodeAll would allocate it all
// before Parse refused it. The stream is measured first, without keeping
// it (DecodeAll's own size limits print to stderr when they trip:
// klauspost/compress zstd/framedec.go runDecoder @ v1.20.4), then decoded
// into a buffer of its size.
func unzstd(path string, data []byte) ([]byte, error) {
	dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(infile.MaxCalibration))
	if err != nil {
		return nil, fmt.Errorf("calibration file %s: not zstd-compressed TOML: %w", path, err)
	}
	defer dec.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(dec, infile.MaxCalibration+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("calibration file %s: not zstd-compressed TOML: %w", path, err)
	case n > infile.MaxCalibration:
		return nil, fmt.Errorf("calibration file %s: decompresses to more than %d MiB, more than a calibration file holds", path, infile.MaxCalibration>>20)
	}
	if err := dec.Reset(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("calibration file %s: not zstd-compressed TOML: %w", path, err)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(dec, out); err != nil {
		return nil, fmt.Errorf("calibration file %s: not zstd-compressed TOML: %w", path, err)
	}
	return out, nil
}

// wire mirrors the TOML document.
type wireFile struct {
	Schema     int         `toml:"schema"`
	Provenance Provenance  `toml:"provenance"`
	Tables     []wireTable `toml:"table"`
}

type wireTable struct {
	Name string `toml:"name"`
	Op   string `toml:"op"`
	Keys
	Columns    []string   `toml:"columns"`
	Rows       string     `toml:"rows"`
	Provenance Provenance `toml:"provenance"`
}

// Parse validates and builds a calibration file from its bytes; name is
// used in errors (name:line: ...) and in Sources.
func Parse(name string, data []byte) (_ *File, err error) {
	defer asInput(&err)
	f, err := parseUnbuilt(name, data)
	if err != nil {
		return nil, err
	}
	if err := f.build(); err != nil {
		return nil, err
	}
	return f, nil
}

// parseUnbuilt is Parse without the build: every check of the text, the
// keys and the rows, but no lookup tables (Embedded builds the file once,
// after merging).
func parseUnbuilt(name string, data []byte) (*File, error) {
	if err := infile.CheckDepth(name, data, infile.MaxDepth); err != nil {
		return nil, err
	}
	// One decode into the whole document. Only when it fails is the file
	// decoded again for its schema alone, so that a file of another schema
	// (whose keys may not fit this one's types) is refused for its schema
	// first, as before: the document is decoded once on the good path (a
	// 6 MB embedded calibration took two full decodes).
	var w wireFile
	text := string(data) // the one copy: the rows and every key are parts of it
	md, err := decodeWire(text, &w)
	if err != nil {
		var probe struct {
			Schema int `toml:"schema"`
		}
		if _, perr := toml.Decode(text, &probe); perr != nil {
			return nil, tomlErr(name, perr)
		}
		if err := checkSchema(name, probe.Schema); err != nil {
			return nil, err
		}
		return nil, tomlErr(name, err)
	}
	if err := checkSchema(name, w.Schema); err != nil {
		return nil, err
	}
	loc := locate(text)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, fmt.Errorf("%s:%d: unknown key %q", name, loc.keyLine(k), k.String())
	}
	f := &File{Schema: w.Schema, Provenance: w.Provenance, Name: name}
	for i, wt := range w.Tables {
		t := Table{Name: wt.Name, Op: wt.Op, Keys: wt.Keys, Columns: wt.Columns, Provenance: wt.Provenance, line: loc.tableLine(i)}
		at := fmt.Sprintf("%s:%d: table %d (%q)", name, t.line, i+1, t.Name)
		if t.Name == "" {
			return nil, fmt.Errorf("%s: name is missing", at)
		}
		for j := range i {
			if f.Tables[j].Name == t.Name {
				return nil, fmt.Errorf("%s: duplicate table name (also table %d)", at, j+1)
			}
		}
		if err := f.Effective(&t).check(); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		spec, err := specFor(&t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		rowsLine := loc.rowsLine(i)
		rows, lines, err := parseRows(wt.Rows, rowsLine, len(t.Columns))
		if err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		t.Rows, t.rowLines = rows, lines
		if err := spec.checkRows(&t); err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		f.Tables = append(f.Tables, t)
	}
	return f, nil
}

// decodeWire decodes a calibration file with its rows cut out of the
// text the TOML decoder lexes (cutRows) and put back after; when that
// fails in any way, it decodes the whole text as it is, so that every
// error is the decoder's own on the file's own text.
func decodeWire(data string, w *wireFile) (toml.MetaData, error) {
	c := cutRows(data)
	if md, err := toml.Decode(c.text, w); err == nil && c.pasteRows(w.Tables) {
		return md, nil
	}
	*w = wireFile{}
	return toml.Decode(data, w)
}

// checkSchema refuses a file whose schema is missing or not Schema.
func checkSchema(name string, schema int) error {
	switch schema {
	case Schema:
		return nil
	case 0:
		return fmt.Errorf("%s: not a moecast calibration file: schema is missing (want schema = %d)", name, Schema)
	}
	return fmt.Errorf("%s: calibration schema %d is not supported: this moecast reads schema %d (update moecast or re-import the data)", name, schema, Schema)
}

var reTOMLLine = regexp.MustCompile(`(?s)^toml: line (\d+) (.*)$`)

// oneLine escapes line breaks that a parser quoted from the input, so that
// every error prints on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

func tomlErr(name string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// The parser's end-of-input rune is 0, which it quotes as if the
		// file held a NUL byte (one it does hold is refused before).
		msg := strings.ReplaceAll(pe.Message, `'\x00'`, "the end of the file")
		return fmt.Errorf("%s:%d: %s", name, pe.Position.Line, oneLine(msg))
	}
	// Type errors come as "toml: line N (last key "k"): msg".
	if m := reTOMLLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], oneLine(m[2]))
	}
	return fmt.Errorf("%s: %s", name, oneLine(err.Error()))
}

// parseRows reads the CSV rows string. firstLine is the file line of the
// `rows = """` key (0 when unknown); TOML drops the newline right after the
// opening quotes, so the string's line k is file line firstLine+1+k.
// Blank lines and lines starting with # are skipped.
func parseRows(s string, firstLine, ncol int) ([][]float64, []int, error) {
	// One backing array for the values and one for the line numbers,
	// sized by the lines (a bound on the rows); each row is a full slice
	// expression of the backing array, so an append to it copies.
	nl := strings.Count(s, "\n") + 1
	vals := make([]float64, 0, nl*ncol)
	rows := make([][]float64, 0, nl)
	lines := make([]int, 0, nl)
	for k := 0; len(s) > 0 || k == 0; k++ {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		ln := 0
		if firstLine > 0 {
			ln = firstLine + 1 + k
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if n := strings.Count(t, ",") + 1; n != ncol {
			return nil, nil, fmt.Errorf("%d: row has %d values, the table has %d columns", ln, n, ncol)
		}
		at := len(vals)
		for j := range ncol {
			fld := t
			if i := strings.IndexByte(t, ','); i >= 0 {
				fld, t = t[:i], t[i+1:]
			}
			fld = strings.TrimSpace(fld)
			v, ok := parseDigits(fld)
			var err error
			if !ok {
				v, err = strconv.ParseFloat(fld, 64)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%d: value %d %q is not a number", ln, j+1, fld)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%d: value %d is %v: every value must be finite", ln, j+1, v)
			}
			vals = append(vals, v)
		}
		rows = append(rows, vals[at:len(vals):len(vals)])
		lines = append(lines, ln)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%d: table has no rows", firstLine)
	}
	return rows, lines, nil
}

// parseDigits reads a field of 1 to 15 decimal digits (the axes of most
// rows) as strconv.ParseFloat would, exactly (below 10^15 < 2^53 every
// integer is a float64), without its general path; ok is false for any
// other field.
func parseDigits(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	var n int64
	for i := range len(s) {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = 10*n + int64(d)
	}
	return float64(n), true
}

// latencyScale maps a latency column's unit suffix to seconds.
var latencyScale = map[string]unit.Seconds{"us": unit.Microsecond, "ms": unit.Millisecond, "s": 1}

// latencyColumn splits "latency_us" into its unit scale; base is
// "latency" or "inplace_latency".
func latencyColumn(col, base string) (unit.Seconds, bool, error) {
	if col == base {
		return 0, false, fmt.Errorf("column %q has no unit: name it %s_us, %s_ms or %s_s", col, base, base, base)
	}
	if !strings.HasPrefix(col, base+"_") {
		return 0, false, nil
	}
	sc, ok := latencyScale[strings.TrimPrefix(col, base+"_")]
	if !ok {
		return 0, false, fmt.Errorf("column %q: unknown time unit (want %s_us, %s_ms or %s_s)", col, base, base, base)
	}
	return sc, true, nil
}
