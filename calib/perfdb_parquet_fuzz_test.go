package calib

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

// FuzzParquetCSV feeds the parquet reader of `calib import perfdb`
// arbitrary files: it must never panic nor hang, and what it accepts is
// CSV with a header.
func FuzzParquetCSV(f *testing.F) {
	b, err := os.ReadFile("testdata/perfdbtree/data/gb200/comm/vllm/0.24.0/custom_allreduce_perf.parquet")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(append([]byte("PAR1"), b[len(b)-200:]...))
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		out, err := parquetCSVFrom(bytes.NewReader(data), int64(len(data)), "x.parquet")
		runtime.ReadMemStats(&m1)
		if err == nil && len(out) == 0 {
			t.Fatal("accepted with no header")
		}
		// A corrupt header must not make the reader allocate what it
		// claims (a 4 GB footer, a page of 2^31 values): a few MB per
		// KB of input at most.
		if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<20+uint64(len(data))<<12 {
			t.Fatalf("%d bytes of input allocated %d MB", len(data), a>>20)
		}
	})
}
