package calib

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/kernels"
)

// NCCLTestsOptions configure ImportNCCLTests.
type NCCLTestsOptions struct {
	GPU     string // GPU preset name; empty: the device name in the output
	Fabric  string // fabric name; empty: "unknown"
	Date    string // measurement date (provenance)
	Command string // the command line that ran the import (provenance)
}

// ncclRun is one parsed nccl-tests output.
type ncclRun struct {
	name        string // file name, for errors and provenance
	op          string // allreduce, allgather, reducescatter, alltoall
	ranks       int
	label       string // device name of rank 0
	ncclVersion string
	testsVer    string
	graph       bool
	iters       string
	rows        []ncclRow
}

type ncclRow struct {
	size       float64 // size(B)
	oop, inp   float64 // out-of-place and in-place time, µs
	line       int
	hasInPlace bool
}

var ncclBinaries = map[string]string{
	"all_reduce_perf": "allreduce", "all_gather_perf": "allgather",
	"reduce_scatter_perf": "reducescatter", "alltoall_perf": "alltoall",
}

var (
	reStart   = regexp.MustCompile(`Collective test starting:\s*(\S+)`)
	reLib     = regexp.MustCompile(`nccl-library=(\d+)`)
	reTests   = regexp.MustCompile(`nccl-tests version\s+(\S+)`)
	reNCCLVer = regexp.MustCompile(`NCCL version\s+([0-9][0-9.]*)`)
	reRank    = regexp.MustCompile(`^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+\S+\s+device\s+\d+\s+\[[^\]]*\]\s*(.*)$`)
	reNGPUs   = regexp.MustCompile(`nThread\s+(\d+)\s+nGpus\s+(\d+)`)
	reGraph   = regexp.MustCompile(`graph:\s*(\d+)`)
	reIters   = regexp.MustCompile(`warmup iters:\s*(\d+)\s+iters:\s*(\d+)`)
	reNRanks  = regexp.MustCompile(`nranks\s*[=:]?\s*(\d+)`)
	reParen   = regexp.MustCompile(`\(([^)]*)\)`)
	reOOB     = regexp.MustCompile(`Out of bounds values\s*:\s*(\d+)`)
	reDate    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// maxLine is the longest line the nccl-tests reader accepts (its lines
// are ~130 bytes; a longer one is not nccl-tests output).
const maxLine = 1 << 20

// checkDate accepts a measurement date written YYYY-MM-DD (a real date).
func checkDate(d string) error {
	if !reDate.MatchString(d) {
		return fmt.Errorf("date %q: want YYYY-MM-DD", d)
	}
	if _, err := time.Parse(time.DateOnly, d); err != nil {
		return fmt.Errorf("date %q is not a calendar date (YYYY-MM-DD)", d)
	}
	return nil
}

// check validates the options a user passes: the date (YYYY-MM-DD), the
// GPU (a kernels preset, so that predict can match the calibration to a
// box) and the fabric (a comm preset); empty values are allowed (the
// device name from the output, "unknown").
func (o NCCLTestsOptions) check() error {
	if o.Date != "" {
		if err := checkDate(o.Date); err != nil {
			return fmt.Errorf("nccl-tests: --date: %w", err)
		}
	}
	if o.GPU != "" {
		if _, ok := kernels.LookupGPU(o.GPU); !ok {
			return fmt.Errorf("nccl-tests: --gpu %q is not a GPU preset (%s)", o.GPU, strings.Join(kernels.GPUNames(), ", "))
		}
	}
	if o.Fabric != "" {
		if _, ok := comm.LookupFabric(o.Fabric); !ok {
			return fmt.Errorf("nccl-tests: --fabric %q is not a fabric preset (%s)", o.Fabric, strings.Join(comm.FabricNames(), ", "))
		}
	}
	return nil
}

// ncclLibVersion decodes nccl-tests' nccl-library=22102 (major*10000 +
// minor*100 + patch) as "2.21.2".
func ncclLibVersion(code string) string {
	n, err := strconv.Atoi(code)
	if err != nil || n < 10000 {
		return code
	}
	return fmt.Sprintf("%d.%d.%d", n/10000, n/100%100, n%100)
}

// parseNCCLTests reads one nccl-tests output. The data rows are
//
//	size count type [redop [root]] | time algbw busbw #wrong | time algbw busbw #wrong
//
// (out-of-place, then in-place; time in µs). The collective comes from the
// "Collective test starting" line or the file name; ranks from the
// "# Rank N Group ..." device lines, else nranks, else nThread x nGpus.
func parseNCCLTests(name string, r io.Reader) (*ncclRun, error) {
	run := &ncclRun{name: name}
	base := filepath.Base(name)
	for bin, op := range ncclBinaries {
		if strings.HasPrefix(base, bin) {
			run.op = op
		}
	}
	ranks := map[int]bool{}
	nGPUs, nRanks := 0, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	ln := 0
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), "\r")
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			if m := reStart.FindStringSubmatch(t); m != nil {
				op, ok := ncclBinaries[m[1]]
				if !ok {
					return nil, fmt.Errorf("%s:%d: collective %q is not supported (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf)", name, ln, m[1])
				}
				run.op = op
			}
			if m := reLib.FindStringSubmatch(t); m != nil {
				run.ncclVersion = ncclLibVersion(m[1])
			} else if m := reNCCLVer.FindStringSubmatch(t); m != nil && run.ncclVersion == "" {
				run.ncclVersion = m[1]
			}
			if m := reTests.FindStringSubmatch(t); m != nil {
				run.testsVer = m[1]
			}
			if m := reRank.FindStringSubmatch(t); m != nil {
				k, _ := strconv.Atoi(m[1])
				if ranks[k] {
					return nil, fmt.Errorf("%s:%d: rank %d listed twice", name, ln, k)
				}
				ranks[k] = true
				if k == 0 || run.label == "" {
					run.label = strings.TrimSpace(m[2])
				}
			}
			if m := reNGPUs.FindStringSubmatch(t); m != nil {
				th, _ := strconv.Atoi(m[1])
				g, _ := strconv.Atoi(m[2])
				nGPUs = th * g
				if g := reGraph.FindStringSubmatch(t); g != nil {
					run.graph = g[1] != "0"
				}
				if it := reIters.FindStringSubmatch(t); it != nil {
					run.iters = fmt.Sprintf("%s warmup + %s timed iterations", it[1], it[2])
				}
			}
			if m := reOOB.FindStringSubmatch(t); m != nil {
				if n, err := strconv.Atoi(m[1]); err != nil || n != 0 {
					return nil, fmt.Errorf("%s:%d: %d out-of-bounds values: the run failed its checks; these timings are not usable", name, ln, n)
				}
			}
			if m := reNRanks.FindStringSubmatch(t); m != nil {
				nRanks, _ = strconv.Atoi(m[1])
			}
			// The units line of the column header: times must be µs.
			if strings.Contains(t, "(B)") && strings.Contains(t, "(elements)") {
				for _, u := range reParen.FindAllStringSubmatch(t, -1) {
					if u[1] != "B" && u[1] != "elements" && u[1] != "us" && u[1] != "GB/s" {
						return nil, fmt.Errorf("%s:%d: time unit (%s): nccl-tests reports time in (us); refusing to guess a conversion", name, ln, u[1])
					}
				}
			}
			continue
		}
		row, err := parseNCCLRow(t)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, ln, err)
		}
		row.line = ln
		run.rows = append(run.rows, row)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes: not nccl-tests output (its lines are about 130 bytes)", name, ln+1, maxLine)
		}
		return nil, fmt.Errorf("%s:%d: %w", name, ln+1, err)
	}
	switch {
	case len(ranks) > 0:
		run.ranks = len(ranks)
	case nRanks > 0:
		run.ranks = nRanks
	default:
		run.ranks = nGPUs
	}
	if run.op == "" {
		return nil, fmt.Errorf("%s: cannot tell the collective: no \"Collective test starting\" line and the file name does not start with all_reduce_perf, all_gather_perf, reduce_scatter_perf or alltoall_perf", name)
	}
	if run.ranks < 2 {
		return nil, fmt.Errorf("%s: cannot tell the rank count (need the \"# Rank N Group ...\" device lines or nGpus >= 2), got %d", name, run.ranks)
	}
	if len(run.rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", name)
	}
	for i := 1; i < len(run.rows); i++ {
		if run.rows[i].size == run.rows[i-1].size {
			return nil, fmt.Errorf("%s:%d: size %.0f B measured twice (also line %d)", name, run.rows[i].line, run.rows[i].size, run.rows[i-1].line)
		}
	}
	return run, nil
}

// rankList is "2, 4, 8".
func rankList(set map[int]bool) string {
	var rs []int
	for r := range set {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.Itoa(r)
	}
	return strings.Join(s, ", ")
}

func parseNCCLRow(t string) (ncclRow, error) {
	f := strings.Fields(t)
	// size count type + two blocks of 4; redop and root are optional.
	if len(f) < 11 || len(f) > 13 {
		return ncclRow{}, fmt.Errorf("data row has %d fields; want size count type [redop root] then time algbw busbw #wrong twice", len(f))
	}
	var row ncclRow
	n, err := strconv.ParseUint(f[0], 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) || n > 1<<53:
		return row, fmt.Errorf("size(B) %s is out of range (at most 2^53 B)", f[0])
	case err != nil || n == 0:
		return row, fmt.Errorf("size(B) %q is not a positive integer", f[0])
	}
	size := float64(n)
	if _, err := strconv.ParseFloat(f[1], 64); err != nil {
		return row, fmt.Errorf("count %q is not a number", f[1])
	}
	row.size = size
	blocks := f[len(f)-8:]
	for b, name := range []string{"out-of-place", "in-place"} {
		blk := blocks[4*b : 4*b+4]
		if b == 1 && blk[0] == "N/A" {
			continue // no in-place run (some collectives and versions)
		}
		tm, err := strconv.ParseFloat(blk[0], 64)
		if err != nil || math.IsNaN(tm) || math.IsInf(tm, 0) {
			return row, fmt.Errorf("%s time %q is not a number", name, blk[0])
		}
		if !(tm > 0) {
			return row, fmt.Errorf("%s time %s us must be positive", name, blk[0])
		}
		if w := blk[3]; w != "N/A" {
			n, err := strconv.Atoi(w)
			if err != nil {
				return row, fmt.Errorf("%s #wrong %q is not a count", name, w)
			}
			if n != 0 {
				return row, fmt.Errorf("%s #wrong = %d: the collective returned wrong results; these timings are not usable", name, n)
			}
		}
		// algbw = size / time: a cross-check that catches a time column in
		// other units (algbw is in GB/s, time in µs).
		if alg, err := strconv.ParseFloat(blk[1], 64); err == nil && alg >= 1 {
			want := size / tm / 1e3
			if math.Abs(want-alg)/alg > 0.05 {
				return row, fmt.Errorf("%s algbw %s GB/s does not match size/time = %.3g GB/s: is the time column in us?", name, blk[1], want)
			}
		}
		if b == 0 {
			row.oop = tm
		} else {
			row.inp, row.hasInPlace = tm, true
		}
	}
	return row, nil
}

// ImportNCCLTests parses nccl-tests outputs (all_reduce_perf,
// all_gather_perf, reduce_scatter_perf, alltoall_perf; any number of
// files and rank counts) into one calibration file with a table per
// collective: columns ranks, bytes (size(B)), latency_us (out-of-place) and
// inplace_latency_us. A file with wrong results, an unreadable row or
// timings of the same (collective, ranks, size) twice is an error with
// file:line, and nothing is returned.
func ImportNCCLTests(paths []string, opt NCCLTestsOptions) (_ *File, err error) {
	defer asInput(&err)
	if len(paths) == 0 {
		return nil, fmt.Errorf("nccl-tests: no input files")
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	var runs []*ncclRun
	for _, p := range paths {
		fh, err := infile.Open(p, nil, infile.MaxText)
		if err != nil {
			return nil, fmt.Errorf("nccl-tests: %w", err)
		}
		run, err := parseNCCLTests(p, fh)
		fh.Close()
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return buildNCCLFile(runs, opt)
}

// ncclRowError places an error of building the tables (a curve.RowError:
// a row refused, as too fast for the fabric) at the nccl-tests file and
// line the row came from; others keep the table's name.
func ncclRowError(err error, f *File, origin func(op string, ranks, size float64) (string, int)) error {
	te, ok1 := errors.AsType[*tableErr](err)
	re, ok2 := errors.AsType[*curve.RowError](err)
	if ok1 && ok2 && te.index < len(f.Tables) {
		t := &f.Tables[te.index]
		if re.Row >= 1 && re.Row <= len(t.Rows) {
			r := t.Rows[re.Row-1]
			if file, line := origin(t.Op, r[0], r[1]); line > 0 {
				return fmt.Errorf("%s:%d: %s at %.0f ranks, %.0f B: %w", file, line, t.Op, r[0], r[1], re.Err)
			}
		}
	}
	return err // already "nccl-tests: table ...: ..."
}

func buildNCCLFile(runs []*ncclRun, opt NCCLTestsOptions) (*File, error) {
	var warnings []string
	gpu := opt.GPU
	if gpu == "" {
		label := runs[0].label
		if p, ok := kernels.DevicePreset(label); ok {
			gpu = p
		} else {
			gpu = label
			if gpu == "" {
				gpu = "unknown"
			}
			warnings = append(warnings, fmt.Sprintf("nccl-tests: device %q matches no GPU preset (%s): the tables are recorded for GPU %q and predict uses them on no scenario; pass --gpu NAME if the box is one of the presets",
				label, strings.Join(kernels.GPUNames(), ", "), gpu))
		}
	}
	fabric := opt.Fabric
	if fabric == "" {
		fabric = "unknown"
		warnings = append(warnings, fmt.Sprintf("nccl-tests: the output does not name the fabric and --fabric was not given: it is recorded as \"unknown\" and predict uses these collective tables on no scenario; pass --fabric (%s)",
			strings.Join(comm.FabricNames(), ", ")))
	}
	date := opt.Date
	if date == "" {
		date = "unknown"
	}
	f := &File{Schema: Schema, Name: "nccl-tests", Provenance: Provenance{
		GPU: gpu, GPULabel: runs[0].label, Fabric: fabric, NCCL: runs[0].ncclVersion,
		Driver: "unknown (nccl-tests does not print it)", CUDA: "unknown (nccl-tests does not print it)",
		Engine: "nccl-tests", EngineVersion: runs[0].testsVer, Date: date, Command: opt.Command,
		Launch: "unknown", Cache: "warm",
		Method: "nccl-tests: time per collective averaged over the timed iterations; out-of-place in latency_us, in-place in inplace_latency_us",
	}}
	type place struct {
		file string
		line int
	}
	first := map[[3]float64]place{}
	tables := map[string]*Table{}
	var order []string
	maxRanks := 0
	rankSet := map[int]bool{}
	opRanks := map[string]map[int]bool{}
	inplace := map[string]bool{} // every row of the op has an in-place time
	opIndex := map[string]float64{"allreduce": 0, "allgather": 1, "reducescatter": 2, "alltoall": 3}
	for _, run := range runs {
		maxRanks = max(maxRanks, run.ranks)
		rankSet[run.ranks] = true
		if opRanks[run.op] == nil {
			opRanks[run.op] = map[int]bool{}
		}
		opRanks[run.op][run.ranks] = true
		t, ok := tables[run.op]
		if !ok {
			launch := "eager"
			if run.graph {
				launch = "cuda-graph"
			}
			p := Provenance{Launch: launch, NCCL: run.ncclVersion, GPULabel: run.label}
			if run.iters != "" {
				p.Method = "nccl-tests " + run.testsVer + ", " + run.iters + "; out-of-place time in latency_us, in-place in inplace_latency_us"
			}
			p.Corrections = []string{"none: times copied as printed (us); bytes = size(B) (all-gather/reduce-scatter: the whole array, recvcount x sizeof x ranks)"}
			t = &Table{Name: "nccl." + run.op, Op: run.op, Keys: Keys{Impl: "nccl"},
				Columns: []string{"ranks", "bytes", "latency_us", "inplace_latency_us"}, Provenance: p}
			tables[run.op] = t
			order = append(order, run.op)
			inplace[run.op] = true
		}
		var sources []string
		if t.Provenance.Source != "" {
			sources = append(sources, t.Provenance.Source)
		}
		t.Provenance.Source = strings.Join(append(sources, filepath.Base(run.name)), ", ")
		for _, r := range run.rows {
			k := [3]float64{opIndex[run.op], float64(run.ranks), r.size}
			if prev, dup := first[k]; dup {
				return nil, fmt.Errorf("%s:%d: %s at %d ranks, %.0f B also measured at %s:%d", run.name, r.line, run.op, run.ranks, r.size, prev.file, prev.line)
			}
			first[k] = place{run.name, r.line}
			t.Rows = append(t.Rows, []float64{float64(run.ranks), r.size, r.oop, r.inp})
			inplace[run.op] = inplace[run.op] && r.hasInPlace
		}
	}
	origin := func(op string, ranks, size float64) (string, int) {
		p := first[[3]float64{opIndex[op], ranks, size}]
		return p.file, p.line
	}
	// gpu_count is the largest run (the box had at least that many GPUs);
	// every rank count measured is stated in the method, file and table.
	f.Provenance.GPUCount = maxRanks
	f.Provenance.Method += "; rank counts measured: " + rankList(rankSet)
	sort.Strings(order)
	for _, op := range order {
		t := tables[op]
		if !inplace[op] {
			t.Columns = t.Columns[:3]
			for i := range t.Rows {
				t.Rows[i] = t.Rows[i][:3]
			}
			t.Provenance.Corrections = append(t.Provenance.Corrections, "in-place times dropped: some rows have none (N/A)")
		}
		sortRows(t.Rows)
		if t.Provenance.Method != "" {
			t.Provenance.Method += "; rank counts: " + rankList(opRanks[op])
		}
		f.Tables = append(f.Tables, *t)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("nccl-tests: %w", err)
	}
	if err := f.build(); err != nil {
		return nil, ncclRowError(err, f, origin)
	}
	f.Warnings = warnings
	return f, nil
}
