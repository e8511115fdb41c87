package kernels

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

const us = unit.Microsecond

// A hand MoE table: 16 experts, top-2 (S = E/k = 8 tokens), one split.
func handMoE(t *testing.T, dist string) *MoETable {
	t.Helper()
	pts := []MoEPoint{
		{Tokens: 1, MoETP: 1, EP: 1, Latency: 10 * us, L2Resident: true, Row: 1},
		{Tokens: 2, MoETP: 1, EP: 1, Latency: 20 * us, Row: 2},
		{Tokens: 4, MoETP: 1, EP: 1, Latency: 40 * us, Row: 3},
		{Tokens: 8, MoETP: 1, EP: 1, Latency: 80 * us, Row: 4},
		{Tokens: 16, MoETP: 1, EP: 1, Latency: 100 * us, Row: 5},
		{Tokens: 8, MoETP: 2, EP: 1, Latency: 50 * us, Row: 6},
	}
	tb, err := NewMoETable("hand.toml#moe", MoEKey{Quant: "int4_wo", Experts: 16, TopK: 2, Hidden: 64, Inter: 32, Distribution: dist}, pts)
	require.NoError(t, err)
	return tb
}

func moeQuery(tokens, tp int) MoEShape {
	return MoEShape{GlobalTokens: tokens, Tokens: tokens, Experts: 16, TopK: 2, Hidden: 64, Inter: 32 / tp, MoETP: tp, EP: 1, Weight: dtype.INT4G32}
}

func TestMoETableUniformExactAndClamped(t *testing.T) {
	tb := handMoE(t, "uniform")
	for _, tc := range []struct {
		name   string
		tokens int
		want   unit.Seconds
		row    int
		note   string
	}{
		{"measured point", 4, 40 * us, 3, ""},
		{"L2-resident row", 1, 10 * us, 1, "source rows L2-resident (one layer replayed warm); floored at DRAM streaming time by the caller"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := tb.Lookup(moeQuery(tc.tokens, 1))
			require.True(t, ok)
			assert.Equal(t, tc.want, e.Time)
			assert.Equal(t, tc.row, e.Source.RowLo)
			assert.Equal(t, tc.row, e.Source.RowHi)
			assert.Equal(t, cost.Table, e.Source.Kind)
			assert.Equal(t, "hand.toml#moe", e.Source.Table)
			assert.Equal(t, tc.note, e.Source.Note)
		})
	}
	// Above the measured range: the last segment (8, 80 us) - (16, 100 us)
	// extended linearly, 2.5 us per token: 100 + 2.5 x 48 = 220 us at 64.
	e, ok := tb.Lookup(moeQuery(64, 1))
	require.True(t, ok)
	assert.InDelta(t, float64(220*us), float64(e.Time), 1e-15)
	assert.Equal(t, 4, e.Source.RowLo)
	assert.Equal(t, 5, e.Source.RowHi)
	assert.Equal(t, "extrapolated: tokens above the measured range (last segment extended linearly in tokens)", e.Source.Note)
	// Between neighbours: 3 tokens lies between rows 2 and 3, log-log exact
	// for this power law (y = 10 T).
	e, ok = tb.Lookup(moeQuery(3, 1))
	require.True(t, ok)
	assert.InDelta(t, float64(30*us), float64(e.Time), 1e-12)
	assert.Equal(t, 2, e.Source.RowLo)
	assert.Equal(t, 3, e.Source.RowHi)
}

func TestMoETableBalancedRoutingCorrection(t *testing.T) {
	tb := handMoE(t, "balanced")
	f := func(x float64) float64 { // the table's log-log interpolation, by hand
		switch {
		case x <= 8:
			return 10e-6 * x // rows 1-4 are y = 10us * T
		default:
			return 80e-6 * math.Pow(x/8, math.Log(100.0/80)/math.Log(2))
		}
	}
	for _, T := range []int{1, 3, 8, 12, 16} {
		d := 16 * (1 - math.Pow(1-2.0/16, float64(T))) // uniform distinct experts
		tp := d / 2
		want := f(tp)
		if T > 8 {
			want += f(float64(T)) - f(8)
		}
		e, ok := tb.Lookup(moeQuery(T, 1))
		require.True(t, ok, "T=%d", T)
		assert.InEpsilon(t, want, float64(e.Time), 1e-9, "T=%d: T'=%.3f", T, tp)
		if T > 1 {
			assert.Contains(t, e.Source.Note, "routing:")
			assert.Less(t, float64(e.Time), f(float64(T))+1e-12, "uniform routing never reads more experts than balanced")
		}
	}
	// T=1: both routings touch k experts: exact table value, no mapping.
	e, _ := tb.Lookup(moeQuery(1, 1))
	assert.Equal(t, 10*us, e.Time)
}

// TestMoETableExpertsTouched: with the caller's distinct experts (the sim's
// most-loaded EP rank), the table is read at T' = touched x EP / topk,
// which may exceed T (imbalance), and no cap applies.
func TestMoETableExpertsTouched(t *testing.T) {
	pts := []MoEPoint{
		{Tokens: 1, MoETP: 1, EP: 2, Latency: 10 * us, Row: 1},
		{Tokens: 2, MoETP: 1, EP: 2, Latency: 20 * us, Row: 2},
		{Tokens: 4, MoETP: 1, EP: 2, Latency: 40 * us, Row: 3},
		{Tokens: 8, MoETP: 1, EP: 2, Latency: 80 * us, Row: 4},
	}
	tb, err := NewMoETable("ep#moe", MoEKey{Quant: "int4_wo", Experts: 16, TopK: 2, Hidden: 64, Inter: 32, Distribution: "balanced"}, pts)
	require.NoError(t, err)
	s := MoEShape{GlobalTokens: 1, Tokens: 1, Experts: 16, TopK: 2, Hidden: 64, Inter: 32, MoETP: 1, EP: 2, Weight: dtype.INT4G32}
	// One token, two experts: the busiest of 2 ranks reads 1.5 experts on
	// average -> D = 3, T' = 1.5: y = 15us (log-log between 10 and 20 is
	// exact for y = 10 T).
	s.ExpertsTouched = 1.5
	e, ok := tb.Lookup(s)
	require.True(t, ok)
	assert.InDelta(t, float64(15*us), float64(e.Time), 1e-15)
	assert.Contains(t, e.Source.Note, "routing:")
	// Perfect balance (1 expert per rank): the table's own point.
	s.ExpertsTouched = 1
	e, _ = tb.Lookup(s)
	assert.Equal(t, 10*us, e.Time)
	assert.Equal(t, "", e.Source.Note)
	// More distinct experts than exist: capped at E, T' = S = 8.
	s.GlobalTokens, s.ExpertsTouched = 8, 100
	e, _ = tb.Lookup(s)
	assert.Equal(t, 80*us, e.Time)
}

func TestMoETableMisses(t *testing.T) {
	tb := handMoE(t, "balanced")
	for _, tc := range []struct {
		name string
		s    MoEShape
	}{
		{"other quant", func() MoEShape { s := moeQuery(4, 1); s.Weight = dtype.BF16Weights; return s }()},
		{"other experts", func() MoEShape { s := moeQuery(4, 1); s.Experts = 32; return s }()},
		{"unmeasured split", moeQuery(4, 4)},
		{"other inter", func() MoEShape { s := moeQuery(4, 1); s.Inter = 48; return s }()},
		{"no tokens", MoEShape{Experts: 16, TopK: 2, Hidden: 64, Inter: 32, MoETP: 1, EP: 1, Weight: dtype.INT4G32}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := tb.Lookup(tc.s)
			assert.False(t, ok)
		})
	}
	pl := handMoE(t, "power_law_1.2")
	_, ok := pl.Lookup(moeQuery(4, 1))
	assert.False(t, ok, "power-law tables do not answer uniform-routing queries")
	// The split table: inter per rank 16 with moe_tp 2 matches inter 32.
	e, ok := tb.Lookup(moeQuery(8, 2))
	require.True(t, ok)
	assert.Equal(t, 6, e.Source.RowLo)
}

func TestMoETableLOO(t *testing.T) {
	tb := handMoE(t, "balanced")
	// Interior points of the (1,1) series: T=2,4 lie on y=10T exactly (error
	// 0); T=8 from (4,40) and (16,100): log-log at the geometric mid point
	// predicts sqrt(40*100) = 63.246, error |63.246-80|/80 = 0.2094.
	p90, n := tb.LOOError()
	assert.Equal(t, 3, n)
	assert.InDelta(t, (80-math.Sqrt(4000))/80, p90, 1e-9)
	e, _ := tb.Lookup(MoEShape{GlobalTokens: 8, Experts: 16, TopK: 2, Hidden: 64, Inter: 16, MoETP: 2, EP: 1, Weight: dtype.INT4G32})
	assert.InDelta(t, float64(e.Time)*(1-p90), float64(e.Lo), 1e-15)
	assert.InDelta(t, float64(e.Time)*(1+p90), float64(e.Hi), 1e-15)
}

func TestGEMMTable(t *testing.T) {
	tb, err := NewGEMMTable("g#gemm", "bf16", []GEMMPoint{
		{M: 1, N: 7168, K: 2048, Latency: 8 * us, Row: 1},
		{M: 64, N: 7168, K: 2048, Latency: 12 * us, Row: 2},
		{M: 1, N: 4096, K: 4096, Latency: 9 * us, Row: 3},
	})
	require.NoError(t, err)
	e, ok := tb.Lookup(GEMMShape{M: 64, N: 7168, K: 2048, Weight: dtype.BF16Weights, Count: 3})
	require.True(t, ok)
	assert.InDelta(t, float64(36*us), float64(e.Time), 1e-15)
	e, ok = tb.Lookup(GEMMShape{M: 8, N: 7168, K: 2048, Weight: dtype.BF16Weights})
	require.True(t, ok)
	assert.Greater(t, e.Time, 8*us)
	assert.Less(t, e.Time, 12*us)
	e, ok = tb.Lookup(GEMMShape{M: 8, N: 4096, K: 4096, Weight: dtype.BF16Weights})
	require.True(t, ok)
	assert.Equal(t, 9*us, e.Time)
	assert.Equal(t, "clamped: m above the measured range", e.Source.Note)
	_, ok = tb.Lookup(GEMMShape{M: 8, N: 4096, K: 2048, Weight: dtype.BF16Weights})
	assert.False(t, ok)
	_, ok = tb.Lookup(GEMMShape{M: 8, N: 7168, K: 2048, Weight: dtype.FP8Block128})
	assert.False(t, ok)
}

func TestMLATable(t *testing.T) {
	var pts []MLAPoint
	row := 0
	for _, b := range []int{1, 4} {
		for _, kv := range []int{256, 1024, 4096} {
			row++
			// latency = 100us * b^0.5 * (kv/256)^0.25: a plane in log-log.
			l := 100e-6 * math.Sqrt(float64(b)) * math.Pow(float64(kv)/256, 0.25)
			pts = append(pts, MLAPoint{Heads: 8, Batch: b, KVLen: kv, Latency: unit.Seconds(l), L2Resident: b == 1, Row: row})
		}
	}
	tb, err := NewMLATable("m#mla", MLAKey{GEMMDtype: "bf16", KV: "bf16", KVLoRARank: 512, QKRopeDim: 64}, pts)
	require.NoError(t, err)
	q := MLAShape{Batch: 2, Context: 512, Heads: 8, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVBF16}
	e, ok := tb.Lookup(q)
	require.True(t, ok)
	assert.InEpsilon(t, 100e-6*math.Sqrt(2)*math.Pow(2, 0.25), float64(e.Time), 1e-9)
	assert.Equal(t, 1, e.Source.RowLo)
	assert.Equal(t, 5, e.Source.RowHi)
	assert.Contains(t, e.Source.Note, "L2-resident")
	q.Batch, q.Context = 4, 4096
	e, _ = tb.Lookup(q)
	assert.Equal(t, pts[5].Latency, e.Time)
	assert.Equal(t, "", e.Source.Note)
	q.Context = 100000
	e, _ = tb.Lookup(q)
	assert.Equal(t, "clamped: kv_len above the measured range", e.Source.Note)
	q.Heads = 16
	_, ok = tb.Lookup(q)
	assert.False(t, ok)
	q.Heads, q.KV = 8, dtype.KVFP8
	_, ok = tb.Lookup(q)
	assert.False(t, ok)
}

// An fp8-KV query that the fp8-KV table does not cover (the RTX perf
// database measures fp8 KV at heads = 1 only) is answered from the bf16-KV
// table less the KV read saved, instead of dropping the whole MLA module to
// the roofline.
func TestMLAFP8FallsBackToBF16(t *testing.T) {
	mk := func(kv string, heads int, lat unit.Seconds, bw unit.BytesPerSecond) *MLATable {
		var pts []MLAPoint
		row := 0
		for _, b := range []int{1, 64} {
			for _, l := range []int{1024, 8192} {
				row++
				pts = append(pts, MLAPoint{Heads: heads, Batch: b, KVLen: l, Latency: lat * unit.Seconds(b), Row: row})
			}
		}
		tb, err := NewMLATable("m#mla."+kv, MLAKey{GEMMDtype: "bf16", KV: kv, KVLoRARank: 512, QKRopeDim: 64}, pts)
		require.NoError(t, err)
		tb.MemBW = bw
		return tb
	}
	const bw = 1e12 // 1 TB/s: 1 byte per ps
	fp8 := mk("fp8", 1, 30*us, bw)
	bf16 := mk("bf16", 8, 100*us, bw)
	q := func(heads, batch, kv int) MLAShape {
		return MLAShape{Batch: batch, Context: kv, Heads: heads, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVFP8}
	}
	tests := []struct {
		name   string
		tables []*MLATable
		q      MLAShape
		want   unit.Seconds
		table  string
		note   bool
	}{
		{"fp8 series covers: used as is", []*MLATable{bf16, fp8}, q(1, 1, 1024), 30 * us, "m#mla.fp8", false},
		// 1 x 1024 x 576 B saved at 1 TB/s = 0.589824 us.
		{"8 heads: bf16 less the KV read saved", []*MLATable{fp8, bf16}, q(8, 1, 1024), 100*us - 0.589824*us, "m#mla.bf16", true},
		// 64 x 8192 x 576 B = 301.989888 us saved, less than half of 6400 us.
		{"large KV", []*MLATable{fp8, bf16}, q(8, 64, 8192), 6400*us - 301.989888*us, "m#mla.bf16", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := &Tables{MLAs: tc.tables}
			e, ok := ts.MLAModule(tc.q)
			require.True(t, ok)
			assert.InEpsilon(t, float64(tc.want), float64(e.Time), 1e-9)
			assert.Equal(t, tc.table, e.Source.Table)
			assert.Equal(t, tc.note, strings.Contains(e.Source.Note, "kv fp8: no fp8-KV series covers the query"), e.Source.Note)
			assert.LessOrEqual(t, e.Lo, e.Time)
			assert.GreaterOrEqual(t, e.Hi, e.Time)
		})
	}
	t.Run("saving capped at half the module", func(t *testing.T) {
		slow := mk("bf16", 8, 100*us, 1e6) // absurdly low bandwidth
		e, ok := (&Tables{MLAs: []*MLATable{slow}}).MLAModule(q(8, 1, 1024))
		require.True(t, ok)
		assert.InEpsilon(t, float64(50*us), float64(e.Time), 1e-12)
	})
	t.Run("bandwidth unknown: bf16 time (conservative)", func(t *testing.T) {
		nobw := mk("bf16", 8, 100*us, 0)
		e, ok := (&Tables{MLAs: []*MLATable{nobw}}).MLAModule(q(8, 1, 1024))
		require.True(t, ok)
		assert.Equal(t, 100*us, e.Time)
	})
	t.Run("bf16 query never uses the fp8 path", func(t *testing.T) {
		bq := q(8, 1, 1024)
		bq.KV = dtype.KVBF16
		_, ok := (&Tables{MLAs: []*MLATable{fp8}}).MLAModule(bq)
		assert.False(t, ok)
	})
	t.Run("heads measured nowhere: roofline", func(t *testing.T) {
		_, ok := (&Tables{MLAs: []*MLATable{fp8, bf16}}).MLAModule(q(16, 1, 1024))
		assert.False(t, ok)
	})
}

func TestGQATable(t *testing.T) {
	tb, err := NewGQATable("q#gqa", GQAKey{HeadDim: 128, KV: "bf16"}, []GQAPoint{
		{Heads: 16, KVHeads: 1, Batch: 1, KVLen: 1024, Latency: 10 * us, Row: 1},
		{Heads: 16, KVHeads: 1, Batch: 1, KVLen: 4096, Latency: 20 * us, Row: 2},
		{Heads: 16, KVHeads: 1, Batch: 8, KVLen: 1024, Latency: 40 * us, Row: 3},
		{Heads: 16, KVHeads: 1, Batch: 8, KVLen: 4096, Latency: 80 * us, Row: 4},
	})
	require.NoError(t, err)
	e, ok := tb.Lookup(GQAShape{Batch: 8, Context: 1024, Heads: 16, KVHeads: 1, HeadDim: 128})
	require.True(t, ok)
	assert.Equal(t, 40*us, e.Time)
	assert.Equal(t, 3, e.Source.RowLo)
	e, _ = tb.Lookup(GQAShape{Batch: 2, Context: 2048, Heads: 16, KVHeads: 1, HeadDim: 128})
	assert.Greater(t, e.Time, 10*us)
	assert.Less(t, e.Time, 80*us)
	assert.Equal(t, 1, e.Source.RowLo)
	assert.Equal(t, 4, e.Source.RowHi)
	_, ok = tb.Lookup(GQAShape{Batch: 2, Context: 2048, Heads: 8, KVHeads: 1, HeadDim: 128})
	assert.False(t, ok)
}

func TestTablesFirstCoveringTableAnswers(t *testing.T) {
	a := handMoE(t, "power_law_1.2")
	b := handMoE(t, "uniform")
	ts := &Tables{MoEs: []*MoETable{a, b}}
	e, ok := ts.MoE(moeQuery(4, 1))
	require.True(t, ok)
	assert.Equal(t, 40*us, e.Time)
	var empty Tables
	assert.True(t, empty.Empty())
	_, ok = empty.GEMM(GEMMShape{M: 1, N: 1, K: 1})
	assert.False(t, ok)
}

func TestTableBadPoints(t *testing.T) {
	_, err := NewMoETable("x", MoEKey{Experts: 8, TopK: 2}, []MoEPoint{{Tokens: 1, MoETP: 1, EP: 1, Latency: -1, Row: 7}})
	assert.ErrorContains(t, err, "row 7")
	_, err = NewMoETable("x", MoEKey{Experts: 8, TopK: 2}, []MoEPoint{{Tokens: 1, MoETP: 1, EP: 1, Latency: unit.Seconds(math.NaN()), Row: 3}})
	assert.ErrorContains(t, err, "row 3")
	_, err = NewMoETable("x", MoEKey{Experts: 8, TopK: 2}, []MoEPoint{
		{Tokens: 2, MoETP: 1, EP: 1, Latency: 1, Row: 1}, {Tokens: 2, MoETP: 1, EP: 1, Latency: 2, Row: 2}})
	assert.ErrorContains(t, err, "row 2", "duplicate token count")
	_, err = NewGEMMTable("x", "bf16", []GEMMPoint{{M: 0, N: 1, K: 1, Latency: 1, Row: 4}})
	assert.ErrorContains(t, err, "row 4")
}

func TestTablesLookupDoesNotAllocate(t *testing.T) {
	ts := &Tables{MoEs: []*MoETable{handMoE(t, "balanced")}}
	q := moeQuery(12, 1)
	var sink unit.Seconds
	n := testing.AllocsPerRun(200, func() {
		e, _ := ts.MoE(q)
		sink += e.Time
	})
	assert.Zero(t, n)
}

func BenchmarkMoETableLookup(b *testing.B) {
	t := &testing.T{}
	ts := &Tables{MoEs: []*MoETable{handMoE(t, "balanced")}}
	q := moeQuery(12, 1)
	b.ReportAllocs()
	for b.Loop() {
		ts.MoE(q)
	}
}

// A MoE series whose latency drops as tokens grow (upstream DeepSeek-V3
// H200 TP8 fused_moe: 565 us at 768 tokens, 473 us at 1024) is raised to
// its running max, series by series, and the raised rows are listed.
func TestMoETableMonotoneEnvelope(t *testing.T) {
	pts := []MoEPoint{
		{Tokens: 512, MoETP: 8, EP: 1, Latency: 400 * us, Row: 1},
		{Tokens: 768, MoETP: 8, EP: 1, Latency: 565 * us, Row: 2},
		{Tokens: 1024, MoETP: 8, EP: 1, Latency: 473 * us, Row: 3},
		{Tokens: 1536, MoETP: 8, EP: 1, Latency: 520 * us, Row: 4},
		{Tokens: 2048, MoETP: 8, EP: 1, Latency: 700 * us, Row: 5},
		// another series: its own running max, untouched by the first
		{Tokens: 512, MoETP: 1, EP: 8, Latency: 100 * us, Row: 6},
		{Tokens: 1024, MoETP: 1, EP: 8, Latency: 90 * us, Row: 7},
	}
	tb, err := NewMoETable("h.toml#moe", MoEKey{Quant: "fp8_block", Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048, Distribution: "uniform"}, pts)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4, 7}, tb.Raised())
	q := func(tokens, tp, ep int) MoEShape {
		return MoEShape{GlobalTokens: tokens, Tokens: tokens, Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048 / tp, MoETP: tp, EP: ep, Weight: dtype.FP8Block128}
	}
	tests := []struct {
		tokens, tp, ep int
		want           unit.Seconds
	}{
		{768, 8, 1, 565 * us},
		{1024, 8, 1, 565 * us},
		{1280, 8, 1, 565 * us}, // between two raised rows
		{2048, 8, 1, 700 * us},
		{512, 1, 8, 100 * us},
		{1024, 1, 8, 100 * us},
	}
	for _, tc := range tests {
		e, ok := tb.Lookup(q(tc.tokens, tc.tp, tc.ep))
		require.True(t, ok)
		assert.InEpsilon(t, float64(tc.want), float64(e.Time), 1e-12, "tokens %d tp %d ep %d", tc.tokens, tc.tp, tc.ep)
	}
	// Non-decreasing everywhere along tokens.
	prev := unit.Seconds(0)
	for tok := 256; tok <= 4096; tok += 64 {
		e, _ := tb.Lookup(q(tok, 8, 1))
		assert.GreaterOrEqual(t, e.Time, prev, "tokens %d", tok)
		prev = e.Time
	}
}

// An elementwise table is exact on its points, interpolates in log-log
// between them, clamps below the smallest size with its note, leaves
// sizes above the largest to the roofline, and through Costs is floored
// at the DRAM streaming time; its lookups do not allocate.
func TestElementwiseTable(t *testing.T) {
	tb, err := NewElementwiseTable("e#elementwise", []ElementwisePoint{
		{Bytes: 131072, Latency: 5.5 * us, Row: 1},
		{Bytes: 737280, Latency: 6.8 * us, Row: 2},
		{Bytes: 589824, Latency: 6.2 * us, Row: 3},
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		b      unit.Bytes
		lo, hi unit.Seconds
		rows   [2]int
		note   string
	}{
		{"measured point", 589824, 6.2 * us, 6.2 * us, [2]int{3, 3}, ""},
		{"between", 300000, 5.5 * us, 6.2 * us, [2]int{1, 3}, ""},
		{"below", 1000, 5.5 * us, 5.5 * us, [2]int{1, 1}, "clamped: bytes below the measured range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := tb.Lookup(tc.b)
			require.True(t, ok)
			assert.GreaterOrEqual(t, e.Time, tc.lo)
			assert.LessOrEqual(t, e.Time, tc.hi)
			assert.Equal(t, tc.rows, [2]int{e.Source.RowLo, e.Source.RowHi})
			assert.Equal(t, tc.note, e.Source.Note)
			assert.Equal(t, cost.Table, e.Source.Kind)
		})
	}
	_, ok := tb.Lookup(1e6)
	assert.False(t, ok, "above the largest measured size: roofline")

	g, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := newCosts(g, true)
	c.Tables = &Tables{Elementwises: []*ElementwiseTable{tb}}
	e := c.Elementwise(589824)
	assert.Equal(t, 6.2*us, e.Time)
	assert.Equal(t, unit.Bytes(589824), e.Bytes, "bytes from the roofline")
	assert.Equal(t, 1.0, e.Kernels)
	assert.Equal(t, newCosts(g, true).Elementwise(1e6), c.Elementwise(1e6))
	n := testing.AllocsPerRun(200, func() { _ = c.Elementwise(300000) })
	assert.Zero(t, n)

	_, err = NewElementwiseTable("e", []ElementwisePoint{{Bytes: 0, Latency: us, Row: 4}})
	assert.ErrorContains(t, err, "row 4")
}

// TestMoEQuant: each checkpoint format reads the MoE tables of its
// aiconfigurator moe_dtype; NVFP4 from ModelOpt and W4A4 fp4 group 16
// from compressed-tensors both read the nvfp4 tables, NVFP4 weights with
// bf16 activations (W4A16_NVFP4) none.
func TestMoEQuant(t *testing.T) {
	tests := []struct {
		name string
		f    dtype.Format
		want string
	}{
		{"modelopt nvfp4", dtype.NVFP4, "nvfp4"},
		{"compressed-tensors fp4 w4a4 g16", dtype.Format{Name: "fp4-g16", Bits: 4, GroupSize: 16, ScaleBits: 8, Compute: dtype.FP4}, "nvfp4"},
		{"nvfp4 weights, bf16 activations", dtype.NVFP4A16, "nvfp4-a16"},
		{"int4 w4a16 g32", dtype.INT4G32, "int4_wo"},
		{"fp8 block", dtype.FP8Block128, "fp8_block"},
		{"fp8 static per-tensor", dtype.FP8Tensor, "fp8"},
		{"mxfp4", dtype.MXFP4, "mxfp4"},
		{"mxfp4 weights, mxfp8 activations", dtype.MXFP4A8, "mxfp4_mxfp8"},
		{"bf16", dtype.BF16Weights, "bf16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, MoEQuant(tt.f)) })
	}
}

// TestMoETableDeepEP: rows built as t_ep(T) = O(T) + g/ep with O(T) = 2us
// per token and g = 400us: a dispatched rank of 4 at T = 64 pays g/4 plus
// the per-token part of the 16 tokens it receives, 100 + 32 = 132us, where
// the expert-map rows (every rank sees all 64 tokens) say 228us. Without
// rows at one rank the split is unknown and the rows answer as measured.
func TestMoETableDeepEP(t *testing.T) {
	var pts []MoEPoint
	row := 0
	for _, ep := range []int{1, 4} {
		for _, n := range []int{1, 4, 16, 64} {
			row++
			pts = append(pts, MoEPoint{Tokens: n, MoETP: 1, EP: ep, Latency: unit.Seconds(2*float64(n)+400/float64(ep)) * us, Row: row})
		}
	}
	key := MoEKey{Quant: "int4_wo", Experts: 16, TopK: 2, Hidden: 64, Inter: 32, Distribution: "uniform"}
	tb, err := NewMoETable("deepep#moe", key, pts)
	require.NoError(t, err)
	s := MoEShape{GlobalTokens: 64, Tokens: 16, Experts: 16, TopK: 2, Hidden: 64, Inter: 32, MoETP: 1, EP: 4, Weight: dtype.INT4G32}
	e, ok := tb.Lookup(s)
	require.True(t, ok)
	assert.InDelta(t, float64(228*us), float64(e.Time), 1e-12, "expert map: all 64 tokens on every rank")
	assert.NotContains(t, e.Source.Note, "DeepEP")
	s.DeepEP = true
	e, ok = tb.Lookup(s)
	require.True(t, ok)
	assert.InDelta(t, float64(132*us), float64(e.Time), 1e-12, "dispatched: g/4 + O(16)")
	assert.Contains(t, e.Source.Note, "DeepEP dispatch")
	// One rank: nothing is dispatched.
	s1 := s
	s1.EP, s1.Tokens = 1, 64
	e, _ = tb.Lookup(s1)
	assert.InDelta(t, float64(528*us), float64(e.Time), 1e-12)

	only4, err := NewMoETable("deepep4#moe", key, pts[4:])
	require.NoError(t, err)
	e, _ = only4.Lookup(s)
	assert.InDelta(t, float64(228*us), float64(e.Time), 1e-12, "no rows at one rank: as measured")
}
