package calib

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
)

// A prefill table's prefix may be 0 (a chunk with nothing cached); its
// keys and other columns are checked like any table's.
func TestParsePrefill(t *testing.T) {
	head := "schema = 1\n[provenance]\ngpu = \"h200-sxm\"\ndate = \"2026-12-02\"\ncommand = \"hand\"\nlaunch = \"cuda-graph\"\ncache = \"flushed\"\n\n[[table]]\nname = \"t\"\n"
	keys := "op = \"prefill\"\nkv_dtype = \"bf16\"\nhead_dim = 128\nv_head_dim = 128\n"
	cols := "columns = [\"heads\", \"kv_heads\", \"chunk\", \"prefix\", \"latency_us\"]\n"
	tests := []struct {
		name, table, want string
	}{
		{"loads, prefix 0", keys + cols + "rows = \"\"\"\n8,1,256,0,5\n8,1,256,8192,50\n\"\"\"\n", ""},
		{"loads with a window", "op = \"prefill\"\nkv_dtype = \"bf16\"\nhead_dim = 64\nv_head_dim = 64\nwindow = 128\n" + cols + "rows = \"8,1,256,0,5\"\n", ""},
		{"negative prefix", keys + cols + "rows = \"\"\"\n8,1,256,0,5\n8,1,256,-1,6\n\"\"\"\n",
			`table "t" row 2: prefix must be an integer >= 0, got -1`},
		{"zero chunk", keys + cols + "rows = \"8,1,0,0,5\"\n", `row 1: chunk must be a positive integer, got 0`},
		{"v_head_dim missing", "op = \"prefill\"\nkv_dtype = \"bf16\"\nhead_dim = 128\n" + cols + "rows = \"8,1,256,0,5\"\n",
			`op prefill: keys kv_dtype, head_dim and v_head_dim are required`},
		{"prefix column missing", keys + "columns = [\"heads\", \"kv_heads\", \"chunk\", \"latency_us\"]\nrows = \"8,1,256,5\"\n",
			`column "prefix" is missing`},
		{"kv dtype unknown", "op = \"prefill\"\nkv_dtype = \"fp4\"\nhead_dim = 128\nv_head_dim = 128\n" + cols + "rows = \"8,1,256,0,5\"\n",
			`op prefill: key kv_dtype "fp4" is unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("f.toml", []byte(head+tt.table))
			if tt.want == "" {
				require.NoError(t, err)
				kt, ok := f.KernelTables().(*kernels.Tables)
				require.True(t, ok)
				assert.Len(t, kt.Prefills, 1)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
