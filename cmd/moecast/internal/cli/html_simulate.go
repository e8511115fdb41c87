package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/sim"
)

// page is simulate's HTML report: TTFT and TPOT (mean and p99) against
// the load, the latency-throughput curve, and every figure.
func (sn *simulation) page() *report.Page {
	sc := sn.sc
	pg := &report.Page{Title: "moecast simulate: " + sc.Name, Header: scenarioHeader(sc), Warnings: sn.warnings}
	if sp := sc.Config.Spec; sp.Method != sim.SpecNone {
		acc := make([]string, len(sp.Acceptance))
		for i, a := range sp.Acceptance {
			acc[i] = strconv.FormatFloat(a, 'g', -1, 64)
		}
		pg.Header = append(pg.Header, report.Field{Label: "speculative",
			Value: fmt.Sprintf("%s, %d draft tokens, acceptance [%s]", specName(sp.Method), sp.DraftTokens, strings.Join(acc, ", "))})
	}
	if len(sn.points) > 0 {
		// The text header's lines, less their fixed-width labels.
		for _, f := range []struct{ label, line string }{{"engine", sn.engineLine()}, {"KV cache", sn.kvLine()}, {"workload", sn.workloadLine()}} {
			pg.Header = append(pg.Header, report.Field{Label: f.label, Value: strings.TrimSpace(f.line[len("engine    "):])})
		}
	}
	load := sn.loadAxis()
	pg.Sections = []report.Section{
		{Title: "Time to first token against " + load.Label,
			Text:  "Mean and p99 TTFT of the simulated run at each point (points that cannot be served, or open loops beyond capacity, are left out).",
			Chart: sn.latencyChart("Time to first token", "TTFT", load, func(p *simPoint) (float64, float64) { return p.res.TTFT.Mean.Ms(), p.res.TTFT.P99.Ms() })},
		{Title: "Time per output token against " + load.Label,
			Text:  "Mean and p99 TPOT (decode time per token after the first, per request).",
			Chart: sn.latencyChart("Time per output token", "TPOT", load, func(p *simPoint) (float64, float64) { return p.res.TPOT.Mean.Ms(), p.res.TPOT.P99.Ms() })},
		{Title: "Throughput against speed per user",
			Text:  "Output tokens/s of the whole deployment against tokens/s per user (1 / mean TPOT), one point per " + load.Label + ": the latency-throughput curve.",
			Chart: sn.curveChart(load)},
		{Title: "All figures", Tables: []report.Titled{{Caption: "simulate --format csv", Table: (*report.Table)(sn.table(true))}}},
	}
	return pg
}

// loadAxis is the x axis of the latency charts: concurrency or request
// rate, logarithmic when it spans more than one value.
func (sn *simulation) loadAxis() report.Axis {
	a := report.Axis{Label: "concurrency", Unit: "requests"}
	if len(sn.sc.Serving.Concurrency) == 0 {
		a = report.Axis{Label: "request rate", Unit: "requests/s"}
	}
	a.Log = len(sn.points) > 1
	return a
}

// latencyOK: the point has latencies to plot.
func latencyOK(p *simPoint) bool { return p.res != nil && !p.res.Overloaded }

func loadValue(p *simPoint) float64 {
	if p.at.Concurrency > 0 {
		return float64(p.at.Concurrency)
	}
	return p.at.RequestRate
}

func allFinite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func (sn *simulation) latencyChart(title, metric string, x report.Axis, get func(*simPoint) (mean, p99 float64)) report.Chart {
	mean, p99 := report.Series{Name: "mean " + metric}, report.Series{Name: "p99 " + metric}
	for i := range sn.points {
		p := &sn.points[i]
		if !latencyOK(p) {
			continue
		}
		m, q := get(p)
		if !allFinite(m, q) {
			continue
		}
		x := loadValue(p)
		mean.X, mean.Y = append(mean.X, x), append(mean.Y, m)
		p99.X, p99.Y = append(p99.X, x), append(p99.Y, q)
	}
	return &report.LineChart{Title: title, X: x, Y: report.Axis{Label: metric, Unit: "ms"}, Series: []report.Series{mean, p99}}
}

func (sn *simulation) curveChart(load report.Axis) report.Chart {
	s := report.Series{Name: "by " + load.Label}
	for i := range sn.points {
		p := &sn.points[i]
		if !latencyOK(p) || !(p.res.TPOT.Mean > 0) {
			continue
		}
		u, o := 1/float64(p.res.TPOT.Mean), p.res.OutputThroughput
		if !allFinite(u, o) {
			continue
		}
		s.X, s.Y = append(s.X, u), append(s.Y, o)
	}
	return &report.LineChart{Title: "Latency-throughput", X: report.Axis{Label: "speed per user", Unit: "tokens/s"},
		Y: report.Axis{Label: "output throughput", Unit: "tokens/s"}, Series: []report.Series{sortedSeries(s)}}
}
