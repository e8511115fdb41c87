package validate

import (
	"math"

	"github.com/moecast/moecast/serve"
)

// BenchRow is one measured figure of a benchmark result against the
// simulator's prediction of the same workload.
type BenchRow struct {
	Metric    string  // "ttft", "tpot", "itl", "e2el", or a throughput name
	Stat      string  // "mean", "median", "p90", "p99", or "" for a throughput
	Unit      string  // "ms", "req/s" or "tok/s"
	Measured  float64 // NaN when the file does not hold it
	Predicted float64 // NaN when the simulator has no figure (an overloaded point)
}

// ErrorPct is (predicted - measured) / measured in percent, NaN when either
// is missing or the measurement is 0.
func (r BenchRow) ErrorPct() float64 {
	if math.IsNaN(r.Measured) || math.IsNaN(r.Predicted) || r.Measured == 0 {
		return math.NaN()
	}
	return (r.Predicted - r.Measured) / r.Measured * 100
}

// CompareBench lists every figure of m that the simulator predicts, in a
// fixed order: the latency metrics (mean, median, p90, p99 each), then the
// request, output and total token throughputs. An overloaded open-loop
// prediction has no latency figures (they grow with the run's length).
func CompareBench(m BenchResult, p *serve.Result) []BenchRow {
	var rows []BenchRow
	pred := map[string]serve.Stats{"ttft": p.TTFT, "tpot": p.TPOT, "itl": p.ITL, "e2el": p.E2EL}
	for _, name := range MetricNames {
		ms := m.Metrics[name]
		ps := pred[name]
		for _, s := range []struct {
			stat string
			meas float64
			pred float64
		}{
			{"mean", ms.Mean, ps.Mean.Ms()},
			{"median", ms.Median, ps.Median.Ms()},
			{"p90", ms.P90, ps.P90.Ms()},
			{"p99", ms.P99, ps.P99.Ms()},
		} {
			if math.IsNaN(s.meas) {
				continue
			}
			pv := s.pred
			if p.Overloaded {
				pv = math.NaN()
			}
			rows = append(rows, BenchRow{Metric: name, Stat: s.stat, Unit: "ms", Measured: s.meas, Predicted: pv})
		}
	}
	for _, t := range []struct {
		name, unit string
		meas, pred float64
	}{
		{"request_throughput", "req/s", m.RequestThroughput, p.RequestThroughput},
		{"output_throughput", "tok/s", m.OutputThroughput, p.OutputThroughput},
		{"total_token_throughput", "tok/s", m.TotalTokenThroughput, p.TotalTokenThroughput},
	} {
		if math.IsNaN(t.meas) {
			continue
		}
		rows = append(rows, BenchRow{Metric: t.name, Unit: t.unit, Measured: t.meas, Predicted: t.pred})
	}
	return rows
}

// WorstMeanErrorPct is the largest absolute % error over the rows whose
// Stat is "mean" and over the throughputs (the figures `--fail-above`
// holds), with its row; ok is false when no row has both figures.
func WorstMeanErrorPct(rows []BenchRow) (worst float64, row BenchRow, ok bool) {
	for _, r := range rows {
		if r.Stat != "mean" && r.Stat != "" {
			continue
		}
		e := r.ErrorPct()
		if math.IsNaN(e) {
			continue
		}
		if !ok || math.Abs(e) > math.Abs(worst) {
			worst, row, ok = e, r, true
		}
	}
	return worst, row, ok
}
