package kernels

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

func TestLegacyMLAOverhead(t *testing.T) {
	tests := []struct {
		name        string
		kv          dtype.KVCache
		heads, b    int
		wantUS      float64
		wantCovered bool
	}{
		{"measured batch", dtype.KVFP8, 32, 2, 53.3, true},
		{"bf16 KV has its own row", dtype.KVBF16, 32, 2, 49.1, true},
		// batch 3: log2(3) = 1.585 of the way from batch 2 to 4.
		{"log2 interpolation", dtype.KVFP8, 32, 3, 53.3 + (math.Log2(3)-1)*(56.5-53.3), true},
		{"above batch 64: the batch-64 figure", dtype.KVFP8, 16, 512, 71.3, true},
		{"heads not measured", dtype.KVFP8, 24, 2, 0, false},
		{"no batch", dtype.KVFP8, 32, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := LegacyMLAOverhead(tc.kv, tc.heads, tc.b)
			assert.Equal(t, tc.wantCovered, ok)
			assert.InDelta(t, tc.wantUS*1e-6, float64(d), 1e-12, "kv %v heads %d batch %d", tc.kv, tc.heads, tc.b)
		})
	}
}

// A legacy-collected MLA module table answers its row less the excess of
// the legacy collector; a table of the fused-op collector, or a query that
// keeps the bias (the mla-collector mechanism off), gets the row as
// measured.
func TestMLALegacyCollector(t *testing.T) {
	mk := func(kv string, legacy bool) *MLATable {
		var pts []MLAPoint
		row := 0
		for _, b := range []int{1, 8} {
			for _, l := range []int{1024, 8192} {
				row++
				pts = append(pts, MLAPoint{Heads: 32, Batch: b, KVLen: l, Latency: 100 * us, Row: row})
			}
		}
		tb, err := NewMLATable("m#mla."+kv, MLAKey{GEMMDtype: "bf16", KV: kv, KVLoRARank: 512, QKRopeDim: 64}, pts)
		require.NoError(t, err)
		tb.LegacyCollector = legacy
		return tb
	}
	q := MLAShape{Batch: 8, Context: 2048, Heads: 32, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVFP8}
	tests := []struct {
		name   string
		table  *MLATable
		keep   bool
		want   unit.Seconds
		legacy bool
	}{
		{"legacy rows: less the excess", mk("fp8", true), false, 100*us - 60.7*us, true},
		{"mechanism off: as measured", mk("fp8", true), true, 100 * us, false},
		{"fused-op collector: as measured", mk("fp8", false), false, 100 * us, false},
		// fp8 query from a bf16-KV table: the bf16-KV excess (53.9 us at
		// batch 8), then the KV read saved (MemBW 0: none).
		{"bf16-KV legacy rows for an fp8 query", mk("bf16", true), false, 100*us - 53.9*us, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := q
			s.KeepCollectorBias = tc.keep
			e, ok := (&Tables{MLAs: []*MLATable{tc.table}}).MLAModule(s)
			require.True(t, ok)
			assert.InDelta(t, float64(tc.want), float64(e.Time), 1e-12)
			assert.Equal(t, tc.legacy, strings.Contains(e.Source.Note, "legacy collector"), e.Source.Note)
			assert.LessOrEqual(t, e.Lo, e.Time)
			assert.GreaterOrEqual(t, e.Hi, e.Time)
		})
	}
	t.Run("never below zero", func(t *testing.T) {
		tb := mk("fp8", true)
		var pts []MLAPoint
		for i, b := range []int{1, 8} {
			pts = append(pts, MLAPoint{Heads: 32, Batch: b, KVLen: 1024, Latency: 10 * us, Row: i + 1})
		}
		small, err := NewMLATable("m#small", tb.Key, pts)
		require.NoError(t, err)
		small.LegacyCollector = true
		e, ok := small.Lookup(MLAShape{Batch: 1, Context: 1024, Heads: 32, KVLoRARank: 512, QKRopeDim: 64, KV: dtype.KVFP8})
		require.True(t, ok)
		assert.Equal(t, unit.Seconds(0), e.Time)
	})
}
