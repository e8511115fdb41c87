package calib

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/moecast/moecast/internal/infile"
)

// This file reads the parquet tables of aiconfigurator's perf database
// (systems/data/<system>/<op>/<framework>/<version>/*.parquet) through
// github.com/parquet-go/parquet-go and hands each to the CSV readers of
// perfdb.go as the CSV the same table converts to: one header line of the
// schema's column names, one line per row, so that every error still names
// a file and a line (line n is row n-1 of the parquet file).

// parquetCSV converts the flat parquet table at path to CSV.
func parquetCSV(path, rel string) ([]byte, error) {
	// A parquet file is read at offsets (io.ReaderAt): what is not a
	// regular file is refused first, as every input is.
	if err := infile.Check(path); err != nil {
		return nil, fmt.Errorf("perfdb: %w", err)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("perfdb: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("perfdb: %w", err)
	}
	return parquetCSVFrom(fh, st.Size(), rel)
}

// maxParquetCSV bounds the CSV one parquet table converts to (held in
// memory): a calibration file holds no more (infile.MaxCalibration), and
// a few KB of run-length-encoded parquet can claim billions of rows.
const maxParquetCSV = infile.MaxCalibration

// parquetCSVFrom converts the parquet table of size bytes read from ra,
// named rel in errors.
func parquetCSVFrom(ra io.ReaderAt, size int64, rel string) ([]byte, error) {
	if err := checkParquetFrame(ra, size); err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file: %v", rel, err)
	}
	pf, err := guarded(func() (*parquet.File, error) {
		return parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file: %v", rel, err)
	}
	if err := checkParquetPages(ra, size, pf); err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file: %v (truncated or corrupt)", rel, err)
	}
	cols, err := guarded(func() ([][]string, error) { return pf.Schema().Columns(), nil })
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file: %v", rel, err)
	}
	head := make([]string, len(cols))
	for i, c := range cols {
		if len(c) != 1 {
			return nil, fmt.Errorf("%s: column %v is nested; the perf database's tables are flat", rel, c)
		}
		head[i] = c[0]
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(head); err != nil {
		return nil, err
	}
	rows := pf.NumRows()
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 256)
	rec := make([]string, len(cols))
	var done int64
	for done < rows {
		n, err := guarded(func() (int, error) { return r.ReadRows(buf) })
		for _, row := range buf[:n] {
			for i := range rec {
				rec[i] = ""
			}
			for _, v := range row {
				ci := v.Column()
				if ci < 0 || ci >= len(rec) {
					return nil, fmt.Errorf("%s: row %d: value of column %d outside the schema's %d columns", rel, done+1, ci, len(rec))
				}
				s, err := parquetString(v)
				if err != nil {
					return nil, fmt.Errorf("%s: row %d, column %q: %v", rel, done+1, head[ci], err)
				}
				rec[ci] = s
			}
			if err := w.Write(rec); err != nil {
				return nil, err
			}
			done++
		}
		if b.Len() > maxParquetCSV {
			return nil, fmt.Errorf("%s: row %d: more than %d MiB as CSV, more than a calibration file holds (corrupt, or not a perf database table)", rel, done, maxParquetCSV>>20)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", rel, done+1, err)
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// guarded calls f, a call into parquet-go, and returns its panic as an
// error. parquet-go panics on some corrupt pages by design (a dictionary
// index past the dictionary: errno.check's "index out of bounds",
// errors.go @ v0.32.0), where checking the pages first would mean
// decoding them twice; the panic is the file's fault, not moecast's, and
// is reported as the file's error. Only calls into the library are
// guarded.
func guarded[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt data (the parquet reader stopped: %v)", r)
		}
	}()
	return f()
}

// checkParquetFrame checks the frame of a parquet file before the
// library reads it: "PAR1" at both ends and a footer length (the 4 bytes
// before the closing "PAR1", little-endian) that fits in the file.
// parquet-go allocates the footer's claimed length before reading it, so
// a truncated or corrupt file whose last bytes claim a 4 GB footer would
// allocate 4 GB; and it preallocates the lists the footer claims, which
// checkThriftStruct bounds by the footer's bytes.
func checkParquetFrame(ra io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 12 {
		return fmt.Errorf("%d bytes, fewer than a parquet file's 12 bytes of frame (empty or truncated)", size)
	}
	var head, tail [4]byte
	var foot [8]byte
	if _, err := ra.ReadAt(head[:], 0); err != nil {
		return err
	}
	if _, err := ra.ReadAt(foot[:], size-8); err != nil {
		return err
	}
	copy(tail[:], foot[4:])
	if string(head[:]) != magic {
		return fmt.Errorf("starts with %q, not %q", head[:], magic)
	}
	if string(tail[:]) != magic {
		return fmt.Errorf("ends with %q, not %q (truncated, or an encrypted footer)", tail[:], magic)
	}
	n := int64(binary.LittleEndian.Uint32(foot[:4]))
	if n > size-12 {
		return fmt.Errorf("its footer claims %d bytes, more than the file's %d bytes hold (truncated or corrupt)", n, size)
	}
	footer := make([]byte, n)
	if _, err := ra.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	if _, err := checkThriftStruct(footer, 0); err != nil {
		return fmt.Errorf("%v (truncated or corrupt)", err)
	}
	return nil
}

// parquetString writes one value as the CSV export of the table writes it:
// null as empty, numbers in Go's shortest form, byte arrays as text.
func parquetString(v parquet.Value) (string, error) {
	if v.IsNull() {
		return "", nil
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean()), nil
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10), nil
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10), nil
	case parquet.Float:
		return fmtFloat(float64(v.Float())), nil
	case parquet.Double:
		return fmtFloat(v.Double()), nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray()), nil
	}
	return "", fmt.Errorf("unsupported parquet type %v", v.Kind())
}

func fmtFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64) // the CSV readers reject it with the line
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// parquetKinds maps the perf database's parquet table names to the
// readers' kinds.
var parquetKinds = map[string]string{
	"nccl_perf.parquet":                  "nccl",
	"custom_allreduce_perf.parquet":      "customar",
	"wideep_deepep_ll_perf.parquet":      "deepep",
	"wideep_deepep_normal_perf.parquet":  "deepepnormal",
	"moe_perf.parquet":                   "moe",
	"mla_generation_module_perf.parquet": "mla",
	"generation_attention_perf.parquet":  "gqa",
	"context_attention_perf.parquet":     "gqactx",
	"context_mla_perf.parquet":           "mlactx",
	"gdn_perf.parquet":                   "gdn",
}

// perfdbTree finds the systems/data tree of aiconfigurator under dir: dir
// itself when it is that data directory, dir/data (dir is systems/, with
// the <system>.yaml files), or the repository's
// aic-core/src/aiconfigurator_core/systems/data.
func perfdbTree(dir string) (string, bool) {
	for _, c := range []string{
		filepath.Join(dir, "data"),
		filepath.Join(dir, "aic-core", "src", "aiconfigurator_core", "systems", "data"),
	} {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c, true
		}
	}
	if filepath.Base(filepath.Clean(dir)) == "data" {
		return filepath.Clean(dir), true
	}
	return "", false
}

// scanTree lists the parquet tables of root/<system>/<op>/<framework>/
// <version>/ for gpu ("" for every system), the newest version of each
// (table, framework): aiconfigurator keeps every collected engine release,
// and moecast's tables carry one. Each system seen is added to systems.
func scanTree(dir, root, gpu string, systems map[string]bool) ([]perfdbFile, error) {
	sysEnts, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("perfdb: %w", err)
	}
	newest := map[[3]string]perfdbFile{}
	for _, se := range sysEnts {
		if !se.IsDir() {
			continue
		}
		sys := se.Name()
		matches, err := filepath.Glob(filepath.Join(root, sys, "*", "*", "*", "*.parquet"))
		if err != nil {
			return nil, fmt.Errorf("perfdb: %w", err)
		}
		for _, m := range matches {
			kind, ok := parquetKinds[filepath.Base(m)]
			if !ok {
				continue
			}
			systems[sys] = true
			if gpu != "" && gpuName(sys) != gpu {
				continue
			}
			verDir := filepath.Dir(m)
			fwDir := filepath.Dir(verDir)
			rel, err := filepath.Rel(dir, m)
			if err != nil {
				rel = m
			}
			f := perfdbFile{path: m, rel: filepath.ToSlash(rel), system: sys, engine: strings.ToLower(filepath.Base(fwDir)),
				engVer: filepath.Base(verDir), kind: kind, parquet: true}
			if (kind == "moe" || kind == "mla" || kind == "gqa" || kind == "gqactx" || kind == "mlactx" || kind == "gdn") && f.engine != "vllm" && f.engine != "sglang" {
				continue // moecast simulates vLLM and SGLang; TensorRT-LLM's kernels are not theirs
			}
			if kind == "nccl" && f.engine != "nccl" {
				continue // an engine's own NCCL run (b300_sxm comm/trtllm): the nccl-tests table is comm/nccl
			}
			k := [3]string{sys, filepath.Base(m), f.engine}
			if old, ok := newest[k]; !ok || versionLess(old.engVer, f.engVer) {
				newest[k] = f
			}
		}
	}
	var files []perfdbFile
	for _, f := range newest {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, nil
}

// versionLess orders engine versions ("0.5.9" < "0.5.14", "1.3.0rc10" <
// "1.3.0rc20" < "1.3.0"): runs of digits compare as numbers, other runs as
// text, a pre-release tag ("rc") before the release itself.
func versionLess(a, b string) bool {
	ta, tb := versionTokens(a), versionTokens(b)
	for i := 0; i < len(ta) && i < len(tb); i++ {
		x, y := ta[i], tb[i]
		xn, xerr := strconv.Atoi(x)
		yn, yerr := strconv.Atoi(y)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				return xn < yn
			}
		case xerr == nil: // number vs tag: the tagged one is a pre-release
			return false
		case yerr == nil:
			return true
		case x != y:
			return x < y
		}
	}
	if len(ta) != len(tb) {
		// "1.3.0" vs "1.3.0rc1": the longer one is the pre-release
		longer := ta
		if len(tb) > len(ta) {
			longer = tb
		}
		if _, err := strconv.Atoi(longer[min(len(ta), len(tb))]); err != nil {
			return len(ta) > len(tb)
		}
		return len(ta) < len(tb)
	}
	return false
}

func versionTokens(v string) []string {
	var out []string
	cur, digit := "", false
	for _, r := range v {
		d := r >= '0' && r <= '9'
		if r == '.' || r == '-' || r == '+' || r == '_' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		if cur != "" && d != digit {
			out = append(out, cur)
			cur = ""
		}
		cur += string(r)
		digit = d
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// IsPerfDBTree reports whether dir holds (or is) aiconfigurator's parquet
// tree systems/data.
func IsPerfDBTree(dir string) bool {
	_, ok := perfdbTree(dir)
	return ok
}
