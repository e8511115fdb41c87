package calib

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
	tests := []struct {
		name string
		data []byte
		want string
	}{
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
			f, err := ImportPerfDB(treeWith(t, tt.data), perfdbOpts("gb200"))
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
