package validate

import (
	"sort"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
)

// CollectiveKernel is one collective kernel of a rank: its category and
// its span on the GPU.
type CollectiveKernel struct {
	Category cost.Category
	Start    trace.Time
	Dur      unit.Seconds
}

// ReadTraces reads and analyzes the trace files concurrently, as
// trace.AnalyzeFiles does (the same reader, analyzer, warnings and --strict
// errors), and in the same pass keeps each rank's top-level fields and the
// start and duration of its collective kernels, for the start-time spread
// of each collective across ranks. Ranks come from distributedInfo, else a
// rank number in the file name, else the file's position. The first
// error is returned; ReadEach gives every file's.
func ReadTraces(paths []string, opts trace.FileOptions) ([]Rank, error) {
	ranks, errs := ReadEach(paths, opts)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ranks, nil
}

// ReadEach is ReadTraces with one error per file (nil when it was read;
// the Rank then has its Result). Errors wrap trace.ErrInput when the input
// is at fault.
func ReadEach(paths []string, opts trace.FileOptions) ([]Rank, []error) {
	colls := make([][]CollectiveKernel, len(paths))
	cls := make([]*trace.Classifier, len(paths)) // one a file: a Classifier caches
	for i := range cls {
		cls[i] = trace.NewClassifier(opts.Rules)
	}
	frs := trace.AnalyzeFilesFunc(paths, opts, func(i int, ev *trace.Event) {
		if ev.Cat == trace.CatKernel && ev.Ph == trace.PhaseComplete {
			if c := cls[i].Classify(ev.Name).Category; c.IsCollective() {
				colls[i] = append(colls[i], CollectiveKernel{c, ev.TS, ev.Dur})
			}
		}
	})
	out := make([]Rank, len(paths))
	errs := make([]error, len(paths))
	for i, fr := range frs {
		out[i] = Rank{File: fr.File, Rank: fr.Rank}
		if errs[i] = fr.Err; fr.Err != nil {
			continue
		}
		cs := colls[i]
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].Start < cs[b].Start })
		out[i].Result, out[i].Meta, out[i].Collectives = fr.Result, fr.Meta, cs
	}
	return out, errs
}

// Spread is one collective category across ranks: its kernels paired by
// their order on each rank (the n-th all-reduce of every rank is one
// collective), and per collective the spread of the start times (latest
// start - earliest), the transfer time (the shortest rank's duration:
// the rank that arrived last waits for nobody) and each rank's wait (its
// duration less the transfer). Medians over the collectives; TotalWait is
// the summed mean wait over ranks. Start times compare across ranks only
// when the ranks share a clock (one host); so do Kineto's traces of one
// node.
type Spread struct {
	Category     cost.Category
	Ranks        int
	Collectives  int // paired collectives (the fewest any rank ran)
	Unpaired     int // kernels beyond that on the ranks that ran more
	StartSpread  unit.Seconds
	Transfer     unit.Seconds
	MaxWait      unit.Seconds
	MeanWait     unit.Seconds
	TotalWait    unit.Seconds // summed over collectives of the mean wait over ranks
	TotalTime    unit.Seconds // summed over collectives of the mean duration over ranks
	LastRank     int          // the rank that most often started last (the one the others wait for)
	LastRankRuns int          // how many of the collectives it started last
}

// Spreads computes the start-time spread of each collective category over
// the ranks. It needs two ranks or more.
func Spreads(ranks []Rank) []Spread {
	if len(ranks) < 2 {
		return nil
	}
	var out []Spread
	for c := range cost.NumCategories {
		if !c.IsCollective() {
			continue
		}
		lists := make([][]CollectiveKernel, len(ranks))
		n, total := -1, 0
		for i, rk := range ranks {
			for _, k := range rk.Collectives {
				if k.Category == c {
					lists[i] = append(lists[i], k)
				}
			}
			total += len(lists[i])
			if n < 0 || len(lists[i]) < n {
				n = len(lists[i])
			}
		}
		if n <= 0 {
			continue
		}
		sp := Spread{Category: c, Ranks: len(ranks), Collectives: n, Unpaired: total - n*len(ranks)}
		spread, transfer, maxW, meanW := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		last := make([]int, len(ranks))
		for j := 0; j < n; j++ {
			first, latest := lists[0][j].Start, lists[0][j].Start
			minD, maxD, sum := lists[0][j].Dur, lists[0][j].Dur, unit.Seconds(0)
			li := 0
			for i := range ranks {
				k := lists[i][j]
				if k.Start < first {
					first = k.Start
				}
				if k.Start > latest {
					latest, li = k.Start, i
				}
				minD, maxD = min(minD, k.Dur), max(maxD, k.Dur)
				sum += k.Dur
			}
			last[li]++
			mean := sum / unit.Seconds(len(ranks))
			spread[j], transfer[j] = float64(latest.Sub(first)), float64(minD)
			maxW[j], meanW[j] = float64(maxD-minD), float64(mean-minD)
			sp.TotalWait += mean - minD
			sp.TotalTime += mean
		}
		for i, v := range last {
			if v > sp.LastRankRuns {
				sp.LastRank, sp.LastRankRuns = ranks[i].Rank, v
			}
		}
		med := func(x []float64) unit.Seconds {
			sort.Float64s(x)
			return unit.Seconds(trace.Quantile(x, 0.5))
		}
		sp.StartSpread, sp.Transfer, sp.MaxWait, sp.MeanWait = med(spread), med(transfer), med(maxW), med(meanW)
		out = append(out, sp)
	}
	return out
}
