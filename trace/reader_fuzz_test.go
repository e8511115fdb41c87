package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic or
// stall, must end every stream with io.EOF or a fatal *Error, and on input
// that encoding/json accepts as a trace object with one traceEvents array it
// must not report a syntax error and must account for every element (an
// event or a skipped element).
func FuzzReader(f *testing.F) {
	valid := genTrace(f, 1, false)
	small := []byte(`{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k\u00e9", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2, "args": {"correlation": 3, "grid": [1, 2, 3], "Collective name": "allreduce", "In msg nelems": 10, "Group size": 2, "dtype": "Float"}},
  {"ph": "f", "id": 3, "pid": "Spans", "tid": "12", "ts": 1e3, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "python3"}}
], "distributedInfo": {"rank": 1, "world_size": 2}, "traceName": "x"}`)
	f.Add(small)
	f.Add(small[:len(small)/2])
	f.Add(valid[:4096])
	f.Add(gzipBytes(f, small))
	f.Add(gzipBytes(f, small)[:40])
	f.Add([]byte(`[{"ph": "X"}, 5, {"ts": "x"}]`))
	f.Add([]byte(`{"traceEvents": [{"args": {"grid": [1, "a"], "x": [[{"y": "]"}]]}}]}`))
	f.Add([]byte(`{"a": 1}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"traceEvents": [{"ts": -0.0e-5, "dur": 1E+400, "id": "0x1f"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return // a bad gzip header
		}
		defer rd.Close()
		var events, skipped int
		var fatal *Error
		for n := 0; ; n++ {
			if n > len(data)+10 {
				t.Fatalf("more items than bytes: the reader stalls")
			}
			var ev Event
			err := rd.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not a *Error", err)
				}
				if e.Fatal {
					fatal = e
					break
				}
				skipped++
				continue
			}
			events++
		}
		if rd.sc.gzip || !json.Valid(data) || bytes.Count(data, []byte(`"traceEvents"`)) != 1 {
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil {
			return
		}
		var elems []json.RawMessage
		if json.Unmarshal(top["traceEvents"], &elems) != nil {
			return
		}
		if fatal != nil {
			t.Fatalf("valid trace JSON, fatal error: %v", fatal)
		}
		if events+skipped != len(elems) {
			t.Fatalf("%d elements, read %d events and skipped %d", len(elems), events, skipped)
		}
	})
}
