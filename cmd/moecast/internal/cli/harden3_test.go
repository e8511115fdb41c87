package cli

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/trace"
)

// Issue 22: hardening round 3. One table test per class of hostile input;
// each row failed (wrote, blocked, ran out of memory or printed a wrong
// number) before the class was fixed.

// copyTo copies src into dir under name and returns the new path.
func copyTo(t *testing.T, dir, name, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// TestOutputFlagsNeverOverwriteInputs (class 1): every output flag of every
// command is checked before any work: it never replaces an input however
// spelled, a special file, nor writes into a directory that does not exist.
func TestOutputFlagsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	sc := copyTo(t, dir, "in.toml", "../../../../scenarios/gpt-oss-120b-h200-tp1.toml")
	hard := filepath.Join(dir, "hard.toml")
	require.NoError(t, os.Link(sc, hard))
	cal := copyTo(t, dir, "cal.toml", "../../../../calib/embedded/calibgpu/h200-sxm.toml")
	withCal := filepath.Join(dir, "with-cal.toml")
	src, err := os.ReadFile(sc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(withCal, bytes.Replace(src, []byte(`calibration = "embedded"`), []byte(`calibration = "cal.toml"`), 1), 0o644))
	tr := copyTo(t, dir, "trace.json.gz", traceData+"tracelens_vllm_decode_full_graph_execution.json.gz")
	bench := copyTo(t, dir, "bench.json", benchFixtures+"vllm-c16.json")
	fifo := filepath.Join(dir, "fifo.html")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	plan := copyTo(t, dir, "plan.toml", "../../../../scenarios/kimi-k2.5-plan-1k1k.toml")
	missing := filepath.Join(dir, "no", "such", "dir", "x.html")
	manifest := copyTo(t, dir, "manifest.toml", "../../../../validate/corpus/manifest.toml")
	cmdline := copyTo(t, dir, "serve.sh", "../../../../scenarios/testdata/engineargs/vllm_serve_dsv3_mtp.sh")
	for _, tc := range []struct {
		name   string
		args   []string
		target string // a file that must be unchanged ("" none)
		want   string
	}{
		{"predict --html onto its scenario", []string{"predict", sc, "--html", sc}, sc, "--html " + sc + ": is one of the inputs"},
		{"predict --html onto a hard link of it", []string{"predict", sc, "--html", hard}, sc, "--html " + hard + ": is one of the inputs (" + sc + ")"},
		{"predict --html onto it spelled another way", []string{"predict", sc, "--html", dir + "/./in.toml"}, sc, "is one of the inputs"},
		{"predict --html onto a layered calibration file", []string{"predict", sc, "--calibration", "embedded," + cal, "--html", cal}, cal, "--html " + cal + ": is one of the inputs"},
		{"predict --html onto the scenario's own calibration file", []string{"predict", withCal, "--html", cal}, cal, "--html " + cal + ": is one of the inputs"},
		{"simulate --html onto its scenario", []string{"simulate", sc, "--requests", "10", "--html", sc}, sc, "is one of the inputs"},
		{"sweep --html onto its scenario", []string{"sweep", sc, "--set", "batch=1,2", "--html", sc}, sc, "is one of the inputs"},
		{"plan --html onto its scenario", []string{"plan", plan, "--html", plan}, plan, "is one of the inputs"},
		{"validate trace --html onto the trace", []string{"validate", "trace", tr, "--scenario", gptOssScenario, "--html", tr}, tr, "is one of the inputs"},
		{"validate bench --html onto the result", []string{"validate", "bench", bench, "--scenario", "kimi-k2.5-h200-nvlink-tp8", "--html", bench}, bench, "is one of the inputs"},
		{"calib from-trace -o onto the trace", []string{"calib", "from-trace", tr, "--scenario", gptOssScenario, "-o", tr}, tr, "-o " + tr + ": is one of the inputs"},
		{"--html onto a FIFO", []string{"predict", sc, "--html", fifo}, "", "a named pipe (FIFO)"},
		{"validate corpus --markdown onto its manifest", []string{"validate", "corpus", manifest, "--markdown", manifest}, manifest, "--markdown " + manifest + ": is one of the inputs"},
		{"scenario from-vllm-args -o onto its input", []string{"scenario", "from-vllm-args", cmdline, "--gpu", "h200-sxm", "-o", cmdline}, cmdline, "-o " + cmdline + ": is one of the inputs"},
		{"--html onto a device", []string{"predict", sc, "--html", "/dev/null"}, "", "a character device"},
		{"plan --html into a missing directory fails before the search", []string{"plan", plan, "--html", missing}, "", "--html " + missing + ": no such directory " + filepath.Dir(missing)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.target != "" {
				before, err = os.ReadFile(tc.target)
				require.NoError(t, err)
			}
			start := time.Now()
			assertRefusedOneLine(t, tc.want, tc.args...)
			assert.Less(t, time.Since(start), 2*time.Second, "checked before any work")
			if tc.target != "" {
				after, err := os.ReadFile(tc.target)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(before, after), "%s changed", tc.target)
			}
		})
	}
}

// endless is an input that never ends (standard input from /dev/zero).
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// TestInputsSpecialOrEndless (classes 4 and 6): every reader refuses what is
// not a regular file (a FIFO would block forever, /dev/zero never end) and
// caps what it reads, standard input included, with one line naming the
// input: no hang, no out-of-memory crash.
func TestInputsSpecialOrEndless(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	big := filepath.Join(dir, "big.toml")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("# padding padding padding\n"), 200_000), 0o644))
	for _, tc := range []struct {
		name  string
		args  []string
		stdin io.Reader
		want  string
	}{
		{"predict FIFO", []string{"predict", fifo}, nil, fifo + ": is a named pipe (FIFO), not a regular file"},
		{"predict /dev/zero", []string{"predict", "/dev/zero"}, nil, "/dev/zero: is a character device, not a regular file"},
		{"predict a directory", []string{"predict", dir}, nil, dir + ": is a directory"},
		{"predict a 5 MB scenario", []string{"predict", big}, nil, big + ": is larger than 4 MiB"},
		{"predict endless standard input", []string{"predict", "-"}, endless{}, "standard input: is larger than 4 MiB"},
		{"simulate FIFO", []string{"simulate", fifo}, nil, "a named pipe (FIFO)"},
		{"sweep FIFO", []string{"sweep", fifo}, nil, "a named pipe (FIFO)"},
		{"plan FIFO", []string{"plan", fifo}, nil, "a named pipe (FIFO)"},
		{"model config FIFO", []string{"model", "show", fifo}, nil, "a named pipe (FIFO)"},
		{"model config endless standard input", []string{"model", "show", "-"}, endless{}, "is larger than 16 MiB"},
		{"calibration FIFO", []string{"predict", "--calibration", fifo}, nil, "a named pipe (FIFO)"},
		{"calib show FIFO", []string{"calib", "show", fifo}, nil, "a named pipe (FIFO)"},
		{"calib show endless standard input", []string{"calib", "show", "-"}, endless{}, "standard input: is larger than 256 MiB"},
		{"rules FIFO", []string{"trace", "summary", traceData + "tracelens_vllm_decode_full_graph_execution.json.gz", "--rules", fifo}, nil, "a named pipe (FIFO)"},
		{"trace FIFO", []string{"trace", "summary", fifo}, nil, "a named pipe (FIFO)"},
		{"trace /dev/zero", []string{"trace", "summary", "/dev/zero"}, nil, "a character device"},
		{"validate trace FIFO", []string{"validate", "trace", fifo, "--scenario", gptOssScenario}, nil, "a named pipe (FIFO)"},
		{"validate bench FIFO", []string{"validate", "bench", fifo, "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, nil, "a named pipe (FIFO)"},
		{"scenario from-vllm-args FIFO", []string{"scenario", "from-vllm-args", fifo, "--gpu", "h200-sxm"}, nil, "a named pipe (FIFO)"},
		{"scenario from-vllm-args /dev/zero", []string{"scenario", "from-vllm-args", "/dev/zero", "--gpu", "h200-sxm"}, nil, "a character device"},
		{"scenario from-vllm-args endless standard input", []string{"scenario", "from-vllm-args", "-", "--gpu", "h200-sxm"}, endless{}, "standard input: is larger than 64 MiB"},
		{"simulate --workload FIFO", []string{"simulate", "--workload", fifo}, nil, "a named pipe (FIFO)"},
		{"validate corpus FIFO manifest", []string{"validate", "corpus", fifo}, nil, "a named pipe (FIFO)"},
		{"calib import nccl-tests FIFO", []string{"calib", "import", "nccl-tests", fifo, "--gpu", "h100-sxm", "-o", filepath.Join(dir, "o.toml")}, nil, "a named pipe (FIFO)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			stdin := tc.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			done := make(chan int, 1)
			go func() { done <- RunIO(tc.args, stdin, &out, &errb) }()
			select {
			case code := <-done:
				assert.Equal(t, ExitInput, code, errb.String())
				assert.Contains(t, errb.String(), tc.want)
				assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %s", errb.String())
			case <-time.After(20 * time.Second):
				// Unblock the reader so the test process can end.
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.Close()
				}
				t.Fatalf("%v blocked", tc.args)
			}
		})
	}
}

// TestNumbersInRange (classes 2, 3, 5 and 9): a count that cannot be
// represented, a vanishing or huge rate, a repeated point, work beyond
// what a small machine does in a minute and a value out of range are
// refused with the flag or key and the range, before any work (exit 2),
// never capped, spun on or replaced by a default.
func TestNumbersInRange(t *testing.T) {
	dir := t.TempDir()
	sc := copyTo(t, dir, "in.toml", "../../../../scenarios/gpt-oss-120b-h200-tp1.toml")
	plan := "../../../../scenarios/kimi-k2.5-plan-1k1k.toml"
	deep := filepath.Join(dir, "deep.toml")
	require.NoError(t, os.WriteFile(deep, []byte("name = \"x\"\nfoo = "+strings.Repeat("{a = ", 100000)+"1"+strings.Repeat("}", 100000)+"\n"), 0o644))
	deepArr := filepath.Join(dir, "deep-array.toml")
	require.NoError(t, os.WriteFile(deepArr, []byte("name = \"x\"\nfoo = "+strings.Repeat("[", 100000)+"1"+strings.Repeat("]", 100000)+"\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"target of 1e15 tok/s (was 2147483647 replicas)", []string{"plan", plan, "--target-output-tokens-per-s", "1e15"}, "--target-output-tokens-per-s: 1e+15 is above the plausible range"},
		{"target request rate 1e-300", []string{"plan", plan, "--target-request-rate", "1e-300"}, "--target-request-rate: 1e-300 is below the plausible range"},
		{"request rate 1e-300 (was 0.00 ms latencies)", []string{"simulate", sc, "--request-rate", "1e-300"}, "request rate 1e-300 (item 1) is below the plausible range"},
		{"request rate 1e-320 (was a CPU spinning forever)", []string{"simulate", sc, "--request-rate", "1e-320"}, "is below the plausible range"},
		{"request rate 1e12", []string{"simulate", sc, "--request-rate", "1e12"}, "is above the plausible range"},
		{"repeated concurrency points", []string{"simulate", sc, "--concurrency", "4,8,4"}, "concurrency 4 (item 3) repeats item 1"},
		{"repeated request rates", []string{"simulate", sc, "--request-rate", "2,2"}, "request rate 2 (item 2) repeats item 1"},
		{"2^24 requests at concurrency 1", []string{"simulate", sc, "--requests", "16777216", "--concurrency", "1"}, "decode steps, more than the 33554432 one simulation runs in a minute"},
		{"TOML inline tables 100,000 deep", []string{"predict", deep}, "deep.toml:2: arrays and inline tables nest more than 64 levels deep"},
		{"TOML arrays 100,000 deep", []string{"predict", deepArr}, "deep-array.toml:2: arrays and inline tables nest more than 64 levels deep"},
		{"sweep at 2^24 combinations", []string{"sweep", sc, "--set", "workload.batch=" + seq(4096), "--set", "workload.context=" + seq(4096)}, "more than 1048576 combinations"},
		{"validate trace --batch 1e9", []string{"validate", "trace", traceData + "tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario, "--batch", "1000000000"}, "--batch: 1000000000 is outside [1, 16777216]"},
		{"validate trace --batch 0", []string{"validate", "trace", traceData + "tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario, "--batch", "0"}, "--batch: 0 is outside [1, 16777216]"},
		{"calib from-trace --batch -1", []string{"calib", "from-trace", traceData + "tracelens_vllm_decode_full_graph_execution.json.gz", "--scenario", gptOssScenario, "--batch", "-1", "-o", filepath.Join(dir, "c.toml")}, "--batch: -1 is outside"},
		{"simulate --requests -5", []string{"simulate", sc, "--requests", "-5"}, "--requests: -5 is outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			assertRefusedOneLine(t, tc.want, tc.args...)
			assert.Less(t, time.Since(start), 5*time.Second, "refused before the work")
		})
	}
}

// seq is "1,2,...,n".
func seq(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = itoa(i + 1)
	}
	return strings.Join(s, ",")
}

// TestTerminalAndSpreadsheetSafety (class 11): control characters in
// names reach stdout and stderr as visible \u00XX text, never as ESC or
// OSC sequences, and a CSV text cell a spreadsheet would run as a formula
// starts with an apostrophe.
func TestTerminalAndSpreadsheetSafety(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../../../scenarios/gpt-oss-120b-h200-tp1.toml")
	require.NoError(t, err)
	evil := filepath.Join(dir, "evil.toml")
	name := `=HYPERLINK(\"http://x\")\u001b]0;pwned\u0007\u009b31m`
	require.NoError(t, os.WriteFile(evil, []byte(strings.Replace(string(src), `name = "gpt-oss-120b MXFP4 on 1x H200, vLLM TP1"`, `name = "`+name+`"`, 1)), 0o644))
	require.Contains(t, string(must(os.ReadFile(evil))), "HYPERLINK", "the scenario's name was replaced")
	kernel := smallTrace(t, "k.json", `{"ph": "X", "cat": "kernel", "name": "=cmd|' /C calc'!A0\u001b[2J", "pid": 0, "tid": 7, "ts": 1500, "dur": 50, "args": {"correlation": 5}}`)
	for _, tc := range []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"scenario name in predict's text", []string{"predict", evil}, `\u001b]0;pwned\u0007\u009b31m`},
		{"scenario name in simulate's text", []string{"simulate", evil, "--requests", "10"}, `\u001b]0;pwned`},
		{"kernel name in trace summary's text", []string{"trace", "kernels", kernel, "--top", "0"}, `\u001b[2J`},
		{"kernel name in trace summary's CSV", []string{"trace", "kernels", kernel, "--top", "0", "--format", "csv"}, `'=cmd|' /C calc'!A0\u001b[2J`},
		{"kernel name in trace summary's JSON", []string{"trace", "kernels", kernel, "--top", "0", "--format", "json"}, `\u001b[2J`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			require.Equal(t, ExitOK, code, stderr)
			assert.Contains(t, stdout, tc.want)
			for _, bad := range []string{"\x1b", "\x07", "\u009b"} {
				assert.NotContains(t, stdout, bad)
				assert.NotContains(t, stderr, bad)
			}
			for _, l := range strings.Split(stdout, "\n") {
				if tc.args[len(tc.args)-1] == "csv" {
					assert.False(t, strings.HasPrefix(l, "=") || strings.Contains(l, ",="), "formula cell: %s", l)
				}
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestExitCodeOf (class 12 and issue 18 part 4): errors are classified
// into exit codes once, by type, wherever they were returned from: no
// usable cuBLASLt or NCCL exits 2 as no driver does; a driver reporting
// no devices, -5 or 2^30 devices too.
func TestExitCodeOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"no driver", fmt.Errorf("gpu info: %w", cuda.ErrNoDriver), ExitInput},
		{"no cuBLASLt (was 1)", fmt.Errorf("calib gpu: %w", cuda.ErrNoCUBLASLt), ExitInput},
		{"no NCCL", fmt.Errorf("calib gpu: %w", cuda.ErrNoNCCL), ExitInput},
		{"driver reports 0 devices", fmt.Errorf("cuda: 0 devices: %w", cuda.ErrNoDevice), ExitInput},
		{"driver reports 2^30 devices", fmt.Errorf("cuda: 1073741824 devices: %w", cuda.ErrBadDriver), ExitInput},
		{"special input file", &infile.Error{Name: "f", Err: infile.ErrNotRegular}, ExitInput},
		{"scenario error unwrapped", fmt.Errorf("simulate: %w", &scenarios.Error{File: "x.toml", Line: 3, Key: "k", Msg: "bad"}), ExitInput},
		{"trace input", fmt.Errorf("%w: x", trace.ErrInput), ExitInput},
		{"I/O failure", errors.New("write x: no space left on device"), ExitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, exitCodeOf(tc.err))
		})
	}
}

// TestTruncatedTraces (class 10): a trace cut short is diagnosed as a
// file that ends early, with the byte and event where it ends, by every
// command that reads steps; never as "no decode step found" or "a trace of
// another model?" alone.
func TestTruncatedTraces(t *testing.T) {
	full := traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"
	data := gunzip(t, full)
	dir := t.TempDir()
	cut := func(name string, n int, gz bool) string {
		p := filepath.Join(dir, name)
		b := data[:n]
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, err := zw.Write(b)
			require.NoError(t, err)
			require.NoError(t, zw.Close())
			b = buf.Bytes()
		}
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	gzCut := filepath.Join(dir, "gz-cut.json.gz")
	whole, err := os.ReadFile(full)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(gzCut, whole[:len(whole)/2], 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"validate trace cut at 30 kB", []string{"validate", "trace", cut("a.json", 30000, false), "--scenario", gptOssScenario}, "ends early, at byte 30000 (event 69"},
		{"validate trace cut at 200 kB, gzip", []string{"validate", "trace", cut("b.json.gz", 200000, true), "--scenario", gptOssScenario}, "ends early, at byte 200000"},
		{"validate trace cut inside its last step", []string{"validate", "trace", cut("c.json", 480000, false), "--scenario", gptOssScenario}, "ends early, at byte 480000 (event 1944: unexpected end of JSON), so its last step may be cut short"},
		{"validate trace of a gzip stream cut in half", []string{"validate", "trace", gzCut, "--scenario", gptOssScenario}, "ends early"},
		{"calib from-trace cut at 30 kB", []string{"calib", "from-trace", cut("d.json", 30000, false), "--scenario", gptOssScenario, "-o", filepath.Join(dir, "o.toml")}, "ends early, at byte 30000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// gunzip reads a gzip file whole.
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

// TestErrorNamesTheRightKey (class 8): an error names the key (never a Go
// field name) that holds the wrong value, at the line that holds it; a key
// the file does not set, or one set by a flag, is blamed on no line of the
// file.
func TestErrorNamesTheRightKey(t *testing.T) {
	dir := t.TempDir()
	mtp, err := os.ReadFile("../../../../scenarios/deepseek-v3-fp8-h200-tp8-mtp.toml")
	require.NoError(t, err)
	gpt, err := os.ReadFile("../../../../scenarios/gpt-oss-120b-h200-tp1.toml")
	require.NoError(t, err)
	write := func(name string, src []byte, old, new string) string {
		require.Contains(t, string(src), old)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(src), old, new, 1)), 0o644))
		return p
	}
	draft := write("draft.toml", mtp, "draft_tokens = 1", "draft_tokens = 1000000")
	draft16 := write("draft16.toml", mtp, "draft_tokens = 1", "draft_tokens = 16")
	seqs := write("seqs.toml", gpt, "[runtime]", "[runtime]\nmax_num_batched_tokens = 100\nmax_num_seqs = 256")
	for _, tc := range []struct {
		name string
		args []string
		want string
		not  []string
	}{
		{"draft_tokens = 1000000 (was blamed on max_num_batched_tokens)", []string{"predict", draft}, "draft.toml:32: speculative.draft_tokens: 1000000 must be in [1, 16]",
			[]string{"max_num_batched_tokens"}},
		{"tokens below max_num_seqs (was MaxNumSeqs)", []string{"simulate", seqs}, "seqs.toml:19: runtime.max_num_batched_tokens: 100 tokens is below max_num_seqs 256",
			[]string{"MaxNumSeqs", "MaxNumBatchedTokens"}},
		{"a --set value is the flag's, at no line", []string{"sweep", draft16, "--serving", "--set", "runtime.max_num_batched_tokens=8,9"},
			"draft16.toml: runtime.max_num_batched_tokens: (set by a flag) must be in [17, 16777216], got 8", []string{"draft16.toml:2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, ExitInput, code, stderr)
			stderr = strings.ReplaceAll(stderr, dir+string(filepath.Separator), "")
			assert.Contains(t, stderr, tc.want)
			for _, n := range tc.not {
				assert.NotContains(t, stderr, n)
			}
		})
	}
}

// TestMismatchedInputs (class 7): a trace of another layout is refused
// with the evidence; one recorded on another GPU is compared with a
// warning and never turned into calibration tables for the scenario's GPU.
func TestMismatchedInputs(t *testing.T) {
	dir := t.TempDir()
	h200 := filepath.Join(dir, "h200.json")
	data := gunzip(t, traceData+"tracelens_vllm_decode_full_graph_execution.json.gz")
	const blank = `"deviceProperties": [{"id": 0, "name": ""`
	require.Contains(t, string(data), blank)
	require.NoError(t, os.WriteFile(h200, bytes.Replace(data, []byte(blank), []byte(`"deviceProperties": [{"id": 0, "name": "NVIDIA H200"`), 1), 0o644))
	out := filepath.Join(dir, "out.toml")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"TP8 trace (8 ranks, all-reduces) against a one-GPU scenario", []string{"validate", "trace", traceData + "tracelens_b200_vllm_gptoss_eager_trace.json.gz", "--scenario", gptOssScenario},
			ExitInput, "the trace runs 74 collective kernels (the first a allreduce) but the scenario has 1 GPU"},
		{"2-rank NCCL trace against a one-GPU scenario", []string{"validate", "trace", traceData + "hta_nccl_parser_config_nccl_data.json.gz", "--scenario", gptOssScenario},
			ExitInput, "collective kernels"},
		{"calib from-trace of a TP8 trace for a one-GPU scenario", []string{"calib", "from-trace", traceData + "tracelens_b200_vllm_gptoss_eager_trace.json.gz", "--scenario", gptOssScenario, "-o", out},
			ExitInput, "collective kernels"},
		{"validate trace recorded on an H200 against an MI300X scenario", []string{"validate", "trace", h200, "--scenario", gptOssScenario},
			ExitOK, "warning: the trace was recorded on NVIDIA H200 (preset h200-sxm); the scenario's GPU is mi300x"},
		{"calib from-trace of an H200 trace for an MI300X scenario", []string{"calib", "from-trace", h200, "--scenario", gptOssScenario, "-o", out},
			ExitInput, "the trace was recorded on NVIDIA H200 (preset h200-sxm); the scenario's GPU is mi300x: its kernel times would calibrate another GPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.want)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "no calibration file written")
		})
	}
}

// TestProgressLine (class 5): work beyond a second shows a progress line
// (simulate, plan, sweep share it), cleared at the end; shorter work
// prints nothing.
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		work  time.Duration
		count int64
		want  string
	}{
		{"1.5 s of work", 1500 * time.Millisecond, 7, "\rplan: 7 points priced"},
		{"0.1 s of work", 100 * time.Millisecond, 7, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			var mu sync.Mutex
			w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return b.Write(p) })
			p := startProgressLine(w, func(done int64) string { return fmt.Sprintf("plan: %d points priced", done) })
			p.done.Add(tc.count)
			time.Sleep(tc.work)
			p.Stop()
			mu.Lock()
			defer mu.Unlock()
			if tc.want == "" {
				assert.Empty(t, b.String())
				return
			}
			assert.Contains(t, b.String(), tc.want)
			assert.True(t, strings.HasSuffix(b.String(), "\r\x1b[K"), "cleared: %q", b.String())
		})
	}
	// The line reaches the terminal raw (its escapes are moecast's own),
	// past the safeWriter every command's stderr goes through.
	var raw bytes.Buffer
	force := true
	assert.Equal(t, io.Writer(&raw), progressOn(&safeWriter{w: &raw}, &force))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestSweepPageCaps (newcomer item): a sweep's HTML report draws at most
// 12 lines of at most 500 points and lists at most 2,000 rows, and says
// what it left out; the page of a 3,000-value sweep stays small.
func TestSweepPageCaps(t *testing.T) {
	dir := t.TempDir()
	sc := "../../../../scenarios/gpt-oss-120b-h200-tp1.toml"
	util := make([]string, 0, 24)
	for i := 70; i < 94; i++ {
		util = append(util, fmt.Sprintf("0.%02d", i))
	}
	for _, tc := range []struct {
		name string
		sets []string
		want []string
	}{
		{"3,000 batch sizes", []string{"workload.batch=" + seq(3000)}, []string{
			"Lines of more than 500 points draw 500 points of them, evenly spaced; --format csv has every point.",
			"The first 2000 of 3000 rows; --format csv has every point."}},
		{"24 memory fractions x 2 contexts", []string{"runtime.gpu_memory_utilization=" + strings.Join(util, ","), "workload.context=1024,2048"}, []string{
			"The charts draw the first 12 of "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(dir, "p.html")
			args := []string{"sweep", sc, "--html", page, "--format", "csv"}
			for _, s := range tc.sets {
				args = append(args, "--set", s)
			}
			code, _, stderr := runCLI(t, args...)
			require.Equal(t, ExitOK, code, stderr)
			assert.Contains(t, stderr, "wrote "+page)
			b, err := os.ReadFile(page)
			require.NoError(t, err)
			for _, w := range tc.want {
				assert.Contains(t, string(b), w)
			}
			assert.Less(t, len(b), 3<<20, "page size")
		})
	}
}

// TestStdinEverywhere (newcomer item): "-" reads standard input wherever a
// scenario, config.json, calibration file, result file or engine command
// line is read.
func TestStdinEverywhere(t *testing.T) {
	read := func(p string) string { return string(must(os.ReadFile(p))) }
	sc := read("../../../../scenarios/gpt-oss-120b-h200-tp1.toml")
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"predict", sc, []string{"predict", "-"}, "(<stdin>)"},
		{"simulate", sc, []string{"simulate", "-", "--requests", "10"}, "(<stdin>)"},
		{"sweep", sc, []string{"sweep", "-", "--set", "workload.batch=1,2"}, "(<stdin>)"},
		{"model show", read("../../../../validate/testdata/gpt-oss-20b_config.json"), []string{"model", "show", "-"}, "GptOssForCausalLM"},
		{"calib show", read("../../../../calib/embedded/calibgpu/h200-sxm.toml"), []string{"calib", "show", "-"}, "calibration <stdin>"},
		{"validate bench", read(benchFixtures + "vllm-c16.json"), []string{"validate", "bench", "-", "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, "kimi-k2.5-h200-nvlink-tp8"},
		{"scenario from-vllm-args", read("../../../../scenarios/testdata/engineargs/vllm_serve_dsv3_mtp.sh"), []string{"scenario", "from-vllm-args", "-", "--gpu", "h200-sxm", "--acceptance", "0.8"}, "[model]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := RunIO(tc.args, strings.NewReader(tc.stdin), &out, &errb)
			require.Equal(t, ExitOK, code, errb.String())
			assert.Contains(t, out.String(), tc.want)
		})
	}
}
