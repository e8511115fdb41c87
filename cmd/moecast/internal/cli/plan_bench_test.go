package cli

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPlanCLI is `moecast plan` as issue 10 times it: Kimi-K2.5 (the
// default scenario) over the four GPU presets, replicas of 1 to 8 GPUs and
// at most 64 GPUs in all, KV cache bf16 and fp8, concurrency 1, 2, 4, ...,
// 512, with SLOs and a target, JSON written to io.Discard. The plan
// package's BenchmarkPlanKimi prices every concurrency 1..512 of the same
// space, with and without EAGLE-3.
func BenchmarkPlanCLI(b *testing.B) {
	args := []string{"plan", "--gpus", "rtx-pro-6000-server,h100-sxm,h200-sxm,b200-sxm", "--max-gpus", "64",
		"--min-tokens-per-s-per-user", "20", "--tpot-p99", "50ms", "--target-output-tokens-per-s", "5000", "--format", "json"}
	cpu := cpuSeconds()
	for b.Loop() {
		if code := Run(args, io.Discard, io.Discard); code != ExitOK {
			b.Fatalf("plan exit %d", code)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
}

// BenchmarkPlanCLIDisagg is BenchmarkPlanCLI over agg and disagg
// (--disagg: xPyD points up to 2P2D, priced by the serving simulation).
func BenchmarkPlanCLIDisagg(b *testing.B) {
	args := []string{"plan", "--gpus", "rtx-pro-6000-server,h100-sxm,h200-sxm,b200-sxm", "--max-gpus", "64",
		"--min-tokens-per-s-per-user", "20", "--tpot-p99", "50ms", "--target-output-tokens-per-s", "5000", "--format", "json",
		"--disagg"}
	cpu := cpuSeconds()
	for b.Loop() {
		if code := Run(args, io.Discard, io.Discard); code != ExitOK {
			b.Fatalf("plan exit %d", code)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
}

// BenchmarkSweepCLI is a sweep of 1,000,000 decode steps through the
// sweep command's path (scenario overrides parsed per point, variants
// cached, plan.Sweep on every core): workload.batch 1..1000 x
// workload.context 128..128,000 on the default scenario. -sweep.render
// also renders the CSV to io.Discard.
func BenchmarkSweepCLI(b *testing.B) {
	var batch, ctx []string
	for i := 1; i <= 1000; i++ {
		batch = append(batch, strconv.Itoa(i))
		ctx = append(ctx, strconv.Itoa(128*i))
	}
	opts := &sweepOptions{Sets: []string{"workload.batch=" + strings.Join(batch, ","), "workload.context=" + strings.Join(ctx, ",")},
		Format: formatCSV}
	var steps int
	cpu := cpuSeconds()
	for b.Loop() {
		sw, err := sweepOf(opts)
		require.NoError(b, err)
		n := 0
		for _, p := range sw.Result.Points {
			n += len(p.Value.Steps)
		}
		require.Equal(b, 1000000, n+len(sw.Result.Skipped))
		steps += n
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
}

// BenchmarkPlanReadme is the README's planning example in process (`moecast
// plan kimi-k2.5-plan-1k1k`, text to io.Discard), with /disagg the same
// over agg and disagg (issue 23: at most 5 s). BenchmarkPlanCold runs it
// in a fresh process.
func BenchmarkPlanReadme(b *testing.B) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"agg", []string{"plan", "kimi-k2.5-plan-1k1k"}},
		{"disagg", []string{"plan", "kimi-k2.5-plan-1k1k", "--disagg"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuSeconds()
			for b.Loop() {
				if code := Run(c.args, io.Discard, io.Discard); code != ExitOK {
					b.Fatalf("plan exit %d", code)
				}
			}
			b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
		})
	}
}
