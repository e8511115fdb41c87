package trace

import (
	"bytes"
	"testing"
)

// BenchmarkScanner runs the byte scanner alone, on one goroutine, over the
// line-start chunks of a generated trace as the workers decode them: no
// source, channels or other goroutines, so it is steadier than
// BenchmarkReader on a busy machine and shows a change in the scanner's
// per-event cost.
func BenchmarkScanner(b *testing.B) {
	data := genTrace(b, 8, false)
	var chunks []*chunk
	var size int64
	for off := 0; off < len(data); {
		end := min(off+chunkSize, len(data))
		if k := bytes.LastIndexByte(data[off:end], '\n'); k > 0 && end < len(data) {
			end = off + k + 1
		}
		mem := make([]byte, headroom+end-off)
		copy(mem[headroom:], data[off:end])
		if off > 0 { // the first chunk holds the top-level object
			chunks = append(chunks, &chunk{mem: mem, n: end - off, off: int64(off)})
			size += int64(end - off)
		}
		off = end
	}
	sc := &scanner{strs: newInterner(), keys: newKeyTable()}
	var evs []Event
	n := 0
	b.SetBytes(size)
	for b.Loop() {
		for _, c := range chunks {
			evs, _ = sc.speculate(c, evs[:0])
			n += len(evs)
		}
	}
	if n == 0 {
		b.Fatal("no events decoded")
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
