package calib

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validFile is a minimal calibration file; the bad-input cases below edit
// it. Line numbers: [[table]] 10, rows key 15, rows 16 and 17.
const validFile = `schema = 1

[provenance]
gpu = "h200-sxm"
date = "2026-11-29"
command = "hand"
launch = "cuda-graph"
cache = "warm"

[[table]]
name = "ar"
op = "allreduce"
impl = "nccl"
columns = ["ranks", "bytes", "latency_us"]
rows = """
8,1024,20.5
8,4096,21.0
"""
`

func TestParseValid(t *testing.T) {
	f, err := Parse("f.toml", []byte(validFile))
	require.NoError(t, err)
	require.Len(t, f.Tables, 1)
	assert.Equal(t, [][]float64{{8, 1024, 20.5}, {8, 4096, 21}}, f.Tables[0].Rows)
	assert.Equal(t, []int{16, 17}, f.Tables[0].rowLines)
	assert.Equal(t, "cuda-graph", f.Effective(&f.Tables[0]).Launch, "inherited from the file")
}

func TestParseBadInput(t *testing.T) {
	tests := []struct {
		name     string
		old, new string // replace old by new in validFile
		want     string
	}{
		{"unknown schema", "schema = 1", "schema = 2", "f.toml: calibration schema 2 is not supported: this moecast reads schema 1"},
		{"no schema", "schema = 1", "", "schema is missing"},
		{"malformed TOML", `name = "ar"`, `name = "ar`, "f.toml:11:"},
		// Session 9: a file cut short read "but got '\x00' instead" (the
		// parser's end-of-input rune, not a byte of the file).
		{"cut in a table name", "[[table]]\nname = \"ar\"\nop = \"allreduce\"\nimpl = \"nccl\"\ncolumns = [\"ranks\", \"bytes\", \"latency_us\"]\nrows = \"\"\"\n8,1024,20.5\n8,4096,21.0\n\"\"\"\n", "[[tab", "f.toml:10: expected '.' or ']' to end table name, but got the end of the file instead"},
		{"unknown table key", `impl = "nccl"`, "impl = \"nccl\"\nfoo = 3", `f.toml:14: unknown key "table.foo"`},
		{"unknown provenance key", `cache = "warm"`, "cache = \"warm\"\ncolour = \"red\"", `f.toml:9: unknown key "provenance.colour"`},
		{"latency without unit", `"latency_us"]`, `"latency"]`, `f.toml:10: table 1 ("ar"): column "latency" has no unit`},
		{"unknown time unit", `"latency_us"]`, `"latency_ns"]`, `f.toml:10: table 1 ("ar"): column "latency_ns": unknown time unit`},
		{"negative time", "8,4096,21.0", "8,4096,-21.0", `f.toml:17: table "ar" row 2: latency_us must be positive`},
		{"zero time", "8,4096,21.0", "8,4096,0", `f.toml:17: table "ar" row 2: latency_us must be positive`},
		{"NaN time", "8,1024,20.5", "8,1024,nan", "f.toml:16: value 3 is NaN"},
		{"Inf size", "8,1024,20.5", "8,inf,20.5", "f.toml:16: value 2 is +Inf"},
		{"not a number", "8,1024,20.5", "8,1024,fast", `f.toml:16: value 3 "fast" is not a number`},
		{"short row", "8,1024,20.5", "8,1024", "f.toml:16: row has 2 values, the table has 3 columns"},
		{"fractional ranks", "8,1024,20.5", "7.5,1024,20.5", `f.toml:16: table "ar" row 1: ranks must be a positive integer`},
		{"duplicate point", "8,4096,21.0", "8,1024,21.0", `f.toml:17: table "ar" row 2: point ranks=8 bytes=1024 is measured twice (also row 1)`},
		{"missing column", `"bytes", `, "", `f.toml:10: table 1 ("ar"): column "bytes" is missing`},
		{"unknown column", `"bytes", `, `"bytes", "colour", `, `column "colour" is unknown for op allreduce`},
		{"unknown op", `op = "allreduce"`, `op = "broadcast"`, `f.toml:10: table 1 ("ar"): op "broadcast" is unknown`},
		{"missing impl", `impl = "nccl"`, "", `f.toml:10: table 1 ("ar"): op allreduce: key impl is missing`},
		{"missing launch", `launch = "cuda-graph"`, "", `f.toml:10: table 1 ("ar"): provenance: launch is missing`},
		{"bad cache", `cache = "warm"`, `cache = "hot"`, `provenance: cache "hot"`},
		{"missing gpu", `gpu = "h200-sxm"`, "", "provenance: gpu is missing"},
		{"no source", `command = "hand"`, "", "provenance: needs source or command"},
		{"no rows", "8,1024,20.5\n8,4096,21.0\n", "", "f.toml:15: table has no rows"},
		{"wrong type", `impl = "nccl"`, `impl = 3`, "f.toml:13:"},
		{"missing name", `name = "ar"`, "", `f.toml:10: table 1 (""): name is missing`},
		{"unknown impl", `impl = "nccl"`, `impl = "magic"`, `f.toml:10: table 1 ("ar"): op allreduce: key impl "magic" is unknown (known: nccl, vllm`},
		{"unknown mode", `impl = "nccl"`, "impl = \"nccl\"\nmode = \"lazy\"", `f.toml:10: table 1 ("ar"): op allreduce: key mode "lazy"`},
		{"elementwise with keys", "op = \"allreduce\"\nimpl = \"nccl\"\ncolumns = [\"ranks\", \"bytes\", \"latency_us\"]", "op = \"elementwise\"\nimpl = \"nccl\"\ncolumns = [\"bytes\", \"latency_us\"]",
			`f.toml:10: table 1 ("ar"): op elementwise: op elementwise takes no keys`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, validFile, tt.old)
			src := strings.Replace(validFile, tt.old, tt.new, 1)
			_, err := Parse("f.toml", []byte(src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one-line errors")
		})
	}
}

// Key values a lookup would never match are refused at load (a table with
// impl = "magic" used to pass calib show and be silently ignored).
func TestParseUnknownKeyValues(t *testing.T) {
	head := "schema = 1\n[provenance]\ngpu = \"h200-sxm\"\ndate = \"2026-11-29\"\ncommand = \"hand\"\nlaunch = \"cuda-graph\"\ncache = \"warm\"\n\n[[table]]\nname = \"t\"\n"
	tests := []struct {
		name, table, want string
	}{
		{"moe quant", "op = \"moe\"\ndtype = \"int3\"\ndistribution = \"balanced\"\nexperts = 8\ntopk = 2\nhidden = 64\ninter = 32\ncolumns = [\"moe_tp\", \"ep\", \"tokens\", \"latency_us\"]\nrows = \"1,1,1,5\"\n",
			`f.toml:9: table 1 ("t"): op moe: key dtype "int3" is unknown (known: int4_wo, fp8_block, fp8, nvfp4, mxfp4, mxfp4_mxfp8, bf16)`},
		{"moe distribution", "op = \"moe\"\ndtype = \"int4_wo\"\ndistribution = \"zipf\"\nexperts = 8\ntopk = 2\nhidden = 64\ninter = 32\ncolumns = [\"moe_tp\", \"ep\", \"tokens\", \"latency_us\"]\nrows = \"1,1,1,5\"\n",
			`f.toml:9: table 1 ("t"): op moe: key distribution "zipf" is unknown`},
		{"mla kv dtype", "op = \"mla\"\ndtype = \"bf16\"\nkv_dtype = \"int8\"\nkv_lora_rank = 512\nqk_rope_dim = 64\ncolumns = [\"heads\", \"batch\", \"kv_len\", \"latency_us\"]\nrows = \"8,1,1,5\"\n",
			`f.toml:9: table 1 ("t"): op mla: key kv_dtype "int8" is unknown (known: bf16, fp8)`},
		{"gqa kv dtype", "op = \"gqa\"\nkv_dtype = \"fp4\"\nhead_dim = 128\ncolumns = [\"heads\", \"kv_heads\", \"batch\", \"kv_len\", \"latency_us\"]\nrows = \"8,1,1,1,5\"\n",
			`op gqa: key kv_dtype "fp4" is unknown`},
		{"gemm dtype", "op = \"gemm\"\ndtype = \"magic\"\ncolumns = [\"n\", \"k\", \"m\", \"latency_us\"]\nrows = \"8,8,1,5\"\n",
			`op gemm: key dtype "magic" is not a weight format name`},
		{"ep impl", "op = \"ep\"\nimpl = \"deepep\"\nphase = \"dispatch\"\ncolumns = [\"hidden\", \"topk\", \"experts\", \"ranks\", \"tokens_per_rank\", \"latency_us\"]\nrows = \"64,2,8,8,1,5\"\n",
			`op ep: key impl "deepep" is unknown (known: deepep_ll, deepep_normal)`},
		{"elementwise zero bytes", "op = \"elementwise\"\ncolumns = [\"bytes\", \"latency_us\"]\nrows = \"\"\"\n1024,5\n0,5\n\"\"\"\n",
			`f.toml:15: table "t" row 2: bytes must be positive, got 0`},
		{"elementwise point twice", "op = \"elementwise\"\ncolumns = [\"bytes\", \"latency_us\"]\nrows = \"\"\"\n1024,5\n1024,6\n\"\"\"\n",
			`f.toml:15: table "t" row 2: point bytes=1024 is measured twice (also row 1)`},
		{"elementwise unknown column", "op = \"elementwise\"\ncolumns = [\"tokens\", \"latency_us\"]\nrows = \"1024,5\"\n",
			`f.toml:9: table 1 ("t"): column "tokens" is unknown for op elementwise (columns: bytes, latency_us)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.toml", []byte(head+tt.table))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// The known values load.
	for _, ok := range []string{
		"op = \"gemm\"\ndtype = \"fp8-b128x128\"\ncolumns = [\"n\", \"k\", \"m\", \"latency_us\"]\nrows = \"8,8,1,5\"\n",
		"op = \"elementwise\"\ncolumns = [\"bytes\", \"latency_us\"]\nrows = \"131072,5.5\"\n",
		"op = \"gemm\"\ndtype = \"int4-g32\"\ncolumns = [\"n\", \"k\", \"m\", \"latency_us\"]\nrows = \"8,8,1,5\"\n",
		"op = \"moe\"\ndtype = \"nvfp4\"\ndistribution = \"power_law_1.01\"\nexperts = 8\ntopk = 2\nhidden = 64\ninter = 32\ncolumns = [\"moe_tp\", \"ep\", \"tokens\", \"latency_us\"]\nrows = \"1,1,1,5\"\n",
	} {
		_, err := Parse("f.toml", []byte(head+ok))
		assert.NoError(t, err, ok)
	}
}

func TestParseDuplicateTableNames(t *testing.T) {
	src := validFile + "\n[[table]]" + strings.SplitN(validFile, "[[table]]", 2)[1]
	_, err := Parse("f.toml", []byte(src))
	assert.ErrorContains(t, err, `f.toml:20: table 2 ("ar"): duplicate table name (also table 1)`)
}

func TestNCCLTestsBadInput(t *testing.T) {
	head := "# Collective test starting: all_reduce_perf\n" +
		"#  Rank  0 Group  0 Pid  1 on n1 device  0 [0x18] NVIDIA H100 80GB HBM3\n" +
		"#  Rank  1 Group  0 Pid  1 on n1 device  1 [0x2a] NVIDIA H100 80GB HBM3\n" +
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" +
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
	good := "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.10   52.17   52.17      0\n"
	tests := []struct {
		name, name2, body, want string
	}{
		{"wrong results", "a.txt", head + strings.Replace(good, "52.43      0", "52.43      3", 1), "a.txt:6: out-of-place #wrong = 3"},
		{"in-place wrong", "a.txt", head + strings.Replace(good, "52.17      0", "52.17      1", 1), "a.txt:6: in-place #wrong = 1"},
		{"time in ms", "a.txt", strings.Replace(head, "(us)", "(ms)", 1) + good, "a.txt:5: time unit (ms)"},
		{"time not in us", "a.txt", head + strings.Replace(good, "20.00", "0.02", 1), "a.txt:6: out-of-place algbw 52.43 GB/s does not match size/time"},
		{"negative time", "a.txt", head + strings.Replace(good, "20.00   52.43", "-20.0   52.43", 1), "a.txt:6: out-of-place time -20.0 us must be positive"},
		{"NaN time", "a.txt", head + strings.Replace(good, "20.00", "nan", 1), "a.txt:6: out-of-place time \"nan\" is not a number"},
		{"short row", "a.txt", head + "1048576 262144 float sum -1 20.00\n", "a.txt:6: data row has 6 fields"},
		{"bad size", "a.txt", head + strings.Replace(good, "1048576", "1e6x", 1), "a.txt:6: size(B) \"1e6x\" is not a positive integer"},
		{"duplicate size", "a.txt", head + good + good, "a.txt:7: size 1048576 B measured twice (also line 6)"},
		{"unknown collective", "a.txt", strings.Replace(head, "all_reduce_perf", "broadcast_perf", 1) + good, "a.txt:1: collective \"broadcast_perf\" is not supported"},
		{"no collective", "x.txt", strings.SplitN(head, "\n", 2)[1] + good, "x.txt: cannot tell the collective"},
		{"no ranks", "a.txt", "# Collective test starting: all_reduce_perf\n" + good, "a.txt: cannot tell the rank count"},
		{"no rows", "a.txt", head, "a.txt: no data rows"},
		{"out of bounds values", "a.txt", head + good + "# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 52.3\n", "a.txt:7: 2 out-of-bounds values: the run failed its checks"},
		{"fractional size", "a.txt", head + strings.Replace(good, "1048576 ", "512.5 ", 1), "a.txt:6: size(B) \"512.5\" is not a positive integer"},
		{"huge size", "a.txt", head + strings.Replace(good, "1048576 ", "99999999999999999999999 ", 1), "a.txt:6: size(B) 99999999999999999999999 is out of range"},
		{"size above 2^53", "a.txt", head + strings.Replace(good, "1048576 ", "9007199254740993 ", 1), "a.txt:6: size(B) 9007199254740993 is out of range"},
		{"line too long", "a.txt", head + "#" + strings.Repeat("x", maxLine+10) + "\n" + good, "a.txt:6: line longer than 1048576 bytes: not nccl-tests output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseNCCLTests(tt.name2, strings.NewReader(tt.body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	run, err := parseNCCLTests("a.txt", strings.NewReader(head+good+"# Out of bounds values : 0 OK\n"))
	require.NoError(t, err)
	assert.Equal(t, 2, run.ranks)
	assert.Equal(t, "allreduce", run.op)
	assert.Equal(t, []ncclRow{{size: 1048576, oop: 20, inp: 20.1, line: 6, hasInPlace: true}}, run.rows)
	// The collective from the file name when the start line is missing;
	// N/A in #wrong (validation off) is accepted.
	run, err = parseNCCLTests("all_gather_perf.log", strings.NewReader(strings.SplitN(head, "\n", 2)[1]+strings.ReplaceAll(good, "      0", "    N/A")))
	require.NoError(t, err)
	assert.Equal(t, "allgather", run.op)

	// No in-place run: the in-place column is left out of the table.
	noIP := strings.Replace(head, "all_reduce_perf", "alltoall_perf", 1) +
		"     1048576        262144     float    none      -1    20.00   52.43   45.88      0      N/A     N/A     N/A    N/A\n"
	run, err = parseNCCLTests("a.txt", strings.NewReader(noIP))
	require.NoError(t, err)
	assert.False(t, run.rows[0].hasInPlace)
	f, err := buildNCCLFile([]*ncclRun{run}, NCCLTestsOptions{GPU: "g", Date: "d", Command: "c"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ranks", "bytes", "latency_us"}, f.Tables[0].Columns)
	assert.Equal(t, [][]float64{{2, 1048576, 20}}, f.Tables[0].Rows)
}

func TestNCCLTestsOptions(t *testing.T) {
	files := []string{"testdata/nccl-tests/all_reduce_perf_8xh100.txt"}
	tests := []struct {
		name string
		opt  NCCLTestsOptions
		want string
	}{
		{"date not YYYY-MM-DD", NCCLTestsOptions{Date: "29/11/2026"}, `nccl-tests: --date: date "29/11/2026": want YYYY-MM-DD`},
		{"date not a date", NCCLTestsOptions{Date: "2026-13-45"}, `date "2026-13-45" is not a calendar date`},
		{"unknown gpu", NCCLTestsOptions{GPU: "h300"}, `nccl-tests: --gpu "h300" is not a GPU preset (`},
		{"unknown fabric", NCCLTestsOptions{Fabric: "carrier-pigeon"}, `nccl-tests: --fabric "carrier-pigeon" is not a fabric preset (`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Command = "t"
			_, err := ImportNCCLTests(files, tt.opt)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	f, err := ImportNCCLTests(files, NCCLTestsOptions{GPU: "h100-sxm", Fabric: "nvlink4", Date: "2026-11-29", Command: "t"})
	require.NoError(t, err)
	assert.Equal(t, "nvlink4", f.Provenance.Fabric)
	assert.Empty(t, f.Warnings)
	// Without --gpu the device name from the output maps to its preset
	// (it was kept as the GPU, which no scenario matches), and is kept as
	// the label; without --fabric a warning says the tables apply nowhere.
	f, err = ImportNCCLTests(files, NCCLTestsOptions{Command: "t"})
	require.NoError(t, err)
	assert.Equal(t, "h100-sxm", f.Provenance.GPU)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", f.Provenance.GPULabel)
	require.Len(t, f.Warnings, 1)
	assert.Contains(t, f.Warnings[0], `nccl-tests: the output does not name the fabric and --fabric was not given: it is recorded as "unknown"`)
}

// TestNCCLTestsWarnings: a device no preset matches is said, and so is a
// missing fabric; a row faster than the fabric allows is refused at its
// line in the nccl-tests file.
func TestNCCLTestsWarnings(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/nccl-tests/all_reduce_perf_8xh100.txt")
	require.NoError(t, err)
	a100 := filepath.Join(dir, "a100.txt")
	require.NoError(t, os.WriteFile(a100, []byte(strings.ReplaceAll(string(src), "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB")), 0o644))
	f, err := ImportNCCLTests([]string{a100}, NCCLTestsOptions{Fabric: "nvlink4", Command: "t"})
	require.NoError(t, err)
	assert.Equal(t, "NVIDIA A100-SXM4-80GB", f.Provenance.GPU)
	require.Len(t, f.Warnings, 1)
	assert.Contains(t, f.Warnings[0], `nccl-tests: device "NVIDIA A100-SXM4-80GB" matches no GPU preset (`)

	// The same H100 NVLink numbers labelled as a PCIe box: 512 MiB in 2.1 ms
	// is 254 GB/s, beyond a PCIe Gen5 link.
	_, err = ImportNCCLTests([]string{"testdata/nccl-tests/all_reduce_perf_8xh100.txt"}, NCCLTestsOptions{GPU: "rtx-pro-6000-server", Fabric: "pcie-gen5", Command: "t"})
	require.Error(t, err)
	assert.Regexp(t, `^testdata/nccl-tests/all_reduce_perf_8xh100.txt:\d+: allreduce at 8 ranks, \d+ B: latency_us [0-9.]+ is below the physical floor`, err.Error())
	assert.NotContains(t, err.Error(), "nccl-tests: nccl-tests")
}

// Importing runs of several rank counts records every count, not only the
// largest (gpu_count).
func TestNCCLTestsRankCounts(t *testing.T) {
	mk := func(ranks int) *ncclRun {
		return &ncclRun{name: "all_reduce_perf.txt", op: "allreduce", ranks: ranks, rows: []ncclRow{{size: 1024, oop: 10, line: 1}, {size: 4096, oop: 12, line: 2}}}
	}
	f, err := buildNCCLFile([]*ncclRun{mk(2), mk(8), mk(4)}, NCCLTestsOptions{GPU: "h100-sxm", Date: "2026-11-29", Command: "t"})
	require.NoError(t, err)
	assert.Equal(t, 8, f.Provenance.GPUCount)
	assert.Contains(t, f.Provenance.Method, "rank counts measured: 2, 4, 8")
}

func TestNCCLTestsDuplicateAcrossFiles(t *testing.T) {
	_, err := ImportNCCLTests([]string{"testdata/nccl-tests/all_reduce_perf_8xh100.txt", "testdata/nccl-tests/all_reduce_perf_8xh100.txt"},
		NCCLTestsOptions{GPU: "h100-sxm", Date: "2026-11-29", Command: "t"})
	assert.ErrorContains(t, err, "testdata/nccl-tests/all_reduce_perf_8xh100.txt:20: allreduce at 8 ranks, 512 B also measured at testdata/nccl-tests/all_reduce_perf_8xh100.txt:20")
}

func TestPerfDBBadInput(t *testing.T) {
	moeHead := "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\n"
	moeRow := "VLLM,0.24.0,NVIDIA H200,moe,k,int4_wo,1,7168,2048,8,384,1,8,balanced,0.05\n"
	ncclHead := "framework,version,device,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\n"
	ncclRow := "TRTLLM,2.29.2,NVIDIA H200,all_reduce,NCCL,half,8,256,0.016\n"
	tests := []struct {
		name, kind, body, want string
	}{
		{"missing column", "moe", strings.Replace(moeHead, ",latency", "", 1) + moeRow, `moe.csv:1: column "latency" is missing`},
		{"latency with unit", "moe", strings.Replace(moeHead, ",latency", ",latency_us", 1) + moeRow, `moe.csv:1: column "latency_us"`},
		{"negative latency", "moe", moeHead + moeRow + strings.Replace(moeRow, ",1,7168", ",2,7168", 1)[:len(moeRow)-5] + "-0.05\n", "moe.csv:3: latency must be positive, got -0.05"},
		{"NaN latency", "moe", moeHead + strings.Replace(moeRow, "0.05", "NaN", 1), "moe.csv:2: latency is NaN"},
		{"text latency", "moe", moeHead + strings.Replace(moeRow, "0.05", "fast", 1), `moe.csv:2: latency "fast" is not a number`},
		{"zero tokens", "moe", moeHead + strings.Replace(moeRow, ",1,7168", ",0,7168", 1), "moe.csv:2: num_tokens must be positive"},
		{"duplicate point", "moe", moeHead + moeRow + moeRow, "moe.csv:3: duplicate point (tokens 1, moe_tp 1, ep 8) (first at line 2)"},
		{"field count", "moe", moeHead + "VLLM,0.24.0\n", "moe.csv:2: wrong number of fields"},
		{"bare quote", "nccl", ncclHead + ncclRow + "TRTLLM,2.29.2,NVIDIA \"H200,all_reduce,NCCL,half,8,512,0.016\n", "nccl.csv:3:"},
		{"unknown collective", "nccl", ncclHead + strings.Replace(ncclRow, "all_reduce", "broadcast", 1), `nccl.csv:2: op_name "broadcast" is not a supported collective`},
		{"empty", "nccl", "", "nccl.csv:1: empty file"},
		{"inf latency", "nccl", ncclHead + strings.Replace(ncclRow, "0.016", "inf", 1), "nccl.csv:2: latency is inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im := &perfdbImport{opt: perfdbOpts("h200-sxm"), gpu: "h200-sxm", l2: 60 << 20, sys: systemInfo{gpusPerNode: 8, fabric: "nvlink4"},
				file: &File{Schema: Schema}}
			err := im.readFrom(perfdbFile{rel: tt.kind + ".csv", kind: tt.kind, engine: "vllm", engVer: "0.24.0"}, strings.NewReader(tt.body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, im.file.Tables, "nothing kept from a failed file")
		})
	}
}

// An error the table constructors find after the CSV checks (a one-rank
// NCCL row) names the CSV file and line once, not "perfdb: perfdb: table
// ...: row 1".
func TestPerfDBBuildErrorPosition(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "comm"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "systems"), 0o755))
	sys, err := os.ReadFile("testdata/perfdb/systems/h200_sxm.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "systems", "h200_sxm.yaml"), sys, 0o644))
	csv := "framework,version,device,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\n" +
		"TRTLLM,2.29.2,NVIDIA H200,all_reduce,NCCL,half,8,256,0.016\n" +
		"TRTLLM,2.29.2,NVIDIA H200,all_reduce,NCCL,half,1,256,0.016\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "comm", "h200_sxm__nccl_2.29.2_nccl_perf.csv"), []byte(csv), 0o644))
	_, err = ImportPerfDB(dir, perfdbOpts("h200-sxm"))
	require.Error(t, err)
	msg := err.Error()
	assert.Equal(t, 1, strings.Count(msg, "perfdb:"), msg)
	assert.Contains(t, msg, `perfdb: comm/h200_sxm__nccl_2.29.2_nccl_perf.csv:3: table "nccl.allreduce": row 1: ranks must be at least 2`)

	_, err = ImportPerfDB(dir, PerfDBOptions{GPU: "h200-sxm", Date: "Aug 2026", Command: "t"})
	assert.ErrorContains(t, err, `perfdb: --date: date "Aug 2026": want YYYY-MM-DD`)
}

// A row error found by the table constructors in a loaded file names the
// row's line.
func TestParseBuildErrorPosition(t *testing.T) {
	src := strings.Replace(validFile, "8,1024,20.5", "1,1024,20.5", 1)
	_, err := Parse("f.toml", []byte(src))
	assert.ErrorContains(t, err, `f.toml:16: table "ar": row 1: ranks must be at least 2`)
}

// The MoE monotone envelope is stated once in the table's corrections,
// inheriting the file's, and stays once through write and load.
func TestMoEEnvelopeCorrection(t *testing.T) {
	src := "schema = 1\n[provenance]\ngpu = \"h200-sxm\"\ndate = \"2026-11-29\"\ncommand = \"hand\"\nlaunch = \"cuda-graph\"\ncache = \"warm\"\n" +
		"corrections = [\"file-level\"]\n\n[[table]]\nname = \"m\"\nop = \"moe\"\ndtype = \"fp8_block\"\ndistribution = \"uniform\"\n" +
		"experts = 256\ntopk = 8\nhidden = 7168\ninter = 2048\ncolumns = [\"moe_tp\", \"ep\", \"tokens\", \"latency_us\"]\n" +
		"rows = \"\"\"\n8,1,768,565\n8,1,1024,473\n8,1,2048,700\n\"\"\"\n"
	f, err := Parse("f.toml", []byte(src))
	require.NoError(t, err)
	want := []string{"file-level", "monotone envelope at load: within each (moe_tp, ep) series latency is made non-decreasing in tokens (running max); rows 2 raised to the largest latency measured at fewer tokens"}
	assert.Equal(t, want, f.Effective(&f.Tables[0]).Corrections)
	assert.Equal(t, [][]float64{{8, 1, 768, 565}, {8, 1, 1024, 473}, {8, 1, 2048, 700}}, f.Tables[0].Rows, "the file keeps the measured values")
	g := roundTrip(t, f)
	assert.Equal(t, want, g.Effective(&g.Tables[0]).Corrections)
}

// TestPerfDBNoSystemsFile: without systems/<gpu>.yaml the import keeps
// going, and says what that costs (before, nothing was said).
func TestPerfDBNoSystemsFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "comm"), 0o755))
	src, err := os.ReadFile("testdata/perfdb/comm/h200_sxm__nccl_2.29.2_nccl_perf.csv")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "comm", "h200_sxm__nccl_2.29.2_nccl_perf.csv"), src, 0o644))
	f, err := ImportPerfDB(dir, perfdbOpts("h200-sxm"))
	require.NoError(t, err)
	assert.Equal(t, "unknown", f.Provenance.Fabric)
	require.Len(t, f.Warnings, 1)
	assert.Contains(t, f.Warnings[0], "no systems file "+filepath.Join("systems", "h200_sxm.yaml")+`: the fabric is recorded as "unknown"`)

	full, err := ImportPerfDB("testdata/perfdb", perfdbOpts("h200-sxm"))
	require.NoError(t, err)
	assert.Empty(t, full.Warnings)
}
