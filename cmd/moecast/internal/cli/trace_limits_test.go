package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report"
)

// smallTrace writes a trace of 20 gemm kernels 50 us long every 100 us, the
// sixth (event 5) replaced by bad, and returns its path.
func smallTrace(t *testing.T, name, bad string) string {
	t.Helper()
	var evs []string
	for i := range 20 {
		ev := fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": %d, "dur": %s, "args": {"correlation": %d}}`,
			1000+100*i, "50", i)
		if i == 5 && bad != "" {
			ev = bad
		}
		evs = append(evs, ev)
	}
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte("{\"traceEvents\": [\n"+strings.Join(evs, ",\n")+"\n]}\n"), 0o644))
	return p
}

// noNonFinite fails if out holds a NaN or an infinity as fmt prints them.
func noNonFinite(t *testing.T, out string) {
	t.Helper()
	for _, s := range []string{"NaN", "+Inf", "-Inf"} {
		assert.NotContains(t, out, s)
	}
}

// An infinite or negative ts or dur is a malformed event: skipped with a
// warning naming the file, event index and byte offset (an error under
// --strict), and every output format stays finite and, for JSON, valid.
func TestTraceSummaryNonFiniteTimes(t *testing.T) {
	tests := []struct {
		name, event, msg string
		at               string // the error's offset is that of at in the event
	}{
		{"dur 1e999", `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1500, "dur": 1e999}`,
			"dur: want a finite number >= 0, found +Inf", "1e999"},
		{"dur -5", `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1500, "dur": -5}`,
			"dur: want a finite number >= 0, found -5", "-5"},
		{"ts -1e999", `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": -1e999, "dur": 50}`,
			"ts: want a finite number, found -Inf", "-1e999"},
		{"ts string 1e400", `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": "1e400", "dur": 50}`,
			"ts: want a finite number, found +Inf", `"1e400"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := smallTrace(t, "bad.json", tc.event)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			msg := fmt.Sprintf("event 5 at byte %d: %s", strings.Index(string(data), tc.event)+strings.Index(tc.event, tc.at), tc.msg)
			for _, format := range []string{"text", "json", "csv"} {
				code, out, errOut := runCLI(t, "trace", "summary", "--format", format, p)
				require.Equal(t, ExitOK, code, errOut)
				if format == "json" { // warnings included; JSON cannot hold a NaN
					var rep report.TraceSummary
					require.NoError(t, json.Unmarshal([]byte(out), &rep))
					require.Len(t, rep.Warnings, 1)
					assert.Contains(t, rep.Warnings[0], p+": skipped a malformed event")
					assert.Contains(t, rep.Warnings[0], msg)
					require.Len(t, rep.Ranks, 1)
					st := rep.Ranks[0].Summary
					// 19 kernels of 50 us over 1950 us, the bad one left out
					assert.InDelta(t, 1.95, st.MedianStepMs, 1e-9)
					assert.InDelta(t, 19*0.05/1.95, st.Share["gemm"], 1e-9)
					for c, v := range st.Share {
						assert.GreaterOrEqual(t, v, 0.0, c)
					}
				} else {
					noNonFinite(t, out)
					assert.Contains(t, errOut, msg)
				}
			}
			code, _, errOut := runCLI(t, "trace", "summary", "--strict", p)
			assert.Equal(t, ExitInput, code)
			assert.Contains(t, errOut, p)
			assert.Contains(t, errOut, msg)

			code, out, errOut := runCLI(t, "trace", "kernels", "--format", "csv", p)
			require.Equal(t, ExitOK, code, errOut)
			noNonFinite(t, out)
			assert.Contains(t, out, `,19,`)
		})
	}
}

// Kernels of zero duration only: the share column is 0, not 0/0.
func TestTraceKernelsZeroTime(t *testing.T) {
	var evs []string
	for i := range 3 {
		evs = append(evs, fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": 0}`, 10*i))
	}
	p := filepath.Join(t.TempDir(), "zero.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"traceEvents": [`+strings.Join(evs, ", ")+`]}`), 0o644))
	for _, format := range []string{"text", "json", "csv"} {
		code, out, errOut := runCLI(t, "trace", "kernels", "--format", format, p)
		require.Equal(t, ExitOK, code, errOut)
		noNonFinite(t, out)
	}
	code, out, errOut := runCLI(t, "trace", "kernels", "--format", "json", p)
	require.Equal(t, ExitOK, code, errOut)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, 0.0, rows[0]["share_%"])
	assert.Equal(t, 3.0, rows[0]["count"])
}

// Device events that cannot be timed (no ts or no dur) are malformed, and a
// --step that matches nothing is said: warnings (with the byte offset of
// the event) and exit 0, or exit 2 under --strict; never summed as 0.
func TestTraceSummaryUntimedAndUnmatched(t *testing.T) {
	noDur := smallTrace(t, "nodur.json", `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1500}`)
	noTS := smallTrace(t, "nots.json", `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "dur": 50}`)
	good := smallTrace(t, "good.json", "")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no dur", []string{noDur}, ExitOK, `skipped a malformed event (trace: event 5 at byte`},
		{"no dur says what", []string{noDur}, ExitOK, `kernel event "gemm_kernel" has no dur: it cannot be timed`},
		{"no ts", []string{noTS}, ExitOK, `has no ts: it cannot be timed`},
		{"no dur strict", []string{"--strict", noDur}, ExitInput, `has no dur`},
		{"step unmatched", []string{"--step", "^nothing$", good}, ExitOK, `--step "^nothing$" matches no step annotation: steps are delimited by idle gaps instead`},
		{"step unmatched strict", []string{"--strict", "--step", "^nothing$", good}, ExitInput, `good.json: --step "^nothing$" matches no step annotation`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"trace", "summary"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
	// the untimed kernel is skipped: 19 of 20 kernels, wall from the good ones
	code, out, errOut := runCLI(t, "trace", "summary", "--format", "json", noDur)
	require.Equal(t, ExitOK, code, errOut)
	var rep report.TraceSummary
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Ranks, 1)
	assert.Contains(t, rep.Warnings[0], "has no dur")
	require.Len(t, rep.Ranks[0].Steps, 1)
	assert.InDelta(t, 0.95, rep.Ranks[0].Steps[0].ByCategoryMs["gemm"], 1e-9, "19 kernels of 50 us: the untimed one adds nothing")
}

// A kernel far from its launch is skipped with a warning naming the byte
// offset, or an error under --strict.
func TestTraceSummaryKernelFarFromLaunch(t *testing.T) {
	evs := `{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1010, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1020, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1100, "dur": 50, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 9e12, "dur": 50, "args": {"correlation": 2}}
]}`
	p := filepath.Join(t.TempDir(), "far.json")
	require.NoError(t, os.WriteFile(p, []byte(evs), 0o644))
	code, out, errOut := runCLI(t, "trace", "summary", "--format", "json", p)
	require.Equal(t, ExitOK, code, errOut)
	var rep report.TraceSummary
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Ranks, 1)
	require.Len(t, rep.Ranks[0].Steps, 1)
	assert.InDelta(t, 0.05, rep.Ranks[0].Steps[0].WallMs, 1e-9, "the far kernel does not stretch the step")
	off := strings.Index(evs, `{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 9e12`)
	require.NotEmpty(t, rep.Warnings)
	assert.Contains(t, rep.Warnings[0], fmt.Sprintf("skipped 1 malformed kernel events that start more than 1 s before or 600 s after their launch, a time outside the trace's span (the first at byte %d)", off))

	code, _, errOut = runCLI(t, "trace", "summary", "--strict", p)
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, "1 kernel events start far from their launch")
}
