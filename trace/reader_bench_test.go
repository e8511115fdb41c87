package trace

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/moecast/moecast/trace/tracegen"
)

var traceFile = flag.String("tracefile", "", "trace file for BenchmarkReaderFile (e.g. one written by bench/tracegen)")

// genTrace returns a generated trace of a few steps, gzip-compressed or not.
func genTrace(tb testing.TB, steps int, gz bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	cfg := tracegen.DefaultConfig()
	cfg.Steps = steps
	if _, err := tracegen.Write(w, cfg); err != nil {
		tb.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// drain reads every event and returns the count and the uncompressed size.
func drain(tb testing.TB, r io.Reader) (events, size int64) {
	rd, err := NewReader(r)
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var ev Event
	for {
		err := rd.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		events++
	}
	size, _ = rd.BytesRead()
	return events, size
}

// BenchmarkReader reads a generated 8-step trace from memory; SetBytes is the
// uncompressed size, so MB/s is of uncompressed JSON.
func BenchmarkReader(b *testing.B) {
	for _, tc := range []struct {
		name string
		gz   bool
	}{{"plain", false}, {"gzip", true}} {
		b.Run(tc.name, func(b *testing.B) {
			data := genTrace(b, 8, tc.gz)
			var events, size int64
			for b.Loop() {
				events, size = drain(b, bytes.NewReader(data))
			}
			b.SetBytes(size)
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkReaderFile reads the file named by -tracefile.
func BenchmarkReaderFile(b *testing.B) {
	if *traceFile == "" {
		b.Skip("no -tracefile")
	}
	var events, size int64
	for b.Loop() {
		f, err := os.Open(*traceFile)
		if err != nil {
			b.Fatal(err)
		}
		events, size = drain(b, f)
		f.Close()
	}
	b.SetBytes(size)
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkGunzip compares compress/gzip with klauspost/compress/gzip on the
// -tracefile (or a generated trace): the choice in newSource rests on it.
func BenchmarkGunzip(b *testing.B) {
	data := genTrace(b, 8, true)
	if *traceFile != "" {
		var err error
		if data, err = os.ReadFile(*traceFile); err != nil {
			b.Fatal(err)
		}
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			b.Skip("-tracefile is not gzip")
		}
	}
	for _, tc := range []struct {
		name string
		open func(io.Reader) (io.Reader, error)
	}{
		{"std", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
		{"klauspost", func(r io.Reader) (io.Reader, error) { return kgzip.NewReader(r) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				z, err := tc.open(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if n, err = io.Copy(io.Discard, z); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(n)
		})
	}
}
