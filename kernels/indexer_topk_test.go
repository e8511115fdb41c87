package kernels

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// TestIndexerTopKMeasured re-derives the fit from the perf database's H200
// kernel rows (testdata/perfdb_topk_h200.csv): least squares of latency on
// keys over the rows of at most 128 query rows and index_topk < keys <=
// 32,776 gives IndexerTopKRowBaseSM90 and IndexerTopKPerKeySM90; priced
// with IndexerTopKRowsPerSMSM90 every row of up to 4,096 query rows lies
// within 35%, the median within 3% and the 10th/90th percentiles within
// 15%; the rows whose keys fit in index_topk show no time and are priced
// at zero.
func TestIndexerTopKMeasured(t *testing.T) {
	rows := readTestCSV(t, "perfdb_topk_h200.csv")
	require.Greater(t, len(rows), 500)
	h200, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := &Costs{GPU: h200}
	const topk = 2048
	var sk, st, skk, skt, n float64
	var errs []float64
	zeros := 0
	for _, r := range rows {
		b, isl, step, ms := r.atoi(t, 1), r.atoi(t, 2), r.atoi(t, 3), r.float(t, 4)
		q, keys := b*isl, step+isl
		got := c.IndexerTopK(IndexerTopKShape{Rows: q, Keys: keys, TopK: topk})
		if keys <= topk {
			assert.Zero(t, ms, "row %d: %d keys fit in top-%d yet took %v ms", r.line, keys, topk, ms)
			assert.Zero(t, got.Time, "row %d", r.line)
			zeros++
			continue
		}
		require.Positive(t, ms, "row %d", r.line)
		us := ms * 1e3
		if q <= 128 {
			x := float64(keys)
			sk, st, skk, skt, n = sk+x, st+us, skk+x*x, skt+x*us, n+1
		}
		errs = append(errs, float64(got.Time)/(us*1e-6)-1)
	}
	require.Greater(t, zeros, 100)
	require.Equal(t, 139.0, n)
	slope := (n*skt - sk*st) / (n*skk - sk*sk)
	base := (st - slope*sk) / n
	assert.InDelta(t, float64(IndexerTopKRowBaseSM90/unit.Microsecond), base, 0.01)
	assert.InDelta(t, float64(IndexerTopKPerKeySM90/unit.Microsecond), slope, 0.0000005)
	sort.Float64s(errs)
	require.Len(t, errs, 238)
	assert.InDelta(t, 0, errs[len(errs)/2], 0.03, "median")
	assert.InDelta(t, 0, errs[len(errs)/10], 0.15, "10th percentile")
	assert.InDelta(t, 0, errs[len(errs)*9/10], 0.15, "90th percentile")
	for _, e := range errs {
		assert.Less(t, math.Abs(e), 0.35)
	}
}

// TestIndexerTopKShape: zero without rows, with every key kept, and on an
// architecture without rows (sm_80); a wave's time grows with the keys and not with the rows up to
// rows_per_SM x SMs, past which it grows with the rows; one wave where the
// GPU states no SM count.
func TestIndexerTopKShape(t *testing.T) {
	h200, ok := LookupGPU("h200-sxm")
	require.True(t, ok)
	c := &Costs{GPU: h200}
	at := func(rows, keys int) unit.Seconds {
		return c.IndexerTopK(IndexerTopKShape{Rows: rows, Keys: keys, TopK: 2048}).Time
	}
	assert.Zero(t, at(0, 16384))
	assert.Zero(t, at(8, 2048))
	assert.Positive(t, at(8, 2049))
	assert.Greater(t, at(8, 16384), at(8, 4096))
	assert.Equal(t, at(1, 16384), at(128, 16384))
	assert.InEpsilon(t, 2*float64(at(1, 16384)), float64(at(2*180, 16384)), 0.01)
	// without an SM count (a custom GPU) the rows run in one wave: as
	// few rows on the H200, not rows / 1.36 waves
	noSM := h200
	noSM.SMs = 0
	one := (&Costs{GPU: noSM}).IndexerTopK(IndexerTopKShape{Rows: 4096, Keys: 16384, TopK: 2048}).Time
	assert.Equal(t, at(1, 16384), one)
	a100, ok := LookupGPU("a100-sxm")
	require.True(t, ok)
	assert.Zero(t, (&Costs{GPU: a100}).IndexerTopK(IndexerTopKShape{Rows: 8, Keys: 16384, TopK: 2048}).Time)
}

// TestIndexerTopKBlackwell: the H200 figures price the perf database's
// B200 and B300 rows of the same kernel (148 SMs) with the median within
// 5% (B200 +0.5%, B300 +4.2%), the 10th/90th percentiles within 20% (B200
// -12%/+14%, B300 -8%/+20%) and every row within 50%; rows whose keys fit
// in index_topk are zero there too.
func TestIndexerTopKBlackwell(t *testing.T) {
	for _, g := range []struct{ gpu, file string }{{"b200-sxm", "perfdb_topk_b200.csv"}, {"b300-sxm", "perfdb_topk_b300.csv"}} {
		gpu, ok := LookupGPU(g.gpu)
		require.True(t, ok, g.gpu)
		c := &Costs{GPU: gpu}
		var errs []float64
		for _, r := range readTestCSV(t, g.file) {
			b, isl, step, ms := r.atoi(t, 1), r.atoi(t, 2), r.atoi(t, 3), r.float(t, 4)
			got := c.IndexerTopK(IndexerTopKShape{Rows: b * isl, Keys: step + isl, TopK: 2048}).Time
			if step+isl <= 2048 {
				assert.Zero(t, ms, "%s row %d", g.file, r.line)
				assert.Zero(t, got, "%s row %d", g.file, r.line)
				continue
			}
			errs = append(errs, float64(got)/(ms*1e-3)-1)
		}
		sort.Float64s(errs)
		require.Len(t, errs, 238, g.gpu)
		assert.InDelta(t, 0, errs[len(errs)/2], 0.05, "%s median", g.gpu)
		assert.InDelta(t, 0, errs[len(errs)/10], 0.20, "%s 10th percentile", g.gpu)
		assert.InDelta(t, 0, errs[len(errs)*9/10], 0.20, "%s 90th percentile", g.gpu)
		for _, e := range errs {
			assert.Less(t, math.Abs(e), 0.50, g.gpu)
		}
	}
}
