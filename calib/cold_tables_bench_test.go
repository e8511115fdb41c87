package calib

import "testing"

// BenchmarkEmbeddedTablesCold opens an embedded calibration for lookups
// as a fresh process's predict does (EmbeddedTables: the index, the
// collective and EP tables, stubs of the others; the cache dropped each
// iteration), then reads the one table a Nemotron-3-Ultra predict on H200
// looks up (lookup: that table's frame, parsed and built).
func BenchmarkEmbeddedTablesCold(b *testing.B) {
	for _, gpu := range []string{"h200-sxm", "b200-sxm"} {
		b.Run(gpu, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				embMu.Lock()
				embCache, tabCache = map[string]*File{}, map[string]*File{}
				embMu.Unlock()
				if _, err := EmbeddedTables(gpu); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("lookup/h200-sxm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f, err := embeddedTablesParse("h200-sxm")
			if err != nil {
				b.Fatal(err)
			}
			for i := range f.Tables {
				if t := &f.Tables[i]; t.Name == "gqa.vllm-0.24.0.d128.kv-bf16" {
					t.loo.LOOError() // builds it
				}
			}
		}
	})
}
