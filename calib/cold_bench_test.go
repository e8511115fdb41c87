package calib

import "testing"

func BenchmarkEmbeddedCold(b *testing.B) {
	for b.Loop() {
		embMu.Lock()
		embCache = map[string]*File{}
		embMu.Unlock()
		if _, err := Embedded("h200-sxm"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkZstdOnly(b *testing.B) {
	for b.Loop() {
		if _, err := embeddedFile("h200-sxm"); err != nil {
			b.Fatal(err)
		}
	}
}
