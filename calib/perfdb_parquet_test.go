package calib

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportPerfDBTree imports aiconfigurator's parquet tree directly
// (testdata/perfdbtree: upstream files, unmodified): the newest version of
// each table and framework, the NVL72 fabric from gb200.yaml, each
// table's source naming its parquet file.
func TestImportPerfDBTree(t *testing.T) {
	f, err := ImportPerfDB("testdata/perfdbtree", PerfDBOptions{GPU: "gb200", Source: "aic", License: "Apache-2.0", Date: "2026-08-21"})
	require.NoError(t, err)
	byName := map[string]Table{}
	for _, tb := range f.Tables {
		byName[tb.Name] = tb
	}
	tests := []struct {
		name, file, engVer string
	}{
		{"nccl.allreduce", "data/gb200/comm/nccl/2.29.2/nccl_perf.parquet", "2.29.2"},
		{"allreduce.vllm.graph", "data/gb200/comm/vllm/0.24.0/custom_allreduce_perf.parquet", "0.24.0"},
		{"allreduce.sglang.graph", "data/gb200/comm/sglang/0.5.14/custom_allreduce_perf.parquet", "0.5.14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, ok := byName[tt.name]
			require.True(t, ok, "tables: %v", tableNames(f))
			eff := f.Effective(&tb)
			assert.Contains(t, eff.Source, "perfdb/"+tt.file)
			assert.Equal(t, tt.engVer, eff.EngineVersion)
			assert.Equal(t, "nvlink5-nvl72", eff.Fabric)
			assert.Equal(t, 4, eff.GPUCount, "num_gpus_per_node of gb200.yaml")
			assert.NotEmpty(t, tb.Rows)
		})
	}
	for _, tb := range f.Tables {
		assert.NotContains(t, f.Effective(&tb).Source, "0.19.0", "an older release imported: %s", tb.Name)
	}
}

func tableNames(f *File) []string {
	var s []string
	for _, t := range f.Tables {
		s = append(s, t.Name)
	}
	return s
}

// TestParquetCSV: the parquet reader gives the header of the schema and
// one CSV line per row.
func TestParquetCSV(t *testing.T) {
	b, err := parquetCSV("testdata/perfdbtree/data/gb200/comm/vllm/0.24.0/custom_allreduce_perf.parquet", "x.parquet")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	assert.Equal(t, "framework,version,device,op_name,kernel_source,allreduce_dtype,num_gpus,message_size,latency,backend", lines[0])
	assert.Greater(t, len(lines), 10)
	assert.True(t, strings.HasPrefix(lines[1], "vLLM,0.24.0,NVIDIA GB200,all_reduce,"), lines[1])
}

func TestParquetCSVErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.parquet")
	require.NoError(t, os.WriteFile(bad, []byte("PAR1 this is not parquet"), 0o644))
	tests := []struct{ name, path, want string }{
		{"not parquet", bad, "data/x/bad.parquet: not a readable parquet file"},
		{"missing", filepath.Join(dir, "none.parquet"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parquetCSV(tt.path, "data/x/bad.parquet")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestVersionLess(t *testing.T) {
	tests := []struct {
		a, b string
		less bool
	}{
		{"0.5.9", "0.5.14", true},
		{"0.5.14", "0.5.9", false},
		{"0.19.0", "0.24.0", true},
		{"1.3.0rc10", "1.3.0rc20", true},
		{"1.3.0rc20", "1.3.0", true},
		{"1.3.0", "1.3.0rc20", false},
		{"2.27", "2.29.2", true},
		{"0.5.6.post2", "0.5.12", true},
		{"0.24.0", "0.24.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.a+"<"+tt.b, func(t *testing.T) { assert.Equal(t, tt.less, versionLess(tt.a, tt.b)) })
	}
}

// TestImportPerfDBTreeGQA: each decode-attention row becomes a gqa row at
// kv_len = isl + step, latency ms -> us, in the table of its head_dim and
// KV dtype.
func TestImportPerfDBTreeGQA(t *testing.T) {
	const file = "testdata/perfdbtree/data/gb200/attention/vllm/0.14.0/generation_attention_perf.parquet"
	b, err := parquetCSV(file, "x.parquet")
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	f, err := ImportPerfDB("testdata/perfdbtree", PerfDBOptions{GPU: "gb200", Date: "2026-08-21"})
	require.NoError(t, err)
	atoi := func(s string) float64 { v, err := strconv.Atoi(s); require.NoError(t, err); return float64(v) }
	for _, i := range []int{1, len(rows) / 2, len(rows) - 1} {
		r := rows[i]
		if w, ok := col["window_size"]; ok && r[w] != "0" {
			continue
		}
		kv := dtypeName(r[col["kv_cache_dtype"]])
		name := "gqa.vllm-0.14.0.d" + r[col["head_dim"]] + ".kv-" + kv
		var tb *Table
		for j := range f.Tables {
			if strings.HasPrefix(f.Tables[j].Name, name) {
				tb = &f.Tables[j]
			}
		}
		require.NotNil(t, tb, "table %s in %v", name, tableNames(f))
		lat, err := strconv.ParseFloat(r[col["latency"]], 64)
		require.NoError(t, err)
		want := []float64{atoi(r[col["num_heads"]]), atoi(r[col["num_key_value_heads"]]), atoi(r[col["batch_size"]]),
			atoi(r[col["isl"]]) + atoi(r[col["step"]])}
		found := false
		for _, row := range tb.Rows {
			if row[0] == want[0] && row[1] == want[1] && row[2] == want[2] && row[3] == want[3] {
				found = true
				assert.InDelta(t, lat*1e3, row[4], 1e-3, "row %d", i)
			}
		}
		assert.True(t, found, "row %d (%v) in %s", i, want, tb.Name)
	}
}
