package calib

import "testing"

// BenchmarkEmbeddedCold loads an embedded calibration as a fresh process
// does its first time: the cache is dropped each iteration, the file
// decompressed, parsed, merged with its calib gpu file (H200) and built.
// zstd is the decompression alone, the floor of the present format.
func BenchmarkEmbeddedCold(b *testing.B) {
	for _, gpu := range []string{"h200-sxm", "b200-sxm", "rtx-pro-6000-server"} {
		b.Run(gpu, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				embMu.Lock()
				embCache = map[string]*File{}
				embMu.Unlock()
				if _, err := Embedded(gpu); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("zstd/h200-sxm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := embeddedFile("h200-sxm"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
