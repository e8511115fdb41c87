package calib

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/kernels"
)

// PerfDBOptions configure ImportPerfDB.
type PerfDBOptions struct {
	// GPU selects the system to import by moecast preset name
	// ("h200-sxm" for the files h200_sxm__*). Required when DIR holds
	// several systems.
	GPU string
	// L2 overrides the L2 size used to mark L2-resident rows (bytes); 0
	// takes it from the kernels GPU preset.
	L2 float64
	// Source names the upstream snapshot ("ai-dynamo/aiconfigurator @
	// 095f58a ..."), License its license, Date its date: they go into the
	// provenance of every table.
	Source, License, Date string
	// Command is the command line that ran the import (provenance).
	Command string
}

// DeepSeek-V3 MLA dimensions, the model aiconfigurator's
// mla_generation_module rows are measured for (DeepSeek-V3's config.json,
// ai-dynamo/aiconfigurator @ 095f58a model_configs/): hidden 7168, q_lora_rank 1536, kv_lora_rank 512,
// qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128.
const (
	dsHidden   = 7168
	dsQLoRA    = 1536
	dsKVLoRA   = 512
	dsRope     = 64
	dsNope     = 128
	dsVHeadDim = 128
)

// perfdbFile is one CSV of the perf database.
type perfdbFile struct {
	path, rel      string // full path; path relative to DIR (for provenance)
	system         string // "h200_sxm"
	engine, engVer string // "vllm", "0.24.0"; "nccl", "2.29.2"
	kind           string // nccl, customar, deepep, moe, mla
	parquet        bool   // a parquet table of the systems/data tree (else CSV)
}

func classify(dir, rel string) (perfdbFile, bool) {
	base := filepath.Base(rel)
	if !strings.HasSuffix(base, ".csv") {
		return perfdbFile{}, false
	}
	sys, rest, ok := strings.Cut(strings.TrimSuffix(base, ".csv"), "__")
	if !ok {
		return perfdbFile{}, false
	}
	parts := strings.SplitN(rest, "_", 3)
	if len(parts) < 3 {
		return perfdbFile{}, false
	}
	f := perfdbFile{path: filepath.Join(dir, rel), rel: filepath.ToSlash(rel), system: sys, engine: strings.ToLower(parts[0]), engVer: parts[1]}
	switch op := parts[2]; {
	case strings.HasPrefix(op, "nccl_perf"):
		f.kind = "nccl"
	case strings.HasPrefix(op, "custom_allreduce_perf"):
		f.kind = "customar"
	case strings.HasPrefix(op, "wideep_deepep_ll_perf"):
		f.kind = "deepep"
	case strings.HasPrefix(op, "wideep_deepep_normal_perf"):
		f.kind = "deepepnormal"
	case strings.HasPrefix(op, "moe_perf"):
		f.kind = "moe"
	case strings.HasPrefix(op, "mla_generation_module_perf"):
		f.kind = "mla"
	default:
		return perfdbFile{}, false
	}
	return f, true
}

// gpuName maps a perfdb system name to a moecast GPU preset name.
func gpuName(system string) string { return strings.ReplaceAll(system, "_", "-") }

// ImportPerfDB reads the CSV layout of aiconfigurator's perf database
// (DIR/comm, DIR/moe, DIR/mla, DIR/systems: ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/
// data/<system>/<op>/... parquet converted to CSV, and <system>.yaml)
// for one GPU and returns a calibration file. Latencies are in ms in the
// source (µs for DeepEP), message_size in elements. Any malformed row is an
// error with file:line, and nothing is returned.
func ImportPerfDB(dir string, opt PerfDBOptions) (_ *File, err error) {
	defer asInput(&err)
	if err := checkDate(opt.Date); err != nil {
		return nil, fmt.Errorf("perfdb: --date: %w", err)
	}
	var files []perfdbFile
	systems := map[string]bool{}
	yamlDir := filepath.Join(dir, "systems")
	if root, ok := perfdbTree(dir); ok {
		var err error
		if files, err = scanTree(dir, root, opt.GPU, systems); err != nil {
			return nil, err
		}
		yamlDir = filepath.Dir(root)
	}
	for _, sub := range []string{"comm", "moe", "mla"} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("perfdb: %w", err)
		}
		for _, e := range ents {
			if f, ok := classify(dir, filepath.Join(sub, e.Name())); ok && !e.IsDir() {
				systems[f.system] = true
				if opt.GPU == "" || gpuName(f.system) == opt.GPU {
					files = append(files, f)
				}
			}
		}
	}
	if len(systems) == 0 {
		return nil, fmt.Errorf("perfdb %s: no perf CSV files under comm/, moe/ or mla/, nor a parquet tree data/<system>/<op>/<framework>/<version>/", dir)
	}
	if opt.GPU == "" && len(systems) > 1 {
		var names []string
		for s := range systems {
			names = append(names, gpuName(s))
		}
		sort.Strings(names)
		return nil, fmt.Errorf("perfdb %s: several GPUs (%s): choose one with --gpu", dir, strings.Join(names, ", "))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("perfdb %s: no files for GPU %q", dir, opt.GPU)
	}
	sys := files[0].system
	gpu := gpuName(sys)
	l2 := opt.L2
	if l2 == 0 {
		g, ok := kernels.LookupGPU(gpu)
		if !ok || g.L2 <= 0 {
			return nil, fmt.Errorf("perfdb: GPU %q has no preset with an L2 size: pass --l2", gpu)
		}
		l2 = float64(g.L2)
	}
	sysInfo, err := readSystemYAML(filepath.Join(yamlDir, sys+".yaml"))
	if err != nil {
		return nil, err
	}
	im := &perfdbImport{opt: opt, gpu: gpu, l2: l2, sys: sysInfo}
	im.file = &File{Schema: Schema, Name: "perfdb", Provenance: Provenance{
		GPU: gpu, GPUCount: sysInfo.gpusPerNode, GPUL2Bytes: l2, Fabric: sysInfo.fabric,
		Driver: "unknown (not recorded in the perf database)", CUDA: "unknown (not recorded in the perf database)",
		Date: opt.Date, Command: opt.Command, Source: opt.Source, License: opt.License,
		Launch: "unknown", Cache: "unknown",
		Method: "aiconfigurator collectors: op-level measurements, one op at a time",
	}}
	// Deterministic table order: NCCL, framework all-reduce, EP, MoE (vLLM
	// before SGLang: the first covering table answers), MLA, GQA decode,
	// then prefill (context) attention: GQA, MLA.
	order := map[string]int{"nccl": 0, "customar": 1, "deepep": 2, "deepepnormal": 3, "moe": 4, "mla": 5, "gqa": 6, "gqactx": 7, "mlactx": 8, "gdn": 9}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if order[a.kind] != order[b.kind] {
			return order[a.kind] < order[b.kind]
		}
		if (a.engine == "vllm") != (b.engine == "vllm") {
			return a.engine == "vllm"
		}
		return a.rel < b.rel
	})
	for _, f := range files {
		if err := im.read(f); err != nil {
			return nil, err
		}
	}
	for _, k := range im.skipOrder {
		im.file.Warnings = append(im.file.Warnings, fmt.Sprintf("perfdb %s: %d rows skipped: %s", k[0], im.skipped[k], k[1]))
	}
	if err := im.file.validate(); err != nil {
		return nil, fmt.Errorf("perfdb: %w", err)
	}
	if err := im.file.build(); err != nil {
		return nil, fmt.Errorf("perfdb: %w", err)
	}
	if sysInfo.missing {
		im.file.Warnings = append(im.file.Warnings, fmt.Sprintf("perfdb %s: no systems file %s: the fabric is recorded as \"unknown\", so predict uses its collective tables on no scenario, and gpu_count as %d",
			dir, filepath.Join("systems", sys+".yaml"), sysInfo.gpusPerNode))
	}
	if _, ok := kernels.LookupGPU(gpu); !ok {
		im.file.Warnings = append(im.file.Warnings, fmt.Sprintf("perfdb %s: GPU %q is not a GPU preset (%s): predict uses these tables on no scenario",
			dir, gpu, strings.Join(kernels.GPUNames(), ", ")))
	}
	return im.file, nil
}

type systemInfo struct {
	missing     bool // no systems/<system>.yaml: the defaults below
	gpusPerNode int
	fabric      string
	ncclVersion string
}

// readSystemYAML reads the few scalar fields of systems/<system>.yaml that
// the provenance needs (intra_node_bw -> fabric, num_gpus_per_node). It is
// a line scan, not a YAML parser: only "key: number" lines are read.
func readSystemYAML(path string) (systemInfo, error) {
	info := systemInfo{gpusPerNode: 8, fabric: "unknown"}
	data, err := infile.ReadFile(path, nil, infile.MaxText)
	if errors.Is(err, os.ErrNotExist) {
		info.missing = true
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("perfdb: %w", err)
	}
	rack := 0
	for i, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `'"`)
		switch k {
		case "num_gpus_per_node":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return info, fmt.Errorf("%s:%d: num_gpus_per_node %q is not a positive integer", path, i+1, v)
			}
			info.gpusPerNode = n
		case "intra_node_bw":
			bw, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return info, fmt.Errorf("%s:%d: intra_node_bw %q is not a number", path, i+1, v)
			}
			// aiconfigurator's per-direction figures: 450 GB/s NVLink 4
			// (H100/H200), 900 GB/s NVLink 5 (B200), 64 GB/s PCIe Gen5 x16.
			switch {
			case bw >= 800e9:
				info.fabric = "nvlink5"
			case bw >= 400e9:
				info.fabric = "nvlink4"
			case bw >= 250e9:
				info.fabric = "nvlink3" // A100: 300 GB/s
			case bw >= 50e9:
				info.fabric = "pcie-gen5"
			default:
				info.fabric = "pcie-gen4"
			}
		case "num_gpus_per_rack":
			// GB200/GB300 NVL72: one NVLink domain of 72 GPUs
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return info, fmt.Errorf("%s:%d: num_gpus_per_rack %q is not a positive integer", path, i+1, v)
			}
			rack = n
		case "nccl_version":
			info.ncclVersion = v
		}
	}
	if rack == 72 && info.fabric == "nvlink5" {
		info.fabric = "nvlink5-nvl72"
	}
	return info, nil
}

// skip counts a row of f left out for reason (warned once per file and
// reason, with the count).
func (im *perfdbImport) skip(f perfdbFile, reason string) {
	if im.skipped == nil {
		im.skipped = map[[2]string]int{}
	}
	k := [2]string{f.rel, reason}
	if im.skipped[k] == 0 {
		im.skipOrder = append(im.skipOrder, k)
	}
	im.skipped[k]++
}

type perfdbImport struct {
	skipped   map[[2]string]int
	skipOrder [][2]string
	opt       PerfDBOptions
	gpu       string
	l2        float64
	sys       systemInfo
	file      *File
}

// csvFile reads a perf CSV with a header; each record comes with its line.
type csvFile struct {
	name string
	r    *csv.Reader
	col  map[string]int
}

func newCSV(name string, rd io.Reader, required []string) (*csvFile, error) {
	r := csv.NewReader(rd)
	r.ReuseRecord = false
	head, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file (no header)", name)
	}
	if err != nil {
		return nil, csvErr(name, err)
	}
	c := &csvFile{name: name, r: r, col: map[string]int{}}
	for i, h := range head {
		c.col[strings.TrimSpace(h)] = i
	}
	for _, h := range head {
		h = strings.TrimSpace(h)
		if strings.HasPrefix(h, "latency_") {
			return nil, fmt.Errorf("%s:1: column %q: the perf database's latency column is \"latency\" in ms; a unit suffix here is not expected", name, h)
		}
	}
	for _, req := range required {
		if _, ok := c.col[req]; !ok {
			return nil, fmt.Errorf("%s:1: column %q is missing", name, req)
		}
	}
	return c, nil
}

func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// record is one CSV row with its line.
type record struct {
	c    *csvFile
	f    []string
	line int
}

func (c *csvFile) next() (record, error) {
	f, err := c.r.Read()
	if err != nil {
		if err == io.EOF {
			return record{}, io.EOF
		}
		return record{}, csvErr(c.name, err)
	}
	line, _ := c.r.FieldPos(0)
	return record{c: c, f: f, line: line}, nil
}

// each calls fn on every record after the header, in order, and stops at
// the first error (a CSV error or fn's).
func (c *csvFile) each(fn func(record) error) error {
	for {
		r, err := c.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
}

func (r record) str(col string) string { return strings.TrimSpace(r.f[r.c.col[col]]) }

func (r record) errf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", r.c.name, r.line, fmt.Sprintf(format, args...))
}

func (r record) num(col string) (float64, error) {
	s := r.str(col)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, r.errf("%s %q is not a number", col, s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, r.errf("%s is %s", col, s)
	}
	return v, nil
}

func (r record) pos(col string) (float64, error) {
	v, err := r.num(col)
	if err == nil && !(v > 0) {
		err = r.errf("%s must be positive, got %s", col, r.str(col))
	}
	return v, err
}

func (r record) count(col string) (int, error) {
	v, err := r.pos(col)
	switch {
	case err != nil:
		return 0, err
	case v != math.Trunc(v):
		return 0, r.errf("%s must be an integer, got %s", col, r.str(col))
	case v > maxCount:
		// int(v) of a larger float64 is not v (1e300 -> -2^63)
		return 0, r.errf("%s %s is implausibly large (at most %d)", col, r.str(col), maxCount)
	}
	return int(v), nil
}

// maxCount bounds a count of the perf database (tokens, heads, GPUs,
// dimensions): its largest are token counts of about 2^20.
const maxCount = 1 << 31

// collective reads a collective row's rank count (num_gpus), message size
// in elements (message_size) and latency (latency, ms) as µs.
func (r record) collective() (ranks int, elems, latUs float64, err error) {
	if ranks, err = r.count("num_gpus"); err != nil {
		return 0, 0, 0, err
	}
	if elems, err = r.pos("message_size"); err != nil {
		return 0, 0, 0, err
	}
	if latUs, err = r.latencyUs("latency", 1e3); err != nil {
		return 0, 0, 0, err
	}
	return ranks, elems, latUs, nil
}

// counts reads cols as counts (positive integers), in order, and returns
// the first column's error.
func (r record) counts(cols ...string) ([]int, error) {
	v := make([]int, len(cols))
	for i, col := range cols {
		var err error
		if v[i], err = r.count(col); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// latencyMs reads the perf database's latency (ms) as µs.
func (r record) latencyUs(col string, scale float64) (float64, error) {
	v, err := r.num(col)
	if err != nil {
		return 0, err
	}
	if !(v > 0) {
		return 0, r.errf("%s must be positive, got %s", col, r.str(col))
	}
	us := roundPs(v * scale)
	switch {
	case us == 0:
		return 0, r.errf("%s %s is below the 1 ps resolution of the tables", col, r.str(col))
	case us > maxLatencyUs:
		return 0, r.errf("%s %s is implausibly long for one op (more than an hour)", col, r.str(col))
	}
	return us, nil
}

// maxLatencyUs bounds one op's latency: an hour, far beyond any kernel,
// and below what overflows in unit conversion (1e300 ms -> +Inf us).
const maxLatencyUs = 3600e6

// roundPs rounds a time in µs to 1 ps, far below any measurement's
// precision, so that unit conversion noise (0.00524 ms x 1000 =
// 5.240000000000001) does not reach the file.
func roundPs(us float64) float64 { return math.Round(us*1e6) / 1e6 }

// group collects the rows of one table, refusing duplicate points.
type group struct {
	t     Table
	first map[string]int // point key -> line
	// repeats counts the rows of a parquet table that measure a point
	// again: aiconfigurator appends re-runs to its parquet tables (gb200
	// moe/sglang/0.5.14 holds every point twice); the first is kept.
	repeats int
}

type groups struct {
	order []string
	m     map[string]*group
}

func (g *groups) get(key string, mk func() Table) *group {
	if g.m == nil {
		g.m = map[string]*group{}
	}
	if x, ok := g.m[key]; ok {
		return x
	}
	x := &group{t: mk(), first: map[string]int{}}
	g.m[key] = x
	g.order = append(g.order, key)
	return x
}

func (x *group) add(r record, point string, row []float64) error {
	if l, dup := x.first[point]; dup {
		if strings.HasSuffix(r.c.name, ".parquet") {
			x.repeats++
			return nil
		}
		return r.errf("duplicate point %s (first at line %d)", point, l)
	}
	x.first[point] = r.line
	x.t.Rows = append(x.t.Rows, row)
	x.t.rowLines = append(x.t.rowLines, r.line)
	x.t.src = r.c.name
	return nil
}

// nameByKernel appends the kernel to the name of tables that share one
// (two kernels for one quant in one file).
func (g *groups) nameByKernel() {
	names := map[string]int{}
	for _, k := range g.order {
		names[g.m[k].t.Name]++
	}
	for _, k := range g.order {
		if t := &g.m[k].t; names[t.Name] > 1 {
			t.Name += "." + t.Provenance.Kernel
		}
	}
}

func (g *groups) flush(f *File) {
	for _, k := range g.order {
		t := g.m[k].t
		if n := g.m[k].repeats; n > 0 {
			t.Provenance.Corrections = append(t.Provenance.Corrections,
				fmt.Sprintf("%d repeated measurements of points already in the table dropped (the parquet table appends re-runs; the first row of each point kept)", n))
		}
		sortRowsLines(t.Rows, t.rowLines)
		f.Tables = append(f.Tables, t)
	}
}

// sortRowsLines is sortRows, keeping each row's source line beside it.
func sortRowsLines(rows [][]float64, lines []int) {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return rowLess(rows[idx[i]], rows[idx[j]]) })
	r2, l2 := append([][]float64(nil), rows...), append([]int(nil), lines...)
	for i, j := range idx {
		rows[i] = r2[j]
		if j < len(l2) && i < len(lines) {
			lines[i] = l2[j]
		}
	}
}

func rowLess(a, b []float64) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

// sortRows orders rows by their columns left to right (axes first), so
// that files diff cleanly whatever the source order.
func sortRows(rows [][]float64) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
}

func (im *perfdbImport) prov(f perfdbFile, kernel, launch, cache, method string, corrections ...string) Provenance {
	return Provenance{
		GPU: im.gpu, GPUCount: im.sys.gpusPerNode, GPUL2Bytes: im.l2, Fabric: im.sys.fabric,
		Engine: f.engine, EngineVersion: f.engVer, Kernel: kernel, Date: im.opt.Date, Command: im.opt.Command,
		Source: strings.TrimSpace(im.opt.Source + " (perfdb/" + f.rel + ")"), License: im.opt.License,
		Launch: launch, Cache: cache, Method: method, Corrections: corrections,
	}
}

func (im *perfdbImport) read(f perfdbFile) error {
	if f.parquet {
		b, err := parquetCSV(f.path, f.rel)
		if err != nil {
			return err
		}
		return im.readFrom(f, bytes.NewReader(b))
	}
	fh, err := infile.Open(f.path, nil, infile.MaxCSV)
	if err != nil {
		return fmt.Errorf("perfdb: %w", err)
	}
	defer fh.Close()
	return im.readFrom(f, fh)
}

func (im *perfdbImport) readFrom(f perfdbFile, rd io.Reader) error {
	switch f.kind {
	case "nccl":
		return im.readNCCL(f, rd)
	case "customar":
		return im.readCustomAR(f, rd)
	case "deepep":
		return im.readDeepEP(f, rd)
	case "deepepnormal":
		return im.readDeepEPNormal(f, rd)
	case "moe":
		return im.readMoE(f, rd)
	case "mla":
		return im.readMLA(f, rd)
	case "gqa":
		return im.readGQA(f, rd)
	case "gqactx":
		return im.readGQAContext(f, rd)
	case "mlactx":
		return im.readMLAContext(f, rd)
	case "gdn":
		return im.readGDN(f, rd)
	}
	return fmt.Errorf("perfdb %s: unknown file kind", f.rel)
}

var ncclOps = map[string]string{"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter", "alltoall": "alltoall"}

func (im *perfdbImport) readNCCL(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"op_name", "nccl_dtype", "num_gpus", "message_size", "latency", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		op, ok := ncclOps[r.str("op_name")]
		if !ok {
			return r.errf("op_name %q is not a supported collective (all_reduce, all_gather, reduce_scatter, alltoall)", r.str("op_name"))
		}
		if r.str("nccl_dtype") != "half" {
			return nil // int8 rows: the same byte sizes, kept out (see corrections)
		}
		ranks, elems, lat, err := r.collective()
		if err != nil {
			return err
		}
		im.file.Provenance.GPULabel = r.str("device")
		x := g.get(op, func() Table {
			p := im.prov(f, "NCCL", "unknown", "unknown",
				"nccl-tests "+op+" (aiconfigurator collector), out-of-place time",
				"latency ms -> latency_us (x1000, rounded to 1 ps)",
				"bytes = message_size elements x 2 (half), which is nccl-tests' size(B): the whole buffer (all-gather/reduce-scatter: the whole gathered array)",
				"int8 rows skipped (same byte sizes; the half rows are kept)")
			p.NCCL = f.engVer
			p.Engine, p.EngineVersion = "nccl", f.engVer
			p.GPULabel = r.str("device")
			return Table{Name: "nccl." + op, Op: op, Keys: Keys{Impl: "nccl"},
				Columns: []string{"ranks", "bytes", "latency_us"}, Provenance: p}
		})
		b := elems * 2
		return x.add(r, fmt.Sprintf("(%s, ranks %d, %g bytes)", op, ranks, b), []float64{float64(ranks), b, lat})
	})
	if err != nil {
		return err
	}
	g.flush(im.file)
	return nil
}

func (im *perfdbImport) readCustomAR(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"kernel_source", "allreduce_dtype", "num_gpus", "message_size", "latency", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		ks := r.str("kernel_source")
		mode, launch := "", "unknown"
		switch {
		case strings.HasSuffix(ks, "_graph"):
			mode, launch = "graph", "cuda-graph"
		case strings.HasSuffix(ks, "_eager"):
			mode, launch = "eager", "eager"
		}
		eb := 2.0
		switch r.str("allreduce_dtype") {
		case "bfloat16", "float16", "half":
		case "float32":
			eb = 4
		default:
			return r.errf("allreduce_dtype %q is not supported", r.str("allreduce_dtype"))
		}
		ranks, elems, lat, err := r.collective()
		if err != nil {
			return err
		}
		name := "allreduce." + f.engine
		if mode != "" {
			name += "." + mode
		}
		x := g.get(name, func() Table {
			p := im.prov(f, ks, launch, "unknown",
				f.engine+" "+f.engVer+" all-reduce entry point (custom all-reduce kernel or the engine's NCCL fallback, as the engine picks), "+r.str("allreduce_dtype"),
				"latency ms -> latency_us (x1000, rounded to 1 ps)",
				fmt.Sprintf("bytes = message_size elements x %g (%s)", eb, r.str("allreduce_dtype")))
			p.GPULabel = r.str("device")
			return Table{Name: name, Op: "allreduce", Keys: Keys{Impl: f.engine, Mode: mode},
				Columns: []string{"ranks", "bytes", "latency_us"}, Provenance: p}
		})
		b := elems * eb
		return x.add(r, fmt.Sprintf("(ranks %d, %g bytes)", ranks, b), []float64{float64(ranks), b, lat})
	})
	if err != nil {
		return err
	}
	g.flush(im.file)
	return nil
}

func (im *perfdbImport) readDeepEP(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"node_num", "hidden_size", "num_token", "num_topk", "num_experts", "dispatch_avg_t_us", "combine_avg_t_us", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		v, err := r.counts("node_num", "hidden_size", "num_token", "num_topk", "num_experts")
		if err != nil {
			return err
		}
		ranks := v[0] * im.sys.gpusPerNode
		for _, phase := range []string{"dispatch", "combine"} {
			lat, err := r.latencyUs(phase+"_avg_t_us", 1)
			if err != nil {
				return err
			}
			err = im.addDeepEP(&g, f, r, v, ranks, "deepep_ll", "deepep low-latency", phase, lat,
				"DeepEP low-latency "+phase+" (aiconfigurator wideep collector), average time per call")
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.flush(im.file)
	return nil
}

// addDeepEP adds one phase of a DeepEP row (v: node_num, hidden_size,
// num_token, num_topk, num_experts) to its table ep.IMPL.PHASE.ENGINE-VERSION,
// made on first use with the method and the corrections after it.
func (im *perfdbImport) addDeepEP(g *groups, f perfdbFile, r record, v []int, ranks int, impl, kernel, phase string, lat float64,
	method string, more ...string) error {
	name := fmt.Sprintf("ep.%s.%s.%s-%s", impl, phase, f.engine, f.engVer)
	x := g.get(name, func() Table {
		corr := append([]string{fmt.Sprintf("ranks = node_num x %d GPUs per node (systems yaml)", im.sys.gpusPerNode)}, more...)
		p := im.prov(f, kernel, "unknown", "unknown", method, corr...)
		p.GPULabel = r.str("device")
		return Table{Name: name, Op: "ep", Keys: Keys{Impl: impl, Phase: phase},
			Columns: []string{"hidden", "topk", "experts", "ranks", "tokens_per_rank", "latency_us"}, Provenance: p}
	})
	point := fmt.Sprintf("(%s hidden %d topk %d experts %d ranks %d tokens %d)", phase, v[1], v[3], v[4], ranks, v[2])
	return x.add(r, point, []float64{float64(v[1]), float64(v[3]), float64(v[4]), float64(ranks), float64(v[2]), lat})
}

// deepEPNormalSMs is the SM count of the DeepEP normal rows imported:
// DeepEP's default (deep_ep/buffer.py, Buffer.num_sms = 20), which SGLang
// keeps without --deepep-config; the perf database measures 4 to 24.
const deepEPNormalSMs = 20

// readDeepEPNormal imports DeepEP normal (high-throughput) dispatch and
// combine: per phase, transmit + notify time (as aiconfigurator's SDK sums
// them), at DeepEP's default SM count.
func (im *perfdbImport) readDeepEPNormal(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"node_num", "hidden_size", "num_token", "num_topk", "num_experts", "dispatch_sms",
		"dispatch_transmit_us", "dispatch_notify_us", "combine_sms", "combine_transmit_us", "combine_notify_us", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		v, err := r.counts("node_num", "hidden_size", "num_token", "num_topk", "num_experts")
		if err != nil {
			return err
		}
		ranks := v[0] * im.sys.gpusPerNode
		for _, phase := range []string{"dispatch", "combine"} {
			sms, err := r.count(phase + "_sms")
			if err != nil {
				return err
			}
			if sms != deepEPNormalSMs {
				continue
			}
			tx, err := r.latencyUs(phase+"_transmit_us", 1)
			if err != nil {
				return err
			}
			notify, err := r.num(phase + "_notify_us")
			if err != nil {
				return err
			}
			if notify < 0 {
				return r.errf("%s_notify_us must not be negative, got %s", phase, r.str(phase+"_notify_us"))
			}
			err = im.addDeepEP(&g, f, r, v, ranks, "deepep_normal", "deepep normal", phase, roundPs(tx+notify),
				fmt.Sprintf("DeepEP normal %s (aiconfigurator wideep collector), transmit + notify time per call, %d SMs", phase, deepEPNormalSMs),
				fmt.Sprintf("latency_us = %s_transmit_us + %s_notify_us; rows at %s_sms = %d (DeepEP's default Buffer.num_sms) kept, the other SM counts left out", phase, phase, phase, deepEPNormalSMs))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.flush(im.file)
	return nil
}

// quantBytesPerParam is the stored bytes per weight of a MoE quant in the
// perf database, scales included: int4_wo W4A16 with one bf16 scale per 32
// (the Kimi-K2.5 checkpoint layout: compressed-tensors group 32 in
// model/presets/moonshotai--Kimi-K2.5_config.json), fp8_block with one
// fp32 scale per 128x128, nvfp4 with one fp8 scale per 16, bf16.
func quantBytesPerParam(q string) (float64, bool) {
	switch q {
	case "int4_wo":
		return 0.5 + 2.0/32, true
	case "fp8_block":
		return 1 + 4.0/16384, true
	case "fp8": // per-tensor scales
		return 1, true
	case "nvfp4":
		return 0.5 + 1.0/16, true
	case "mxfp4", "mxfp4_mxfp8": // OCP MX: one e8m0 scale per 32 (gpt-oss's checkpoint)
		return 0.5 + 1.0/32, true
	case "bf16", "bfloat16", "float16":
		return 2, true
	}
	return 0, false
}

func (im *perfdbImport) readMoE(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"kernel_source", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution", "latency", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		v, err := r.counts("num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size")
		if err != nil {
			return err
		}
		tokens, hidden, inter, topk, experts, tp, ep := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
		if topk > experts {
			return r.errf("topk %d exceeds num_experts %d", topk, experts)
		}
		lat, err := r.latencyUs("latency", 1e3)
		if err != nil {
			return err
		}
		q, dist, ks := r.str("moe_dtype"), r.str("distribution"), r.str("kernel_source")
		if f.parquet {
			// the parquet tree holds every format aiconfigurator
			// collects; moecast keeps those it has a weight format for
			if q = dtypeName(q); !slices.Contains(moeQuants, q) {
				im.skip(f, "moe_dtype "+q+" (no moecast weight format for it)")
				return nil
			}
		}
		bpp, known := quantBytesPerParam(q)
		// Per-GPU weight working set of one replayed layer: the distinct
		// experts that balanced routing touches, min(topk*T, E), spread over
		// ep ranks, each expert's three matrices split over moe_tp.
		distinct := math.Min(float64(topk*tokens), float64(experts))
		if dist != "balanced" {
			distinct = kernels.UniformDistinctExperts(float64(tokens), experts, topk) // power-law: at most this many
		}
		ws := distinct / float64(ep) * 3 * float64(hidden) * float64(inter) / float64(tp) * bpp
		l2res := 0.0
		if known && ws <= im.l2 {
			l2res = 1
		}
		key := fmt.Sprintf("%s|%s|%d|%d|%d|%d|%s", ks, q, experts, topk, hidden, inter, dist)
		name := fmt.Sprintf("moe.%s.%s.e%d.%s", f.engine, q, experts, dist)
		if f.parquet {
			// the parquet tables hold many models with one expert count
			// and several engine releases: the name carries the one
			// measured, which every source line then shows
			name = fmt.Sprintf("moe.%s-%s.%s.e%d.k%d.h%d.i%d.%s", f.engine, f.engVer, q, experts, topk, hidden, inter, dist)
		}
		x := g.get(key, func() Table {
			corr := []string{
				"latency ms -> latency_us (x1000, rounded to 1 ps)",
				fmt.Sprintf("L2 bias: the source replays one layer from a CUDA graph without flushing L2, so a row whose per-GPU weight working set (working_set_bytes = distinct experts touched / ep x 3 x hidden x inter / moe_tp x %g B/param) fits in the %.0f MB L2 is faster than inside a real decode step where all layers stream through; such rows have l2_resident = 1, and kernels.Costs floors every table result at the op's DRAM streaming time", bpp, im.l2/1e6),
			}
			if dist == "balanced" {
				corr = append(corr, fmt.Sprintf("routing bias: balanced routing sends token t to experts (t*%d/T + k*%d) mod %d, touching topk*T distinct experts for T < %d and all %d from T = %d, whereas uniform routing touches E(1-(1-k/E)^T); a lookup at T tokens reads the table at T' = E(1-(1-k/E)^T)/k (same distinct experts, the weight-bound part) plus the table's growth above %d tokens (the compute part), see kernels.MoETable.Lookup", experts/topk, experts/topk, experts, experts/topk, experts, experts/topk, experts/topk))
			}
			if !known {
				corr = append(corr, "working set not computed: unknown bytes per parameter for quant "+q)
			}
			p := im.prov(f, ks, "cuda-graph", "warm",
				"fused MoE layer (routing glue + grouped GEMMs) of one layer, replayed from a CUDA graph, L2 not flushed; latency per layer per GPU", corr...)
			p.GPULabel = r.str("device")
			return Table{Name: name, Op: "moe",
				Keys:    Keys{Dtype: q, Distribution: dist, Experts: experts, TopK: topk, Hidden: hidden, Inter: inter},
				Columns: []string{"moe_tp", "ep", "tokens", "latency_us", "working_set_bytes", "l2_resident"}, Provenance: p}
		})
		if x.t.Provenance.Kernel != ks {
			return r.errf("kernel_source %q differs from %q earlier in the same table", ks, x.t.Provenance.Kernel)
		}
		point := fmt.Sprintf("(tokens %d, moe_tp %d, ep %d)", tokens, tp, ep)
		return x.add(r, point, []float64{float64(tp), float64(ep), float64(tokens), lat, math.Round(ws), l2res})
	})
	if err != nil {
		return err
	}
	g.nameByKernel()
	g.flush(im.file)
	return nil
}

func dtypeName(s string) string {
	switch s {
	case "bfloat16":
		return "bf16"
	case "float16":
		return "fp16"
	case "w4a16_mxfp4":
		// MXFP4 weights with bf16 activations: the gpt-oss MoE kernels
		// vLLM and SGLang run (OAI Triton matmul_ogs on sm_90, FlashInfer
		// TRT-LLM mxfp4_bf16 on sm_100), moecast's mxfp4 format (its
		// compute is bf16)
		return "mxfp4"
	case "w4a8_mxfp4_mxfp8":
		// the same MXFP4 weights with the activations quantised to MXFP8
		// (one e8m0 scale per 32) before FlashInfer's TRT-LLM-gen
		// trtllm_fp4_block_scale_moe: SGLang's flashinfer_mxfp4 runner
		// and vLLM's SM100_FI_MXFP4_MXFP8_TRTLLM backend on sm_100
		// (VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1); moecast's mxfp4-a8
		return "mxfp4_mxfp8"
	}
	return s
}

func (im *perfdbImport) readMLA(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"kernel_source", "architecture", "mla_dtype", "kv_cache_dtype", "gemm_type", "num_heads", "batch_size", "isl", "tp_size", "step", "latency", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		if a := r.str("architecture"); a != "DeepseekV3ForCausalLM" {
			return r.errf("architecture %q: only DeepseekV3ForCausalLM MLA dims are known", a)
		}
		v, err := r.counts("num_heads", "batch_size", "isl", "tp_size", "step")
		if err != nil {
			return err
		}
		heads, batch, tp, kvLen := v[0], v[1], v[3], v[4]
		if tp != 1 {
			return r.errf("tp_size %d: only tp_size 1 rows (num_heads = heads per GPU) are understood", tp)
		}
		lat, err := r.latencyUs("latency", 1e3)
		if err != nil {
			return err
		}
		gemm, kv := dtypeName(r.str("gemm_type")), dtypeName(r.str("kv_cache_dtype"))
		wb, ok := quantBytesPerParam(gemm)
		if !ok {
			return r.errf("gemm_type %q: unknown bytes per parameter", r.str("gemm_type"))
		}
		kb := 2.0
		if kv == "fp8" {
			kb = 1
		}
		// Per-GPU working set: the module's weights (q_a and kv_a whole,
		// q_b, kv_b and o_proj for this GPU's heads) plus the KV cache read.
		h := float64(heads)
		weights := float64(dsHidden*dsQLoRA+dsHidden*(dsKVLoRA+dsRope)) + float64(dsQLoRA)*h*(dsNope+dsRope) +
			float64(dsKVLoRA)*h*(dsNope+dsVHeadDim) + h*dsVHeadDim*dsHidden
		ws := weights*wb + float64(batch)*float64(kvLen)*(dsKVLoRA+dsRope)*kb
		l2res := 0.0
		if ws <= im.l2 {
			l2res = 1
		}
		name := fmt.Sprintf("mla.%s.%s.kv-%s", f.engine, gemm, kv)
		if f.parquet {
			name = fmt.Sprintf("mla.%s-%s.%s.kv-%s", f.engine, f.engVer, gemm, kv)
		}
		x := g.get(name, func() Table {
			p := im.prov(f, r.str("kernel_source"), "cuda-graph", "warm",
				"whole MLA decode module (q_a, q_b, kv_a, absorbed kv_b, o_proj + "+r.str("kernel_source")+" attention) for DeepSeek-V3 dims, one layer replayed from a CUDA graph, L2 not flushed; num_heads = heads per GPU; step = KV length; isl = 1",
				"latency ms -> latency_us (x1000, rounded to 1 ps)",
				fmt.Sprintf("L2 bias: rows whose per-GPU working set (working_set_bytes = module weights for the GPU's heads at %g B/param + batch x kv_len x 576 x %g B of KV) fits in the %.0f MB L2 have l2_resident = 1; kernels.Costs floors every table result at the op's DRAM streaming time", wb, kb, im.l2/1e6))
			p.GPULabel = r.str("device")
			return Table{Name: name, Op: "mla",
				Keys: Keys{Dtype: gemm, KVDtype: kv, KVLoRARank: dsKVLoRA, QKRopeDim: dsRope,
					Hidden: dsHidden, QLoRARank: dsQLoRA, QKNopeDim: dsNope, VHeadDim: dsVHeadDim},
				Columns: []string{"heads", "batch", "kv_len", "latency_us", "working_set_bytes", "l2_resident"}, Provenance: p}
		})
		point := fmt.Sprintf("(heads %d, batch %d, kv_len %d)", heads, batch, kvLen)
		return x.add(r, point, []float64{h, float64(batch), float64(kvLen), lat, math.Round(ws), l2res})
	})
	if err != nil {
		return err
	}
	g.flush(im.file)
	return nil
}

// readGQA reads generation_attention_perf (the parquet tree only): GQA/MHA
// decode attention of one layer by heads and kv_heads per GPU, batch and
// KV length, full attention (window_size 0), beam 1, bf16 queries. The
// KV length is isl + step, as aiconfigurator's loader keys the row.
func (im *perfdbImport) readGQA(f perfdbFile, rd io.Reader) error {
	return im.eachGQA(f, rd, func(a *gqaRow, windowed bool) (string, error) {
		var err error
		if a.step, err = strconv.Atoi(a.str("step")); err != nil || a.step < 0 {
			return "", a.errf("step %q is not a non-negative integer", a.str("step"))
		}
		// window_size: absent in the older collectors' tables (a100_sxm vLLM
		// 0.14.0), which measured full attention only
		if windowed && a.str("window_size") != "0" && a.str("window_size") != "" {
			return "sliding-window attention (window_size > 0; the gqa table keys full attention)", nil
		}
		return "", nil
	}, func(g *groups, a gqaRow) error {
		ks := a.str("kernel_source")
		key := fmt.Sprintf("%s|%d|%s", ks, a.dim, a.kv)
		name := fmt.Sprintf("gqa.%s-%s.d%d.kv-%s", f.engine, f.engVer, a.dim, a.kv)
		x := g.get(key, func() Table {
			p := im.prov(f, ks, "cuda-graph", "unknown",
				"decode (generation) attention of one layer, aiconfigurator collector; heads and kv_heads per GPU; kv_len = isl + step (the perf database loader's sequence length)",
				"latency ms -> latency_us (x1000, rounded to 1 ps)")
			p.GPULabel = a.str("device")
			return Table{Name: name, Op: "gqa", Keys: Keys{KVDtype: a.kv, HeadDim: a.dim},
				Columns: []string{"heads", "kv_heads", "batch", "kv_len", "latency_us"}, Provenance: p}
		})
		kvLen := a.isl + a.step
		point := fmt.Sprintf("(heads %d, kv_heads %d, batch %d, kv_len %d)", a.heads, a.kvHeads, a.batch, kvLen)
		return x.add(a.record, point, []float64{float64(a.heads), float64(a.kvHeads), float64(a.batch), float64(kvLen), a.lat})
	})
}

// gqaRow is one row of an aiconfigurator GQA/MHA attention table
// (context_attention_perf, generation_attention_perf) as eachGQA reads it.
type gqaRow struct {
	record
	batch, isl, heads, kvHeads, dim int
	kv                              string  // KV-cache dtype
	lat                             float64 // latency, µs
	window, step                    int     // set by the table's own check
}

// eachGQA reads an aiconfigurator GQA/MHA attention table: per row the
// counts (batch_size, isl, num_heads, num_key_value_heads, head_dim,
// beam_width), then check (the table's own parses and skips, in its order:
// a reason to skip the row, or ""), then the skips both tables share (beam
// 1; bf16 queries over a bf16 or fp8 KV cache), the latency (ms) and add;
// it then names the tables add made by kernel and writes them. windowed:
// the file has a window_size column.
func (im *perfdbImport) eachGQA(f perfdbFile, rd io.Reader, check func(a *gqaRow, windowed bool) (string, error),
	add func(g *groups, a gqaRow) error) error {
	c, err := newCSV(f.rel, rd, []string{"kernel_source", "batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim",
		"beam_width", "attn_dtype", "kv_cache_dtype", "step", "latency", "device"})
	if err != nil {
		return err
	}
	_, windowed := c.col["window_size"]
	var g groups
	err = c.each(func(r record) error {
		v, err := r.counts("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "beam_width")
		if err != nil {
			return err
		}
		a := gqaRow{record: r, batch: v[0], isl: v[1], heads: v[2], kvHeads: v[3], dim: v[4], kv: dtypeName(r.str("kv_cache_dtype"))}
		beam, q := v[5], dtypeName(r.str("attn_dtype"))
		skip, err := check(&a, windowed)
		if err != nil {
			return err
		}
		switch {
		case skip != "":
		case beam != 1:
			skip = "beam_width > 1"
		case q != "bf16" || !slices.Contains(kvDtypes, a.kv):
			skip = "attn_dtype " + q + ", kv_cache_dtype " + a.kv + " (bf16 queries with a bf16 or fp8 KV cache are read)"
		}
		if skip != "" {
			im.skip(f, skip)
			return nil
		}
		if a.lat, err = r.latencyUs("latency", 1e3); err != nil {
			return err
		}
		return add(&g, a)
	})
	if err != nil {
		return err
	}
	g.nameByKernel()
	g.flush(im.file)
	return nil
}
