package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcome is what a Reader yields for an input: the events, the errors in
// the order met, and whether the stream ended cleanly.
type outcome struct {
	events []Event
	errs   []*Error
	eof    bool
	meta   Meta
}

// readOutcome reads r to its end, going on after non-fatal errors.
func readOutcome(t testing.TB, r io.Reader) outcome {
	t.Helper()
	var out outcome
	rd, err := NewReader(r)
	require.NoError(t, err)
	defer rd.Close()
	for n := 0; ; n++ {
		require.Less(t, n, 1<<24, "reader makes no progress")
		ev, err := rd.ReadEvent()
		if err == io.EOF {
			out.eof = true
			break
		}
		if err != nil {
			var e *Error
			require.True(t, errors.As(err, &e), "error %v is not a *Error", err)
			out.errs = append(out.errs, e)
			if e.Fatal {
				again := rd.Next(&ev)
				require.Equal(t, err, again, "a fatal error must stick")
				break
			}
			continue
		}
		out.events = append(out.events, ev)
	}
	out.meta = *rd.Meta()
	return out
}

func TestReaderBadInput(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		events  int
		errs    []string // substrings of each error in order
		index   []int64  // Index of each error
		offset  []int64  // Offset of each error; -1: not checked
		fatal   bool     // the last error is fatal
		wrapEOF bool     // the last error wraps io.ErrUnexpectedEOF
	}{
		{name: "empty", in: "", errs: []string{"empty input"}, index: []int64{-1}, offset: []int64{0}, fatal: true},
		{name: "blank", in: " \n\t", errs: []string{"empty input"}, index: []int64{-1}, offset: []int64{3}, fatal: true},
		{name: "not JSON", in: "hello", errs: []string{"not a trace"}, index: []int64{-1}, offset: []int64{0}, fatal: true},
		{name: "number", in: "42", errs: []string{"not a trace"}, index: []int64{-1}, offset: []int64{0}, fatal: true},
		{name: "object without traceEvents", in: `{"schemaVersion": 1, "foo": [1, {"a": "}"}]}`,
			errs: []string{"no traceEvents"}, index: []int64{-1}, offset: []int64{43}, fatal: true},
		{name: "traceEvents not an array", in: `{"traceEvents": {"ph": "X"}}`,
			errs: []string{"traceEvents is not an array: found an object"}, index: []int64{-1}, offset: []int64{16}, fatal: true},
		{name: "empty trace", in: `{"traceEvents": []}`},
		{name: "empty array form", in: `[]`},
		{name: "array form", in: `[{"ph": "X", "name": "a"}, {"ph": "i", "name": "b"}]`, events: 2},
		{name: "wrong type ts", in: `{"traceEvents": [{"ph": "X", "ts": 1}, {"ph": "X", "ts": "abc"}, {"ph": "X", "ts": 3}]}`,
			events: 2, errs: []string{"event 1 at byte 57: ts: want a number, found a string"}, index: []int64{1}, offset: []int64{57}},
		{name: "element not an object", in: `{"traceEvents": [{"ph": "X"}, 5, [1, 2], {"ph": "i"}]}`,
			events: 2, errs: []string{"not a JSON object: found '5'", "not a JSON object: found '['"}, index: []int64{1, 2}, offset: []int64{30, 33}},
		{name: "wrong types in args", in: `{"traceEvents": [{"name": 5}, {"pid": {}}, {"args": []}, {"args": {"grid": "x"}}, {"args": {"correlation": 1.5}}, {"args": {"block": [1, "a"]}}, {"ph": "X"}]}`,
			events: 1,
			errs: []string{"name: want a string, found a number", "pid: want a number, found an object", "args: want an object, found an array",
				"args.grid: want an array, found a string", "args.correlation: want an integer, found 1.5", "args.block: want a number, found a string"},
			index: []int64{0, 1, 2, 3, 4, 5}, offset: []int64{-1, -1, -1, -1, -1, -1}},
		{name: "truncated JSON", in: `{"traceEvents": [{"ph": "X", "name": "a"}, {"ph": "X", "na`,
			events: 1, errs: []string{"event 1 at byte 58: unexpected end of JSON"}, index: []int64{1}, offset: []int64{58}, fatal: true, wrapEOF: true},
		{name: "truncated after events", in: `{"traceEvents": [{"ph": "X"}]`,
			events: 1, errs: []string{"unexpected end of JSON"}, index: []int64{-1}, offset: []int64{29}, fatal: true, wrapEOF: true},
		{name: "missing comma", in: `{"traceEvents": [{"ph": "X"} {"ph": "X"}]}`,
			events: 1, errs: []string{"want ',' or ']' after an event, found '{'"}, index: []int64{1}, offset: []int64{29}, fatal: true},
		{name: "missing colon", in: `{"traceEvents": [{"ph" "X"}]}`,
			errs: []string{"want ':' after a key in an event"}, index: []int64{0}, offset: []int64{23}, fatal: true},
		{name: "bad number", in: `{"traceEvents": [{"ts": 01}]}`,
			errs: []string{"ts: invalid number"}, index: []int64{0}, offset: []int64{24}, fatal: true},
		{name: "bad literal", in: `{"traceEvents": [{"x": nul}]}`,
			errs: []string{"invalid literal: want null"}, index: []int64{0}, offset: []int64{23}, fatal: true},
		{name: "unbalanced skipped value", in: `{"traceEvents": [{"x": [1, 2}]}`,
			errs: []string{"unbalanced '}'"}, index: []int64{0}, offset: []int64{28}, fatal: true},
		{name: "bad escape", in: `{"traceEvents": [{"name": "a\qb"}]}`,
			errs: []string{"name: invalid escape"}, index: []int64{0}, offset: []int64{26}, fatal: true},
		{name: "data after the trace", in: `{"traceEvents": [{"ph": "X"}]} {"traceEvents": []}`,
			events: 1, errs: []string{"data after the end of the trace"}, index: []int64{-1}, offset: []int64{31}, fatal: true},
		{name: "trailing comma", in: `{"traceEvents": [{"ph": "X",}]}`,
			errs: []string{"want a key string in an event, found '}'"}, index: []int64{0}, offset: []int64{28}, fatal: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := readOutcome(t, strings.NewReader(tc.in))
			assert.Len(t, out.events, tc.events, "events")
			require.Len(t, out.errs, len(tc.errs), "errors: %v", out.errs)
			for k, e := range out.errs {
				assert.Contains(t, e.Error(), tc.errs[k])
				assert.Equal(t, tc.index[k], e.Index, "index of error %d (%v)", k, e)
				if tc.offset[k] >= 0 {
					assert.Equal(t, tc.offset[k], e.Offset, "offset of error %d (%v)", k, e)
				}
			}
			if len(tc.errs) > 0 {
				last := out.errs[len(out.errs)-1]
				assert.Equal(t, tc.fatal, last.Fatal, "fatal")
				assert.Equal(t, tc.wrapEOF, errors.Is(last, io.ErrUnexpectedEOF), "wraps io.ErrUnexpectedEOF")
			}
			assert.Equal(t, !tc.fatal, out.eof, "clean end")
		})
	}
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestReaderTruncatedGzip(t *testing.T) {
	plain := genTrace(t, 3, false)
	full := readOutcome(t, bytes.NewReader(plain))
	require.True(t, full.eof)
	gz := gzipBytes(t, plain)

	for _, frac := range []float64{0.01, 0.5, 0.99} {
		cut := gz[:int(float64(len(gz))*frac)]
		out := readOutcome(t, bytes.NewReader(cut))
		require.Len(t, out.errs, 1, "cut at %.0f%%", frac*100)
		e := out.errs[0]
		assert.True(t, e.Fatal)
		assert.ErrorIs(t, e, io.ErrUnexpectedEOF, "cut at %.0f%%: %v", frac*100, e)
		assert.Contains(t, e.Error(), "input ends inside the JSON")
		// Every event before the cut comes out, equal to the full read.
		assert.Greater(t, len(out.events), 0)
		assert.Less(t, len(out.events), len(full.events))
		assert.Equal(t, full.events[:len(out.events)], out.events)
		assert.Equal(t, int64(len(out.events)), e.Index, "the error names the event it stopped in")
		assert.Greater(t, e.Offset, full.events[len(out.events)-1].Offset)
	}
}

func TestReaderCorruptGzip(t *testing.T) {
	gz := gzipBytes(t, genTrace(t, 1, false))
	bad := bytes.Clone(gz)
	for k := len(bad) / 2; k < len(bad)/2+64; k++ {
		bad[k] ^= 0x5a
	}
	out := readOutcome(t, bytes.NewReader(bad))
	require.NotEmpty(t, out.errs)
	assert.True(t, out.errs[len(out.errs)-1].Fatal)
	assert.False(t, out.eof)

	// A bad gzip header fails in NewReader.
	_, err := NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}))
	assert.Error(t, err)
}

func TestReaderMetaAfterEvents(t *testing.T) {
	in := `{"traceEvents": [{"ph": "X", "name": "k"}],
 "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "nccl_version": "2.27.3"},
 "vllm_version": "0.11.0", "vllm_version_tuple": [0, 11, 0], "baseTimeNanoseconds": 1759300000000000000}`
	rd, err := NewReader(strings.NewReader(in))
	require.NoError(t, err)
	defer rd.Close()
	_, err = rd.ReadEvent()
	require.NoError(t, err)
	_, err = rd.ReadEvent()
	require.Equal(t, io.EOF, err)
	m := rd.Meta()
	require.NotNil(t, m.Distributed)
	assert.Equal(t, 3, m.Distributed.Rank)
	assert.Equal(t, 8, m.Distributed.WorldSize)
	assert.Equal(t, "2.27.3", m.Distributed.NCCLVersion)
	assert.Equal(t, "0.11.0", m.VLLMVersion)
	assert.EqualValues(t, 1759300000000000000, m.BaseTimeNanoseconds)
	assert.JSONEq(t, `[0, 11, 0]`, string(m.Other["vllm_version_tuple"]))
	assert.Empty(t, m.Warnings)
}

func TestReaderMetaWrongTypes(t *testing.T) {
	out := readOutcome(t, strings.NewReader(`{"distributedInfo": 5, "deviceProperties": {"id": 0}, "traceEvents": []}`))
	assert.True(t, out.eof, "bad metadata does not stop the events")
	assert.Nil(t, out.meta.Distributed)
	assert.Len(t, out.meta.Warnings, 2)
	assert.Contains(t, out.meta.Warnings[0], `"distributedInfo"`)
}

func TestReaderStringsAndIDs(t *testing.T) {
	in := `{"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "a\"b\\c\u00e9\ud83d\ude00\n", "pid": "Spans", "tid": "12", "id": "0x1f", "ts": -1.5e3, "dur": 2E-1,
  "args": {"correlation": "77", "grid": [1, 2, 3, 4], "block": null, "Collective name": "allreduce", "dtype": null, "Group size": 2.0}},
 {"ph": "f", "cat": "ac2g", "na\u006de": "k", "pid": 1, "tid": 2, "ts": 0, "id": 9, "bp": "e", "extra": {"deep": [[{"x": "]"}]], "t": true, "f": false}}
]}`
	out := readOutcome(t, strings.NewReader(in))
	require.True(t, out.eof, "%v", out.errs)
	require.Len(t, out.events, 2)
	e := out.events[0]
	assert.Equal(t, "a\"b\\c\u00e9\U0001F600\n", e.Name)
	assert.EqualValues(t, -1, e.Pid)
	assert.EqualValues(t, 12, e.Tid)
	assert.EqualValues(t, 31, e.ID)
	assert.Equal(t, Time(-1500), e.TS)
	assert.InDelta(t, 0.2, e.Dur.Us(), 1e-12)
	assert.EqualValues(t, 77, e.Correlation)
	assert.Equal(t, [3]int32{1, 2, 3}, e.Grid)
	assert.Equal(t, [3]int32{}, e.Block)
	assert.Equal(t, "allreduce", e.Collective)
	assert.EqualValues(t, 2, e.GroupSize)
	assert.Equal(t, CatKernel, e.Cat)
	f := out.events[1]
	assert.Equal(t, "k", f.Name, "escaped key")
	assert.Equal(t, PhaseFlowFinish, f.Ph)
	assert.Equal(t, CatFlow, f.Cat)
	assert.EqualValues(t, 9, f.ID)
	assert.EqualValues(t, 1, f.Index)
}

// TestReaderMatchesEncodingJSON decodes a generated trace of several chunks
// with encoding/json and checks every event field against the Reader: read
// whole, one byte per Read (every chunk boundary falls inside some value),
// gzip-compressed, without line breaks (no speculative decoding) and
// indented (line breaks inside events, where speculation must fail).
func TestReaderMatchesEncodingJSON(t *testing.T) {
	plain := genTrace(t, 2, false)
	require.Greater(t, len(plain), 2*chunkSize, "the trace must span several chunks")
	want := decodeWire(t, plain)
	oneLine := bytes.ReplaceAll(plain, []byte("\n"), []byte(" "))
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, plain, "", "  "))

	inputs := []struct {
		name     string
		data     []byte // the uncompressed JSON, for offsets
		open     func() io.Reader
		parallel bool // chunks must be taken from the workers
	}{
		{"plain", plain, func() io.Reader { return bytes.NewReader(plain) }, true},
		{"one byte", plain, func() io.Reader { return iotest.OneByteReader(bytes.NewReader(plain)) }, true},
		{"gzip", plain, func() io.Reader { return bytes.NewReader(gzipBytes(t, plain)) }, true},
		{"data error", plain, func() io.Reader { return iotest.DataErrReader(bytes.NewReader(plain)) }, true},
		{"one line", oneLine, func() io.Reader { return bytes.NewReader(oneLine) }, false},
		{"indented", indented.Bytes(), func() io.Reader { return bytes.NewReader(indented.Bytes()) }, false},
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			rd, err := NewReader(in.open())
			require.NoError(t, err)
			defer rd.Close()
			var got []Event
			for {
				ev, err := rd.ReadEvent()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				got = append(got, ev)
			}
			require.Len(t, got, len(want))
			for k, w := range want {
				g := got[k]
				w.Dur = secondsFromMicros(w.Dur).Us() // the Reader keeps dur in seconds
				require.Equal(t, w, wireOf(g), "event %d", k)
				require.EqualValues(t, k, g.Index)
				require.Equal(t, byte('{'), in.data[g.Offset], "event %d offset %d", k, g.Offset)
			}
			if in.parallel {
				assert.Positive(t, rd.taken, "no chunk was decoded by a worker")
			} else if in.name == "one line" {
				assert.Zero(t, rd.taken)
			}
			m := rd.Meta()
			require.NotNil(t, m.Distributed)
			assert.Equal(t, 8, m.Distributed.WorldSize)
			assert.Equal(t, "0.11.0", m.VLLMVersion)
			assert.Len(t, m.DeviceProperties, 8)
			uncompressed, _ := rd.BytesRead()
			assert.EqualValues(t, len(in.data), uncompressed)
		})
	}
}

// TestReaderLargeEvent reads an event larger than a chunk's headroom and
// larger than a chunk.
func TestReaderLargeEvent(t *testing.T) {
	for _, n := range []int{headroom + 100, chunkSize + 100, 3 * chunkSize} {
		name := strings.Repeat("x", n)
		pad := strings.Repeat(" ", chunkSize-50) // the big event starts near a chunk's end
		in := `{"traceEvents": [` + pad + `{"ph": "X", "name": "small"}, {"ph": "X", "name": "` + name + `", "args": {"correlation": 5}}, {"ph": "i"}]}`
		out := readOutcome(t, strings.NewReader(in))
		require.True(t, out.eof, "%v", out.errs)
		require.Len(t, out.events, 3)
		assert.Len(t, out.events[1].Name, n)
		assert.EqualValues(t, 5, out.events[1].Correlation)
		assert.Equal(t, PhaseInstant, out.events[2].Ph)
	}
}

func TestReaderClose(t *testing.T) {
	gz := gzipBytes(t, genTrace(t, 3, false))
	rd, err := NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	_, err = rd.ReadEvent()
	require.NoError(t, err)
	require.NoError(t, rd.Close())
	require.NoError(t, rd.Close())
	// After Close the stream ends with an error, not a hang (events already
	// decoded may still come first).
	for {
		_, err = rd.ReadEvent()
		if err != nil {
			break
		}
	}
	assert.NotEqual(t, io.EOF, err)
	rd.wg.Wait()
}

// wireEvent is the comparable form of an event for TestReaderMatchesEncodingJSON.
type wireEvent struct {
	Ph, Cat, Name                                      string
	Pid, Tid                                           int64
	TS, Dur                                            float64
	ID, Correlation, ExternalID, Stream, Device, Bytes int64
	Grid, Block                                        [3]int32
	Collective, DType                                  string
	InMsgNelems, OutMsgNelems                          int64
	GroupSize                                          int32
}

func wireOf(e Event) wireEvent {
	w := wireEvent{Cat: e.CatRaw, Name: e.Name, Pid: e.Pid, Tid: e.Tid, TS: float64(e.TS), Dur: e.Dur.Us(),
		ID: e.ID, Correlation: e.Correlation, ExternalID: e.ExternalID, Stream: e.Stream, Device: e.Device, Bytes: e.Bytes,
		Grid: e.Grid, Block: e.Block, Collective: e.Collective, DType: e.DType,
		InMsgNelems: e.InMsgNelems, OutMsgNelems: e.OutMsgNelems, GroupSize: e.GroupSize}
	if e.Ph != 0 {
		w.Ph = string(rune(e.Ph))
	}
	return w
}

// decodeWire decodes the events of a trace with encoding/json.
func decodeWire(t testing.TB, data []byte) []wireEvent {
	t.Helper()
	var f struct {
		TraceEvents []struct {
			Ph   string  `json:"ph"`
			Cat  string  `json:"cat"`
			Name string  `json:"name"`
			Pid  int64   `json:"pid"`
			Tid  int64   `json:"tid"`
			TS   float64 `json:"ts"`
			Dur  float64 `json:"dur"`
			ID   int64   `json:"id"`
			Args struct {
				Correlation  int64   `json:"correlation"`
				ExternalID   int64   `json:"External id"`
				Stream       int64   `json:"stream"`
				Device       int64   `json:"device"`
				Bytes        int64   `json:"bytes"`
				Grid         []int32 `json:"grid"`
				Block        []int32 `json:"block"`
				Collective   string  `json:"Collective name"`
				DType        string  `json:"dtype"`
				InMsgNelems  int64   `json:"In msg nelems"`
				OutMsgNelems int64   `json:"Out msg nelems"`
				GroupSize    int32   `json:"Group size"`
			} `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	out := make([]wireEvent, len(f.TraceEvents))
	for k, e := range f.TraceEvents {
		a := e.Args
		w := wireEvent{Ph: e.Ph, Cat: e.Cat, Name: e.Name, Pid: e.Pid, Tid: e.Tid, TS: e.TS, Dur: e.Dur, ID: e.ID,
			Correlation: a.Correlation, ExternalID: a.ExternalID, Stream: a.Stream, Device: a.Device, Bytes: a.Bytes,
			Collective: a.Collective, DType: a.DType, InMsgNelems: a.InMsgNelems, OutMsgNelems: a.OutMsgNelems, GroupSize: a.GroupSize}
		copy(w.Grid[:], a.Grid)
		copy(w.Block[:], a.Block)
		out[k] = w
	}
	return out
}

// TestReaderKeyGuesses mixes event layouts, spellings with and without
// spaces, keys that share a prefix and an escaped key, so the key guesses
// of memberKey both hit and miss.
func TestReaderKeyGuesses(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"traceEvents": [`)
	for k := 0; k < 50; k++ {
		if k > 0 {
			sb.WriteString(",\n")
		}
		switch k % 5 {
		case 0:
			sb.WriteString(`{"ph": "X", "ts": 1, "dur": 2, "args": {"correlation": 3, "stream": 7}}`)
		case 1:
			sb.WriteString(`{"ph": "f", "id": 4, "tsx": 9, "ts": 5}`)
		case 2:
			sb.WriteString(`{"ph":"X","ts":6,"dur" : 7,"args":{"stream":8,"correlation":9}}`)
		case 3:
			sb.WriteString(`{"ph": "i", "t": 1, "ts": 10, "d\u0075r": 11, "args": {"correlations": 1, "correlation": 12}}`)
		case 4:
			sb.WriteString(`{"ts": 13, "ph": "X", "args": {"stream": 14}, "dur": 15}`)
		}
	}
	sb.WriteString(`]}`)
	out := readOutcome(t, strings.NewReader(sb.String()))
	require.True(t, out.eof, "%v", out.errs)
	require.Len(t, out.events, 50)
	want := []wireEvent{
		{Ph: "X", TS: 1, Dur: 2, Correlation: 3, Stream: 7},
		{Ph: "f", ID: 4, TS: 5},
		{Ph: "X", TS: 6, Dur: 7, Stream: 8, Correlation: 9},
		{Ph: "i", TS: 10, Dur: 11, Correlation: 12},
		{Ph: "X", TS: 13, Stream: 14, Dur: 15},
	}
	for k, ev := range out.events {
		require.Equal(t, want[k%5], wireOf(ev), "event %d", k)
	}
}

// TestReaderConcurrentFiles reads several files at once, one Reader each,
// as `moecast trace summary` reads ranks (run it with -race).
func TestReaderConcurrentFiles(t *testing.T) {
	plain := genTrace(t, 2, false)
	gz := gzipBytes(t, plain)
	want := readOutcome(t, bytes.NewReader(plain)).events
	const files = 4
	got := make([][]Event, files)
	done := make(chan int)
	for k := range files {
		go func() {
			defer func() { done <- k }()
			data := plain
			if k%2 == 1 {
				data = gz
			}
			got[k] = readOutcome(t, bytes.NewReader(data)).events
		}()
	}
	for range files {
		<-done
	}
	for k := range files {
		assert.Equal(t, want, got[k], "file %d", k)
	}
}

// TestReaderBadEventMidTrace puts a malformed event in the middle of a
// generated trace of many chunks: the chunk holding it is decoded by the main
// scanner, which reports the event and goes on; the chunks after it are
// again taken from the workers.
func TestReaderBadEventMidTrace(t *testing.T) {
	plain := genTrace(t, 3, false)
	full := readOutcome(t, bytes.NewReader(plain))
	require.True(t, full.eof)
	k := len(full.events) / 2
	at := full.events[k].Offset + 1 // just after the event's '{'
	bad := append(append(bytes.Clone(plain[:at]), `"ts": "bad", `...), plain[at:]...)

	rd, err := NewReader(bytes.NewReader(bad))
	require.NoError(t, err)
	defer rd.Close()
	var evs []Event
	var errs []*Error
	for {
		ev, err := rd.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			var e *Error
			require.True(t, errors.As(err, &e))
			require.False(t, e.Fatal, "%v", err)
			errs = append(errs, e)
			continue
		}
		evs = append(evs, ev)
	}
	require.Len(t, errs, 1)
	assert.EqualValues(t, k, errs[0].Index)
	assert.Equal(t, full.events[k].Offset+7, errs[0].Offset, "the offset of \"bad\"")
	require.Len(t, evs, len(full.events)-1)
	assert.Equal(t, full.events[:k], evs[:k])
	for j := k; j < len(evs); j++ {
		require.Equal(t, wireOf(full.events[j+1]), wireOf(evs[j]), "event %d", j)
		require.Equal(t, full.events[j+1].Index, evs[j].Index)
		require.Equal(t, full.events[j+1].Offset+13, evs[j].Offset)
	}
	assert.Greater(t, rd.taken, 2, "chunks before and after the bad one come from the workers")
}

// TestReaderStopsAtEnd checks that the goroutines of a Reader end by
// themselves once ReadEvent has returned io.EOF or a fatal error (a caller
// that forgets Close leaks nothing).
func TestReaderStopsAtEnd(t *testing.T) {
	plain := genTrace(t, 2, false)
	for name, data := range map[string][]byte{
		"eof":       plain,
		"truncated": plain[:len(plain)*2/3],
		"gzip eof":  gzipBytes(t, plain),
	} {
		t.Run(name, func(t *testing.T) {
			rd, err := NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			for {
				if _, err := rd.ReadEvent(); err != nil {
					break
				}
			}
			stopped := make(chan struct{})
			go func() { rd.wg.Wait(); rd.sc.src.wg.Wait(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(10 * time.Second):
				t.Fatal("goroutines still running after the end of the stream")
			}
		})
	}
}
