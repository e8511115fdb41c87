package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
)

// Summary condenses the steps of one rank.
//
// Percentiles use linear interpolation between the closest ranks of the
// sorted values (Hyndman and Fan type 7, numpy's default): p(q) = x[h] +
// (h - floor h)(x[h+1] - x[h]) with h = (n-1)q, zero-based. ByCategory and
// Exposed hold the median over steps of each category's time. Share[c] is
// the category's kernel time summed over steps divided by the summed wall
// time of the steps: the fraction of the step that kernels of c occupy.
// Kernels on concurrent streams each count in full, so shares can add up to
// more than 1 when streams overlap; Share[Idle] is the idle fraction.
type Summary struct {
	Steps      int
	Median     unit.Seconds
	P10        unit.Seconds
	P90        unit.Seconds
	ByCategory [cost.NumCategories]unit.Seconds
	Exposed    [cost.NumCategories]unit.Seconds
	Share      [cost.NumCategories]float64
}

// Summarize computes the Summary of steps.
func Summarize(steps []StepResult) Summary {
	s := Summary{Steps: len(steps)}
	if len(steps) == 0 {
		return s
	}
	vals := make([]float64, len(steps))
	for i, st := range steps {
		vals[i] = float64(st.Wall)
	}
	sort.Float64s(vals)
	s.Median = unit.Seconds(Quantile(vals, 0.5))
	s.P10 = unit.Seconds(Quantile(vals, 0.1))
	s.P90 = unit.Seconds(Quantile(vals, 0.9))
	var wall float64
	for _, st := range steps {
		wall += float64(st.Wall)
	}
	for c := range cost.NumCategories {
		var tot float64
		for i, st := range steps {
			vals[i] = float64(st.ByCategory[c])
			tot += vals[i]
		}
		sort.Float64s(vals)
		s.ByCategory[c] = unit.Seconds(Quantile(vals, 0.5))
		for i, st := range steps {
			vals[i] = float64(st.Exposed[c])
		}
		sort.Float64s(vals)
		s.Exposed[c] = unit.Seconds(Quantile(vals, 0.5))
		if wall > 0 {
			s.Share[c] = tot / wall
		}
	}
	return s
}

// Quantile returns the q-quantile (0 <= q <= 1) of sorted values by linear
// interpolation (type 7); NaN for no values.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n == 1:
		return sorted[0]
	}
	h := float64(n-1) * q
	lo := int(h)
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// FileResult is the analysis of one trace file.
type FileResult struct {
	File    string
	Rank    int    // distributedInfo.rank, else a rank number in the file name, else the file's position
	RankSrc string // "distributedInfo", "file name" or "position"
	Result  *Result
	Summary Summary
	Bytes   int64 // uncompressed JSON bytes read
	Meta    *Meta // the trace's top-level fields; nil when it could not be read
	// Err is a fatal error: the file could not be opened, or (with Strict)
	// it is partly broken. A partly broken file without Strict has a Result
	// from the events before the fault and a warning.
	Err error
}

// Input errors from AnalyzeFiles wrap ErrInput.
var ErrInput = errors.New("bad trace input")

// FileOptions configure AnalyzeFiles.
type FileOptions struct {
	Options
	// Strict turns a skipped (malformed) event or a fault in the middle of a
	// file into an error instead of a warning.
	Strict bool
	// Progress, when set, receives the bytes read from the files (compressed
	// size for gzip), for a progress display.
	Progress *atomic.Int64
	// Workers bounds the files read at once; 0 means 2 x GOMAXPROCS.
	Workers int
}

// maxBadEventWarnings bounds the per-file warnings about skipped events.
const maxBadEventWarnings = 5

// AnalyzeFile reads and analyzes one trace file.
func AnalyzeFile(path string, opts FileOptions) FileResult {
	return analyzeFileFunc(path, opts, nil)
}

// analyzeFileFunc is AnalyzeFile that also hands visit, when set, every
// event it reads (after the analyzer has it), for a caller that keeps
// more than the analysis in the same pass.
func analyzeFileFunc(path string, opts FileOptions, visit func(*Event)) FileResult {
	fr := FileResult{File: path}
	f, err := infile.Open(path, nil, 0)
	if err != nil {
		fr.Err = fmt.Errorf("%w: %w", ErrInput, err)
		return fr
	}
	defer f.Close()
	var in io.Reader = f
	if opts.Progress != nil {
		in = progressReader{r: f, n: opts.Progress}
	}
	r, err := NewReader(in)
	if err != nil {
		fr.Err = fmt.Errorf("%w: %s: %w", ErrInput, path, err)
		return fr
	}
	defer r.Close()
	an := newAnalyzer(opts.Options)
	var ev Event
	var warns []string
	var fault *Error
	bad := 0
	for {
		err := r.Next(&ev)
		if err == nil {
			an.Add(&ev)
			if visit != nil {
				visit(&ev)
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		var te *Error
		if errors.As(err, &te) && !te.Fatal {
			if opts.Strict {
				fr.Err = fmt.Errorf("%w: %s: %w", ErrInput, path, err)
				return fr
			}
			bad++
			if bad <= maxBadEventWarnings {
				warns = append(warns, fmt.Sprintf("skipped a malformed event (%s)", err))
			}
			continue
		}
		// fatal: keep what was read unless strict
		if opts.Strict || an.res.Events == 0 {
			fr.Err = fmt.Errorf("%w: %s: %w", ErrInput, path, err)
			return fr
		}
		warns = append(warns, fmt.Sprintf("partly broken trace, steps read before the fault are kept: %s", err))
		if errors.As(err, &te) {
			fault = te
		}
		break
	}
	if bad > maxBadEventWarnings {
		warns = append(warns, fmt.Sprintf("skipped %d malformed events in all", bad))
	}
	res := an.Finish()
	if opts.Strict && res.FarKernels > 0 {
		fr.Err = fmt.Errorf("%w: %s: %d kernel events start far from their launch, a time outside the trace's span (the first at byte %d)", ErrInput, path, res.FarKernels, res.FarOffset)
		return fr
	}
	if opts.Strict && res.StepUnmatched {
		fr.Err = fmt.Errorf("%w: %s: --step %q matches no step annotation (without --strict, steps come from %s)", ErrInput, path, opts.Step, res.Source)
		return fr
	}
	res.Warnings = append(warns, res.Warnings...)
	res.Fault = fault
	fr.Result = res
	fr.Summary = Summarize(res.Steps)
	fr.Meta = r.Meta()
	fr.Rank, fr.RankSrc = rankOf(fr.Meta, path)
	fr.Bytes, _ = r.BytesRead()
	return fr
}

type progressReader struct {
	r io.Reader
	n *atomic.Int64
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n.Add(int64(n))
	return n, err
}

// reRankName finds a rank in vLLM's and SGLang's trace file names:
// "..._rank3.", "-rank-3.", "rank_3", "-TP-3".
var reRankName = regexp.MustCompile(`(?i)(?:rank[_-]?|-TP-)(\d+)`)

func rankOf(m *Meta, path string) (int, string) {
	if m != nil && m.Distributed != nil {
		return m.Distributed.Rank, "distributedInfo"
	}
	if sub := reRankName.FindAllStringSubmatch(filepath.Base(path), -1); sub != nil {
		if n, err := strconv.Atoi(sub[len(sub)-1][1]); err == nil {
			return n, "file name"
		}
	}
	return -1, "position"
}

// ExpandInputs turns the command-line inputs into trace files: a directory
// stands for the trace files in it (*.json, *.json.gz, *.trace.json.gz;
// sorted), a file for itself.
func ExpandInputs(inputs []string) ([]string, error) {
	var out []string
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		if !st.IsDir() {
			out = append(out, in)
			continue
		}
		ents, err := os.ReadDir(in)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		n := 0
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !(strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.gz")) {
				continue
			}
			out = append(out, filepath.Join(in, name))
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: %s: no *.json or *.json.gz trace files in the directory", ErrInput, in)
		}
	}
	return out, nil
}

// AnalyzeFiles analyzes the files concurrently, one goroutine per file and
// at most opts.Workers (default 2 x GOMAXPROCS) at once, and returns the
// results in input order. Ranks that no distributedInfo or file name gives
// are numbered by position.
func AnalyzeFiles(paths []string, opts FileOptions) []FileResult {
	return AnalyzeFilesFunc(paths, opts, nil)
}

// AnalyzeFilesFunc is AnalyzeFiles that also hands visit, when set, every
// event it reads with the index of its file (analyzeFileFunc); calls for
// different files may run at once.
func AnalyzeFilesFunc(paths []string, opts FileOptions, visit func(file int, ev *Event)) []FileResult {
	workers := opts.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	out := make([]FileResult, len(paths))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var v func(*Event)
			if visit != nil {
				v = func(ev *Event) { visit(i, ev) }
			}
			out[i] = analyzeFileFunc(p, opts, v)
		}()
	}
	wg.Wait()
	for i := range out {
		if out[i].RankSrc == "position" || out[i].RankSrc == "" {
			out[i].Rank, out[i].RankSrc = i, "position"
		}
	}
	return out
}

// Spread is the spread over ranks of one collective category's per-step
// median time: a rank that waits for the slowest one shows long
// collectives, so a wide spread points at imbalance rather than at the
// fabric.
type Spread struct {
	Category cost.Category
	Ranks    int
	Min      unit.Seconds
	Median   unit.Seconds
	Max      unit.Seconds
	MinRank  int
	MaxRank  int
}

// CollectiveSpread returns, for each collective category present on some
// rank, the min, median and max over ranks of that category's per-step
// median (Summary.ByCategory). Files without a result are skipped.
func CollectiveSpread(files []FileResult) []Spread {
	var out []Spread
	for c := range cost.NumCategories {
		if !c.IsCollective() {
			continue
		}
		type rv struct {
			rank int
			v    float64
		}
		var vals []rv
		any := false
		for _, f := range files {
			if f.Result == nil || f.Summary.Steps == 0 {
				continue
			}
			v := float64(f.Summary.ByCategory[c])
			any = any || v > 0
			vals = append(vals, rv{f.Rank, v})
		}
		if !any {
			continue
		}
		sort.SliceStable(vals, func(i, j int) bool { return vals[i].v < vals[j].v })
		sorted := make([]float64, len(vals))
		for i, x := range vals {
			sorted[i] = x.v
		}
		out = append(out, Spread{
			Category: c, Ranks: len(vals),
			Min: unit.Seconds(sorted[0]), Median: unit.Seconds(Quantile(sorted, 0.5)), Max: unit.Seconds(sorted[len(sorted)-1]),
			MinRank: vals[0].rank, MaxRank: vals[len(vals)-1].rank,
		})
	}
	return out
}
