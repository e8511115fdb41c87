package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	cal := copyTo(t, dir, "cal.toml", "../../../../calib/embedded/h200-sxm.toml")
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
		{"--html onto a device", []string{"predict", sc, "--html", "/dev/null"}, "", "a character device"},
		{"plan --html into a missing directory fails before the search", []string{"plan", plan, "--html", missing}, "", "--html " + missing + ": directory " + filepath.Dir(missing) + " does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.target != "" {
				before, err = os.ReadFile(tc.target)
				require.NoError(t, err)
			}
			start := time.Now()
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
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
