package view

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/sim"
)

// Page is simulate's HTML report: TTFT and TPOT (mean and p99) against
// the load, the latency-throughput curve, and every figure.
func (sn *Simulation) Page() *report.Page {
	sc := sn.Scenario
	pg := &report.Page{Title: "moecast simulate: " + sc.Name, Header: scenarioHeader(sc), Warnings: sn.Warnings}
	if sp := sc.Config.Spec; sp.Method != sim.SpecNone {
		acc := make([]string, len(sp.Acceptance))
		for i, a := range sp.Acceptance {
			acc[i] = strconv.FormatFloat(a, 'g', -1, 64)
		}
		pg.Header = append(pg.Header, report.Field{Label: "speculative",
			Value: fmt.Sprintf("%s, %d draft tokens, acceptance [%s]", specName(sp.Method), sp.DraftTokens, strings.Join(acc, ", "))})
	}
	if sn.Accuracy != nil {
		pg.Header = append(pg.Header, report.Field{Label: "accuracy", Value: strings.TrimSpace(sn.Accuracy.Line()[len("accuracy  "):])})
	}
	if len(sn.Points) > 0 {
		// The text header's lines, less their fixed-width labels.
		for _, f := range []struct{ label, line string }{{"engine", sn.engineLine()}, {"KV cache", sn.kvLine()}, {"workload", sn.workloadLine()}} {
			pg.Header = append(pg.Header, report.Field{Label: f.label, Value: strings.TrimSpace(f.line[len("engine    "):])})
		}
	}
	load := sn.loadAxis()
	pg.Sections = []report.Section{
		{Title: "Time to first token against " + load.Label,
			Text:  "Mean and p99 TTFT of the simulated run at each point (points that cannot be served, or open loops beyond capacity, are left out).",
			Chart: sn.latencyChart("Time to first token", "TTFT", load, func(p *SimPoint) (float64, float64) { return p.Result.TTFT.Mean.Ms(), p.Result.TTFT.P99.Ms() })},
		{Title: "Time per output token against " + load.Label,
			Text:  "Mean and p99 TPOT (decode time per token after the first, per request).",
			Chart: sn.latencyChart("Time per output token", "TPOT", load, func(p *SimPoint) (float64, float64) { return p.Result.TPOT.Mean.Ms(), p.Result.TPOT.P99.Ms() })},
		{Title: "Throughput against speed per user",
			Text:  "Output tokens/s of the whole deployment against tokens/s per user (1 / mean TPOT), one point per " + load.Label + ": the latency-throughput curve.",
			Chart: sn.curveChart(load)},
		{Title: "All figures", Tables: []report.Titled{{Caption: "simulate --format csv", Table: (*report.Table)(sn.Table(true))}}},
	}
	return pg
}

// loadAxis is the x axis of the latency charts: concurrency or request
// rate, logarithmic when it spans more than one value.
func (sn *Simulation) loadAxis() report.Axis {
	a := report.Axis{Label: "concurrency", Unit: "requests"}
	if len(sn.Scenario.Serving.Concurrency) == 0 {
		a = report.Axis{Label: "request rate", Unit: "requests/s"}
	}
	a.Log = len(sn.Points) > 1
	return a
}

// latencyOK: the point has latencies to plot.
func latencyOK(p *SimPoint) bool { return p.Result != nil && !p.Result.Overloaded }

func loadValue(p *SimPoint) float64 {
	if p.At.Concurrency > 0 {
		return float64(p.At.Concurrency)
	}
	return p.At.RequestRate
}

func allFinite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func (sn *Simulation) latencyChart(title, metric string, x report.Axis, get func(*SimPoint) (mean, p99 float64)) report.Chart {
	mean, p99 := report.Series{Name: "mean " + metric}, report.Series{Name: "p99 " + metric}
	for i := range sn.Points {
		p := &sn.Points[i]
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

func (sn *Simulation) curveChart(load report.Axis) report.Chart {
	s := report.Series{Name: "by " + load.Label}
	for i := range sn.Points {
		p := &sn.Points[i]
		if !latencyOK(p) || !(p.Result.TPOT.Mean > 0) {
			continue
		}
		u, o := 1/float64(p.Result.TPOT.Mean), p.Result.OutputThroughput
		if !allFinite(u, o) {
			continue
		}
		s.X, s.Y = append(s.X, u), append(s.Y, o)
	}
	return &report.LineChart{Title: "Latency-throughput", X: report.Axis{Label: "speed per user", Unit: "tokens/s"},
		Y: report.Axis{Label: "output throughput", Unit: "tokens/s"}, Series: []report.Series{sortedSeries(s)}}
}
