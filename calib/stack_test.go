package calib

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
)

// TestStack: a later file's table replaces the earlier one with the same op
// and keys and answers first; tables it does not replace stay, each with
// its own file's provenance.
func TestStack(t *testing.T) {
	data, err := embeddedFile("h200-sxm") // the perf database's file alone
	require.NoError(t, err)
	perfdb, err := Parse("embedded:h200-sxm", data)
	require.NoError(t, err)
	moe := Table{Name: "moe.mine.int4_wo.e384.uniform", Op: "moe",
		Keys:    Keys{Dtype: "int4_wo", Distribution: "uniform", Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048},
		Columns: []string{"moe_tp", "ep", "tokens", "latency_us"},
		Rows:    [][]float64{{8, 1, 1, 50}, {8, 1, 64, 90}}}
	// Same op and keys as one of perfdb's all-reduce tables: replaces it.
	var ar Table
	for _, tb := range perfdb.Tables {
		if tb.Op == "allreduce" && tb.Keys.Impl == "nccl" {
			ar = tb
		}
	}
	require.NotEmpty(t, ar.Name)
	ar.Name, ar.Provenance = "nccl.allreduce.mine", Provenance{Fabric: "nvlink4"}
	ar.Rows = [][]float64{{8, 1 << 20, 40}}
	mine := &File{Schema: Schema, Name: "mine.toml", Tables: []Table{moe, ar},
		Provenance: Provenance{GPU: "h200-sxm", Date: "2026-12-01", Command: "moecast calib gpu", Launch: "cuda-graph", Cache: "flushed", Method: "mine"}}

	st, err := Stack("embedded:h200-sxm", perfdb, mine)
	require.NoError(t, err)
	assert.Equal(t, "h200-sxm", st.Provenance.GPU)
	assert.Empty(t, st.Provenance.Date, "the stacked file has no provenance of its own beyond the GPU")
	assert.Len(t, st.Tables, len(perfdb.Tables)+1, "one table replaced, one added")
	assert.Equal(t, "moe.mine.int4_wo.e384.uniform", st.Tables[0].Name, "the later file's tables first")
	p := st.Effective(&st.Tables[0])
	assert.Equal(t, "mine", p.Method)
	assert.Empty(t, p.License, "the perf database's license does not leak into a table that is not its")
	for i := range st.Tables {
		tb := &st.Tables[i]
		assert.NotEqual(t, "nccl.allreduce", tb.Name, "replaced")
		if tb.Op == "moe" && tb.Keys.Distribution == "balanced" {
			assert.Equal(t, "Apache-2.0", st.Effective(tb).License, "perfdb tables keep their provenance")
		}
	}
	e, ok := st.KernelTables().MoE(kernels.MoEShape{Tokens: 1, GlobalTokens: 1, Hidden: 7168, Inter: 256, Weight: dtype.INT4G32,
		Experts: 384, TopK: 8, MoETP: 8, EP: 1})
	require.True(t, ok)
	assert.InDelta(t, 50e-6, float64(e.Time), 1e-12)
	assert.Contains(t, e.Source.Table, "embedded:h200-sxm#moe.mine")

	_, err = Stack("x", mine, mine)
	assert.NoError(t, err, "the same tables again replace themselves")
	dup := *mine
	dup.Tables = []Table{moe}
	dup.Tables[0].Keys.TopK = 6
	_, err = Stack("x", mine, &dup)
	assert.ErrorContains(t, err, `table "moe.mine.int4_wo.e384.uniform" of mine.toml is also in an earlier file`)
}

// TestStackGPU: the stacked file names the GPU when every table is for
// the same one, whichever file comes first (a nil one included), and none
// when two tables of the first file differ.
func TestStackGPU(t *testing.T) {
	experts := map[string]int{"a": 128, "b": 256, "c": 384}
	tb := func(name, gpu string) Table {
		return Table{Name: name, Op: "moe", Keys: Keys{Dtype: "int4_wo", Distribution: "uniform", Experts: experts[name], TopK: 8, Hidden: 7168, Inter: 2048},
			Columns: []string{"moe_tp", "ep", "tokens", "latency_us"}, Rows: [][]float64{{8, 1, 1, 50}, {8, 1, 64, 90}}, Provenance: Provenance{GPU: gpu, Date: "2026-12-01", Command: "t", Launch: "cuda-graph", Cache: "warm", Method: "t"}}
	}
	one := &File{Schema: Schema, Name: "one.toml", Tables: []Table{tb("a", "h200-sxm")}}
	st, err := Stack("x", nil, one)
	require.NoError(t, err)
	assert.Equal(t, "h200-sxm", st.Provenance.GPU, "a nil file first")
	mixed := &File{Schema: Schema, Name: "mixed.toml", Tables: []Table{tb("a", "h200-sxm"), tb("b", "h100-sxm")}}
	st, err = Stack("x", mixed)
	require.NoError(t, err)
	assert.Empty(t, st.Provenance.GPU, "the first file's tables are for two GPUs")
	st, err = Stack("x", mixed, &File{Schema: Schema, Name: "c.toml", Tables: []Table{tb("c", "h100-sxm")}})
	require.NoError(t, err)
	assert.Empty(t, st.Provenance.GPU)
}
