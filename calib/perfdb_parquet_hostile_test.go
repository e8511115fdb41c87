package calib

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gdnRow is one row of the perf database's gdn_perf table, as the
// hostile tests write it; latency is a double, as upstream's.
type gdnRow struct {
	KernelSource string  `parquet:"kernel_source"`
	Phase        string  `parquet:"phase"`
	BatchSize    float64 `parquet:"batch_size"`
	SeqLen       int64   `parquet:"seq_len"`
	NumKHeads    int64   `parquet:"num_k_heads"`
	HeadKDim     int64   `parquet:"head_k_dim"`
	NumVHeads    int64   `parquet:"num_v_heads"`
	HeadVDim     int64   `parquet:"head_v_dim"`
	Latency      float64 `parquet:"latency"`
	Device       string  `parquet:"device"`
}

func goodGDN() gdnRow {
	return gdnRow{"chunk_gated_delta_rule", "context", 1, 1024, 4, 128, 16, 128, 0.075, "NVIDIA GB200"}
}

// parquetOf writes rows as a parquet file.
func parquetOf[T any](t *testing.T, rows ...T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// treeWith writes data as the gdn table of a one-GPU parquet tree and
// returns the tree's directory.
func treeWith(t *testing.T, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "data", "gb200", "gdn", "sglang", "0.5.14", "gdn_perf.parquet")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return dir
}

// TestImportPerfDBParquetHostile: a corrupt, truncated or nonsensical
// parquet table of the perf database is refused with one error naming the
// file (and the line, as its CSV would number it, and the column, where a
// value is at fault), never a panic, a 4 GB allocation or a wrong number.
// Session 11: a footer length or a list size claimed by a 4 KB file was
// allocated (4 GB, 212 MB for one fuzzed file), a corrupt dictionary index
// panicked inside parquet-go, and a latency of 1e300 ms or a count of 1e300
// reached the tables as +Inf and -2^63.
func TestImportPerfDBParquetHostile(t *testing.T) {
	const file = "data/gb200/gdn/sglang/0.5.14/gdn_perf.parquet"
	good := parquetOf(t, goodGDN())
	with := func(edit func(*gdnRow)) []byte {
		r := goodGDN()
		edit(&r)
		return parquetOf(t, goodGDN(), r)
	}
	// rows re-encodes good's footer claiming n rows (file and row group).
	rows := func(n int64) []byte {
		fl := int(binary.LittleEndian.Uint32(good[len(good)-8:]))
		var md format.FileMetaData
		require.NoError(t, thrift.Unmarshal(new(thrift.CompactProtocol), good[len(good)-8-fl:len(good)-8], &md))
		md.NumRows = n
		md.RowGroups[0].NumRows = n
		foot, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
		require.NoError(t, err)
		b := append(bytes.Clone(good[:len(good)-8-fl]), foot...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(foot)))
		return append(b, "PAR1"...)
	}
	footerLen := func(n uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[len(b)-8:], n)
		return b
	}
	type latencyText struct {
		KernelSource string `parquet:"kernel_source"`
		Phase        string `parquet:"phase"`
		BatchSize    int64  `parquet:"batch_size"`
		SeqLen       int64  `parquet:"seq_len"`
		NumKHeads    int64  `parquet:"num_k_heads"`
		HeadKDim     int64  `parquet:"head_k_dim"`
		NumVHeads    int64  `parquet:"num_v_heads"`
		HeadVDim     int64  `parquet:"head_v_dim"`
		Latency      string `parquet:"latency"`
		Device       string `parquet:"device"`
	}
	type noLatency struct {
		KernelSource string `parquet:"kernel_source"`
		Phase        string `parquet:"phase"`
	}
	type nested struct {
		KernelSource string `parquet:"kernel_source"`
		Shape        struct {
			Heads int64 `parquet:"heads"`
		} `parquet:"shape"`
	}
	// bomb is the fuzzer's RLE bomb (FuzzParquetCSV seed 44e3fb2a): a 4 KB
	// file whose dictionary-index run headers claim 2^31 values, which
	// parquet-go decoded whole (2.85 GB, 30-41 s) before refusing it.
	seed, err := os.ReadFile("testdata/fuzz/FuzzParquetCSV/44e3fb2a7069b932")
	require.NoError(t, err)
	line := strings.TrimSpace(strings.SplitN(string(seed), "\n", 2)[1])
	q, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
	require.NoError(t, err)
	bomb := []byte(q)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"RLE bomb", bomb, file + ": not a readable parquet file: row group 1, column 8 (message_size), page at byte 860: its dictionary indices: a run claims 2050 values after 0, the page holds 92"},
		{"empty file", nil, file + ": not a readable parquet file: 0 bytes"},
		{"truncated", good[:len(good)/2], file + `: not a readable parquet file: ends with`},
		{"not parquet", []byte("framework,latency\nvLLM,1\n"), file + `: not a readable parquet file: starts with "fram"`},
		{"footer longer than the file", footerLen(math.MaxUint32 - 15), file + ": not a readable parquet file: its footer claims 4294967280 bytes, more than the file's"},
		{"footer misplaced", footerLen(uint32(len(good)) - 12), file + ": not a readable parquet file: "},
		// A footer claiming 1e12 rows: read until the pages end, nothing
		// allocated for the claim; the one row there is read.
		{"footer claiming 1e12 rows", rows(1e12), "sound"},
		{"latency NaN", with(func(r *gdnRow) { r.Latency = math.NaN() }), file + ":3: latency is NaN"},
		{"latency +Inf", with(func(r *gdnRow) { r.Latency = math.Inf(1) }), file + ":3: latency is +Inf"},
		{"latency negative", with(func(r *gdnRow) { r.Latency = -0.5 }), file + ":3: latency must be positive, got -0.5"},
		{"latency zero", with(func(r *gdnRow) { r.Latency = 0 }), file + ":3: latency must be positive, got 0"},
		{"latency huge", with(func(r *gdnRow) { r.Latency = 1e300 }), file + ":3: latency 1e+300 is implausibly long"},
		{"latency below 1 ps", with(func(r *gdnRow) { r.Latency = 1e-300 }), file + ":3: latency 1e-300 is below the 1 ps resolution"},
		{"count huge", with(func(r *gdnRow) { r.BatchSize = 1e300 }), file + ":3: batch_size 1e+300 is implausibly large"},
		{"count fractional", with(func(r *gdnRow) { r.BatchSize = 2.5 }), file + ":3: batch_size must be an integer, got 2.5"},
		{"count zero", with(func(r *gdnRow) { r.NumKHeads = 0 }), file + ":3: num_k_heads must be positive, got 0"},
		{"phase unknown", with(func(r *gdnRow) { r.Phase = "" }), file + `:3: phase "" is neither context nor generation`},
		{"latency a string", parquetOf(t, latencyText{"chunk_gated_delta_rule", "context", 1, 1024, 4, 128, 16, 128, "fast", "d"}),
			file + `:2: latency "fast" is not a number`},
		{"column missing", parquetOf(t, noLatency{"chunk_gated_delta_rule", "context"}), file + `:1: column "batch_size" is missing`},
		{"nested column", parquetOf(t, nested{KernelSource: "k"}), file + ": column [shape heads] is nested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			t0 := time.Now()
			f, err := ImportPerfDB(treeWith(t, tt.data), perfdbOpts("gb200"))
			assert.Less(t, time.Since(t0), 2*time.Second, "read in")
			runtime.ReadMemStats(&m1)
			assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(64<<20), "allocated")
			if tt.want == "sound" {
				require.NoError(t, err)
				require.Len(t, f.Tables, 1)
				assert.Equal(t, [][]float64{{4, 16, 1, 1024, 75}}, f.Tables[0].Rows)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			var ie *InputError
			assert.ErrorAs(t, err, &ie, "an input error (exit 2)")
		})
	}
	t.Run("sound file", func(t *testing.T) {
		f, err := ImportPerfDB(treeWith(t, good), perfdbOpts("gb200"))
		require.NoError(t, err)
		require.Len(t, f.Tables, 1)
		assert.Equal(t, [][]float64{{4, 16, 1, 1024, 75}}, f.Tables[0].Rows)
	})
}

// TestCheckThriftStruct: the footer walk refuses a list, map or string
// that claims more than the footer holds, before parquet-go allocates it,
// and accepts the footers of the upstream files.
func TestCheckThriftStruct(t *testing.T) {
	uvarint := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		b    []byte
		want string // "" = accepted
	}{
		{"empty struct", []byte{0}, ""},
		{"i32 field", []byte{0x15, 0x02, 0}, ""},
		{"list of 2^31 strings", cat([]byte{0x19, 0xf8}, uvarint(1<<31), []byte{0}), "a list claims 2147483648 elements"},
		{"string of 2^40 bytes", cat([]byte{0x18}, uvarint(1<<40), []byte{0}), "a string claims 1099511627776 bytes"},
		{"map of 2^31 entries", cat([]byte{0x1b}, uvarint(1<<31), []byte{0x55, 0}), "a map claims 2147483648 entries"},
		{"list of 3 i32", []byte{0x19, 0x35, 0x02, 0x04, 0x06, 0}, ""},
		{"unterminated", []byte{0x15, 0x02}, "footer ends inside a struct"},
		{"unknown type", []byte{0x1e, 0}, "unknown thrift type 14"},
		{"deep", bytes.Repeat([]byte{0x1c}, 100), "nested more than 64 deep"},
		// lists of lists and maps of maps nest as structs do (the walk
		// recursed once per byte of them, unbounded)
		{"deep lists", cat([]byte{0x19}, bytes.Repeat([]byte{0x19}, 100)), "nested more than 64 deep"},
		{"deep maps", cat([]byte{0x1b}, bytes.Repeat([]byte{0x01, 0xbb}, 100)), "nested more than 64 deep"},
		{"lists 3 deep", []byte{0x19, 0x19, 0x19, 0x15, 0x02, 0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkThriftStruct(tt.b, 0)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	paths, err := filepath.Glob("testdata/perfdbtree/data/*/*/*/*/*.parquet")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, checkParquetFrame(bytes.NewReader(b), int64(len(b))), p)
		assert.False(t, strings.Contains(p, ".."))
	}
}

// TestParquetNestedListsFooter: a 16 MB file whose footer is one-element
// lists nested once per byte is refused with one error; the footer walk
// recursed once per byte and overflowed the goroutine stack, a fatal
// error that no recover catches.
func TestParquetNestedListsFooter(t *testing.T) {
	footer := append([]byte{0x19}, bytes.Repeat([]byte{0x19}, 1<<24)...)
	b := append([]byte("PAR1"), footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	b = append(b, "PAR1"...)
	_, err := parquetCSVFrom(bytes.NewReader(b), int64(len(b)), "x.parquet")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.parquet: not a readable parquet file: footer nested more than 64 deep")
}

// TestCheckRuns: a run-length stream (levels, dictionary indices,
// booleans) may decode to the page's values, its last bit-packed group
// padded to 8, and no more; every run's bytes must be there. parquet-go
// decodes a run whole before comparing it with the page, so a one-byte
// header claiming 2^31 values was 2^31 values allocated.
func TestCheckRuns(t *testing.T) {
	uvarint := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	rle := func(count uint64, value ...byte) []byte { return cat(uvarint(count<<1), value) }
	packed := func(groups uint64, b ...byte) []byte { return cat(uvarint(groups<<1|1), b) }
	tests := []struct {
		name string
		b    []byte
		w    uint
		n    int
		want string // "" = accepted
	}{
		{"empty", nil, 3, 0, ""},
		{"one RLE run of the page", rle(100, 5), 3, 100, ""},
		{"RLE runs summing to the page", cat(rle(60, 1), rle(40, 2)), 3, 100, ""},
		{"bit-packed, last group padded", packed(1, 1, 2, 3), 3, 5, ""},
		{"RLE at width 0 takes no byte", rle(10), 0, 10, ""},
		// the perf database's own pages: an RLE run, then a bit-packed run
		// whose last group passes the page's values (h200 moe_perf.parquet,
		// kernel_source's dictionary indices: 120 values after 19887 of 20000)
		{"bit-packed run padded past the page after RLE runs", cat(rle(9, 1), packed(1, 1)), 1, 10, ""},
		{"a run after the padded run", cat(rle(9, 1), packed(1, 1), rle(1, 1)), 1, 10, "a run claims 1 values after 17, the page holds 10"},
		{"bit-packed a group past the page", cat(rle(9, 1), packed(2, 1, 2)), 1, 10, "a bit-packed run claims 16 values after 9, the page holds 10"},
		{"RLE run past the page by one", cat(rle(9, 1), rle(2, 1)), 1, 10, "a run claims 2 values after 9, the page holds 10"},
		{"RLE run of 2^31", rle(1<<31-1, 0), 1, 92, "a run claims 2147483647 values after 0, the page holds 92"},
		{"runs past the page", cat(rle(60, 1), rle(60, 2)), 3, 100, "a run claims 60 values after 60, the page holds 100"},
		{"bit-packed past the page", packed(1 << 40), 1, 92, "a bit-packed run claims 8796093022208 values"},
		{"bit-packed bytes missing", packed(2, 1, 2, 3), 3, 16, "a run of 16 values needs 6 bytes, 3 remain"},
		{"RLE value missing", rle(4), 9, 16, "a run of 4 values needs 2 bytes, 0 remain"},
		{"header cut short", []byte{0x80}, 1, 8, "a bad run header at byte 0"},
		{"header overflowing", bytes.Repeat([]byte{0xff}, 11), 1, 8, "a bad run header at byte 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRuns(tt.b, tt.w, tt.n)
			if tt.want == "" {
				require.NoError(t, err, "runs % x", tt.b)
				return
			}
			require.Error(t, err, "runs % x", tt.b)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("values", func(t *testing.T) {
		for _, c := range []struct {
			name string
			b    []byte
			enc  format.Encoding
			bool bool
			want string
		}{
			{"dictionary indices 40 bits wide", []byte{40, 2, 1}, format.RLEDictionary, false, "40 bits wide"},
			{"dictionary indices past the page", cat([]byte{2}, rle(9, 1)), format.RLEDictionary, false, "its dictionary indices: a run claims 9"},
			{"dictionary indices of the page", cat([]byte{2}, rle(8, 1)), format.PlainDictionary, false, ""},
			{"booleans past their length", cat([]byte{9, 0, 0, 0}, rle(8, 1)), format.RLE, true, "its length claims 9 bytes, 2 remain"},
			{"booleans past the page", cat([]byte{2, 0, 0, 0}, rle(9, 1)), format.RLE, true, "its RLE booleans: a run claims 9"},
			{"delta claiming 2^31", cat(uvarint(128), uvarint(4), uvarint(1<<31), uvarint(0)), format.DeltaBinaryPacked, false, "its DELTA header claims 2147483648 values, the page 8"},
			{"delta of the page", cat(uvarint(128), uvarint(4), uvarint(8), uvarint(0)), format.DeltaLengthByteArray, false, ""},
			{"plain", []byte{1, 2, 3}, format.Plain, false, ""},
		} {
			err := checkValues(c.b, c.enc, 8, true, c.bool)
			if c.want == "" {
				assert.NoError(t, err, c.name)
				continue
			}
			if assert.Error(t, err, c.name) {
				assert.Contains(t, err.Error(), c.want, c.name)
			}
		}
	})
}

// TestCheckPage: a page's header may not claim more values than a page
// holds (the decoders size their buffers by it), its v2 level lengths
// must lie in the page, a snappy block may not claim more than the page
// header, and an optional column's definition levels are checked as the
// dictionary indices are.
func TestCheckPage(t *testing.T) {
	type opt struct {
		Latency *int64 `parquet:"latency"`
	}
	b := parquetOf(t, opt{})
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	col := pf.Root().Columns()[0]
	require.Equal(t, 1, col.MaxDefinitionLevel())
	v1 := func(n int32, enc format.Encoding) *format.PageHeader {
		return &format.PageHeader{Type: format.DataPage, UncompressedPageSize: 64,
			DataPageHeader: thrift.New(format.DataPageHeader{NumValues: n, Encoding: enc, DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})}
	}
	v2 := &format.PageHeader{Type: format.DataPageV2, UncompressedPageSize: 64,
		DataPageHeaderV2: thrift.New(format.DataPageHeaderV2{NumValues: 8, DefinitionLevelsByteLength: 100})}
	tests := []struct {
		name string
		ph   *format.PageHeader
		data []byte
		want string // "" = accepted
	}{
		{"page of 8 plain values", v1(8, format.Plain), []byte{2, 0, 0, 0, 16, 1}, ""},
		{"2^31 values claimed", v1(1<<31-1, format.Plain), nil, "it claims 2147483647 values, want 0 to 1048576"},
		{"negative values claimed", v1(-1, format.Plain), nil, "it claims -1 values"},
		{"definition levels past the page", v1(8, format.Plain), []byte{200, 0, 0, 0, 16, 1}, "its definition levels: its length claims 200 bytes, 2 remain"},
		{"definition level run past the page", v1(8, format.Plain), []byte{5, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x0f}, "its definition levels: a run claims 2147483647 values after 0, the page holds 8"},
		{"dictionary indices past the page", v1(8, format.RLEDictionary), []byte{2, 0, 0, 0, 16, 1, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0}, "its dictionary indices: a run claims 2147483647"},
		{"v2 levels past the page", v2, make([]byte, 10), "its levels claim 0+100 bytes, the page holds 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPage(tt.ph, tt.data, col, format.Int64)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestInflate: a page is decompressed, for the checks, to at most the
// size its header claims; a codec parquet-go does not bound (LZ4_RAW: its
// decoder doubles its buffer without end on a corrupt block) is refused.
func TestInflate(t *testing.T) {
	page := bytes.Repeat([]byte("moecast "), 1000) // 8,000 bytes
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	zs := enc.EncodeAll(page, nil)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err = w.Write(page)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	sn := snappy.Encode(nil, page)
	tests := []struct {
		name  string
		codec format.CompressionCodec
		data  []byte
		size  int
		want  string // "" = accepted
	}{
		{"zstd", format.Zstd, zs, 8000, ""},
		{"zstd past its header", format.Zstd, zs, 100, "decompressing it (ZSTD) to at most the 100 bytes"},
		{"gzip", format.Gzip, gz.Bytes(), 8000, ""},
		{"gzip past its header", format.Gzip, gz.Bytes(), 100, "to more than the 100 bytes its header claims"},
		{"snappy", format.Snappy, sn, 8000, ""},
		{"snappy claiming more than its header", format.Snappy, sn, 100, "its snappy block claims 8000 bytes, its header 100"},
		{"lz4", format.Lz4Raw, []byte{0xf0, 0}, 100, "its compression LZ4_RAW is not read here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := inflate(tt.codec, tt.data, tt.size)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, page, out)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
