package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// coldArgsEnv carries the arguments of one `moecast` run into a child
// process of this test binary (TestColdChild).
const coldArgsEnv = "MOECAST_COLD_ARGS"

// TestColdChild runs, in a child process started by a Cold benchmark,
// the command named by $MOECAST_COLD_ARGS (one argument a line) and exits
// with its code. Without the variable it is skipped.
func TestColdChild(t *testing.T) {
	args := os.Getenv(coldArgsEnv)
	if args == "" {
		t.Skip("run by the Cold benchmarks in a child process")
	}
	var out, errb bytes.Buffer
	code := Run(strings.Split(args, "\n"), &out, &errb)
	os.Stderr.Write(errb.Bytes())
	os.Exit(code)
}

// benchCold runs args once per iteration in a fresh process (this test
// binary, TestColdChild), as a user's `moecast` runs: the embedded
// calibration is parsed anew each time, with the process start and the
// package initialisation. It reports wall ms, the child's CPU ms (user +
// system: on a shared machine the fairer figure) and its peak RSS.
func benchCold(b *testing.B, args ...string) {
	b.Helper()
	env := append(os.Environ(), coldArgsEnv+"="+strings.Join(args, "\n"))
	var cpu, rss float64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestColdChild$", "-test.count=1")
		cmd.Env = env
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		ps := cmd.ProcessState
		cpu += (ps.UserTime() + ps.SystemTime()).Seconds()
		rss = max(rss, maxRSSBytes(ps))
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/run")
	b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/run")
	b.ReportMetric(rss/1e6, "peak-MB")
}

// BenchmarkPredictCold is BenchmarkPredictLargestNewModels in a fresh
// process per predict (benchCold): DeepSeek-V4-Pro and Nemotron-3-Ultra on
// 8x H200 TP8 EP8 at 8 batch sizes, the embedded H200 calibration parsed
// each time. Issue 20's target: under 50 ms per predict. The child's
// start with a command that reads no calibration (`gpus`) is
// BenchmarkPredictCold/start.
func BenchmarkPredictCold(b *testing.B) {
	b.Run("start", func(b *testing.B) { benchCold(b, "gpus") })
	for _, m := range []string{"deepseek-ai--DeepSeek-V4-Pro", "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"} {
		sc := largestModelScenario(b, m)
		b.Run(m, func(b *testing.B) { benchCold(b, "predict", sc) })
	}
}

// BenchmarkPlanCold is the README's planning example (`moecast plan
// kimi-k2.5-plan-1k1k`: RTX PRO 6000, H200 and B200, three embedded
// calibrations) in a fresh process per run. Issue 21's target: at most
// 3 s wall on 2 cores, goal 1 s.
func BenchmarkPlanCold(b *testing.B) {
	benchCold(b, "plan", "kimi-k2.5-plan-1k1k")
}
