package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
)

// htmlReports are the commands with --html, each with the args of the
// report the tests render.
var htmlReports = []struct {
	kind string
	args []string
}{
	{"predict", []string{"predict"}},
	{"plan", []string{"plan", "--gpus", "rtx-pro-6000-server,h200-sxm", "--min-tokens-per-s-per-user", "20", "--target-output-tokens-per-s", "1000"}},
	{"sweep", []string{"sweep", "--set", "parallel.tp=1,3,8", "--set", "workload.context=2048,8192", "--set", "workload.batch=1,64"}},
	{"simulate", append([]string{"simulate"}, small...)},
	{"sweep-serving", servingSweepArgs},
	{"validate-trace", []string{"validate", "trace", traceData + "tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario}},
	{"validate-bench", []string{"validate", "bench", benchFixtures + "vllm-c16.json", benchFixtures + "sglang-rates.jsonl", "--scenario", "kimi-k2.5-h200-nvlink-tp8"}},
}

// TestHTMLChartData keeps the plotted data of every chart of every report
// kind as golden CSVs (the charts' images are gonum/plot's to test);
// refresh with `go test ./internal/cli -run HTMLChartData -update`.
func TestHTMLChartData(t *testing.T) {
	for _, r := range htmlReports {
		t.Run(r.kind, func(t *testing.T) {
			page := reportPage(t, r.args)
			n := 0
			for _, s := range page.Sections {
				if s.Chart == nil {
					continue
				}
				n++
				// Rounded as JSON and CSV outputs are (r6): goldens that do
				// not depend on the last bits of float arithmetic.
				data := s.Chart.Data()
				for _, row := range data.Rows {
					for i, c := range row {
						if f, ok := c.(float64); ok {
							row[i] = view.Round6(f)
						}
					}
				}
				var b bytes.Buffer
				require.NoError(t, data.Render(&b, report.CSV))
				golden(t, filepath.Join("html", r.kind+"_"+itoa(n)+"_"+s.Chart.Kind()+".csv.golden"), b.String())
			}
			assert.Positive(t, n)
		})
	}
}

// reportPage builds the page a command's --html would write.
func reportPage(t *testing.T, args []string) *report.Page {
	t.Helper()
	switch args[0] {
	case "predict":
		pr := predictForTest(t)
		return pr.Page()
	case "plan":
		opts := &planOptions{Format: formatText, Set: planFlags{gpus: args[2], perUser: 20, targetOutput: 1000,
			hasGPUs: true, hasPerUser: true, hasTargetOutput: true}}
		in, err := planInputOf(opts)
		require.NoError(t, err)
		pl, err := computePlan(in)
		require.NoError(t, err)
		return pl.Page()
	case "sweep":
		if args[1] == "--serving" {
			var sets []string
			for i := 3; i < len(args); i += 2 {
				sets = append(sets, args[i])
			}
			ss, err := sweepServingOf(&sweepOptions{Sets: sets, Serving: true})
			require.NoError(t, err)
			return ss.Page()
		}
		var sets []string
		for i := 2; i < len(args); i += 2 {
			sets = append(sets, args[i])
		}
		sw, err := sweepOf(&sweepOptions{Sets: sets})
		require.NoError(t, err)
		return sw.Page()
	case "simulate":
		sc, err := scenarios.Default()
		require.NoError(t, err)
		applySimulateFlags(&sc.Serving, &simulateOptions{Concurrency: []int{1, 8}, Requests: 16, InputTokens: 512, OutputTokens: 64})
		require.Equal(t, small, []string{"--concurrency", "1,8", "--requests", "16", "--input-tokens", "512", "--output-tokens", "64"}, "the page is built from the flags of htmlReports")
		sn, err := simulateScenario(simulateInput{Scenario: sc})
		require.NoError(t, err)
		return sn.Page()
	case "validate":
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
		if args[1] == "trace" {
			in, err := validateTraceInputOf(s, &validateTraceOptions{Inputs: args[2:3], Scenario: args[4], Format: formatText})
			require.NoError(t, err)
			sc := in.Scenario
			rep, err := compareTrace(in)
			require.NoError(t, err)
			return view.ValidateTracePage(sc, rep)
		}
		opts := &validateBenchOptions{Inputs: args[2:4], Scenario: args[5], Format: formatText}
		in, err := validateBenchInputOf(s, opts)
		require.NoError(t, err)
		cases, warnings, err := computeValidateBench(in)
		require.NoError(t, err)
		return view.ValidateBenchPage(opts.Scenario, cases, warnings)
	}
	t.Fatalf("no report for %v", args)
	return nil
}

// predictForTest is the default scenario's prediction, built as
// runPredict builds it.
func predictForTest(t *testing.T) *view.Prediction {
	t.Helper()
	sc, err := scenarios.Default()
	require.NoError(t, err)
	sm, err := sc.Sim()
	require.NoError(t, err)
	pr := &view.Prediction{Scenario: sc, Context: sc.Context}
	for _, b := range sc.Batches {
		p, err := sm.Step(b, sc.Context)
		require.NoError(t, err)
		pr.Points = append(pr.Points, p)
	}
	return pr
}

// TestHTMLFlag: every command writes a self-contained page, atomically,
// and refuses a destination that is not a regular file before any work.
func TestHTMLFlag(t *testing.T) {
	dir := t.TempDir()
	for _, r := range htmlReports {
		t.Run(r.kind, func(t *testing.T) {
			file := filepath.Join(dir, r.kind+".html")
			code, out, errs := runCLI(t, append(r.args, "--html", file)...)
			require.Equal(t, ExitOK, code, errs)
			assert.NotEmpty(t, out, "the normal output still goes to stdout")
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			s := string(data)
			assert.True(t, strings.HasPrefix(s, "<!DOCTYPE html>"))
			assert.Contains(t, s, "<svg ")
			for _, bad := range []string{" src=", " href=", "@import", "url(", "<script"} {
				assert.NotContains(t, s, bad)
			}
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range ents {
				assert.False(t, strings.Contains(e.Name(), ".tmp-"), "no temporary file left: %s", e.Name())
			}

			code, _, errs = runCLI(t, append(r.args, "--html", dir)...)
			assert.Equal(t, ExitInput, code)
			assert.Contains(t, errs, "--html "+dir+": is a directory")
		})
	}
}
