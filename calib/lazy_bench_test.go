package calib

import (
	"testing"

	"github.com/moecast/moecast/kernels"
)

// BenchmarkLazyGQATable reads and builds one table of an indexed embedded
// calibration on its first lookup, as a plan's first EAGLE-3 draft
// attention lookup on H200 does (the file is opened once; each iteration
// builds the table's stub again from its index entry, then looks up).
func BenchmarkLazyGQATable(b *testing.B) {
	f, err := embeddedTablesParse("h200-sxm")
	if err != nil || f == nil {
		b.Fatal("h200-sxm has no indexed calibration", err)
	}
	var stub *Table
	for i := range f.Tables {
		if t := &f.Tables[i]; t.Name == "gqa.vllm-0.24.0.d128.kv-fp8" {
			stub = t
		}
	}
	if stub == nil || stub.lazy == nil {
		b.Fatal("no lazy gqa.vllm-0.24.0.d128.kv-fp8 table")
	}
	b.ReportAllocs()
	for b.Loop() {
		var kt kernels.Tables
		// a fresh source: its frame is decoded again
		s := stub.lazy.src
		src := &lazySrc{z: s.z, plain: s.plain, r: s.r, size: s.size, head: s.head}
		t := *stub
		t.lazy = &lazyTable{src: src, e: stub.lazy.e}
		tb := buildLazy(f.Name, &t, &kt, false)
		tb.LOOError()
	}
}
