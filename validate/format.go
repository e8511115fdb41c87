package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/moecast/moecast/internal/infile"
)

// A Format is one result format of the field: one detection case and one
// parser, as golang.org/x/exp/trace's NewReader picks its parser from what
// the input starts with. Each format lives in its own file
// (format_<name>.go) and registers itself in an init function; ReadBench
// tries the formats' Detect in Order and reads the file with the first that
// claims it.
//
// A file format sets Detect and Read; a directory format (a sweep's output
// directory) sets DetectDir and ReadDir. A format may set both.
type Format struct {
	// Name names the format in messages, in BenchResult.Family and in a
	// corpus manifest's `format` key: "vllm", "sglang", "aiconfigurator", ...
	Name string
	// Looks says what Detect looks for, in the user's words; an unknown
	// file's error lists every format's.
	Looks string
	// Order sorts detection: lower first. A format whose Detect is a strict
	// subset of another's (SGLang's keys among vLLM's) goes first.
	Order int

	Detect func(s *Sniff) bool
	// Read parses data, the whole file; name is used in errors and in the
	// records' File. Errors are *BenchError.
	Read func(name string, data []byte) ([]BenchResult, error)

	DetectDir func(fsys fs.FS) bool
	ReadDir   func(fsys fs.FS, name string) ([]BenchResult, error)
}

var (
	formatsMu sync.Mutex
	formats   []Format
)

// RegisterFormat adds a format; it panics on a duplicate name or a format
// with neither a file nor a directory parser (a programming error, found by
// any test of the package).
func RegisterFormat(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if f.Name == "" || (f.Read == nil || f.Detect == nil) && (f.ReadDir == nil || f.DetectDir == nil) {
		panic("validate: RegisterFormat: a format needs a name and Detect+Read or DetectDir+ReadDir")
	}
	for _, g := range formats {
		if g.Name == f.Name {
			panic("validate: RegisterFormat: duplicate format " + f.Name)
		}
	}
	formats = append(formats, f)
	slices.SortStableFunc(formats, func(a, b Format) int {
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Formats lists the registered formats in detection order.
func Formats() []Format {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	return slices.Clone(formats)
}

// FormatByName returns the named format.
func FormatByName(name string) (Format, bool) {
	for _, f := range Formats() {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// FormatNames lists the registered formats' names in detection order.
func FormatNames() []string {
	var out []string
	for _, f := range Formats() {
		out = append(out, f.Name)
	}
	return out
}

// Sniff is what detection sees of a file: its name, its bytes and, parsed
// once on demand, the first JSON object in it (the file's, the first
// line's or the first element of an array) and its first line.
type Sniff struct {
	Name string
	Data []byte // the whole file, leading byte-order mark and spaces removed

	once   sync.Once
	object map[string]json.RawMessage
	array  bool
	line1  []byte
}

// newSniff prepares data for detection.
func newSniff(name string, data []byte) *Sniff {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	return &Sniff{Name: name, Data: bytes.TrimLeft(data, " \t\r\n")}
}

func (s *Sniff) parse() {
	s.once.Do(func() {
		s.line1 = s.Data
		if i := bytes.IndexByte(s.Data, '\n'); i >= 0 {
			s.line1 = s.Data[:i]
		}
		s.line1 = bytes.TrimSpace(s.line1)
		if len(s.Data) == 0 {
			return
		}
		switch s.Data[0] {
		case '{':
			if obj, err := decodeObject(bytes.TrimSpace(s.Data)); err == nil {
				s.object = obj
			} else if obj, err := decodeObject(s.line1); err == nil {
				s.object = obj
			}
		case '[':
			var arr []json.RawMessage
			if json.Unmarshal(pythonFloats(s.Data), &arr) == nil && len(arr) > 0 {
				if obj, err := decodeObject(arr[0]); err == nil {
					s.object, s.array = obj, true
				}
			}
		}
	})
}

// Object is the first JSON object of the file (nil when there is none).
func (s *Sniff) Object() map[string]json.RawMessage { s.parse(); return s.object }

// IsArray says the file is a JSON array (Object is its first element).
func (s *Sniff) IsArray() bool { s.parse(); return s.array }

// Has says whether the first JSON object has every key (null counts as
// absent).
func (s *Sniff) Has(keys ...string) bool {
	obj := s.Object()
	if obj == nil {
		return false
	}
	for _, k := range keys {
		if v, ok := obj[k]; !ok || string(v) == "null" {
			return false
		}
	}
	return true
}

// HasAny says whether the first JSON object has one of the keys.
func (s *Sniff) HasAny(keys ...string) bool {
	for _, k := range keys {
		if s.Has(k) {
			return true
		}
	}
	return false
}

// FirstLine is the file's first line, trimmed.
func (s *Sniff) FirstLine() []byte { s.parse(); return s.line1 }

// maxBenchFile bounds what ReadBench reads: a result file with per-request
// arrays of 100k requests is a few tens of MB.
const maxBenchFile = 1 << 30

// ReadBench reads every result record in r with the first registered
// format whose detection claims it. name is used in errors. A file no
// format claims is an error naming what each format looks for.
func ReadBench(name string, r io.Reader) (_ []BenchResult, err error) {
	defer asRead(&err)
	data, err := io.ReadAll(io.LimitReader(r, maxBenchFile+1))
	if err != nil {
		return nil, &BenchError{File: name, Msg: err.Error()}
	}
	if len(data) > maxBenchFile {
		return nil, &BenchError{File: name, Msg: "larger than 1 GiB: not a benchmark result"}
	}
	return readBenchBytes(name, data)
}

// readBenchBytes is ReadBench over bytes already read.
func readBenchBytes(name string, data []byte) ([]BenchResult, error) {
	s := newSniff(name, data)
	if len(bytes.TrimSpace(s.Data)) == 0 {
		return nil, &BenchError{File: name, Msg: "empty file: not a benchmark result"}
	}
	if f := detect(s); f != nil {
		return f.Read(name, s.Data)
	}
	return nil, unknownShape(name, false)
}

// detect is the first file format that claims s, or nil.
func detect(s *Sniff) *Format {
	for _, f := range Formats() {
		if f.Detect != nil && f.Detect(s) {
			return &f
		}
	}
	return nil
}

// ReadBenchAs reads data as the named format, without detection (a corpus
// manifest's `format` key, or --results-format).
func ReadBenchAs(format, name string, data []byte) (_ []BenchResult, err error) {
	defer asRead(&err)
	f, ok := FormatByName(format)
	if !ok || f.Read == nil {
		return nil, &BenchError{File: name, Key: "format", Msg: fmt.Sprintf("unknown result format %q; want one of %s", format, strings.Join(FormatNames(), ", "))}
	}
	return f.Read(name, newSniff(name, data).Data)
}

// ReadBenchFS reads the file or directory p of fsys: a directory with the
// first directory format that claims it, a file as ReadBench.
func ReadBenchFS(fsys fs.FS, p string) (_ []BenchResult, err error) {
	defer asRead(&err)
	return readBenchFS(fsys, p)
}

func readBenchFS(fsys fs.FS, p string) ([]BenchResult, error) {
	st, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, &BenchError{File: p, Msg: pathErrMsg(err)}
	}
	if st.IsDir() {
		sub, err := fs.Sub(fsys, p)
		if err != nil {
			return nil, &BenchError{File: p, Msg: pathErrMsg(err)}
		}
		for _, f := range Formats() {
			if f.DetectDir != nil && f.DetectDir(sub) {
				return f.ReadDir(sub, p)
			}
		}
		return nil, unknownShape(p, true)
	}
	// A FIFO would block and a device never end: refused before reading,
	// as every input is (internal/infile).
	if !st.Mode().IsRegular() {
		return nil, &BenchError{File: p, Msg: "is " + infile.Kind(st.Mode()) + ", not a regular file; give a file (or - for standard input)"}
	}
	if st.Size() > maxBenchFile {
		return nil, &BenchError{File: p, Msg: "larger than 1 GiB: not a benchmark result"}
	}
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, &BenchError{File: p, Msg: pathErrMsg(err)}
	}
	if len(data) > maxBenchFile {
		return nil, &BenchError{File: p, Msg: "larger than 1 GiB: not a benchmark result"}
	}
	return readBenchBytes(p, data)
}

// ReadBenchPath reads a result file or directory of the operating system.
func ReadBenchPath(p string) (_ []BenchResult, err error) {
	defer asRead(&err)
	dir, base := path.Split(filepathToSlash(p))
	if dir == "" {
		dir = "."
	}
	if base == "" { // "dir/"
		dir, base = path.Split(strings.TrimSuffix(filepathToSlash(p), "/"))
		if dir == "" {
			dir = "."
		}
	}
	rs, err := readBenchFS(os.DirFS(dir), base)
	// Errors name the path as the user gave it.
	if be, ok := err.(*BenchError); ok && be.File == base {
		be.File = p
	}
	for i := range rs {
		if rs[i].File == base || strings.HasPrefix(rs[i].File, base+"/") {
			rs[i].File = strings.TrimSuffix(p, "/") + strings.TrimPrefix(rs[i].File, base)
		}
	}
	return rs, err
}

func filepathToSlash(p string) string { return strings.ReplaceAll(p, string(os.PathSeparator), "/") }

func pathErrMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// unknownShape names what each format looked for.
func unknownShape(name string, dir bool) error {
	var looks []string
	for _, f := range Formats() {
		if (dir && f.DetectDir != nil) || (!dir && f.Detect != nil) {
			looks = append(looks, f.Name+" ("+f.Looks+")")
		}
	}
	if dir && len(looks) == 0 {
		return &BenchError{File: name, Msg: "is a directory, and no result format is a directory: give the result files"}
	}
	what := "file"
	if dir {
		what = "directory"
	}
	return &BenchError{File: name, Msg: fmt.Sprintf("not a result %s of a known format; looked for: %s", what, strings.Join(looks, "; "))}
}

// jsonLines calls fn for every non-empty line of data with its 1-based
// number and its decoded object; a line that is not a JSON object is an
// error naming the line.
func jsonLines(name string, data []byte, fn func(line int, obj map[string]json.RawMessage) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxBenchFile)
	line := 0
	for sc.Scan() {
		line++
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		obj, err := decodeObject(l)
		if err != nil {
			return &BenchError{File: name, Line: line, Msg: "not valid JSON: " + jsonMsg(err)}
		}
		if err := fn(line, obj); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &BenchError{File: name, Line: line + 1, Msg: err.Error()}
	}
	return nil
}
