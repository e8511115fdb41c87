package trace

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nest returns a value nested n levels deep: n opening brackets (objects
// {"a": ... or arrays [ ... by open), a 1, and the closing brackets.
func nest(n int, open string) string {
	closer := "}"
	if open == "[" {
		closer = "]"
	}
	return strings.Repeat(open, n) + "1" + strings.Repeat(closer, n)
}

// TestReaderLimits checks the events the reader refuses as malformed (a
// non-fatal *Error at the offending value, the event skipped and the next
// one read): a ts or dur that is infinite (1e999 parses as +Inf) or beyond
// maxTime, a negative dur, a value nested deeper than maxDepth; and the
// fatal errors: a too deep top-level value, a too deep event cut by the end
// of the input. Values at the limits are accepted.
func TestReaderLimits(t *testing.T) {
	tests := []struct {
		name   string
		event  string // the middle event, between two good ones
		events int    // events read (of 3)
		err    string // substring of the error; "" for none
		at     string // the error's offset is that of the first `at` in event; "" for off
		off    int    // the error's offset from the event's start, when at is ""
		fatal  bool
	}{
		{name: "dur 1e999", event: `{"ph": "X", "ts": 5, "dur": 1e999}`, events: 2, err: "event 1 at byte 77: dur: want a finite number >= 0, found +Inf", at: "1e999"},
		{name: "dur -1e999", event: `{"ph": "X", "ts": 5, "dur": -1e999}`, events: 2, err: "dur: want a finite number >= 0, found -Inf", at: "-1e999"},
		{name: "dur negative", event: `{"ph": "X", "dur": -5, "ts": 5}`, events: 2, err: "dur: want a finite number >= 0, found -5", at: "-5"},
		{name: "dur negative fraction", event: `{"ph": "X", "dur": -0.001}`, events: 2, err: "found -0.001", at: "-0.001"},
		{name: "dur string 1e999", event: `{"ph": "X", "dur": "1e999"}`, events: 2, err: "dur: want a finite number >= 0, found +Inf", at: `"1e999"`},
		{name: "dur beyond maxTime", event: `{"ph": "X", "dur": 2e30}`, events: 2, err: "found 2e+30", at: "2e30"},
		{name: "ts 1e999", event: `{"ph": "X", "ts": 1e999, "dur": 1}`, events: 2, err: "ts: want a finite number, found +Inf", at: "1e999"},
		{name: "ts -1e400", event: `{"ts": -1e400, "ph": "X"}`, events: 2, err: "ts: want a finite number, found -Inf", at: "-1e400"},
		{name: "ts beyond -maxTime", event: `{"ts": -1.5e30}`, events: 2, err: "found -1.5e+30", at: "-1.5e30"},
		{name: "first fault reported", event: `{"ts": 1e999, "dur": -1}`, events: 2, err: "ts: want a finite number", at: "1e999"},
		{name: "dur zero, -0, maxTime", event: `{"ph": "X", "ts": -1e30, "dur": 1e30, "args": {"x": -0}}`, events: 3},
		{name: "dur -0", event: `{"ph": "X", "ts": 1, "dur": -0.0}`, events: 3},
		{name: "underflow reads as 0", event: `{"ph": "X", "ts": 1e-400, "dur": 1e-999}`, events: 3},
		{name: "args at maxDepth", event: `{"ph": "X", "args": {"x": ` + nest(maxDepth, "[") + `}}`, events: 3},
		{name: "args past maxDepth", event: `{"ph": "X", "args": {"x": ` + nest(maxDepth+1, "[") + `}}`, events: 2,
			err: "value nested more than 10000 levels deep", at: "[1"}, // the bracket past the limit
		{name: "object past maxDepth", event: `{"x": ` + nest(maxDepth+1, `{"a": `) + `, "ph": "X"}`, events: 2,
			err: "event 1 at byte", at: `{"a": 1`},
		{name: "past maxDepth with strings", event: `{"x": ` + strings.Repeat(`["]\"[", {"}": `, maxDepth) + `[1` + strings.Repeat(`}]`, maxDepth) + `], "y": "}]"}`, events: 2,
			err: "nested more than", off: 6 + maxDepth/2*len(`["]\"[", {"}": `)}, // brackets in strings do not count
		{name: "type error before depth", event: `{"ts": "x", "x": ` + nest(maxDepth+1, "[") + `}`, events: 2,
			err: "ts: want a number, found a string", at: `"x"`},
		{name: "element past maxDepth", event: nest(maxDepth+1, "["), events: 2,
			err: "nested more than", at: "[1"},
		{name: "kernel without dur", event: `{"ph": "X", "cat": "kernel", "name": "k", "ts": 5}`, events: 2, err: `kernel event "k" has no dur: it cannot be timed`, off: 0},
		{name: "memcpy without ts", event: `{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "dur": 5}`, events: 2, err: `gpu_memcpy event "Memcpy HtoD" has no ts`, off: 0},
		{name: "gpu annotation without ts or dur", event: `{"cat": "gpu_user_annotation", "ph": "X", "name": "a"}`, events: 2, err: "has no ts", off: 0},
		{name: "cat after ts", event: `{"ph": "X", "dur": 1, "name": "k", "cat": "kernel"}`, events: 2, err: "has no ts", off: 0},
		{name: "type error reported first", event: `{"ph": "X", "cat": "kernel", "dur": "x"}`, events: 2, err: "dur: want a number", at: `"x"`},
		{name: "cpu op without dur", event: `{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 5}`, events: 3},
		{name: "kernel instant without dur", event: `{"ph": "i", "cat": "kernel", "name": "k", "ts": 5}`, events: 3},
		{name: "cut inside a deep event", event: `{"x": ` + strings.Repeat("[", maxDepth+5), events: 1,
			err: "event 1 at byte", fatal: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			head := `{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2}, `
			in := head + tc.event + `, {"ph": "X", "ts": 9, "dur": 1}]}`
			if tc.fatal {
				in = head + tc.event
			}
			out := readOutcome(t, strings.NewReader(in))
			require.Len(t, out.events, tc.events, "events; errors %v", out.errs)
			if tc.err == "" {
				require.Empty(t, out.errs)
				require.True(t, out.eof)
				return
			}
			require.Len(t, out.errs, 1, "%v", out.errs)
			e := out.errs[0]
			assert.Contains(t, e.Error(), tc.err)
			assert.EqualValues(t, 1, e.Index)
			assert.Equal(t, tc.fatal, e.Fatal)
			assert.Equal(t, !tc.fatal, out.eof, "clean end")
			if tc.fatal {
				return
			}
			want := int64(len(head) + tc.off)
			if tc.at != "" {
				k := strings.Index(tc.event, tc.at)
				require.GreaterOrEqual(t, k, 0)
				want += int64(k)
			}
			assert.Equal(t, want, e.Offset, "offset")
			assert.EqualValues(t, 2, out.events[len(out.events)-1].Index, "the event after the bad one")
			assert.InDelta(t, 9, out.events[len(out.events)-1].TS.Seconds().Us(), 1e-9)
		})
	}
}

// TestReaderDeepTopLevel: a top-level value nested too deep is fatal, at the
// bracket past the limit.
func TestReaderDeepTopLevel(t *testing.T) {
	for _, open := range []string{"[", `{"a": `} {
		head := `{"schemaVersion": 1, "x": `
		in := head + nest(maxDepth+1, open) + `, "traceEvents": []}`
		out := readOutcome(t, strings.NewReader(in))
		require.Len(t, out.errs, 1)
		e := out.errs[0]
		assert.True(t, e.Fatal)
		assert.Contains(t, e.Error(), "x: value nested more than 10000 levels deep")
		assert.EqualValues(t, -1, e.Index)
		assert.EqualValues(t, len(head)+maxDepth*len(open), e.Offset)
	}
	// at the limit it is read
	out := readOutcome(t, strings.NewReader(`{"x": `+nest(maxDepth, "[")+`, "traceEvents": [{"ph": "X"}]}`))
	assert.True(t, out.eof, "%v", out.errs)
	assert.Len(t, out.events, 1)
}

// TestReaderDeepEventMemory reads a 30 MB event nested 5 million levels deep
// between ordinary events spread over many chunks (the reviewer's case took
// 350 MB of RSS): the reader skips it as one malformed event, allocating a
// small fraction of its size (the window does not grow to hold it), and
// reads the events around it as the workers decoded them.
func TestReaderDeepEventMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("30 MB input")
	}
	plain := genTrace(t, 2, false)
	full := readOutcome(t, bytes.NewReader(plain))
	require.True(t, full.eof)
	k := len(full.events) / 2
	at := full.events[k].Offset + 1 // just after the event's '{'
	const n = 5_000_000
	ins := `"x": ` + nest(n, `{"a":`) + `, `
	in := append(append(bytes.Clone(plain[:at]), ins...), plain[at:]...)

	// allocated returns the bytes allocated while reading data.
	allocated := func(data []byte) (outcome, uint64) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := readOutcome(t, bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		return out, after.TotalAlloc - before.TotalAlloc
	}
	_, base := allocated(plain)
	out, alloc := allocated(in)
	require.True(t, out.eof, "%v", out.errs)
	require.Len(t, out.errs, 1)
	assert.False(t, out.errs[0].Fatal)
	assert.EqualValues(t, k, out.errs[0].Index)
	assert.Equal(t, at+int64(len(`"x": `)+maxDepth*len(`{"a":`)), out.errs[0].Offset)
	require.Len(t, out.events, len(full.events)-1)
	for j := k; j < len(out.events); j++ {
		require.Equal(t, wireOf(full.events[j+1]), wireOf(out.events[j]), "event %d", j)
		require.Equal(t, full.events[j+1].Offset+int64(len(ins)), out.events[j].Offset)
	}
	extra := int64(alloc) - int64(base)
	t.Logf("allocated %.1f MB reading %.1f MB, %.1f MB without the deep event", float64(alloc)/1e6, float64(len(in))/1e6, float64(base)/1e6)
	// Before the fix the window grew to hold the event, to twice its 30 MB
	// several times over (a new buffer at each refill).
	assert.Less(t, extra, int64(len(ins)/10), "bytes allocated for the deep event")
}

// TestReaderLargeValueMemory reads events holding a 30 MB value (a string,
// an array of numbers) among ordinary events: the window grows to hold the
// value by doubling one buffer, so the bytes allocated stay a few times the
// value's size (before, every refill allocated a new buffer of twice the
// window: about 60 times the size, 270 MB of RSS).
func TestReaderLargeValueMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("30 MB input")
	}
	const n = 30 << 20
	for name, val := range map[string]string{
		"string": `"` + strings.Repeat("a", n) + `"`,
		"array":  `[` + strings.Repeat("1,", n/2) + `1]`,
	} {
		t.Run(name, func(t *testing.T) {
			in := `{"traceEvents": [{"ph": "X", "ts": 1}, {"ph": "X", "name": "big", "args": {"x": ` + val +
				`, "correlation": 7}}, {"ph": "i", "ts": 3}]}`
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out := readOutcome(t, strings.NewReader(in))
			runtime.ReadMemStats(&after)
			require.True(t, out.eof, "%v", out.errs)
			require.Len(t, out.events, 3)
			assert.Equal(t, "big", out.events[1].Name)
			assert.EqualValues(t, 7, out.events[1].Correlation)
			assert.EqualValues(t, 3, out.events[2].TS)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %.1f MB for a %.1f MB value", float64(alloc)/1e6, float64(len(val))/1e6)
			assert.Less(t, alloc, uint64(4*len(val)), "bytes allocated")
		})
	}
}
