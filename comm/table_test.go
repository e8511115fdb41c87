package comm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

const us = unit.Microsecond

func arTable(t *testing.T, name, impl, mode string, scale float64) *Table {
	t.Helper()
	var pts []Point
	row := 0
	for _, r := range []int{2, 8} {
		for _, b := range []unit.Bytes{1024, 16384, 262144} {
			row++
			pts = append(pts, Point{Ranks: r, Bytes: b, Latency: unit.Seconds(scale*float64(r)) * us * unit.Seconds(math.Log2(float64(b))), Row: row})
		}
	}
	tb, err := NewTable(name, cost.AllReduce, impl, mode, pts)
	require.NoError(t, err)
	return tb
}

func TestTableExactBoundedClamped(t *testing.T) {
	tb := arTable(t, "f#ar", "nccl", "", 1)
	e, ok := tb.Lookup(8, 16384)
	require.True(t, ok)
	assert.Equal(t, 8*14*us, e.Time)
	assert.Equal(t, 5, e.Source.RowLo)
	assert.Equal(t, 5, e.Source.RowHi)
	assert.Equal(t, cost.Table, e.Source.Kind)
	assert.Equal(t, "f#ar", e.Source.Table)

	e, _ = tb.Lookup(8, 4096)
	assert.Greater(t, e.Time, 8*10*us)
	assert.Less(t, e.Time, 8*14*us)
	assert.Equal(t, 4, e.Source.RowLo)
	assert.Equal(t, 5, e.Source.RowHi)

	e, _ = tb.Lookup(2, 100)
	assert.Equal(t, 2*10*us, e.Time)
	assert.Equal(t, "clamped: bytes below the measured range", e.Source.Note)
	// Above the range: the last segment's log-log slope (log(18/14)/log(16)
	// < 1) is raised to 1, so the time scales with the bytes from the last
	// point: 36 us x 2^30/2^18.
	e, _ = tb.Lookup(2, 1<<30)
	assert.InDelta(t, float64(2*18*us*4096), float64(e.Time), 1e-15)
	assert.Equal(t, 2, e.Source.RowLo)
	assert.Equal(t, 3, e.Source.RowHi)
	assert.Contains(t, e.Source.Note, "extrapolated: bytes above the measured range")

	_, ok = tb.Lookup(4, 16384)
	assert.False(t, ok, "4 ranks were not measured")
}

// Above the measured range a collective is priced at no less than its last
// measured bandwidth (reviewer: a one-row 512 B table priced a 16 MB
// all-reduce at 6 us; Kimi's 1.34 GB logits all-gather at the 536 MB row).
func TestTableExtrapolatesAboveRange(t *testing.T) {
	tests := []struct {
		name  string
		pts   []Point
		query unit.Bytes
		want  unit.Seconds
		rowLo int
	}{
		{"one row: bandwidth of that row", []Point{{Ranks: 8, Bytes: 512, Latency: 6 * us, Row: 1}},
			16 << 20, 6 * us * 32768, 1},
		{"last segment slope < 1 raised to 1", []Point{
			{Ranks: 8, Bytes: 1 << 28, Latency: 1000 * us, Row: 1},
			{Ranks: 8, Bytes: 1 << 29, Latency: 1500 * us, Row: 2}},
			1 << 31, 1500 * us * 4, 1},
		{"last segment slope > 1 kept", []Point{
			{Ranks: 8, Bytes: 1 << 28, Latency: 1000 * us, Row: 1},
			{Ranks: 8, Bytes: 1 << 29, Latency: 4000 * us, Row: 2}},
			1 << 30, 16000 * us, 1},
		{"on the last point: exact", []Point{
			{Ranks: 8, Bytes: 1 << 28, Latency: 1000 * us, Row: 1},
			{Ranks: 8, Bytes: 1 << 29, Latency: 1500 * us, Row: 2}},
			1 << 29, 1500 * us, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := NewTable("f#ag", cost.AllGather, "nccl", "", tc.pts)
			require.NoError(t, err)
			e, ok := tb.Lookup(8, tc.query)
			require.True(t, ok)
			assert.InEpsilon(t, float64(tc.want), float64(e.Time), 1e-12)
			assert.Equal(t, tc.rowLo, e.Source.RowLo)
			assert.Equal(t, len(tc.pts), e.Source.RowHi)
		})
	}
}

func TestTableLOO(t *testing.T) {
	// Interior point of each rank series is x=16384 between 1024 and 262144:
	// log-log between (1024, 10r) and (262144, 18r) at t = 4/8 gives
	// sqrt(10*18) r = 13.416r against 14r: error 0.04169.
	tb := arTable(t, "f#ar", "nccl", "", 1)
	p90, n := tb.LOOError()
	assert.Equal(t, 2, n)
	want := (14 - math.Sqrt(180)) / 14
	assert.InDelta(t, want, p90, 1e-12)
	e, _ := tb.Lookup(2, 1024)
	assert.InDelta(t, float64(e.Time)*(1-want), float64(e.Lo), 1e-18)
	assert.InDelta(t, float64(e.Time)*(1+want), float64(e.Hi), 1e-18)
}

func TestTablesImplAndModeSelection(t *testing.T) {
	nccl := arTable(t, "f#nccl", "nccl", "", 3)
	eager := arTable(t, "f#vllm-eager", "vllm", "eager", 2)
	graph := arTable(t, "f#vllm-graph", "vllm", "graph", 1)
	ts := &Tables{Colls: []*Table{nccl, eager, graph}, Graphs: true}
	tests := []struct {
		name   string
		graphs bool
		impl   Impl
		table  string
		ok     bool
	}{
		{"nccl", true, NCCL, "f#nccl", true},
		{"auto in graphs is vLLM's graph table", true, Auto, "f#vllm-graph", true},
		{"auto eager is vLLM's eager table", false, Auto, "f#vllm-eager", true},
		{"oneshot is the engine's custom all-reduce", true, OneShot, "f#vllm-graph", true},
		{"twoshot eager", false, TwoShot, "f#vllm-eager", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Graphs = tt.graphs
			e, ok := ts.AllReduce(tt.impl, 8, 16384)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.table, e.Source.Table)
		})
	}
	_, ok := ts.AllGather(8, 16384)
	assert.False(t, ok, "no all-gather table")
	one := arTable(t, "f#oneshot", "oneshot", "", 5)
	ts.Colls = append(ts.Colls, one)
	e, ok := ts.AllReduce(OneShot, 8, 16384)
	require.True(t, ok)
	assert.Equal(t, "f#oneshot", e.Source.Table, "an exact kernel table wins over the engine's")
	only := &Tables{Colls: []*Table{nccl}}
	_, ok = only.AllReduce(TwoShot, 8, 16384)
	assert.False(t, ok, "NCCL rows never answer a custom all-reduce")
}

func TestTablesOtherCollectives(t *testing.T) {
	pts := []Point{{Ranks: 8, Bytes: 1e3, Latency: 20 * us, Row: 1}, {Ranks: 8, Bytes: 1e6, Latency: 40 * us, Row: 2}}
	ag, err := NewTable("f#ag", cost.AllGather, "nccl", "", pts)
	require.NoError(t, err)
	rs, err := NewTable("f#rs", cost.ReduceScatter, "nccl", "", pts)
	require.NoError(t, err)
	a2a, err := NewTable("f#a2a", cost.AllToAll, "nccl", "", pts)
	require.NoError(t, err)
	ts := &Tables{Colls: []*Table{ag, rs, a2a}}
	e, ok := ts.AllGather(8, 1e6)
	require.True(t, ok)
	assert.Equal(t, "f#ag", e.Source.Table)
	e, _ = ts.ReduceScatter(8, 1e3)
	assert.Equal(t, "f#rs", e.Source.Table)
	e, _ = ts.AllToAll(8, 31622.7766)
	assert.Equal(t, "f#a2a", e.Source.Table)
	assert.InEpsilon(t, 20e-6*math.Sqrt(2), float64(e.Time), 1e-6)
	_, ok = ts.AllReduce(NCCL, 8, 1e3)
	assert.False(t, ok)
}

func TestEPTable(t *testing.T) {
	tb, err := NewEPTable("f#ep", EPKey{Phase: "dispatch", Impl: "deepep_ll"}, []EPPoint{
		{Hidden: 7168, TopK: 8, Experts: 256, Ranks: 8, TokensPerRank: 1, Latency: 11.9 * us, Row: 1},
		{Hidden: 7168, TopK: 8, Experts: 256, Ranks: 8, TokensPerRank: 8, Latency: 12.3 * us, Row: 2},
		{Hidden: 2048, TopK: 8, Experts: 256, Ranks: 8, TokensPerRank: 8, Latency: 9 * us, Row: 3},
	})
	require.NoError(t, err)
	ts := &Tables{EPs: []*EPTable{tb}}
	e, ok := ts.EP("", "dispatch", 8, 8, 7168, 8, 256)
	require.True(t, ok)
	assert.Equal(t, 12.3*us, e.Time)
	e, ok = ts.EP("", "dispatch", 8, 8, 2048, 8, 256)
	require.True(t, ok)
	assert.Equal(t, 3, e.Source.RowLo)
	_, ok = ts.EP("", "combine", 8, 8, 7168, 8, 256)
	assert.False(t, ok)
	_, ok = ts.EP("", "dispatch", 8, 8, 4096, 8, 256)
	assert.False(t, ok)
	_, ok = ts.EP("deepep_ll", "dispatch", 8, 8, 7168, 8, 256)
	assert.True(t, ok, "the table's own kernels")
	_, ok = ts.EP("deepep_normal", "dispatch", 8, 8, 7168, 8, 256)
	assert.False(t, ok, "a low-latency table does not answer the normal kernels")
}

func TestNewTableRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Point
	}{
		{"one rank", Point{Ranks: 1, Bytes: 1, Latency: 1, Row: 3}},
		{"zero bytes", Point{Ranks: 2, Bytes: 0, Latency: 1, Row: 3}},
		{"negative time", Point{Ranks: 2, Bytes: 1, Latency: -1, Row: 3}},
		{"NaN time", Point{Ranks: 2, Bytes: 1, Latency: unit.Seconds(math.NaN()), Row: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable("x", cost.AllReduce, "nccl", "", []Point{tc.p})
			assert.ErrorContains(t, err, "row 3")
		})
	}
}

func TestTablesLookupDoesNotAllocate(t *testing.T) {
	ts := &Tables{Colls: []*Table{arTable(t, "a", "nccl", "", 1), arTable(t, "b", "vllm", "graph", 1)}, Graphs: true}
	var sink unit.Seconds
	n := testing.AllocsPerRun(200, func() {
		e, _ := ts.AllReduce(Auto, 8, 20000)
		sink += e.Time
	})
	assert.Zero(t, n)
}

// TestCustomAllReduceNotFromEngineTable: a one-shot all-reduce that stock
// vLLM would not run (8 PCIe GPUs: it runs NCCL) is priced from a table of
// that kernel or its model, never from the engine's measured all-reduce,
// which measured NCCL there. Where the engine runs one-shot (2 ranks) its
// table answers, as before.
func TestCustomAllReduceNotFromEngineTable(t *testing.T) {
	pcie, ok := LookupFabric("pcie-gen5")
	require.True(t, ok)
	engine := &Tables{Graphs: true, Colls: []*Table{arTable(t, "f#vllm", "vllm", "", 1)}}
	c := &Comm{Fabric: pcie, Graphs: true, Tables: engine}

	e := c.AllReduce(OneShot, 8, 16384)
	assert.Equal(t, cost.Roofline, e.Source.Kind, e.Source.Describe())
	assert.Contains(t, e.Source.Describe(), "stock vLLM runs another all-reduce here")

	e = c.AllReduce(OneShot, 2, 16384)
	assert.Equal(t, cost.Table, e.Source.Kind, "the engine runs one-shot on 2 GPUs: its table answers")
	assert.Equal(t, "f#vllm", e.Source.Table)

	e = c.AllReduce(Auto, 8, 16384)
	assert.NotEqual(t, "f#vllm", e.Source.Table, "auto on 8 PCIe GPUs is NCCL")

	exact := &Tables{Graphs: true, Colls: []*Table{arTable(t, "f#vllm", "vllm", "", 1), arTable(t, "f#oneshot", "oneshot", "", 2)}}
	c.Tables = exact
	e = c.AllReduce(OneShot, 8, 16384)
	assert.Equal(t, "f#oneshot", e.Source.Table, "a table of the kernel itself answers")
}
