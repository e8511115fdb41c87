package kernels

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// The perf database's vLLM MLA decode module rows
// (aiconfigurator @ 095f58a, systems/data/<system>/mla/vllm/<version>/
// mla_generation_module_perf.parquet) were collected by two methods. Only
// b200_sxm's vLLM 0.24.0 rows were re-collected with the fused-op collector
// (its collection_meta.yaml: "Re-collected 2026-07-27 on B200 with the
// fused-op collector fix (ai-dynamo/aiconfigurator#1423) ... the previous
// rows ran the never-in-serving native chain (+34%)", norm_dispatch:
// vllm_c_eager_surrogate). Every other system's rows (gb200, gb300,
// b300_sxm, and B200's own older releases) still run the native chain of
// norms and rotary embedding that serving never runs: at small batches
// they are about twice the re-collected rows, and the legacy rows agree
// across these GPUs (b200_sxm 0.22.0 / gb200 0.24.0 median 0.94), so the
// excess is the collector's, not the silicon's.
//
// legacyMLAOverheadUS is that excess as measured on one GPU with both
// methods: b200_sxm's vLLM 0.22.0 rows (legacy) less its 0.24.0 rows
// (fused collector), bf16 projections, per KV dtype and heads per GPU, at
// batch 1, 2, 4, ..., 64, the median over the 17 measured kv_len (2 ..
// 131072; the spread about the median is <= 12 us at these batches, and
// gb200's own 0.22.0 and 0.24.0 legacy rows differ by 3-5%, so the
// release change is not the gap). Both tables come from `moecast calib
// import perfdb` of that tree (one release per import). Above batch 64 the
// differences stop being one offset (the attention kernels of the two
// releases part ways at large batch x heads), so the batch-64 excess, the
// chain's fixed cost, is used there.
var legacyMLAOverheadUS = map[dtype.KVCache]map[int][7]float64{
	dtype.KVBF16: {
		1:   {40.5, 42.2, 42.6, 49.5, 54.8, 56.6, 57.5},
		2:   {40.5, 42.5, 46.7, 52.4, 56.8, 57.3, 61.5},
		4:   {40.2, 44.6, 48.1, 52.2, 56.6, 59.1, 61.3},
		8:   {40.1, 46.2, 48.1, 52.8, 58.4, 59.0, 60.7},
		16:  {42.2, 47.3, 48.3, 51.3, 57.1, 58.7, 59.6},
		32:  {42.3, 49.1, 50.5, 53.9, 58.6, 60.5, 61.0},
		64:  {42.6, 48.9, 50.8, 54.5, 58.8, 61.5, 62.9},
		128: {47.4, 50.3, 51.6, 55.0, 59.0, 63.1, 65.9},
	},
	dtype.KVFP8: {
		1:   {48.4, 48.6, 50.9, 57.6, 62.7, 64.0, 65.1},
		2:   {46.3, 50.4, 52.7, 58.9, 64.5, 65.7, 68.0},
		4:   {48.6, 52.5, 56.0, 60.6, 65.4, 67.9, 69.0},
		8:   {50.0, 52.6, 56.3, 60.9, 65.1, 68.0, 69.1},
		16:  {48.7, 53.3, 56.8, 61.8, 66.0, 67.3, 71.3},
		32:  {44.5, 53.3, 56.5, 60.7, 66.0, 68.1, 73.2},
		64:  {37.1, 43.7, 44.4, 48.2, 49.8, 49.3, 45.5},
		128: {35.0, 40.8, 44.5, 44.3, 46.9, 44.6, 39.9},
	},
}

const legacyMLANote = "legacy collector: the row ran the native norm/rotary chain serving never runs (aiconfigurator#1423); " +
	"less its excess measured on b200_sxm with both collectors (kernels.legacyMLAOverheadUS)"

// LegacyMLAOverhead is the legacy collector's excess over the fused-op
// collector for one MLA module row of kv (the table's KV dtype), heads
// per GPU and batch: interpolated in log2(batch) between the measured
// batches 1..64, the batch-64 figure above. False for a heads count or KV
// dtype not measured (no correction then).
func LegacyMLAOverhead(kv dtype.KVCache, heads, batch int) (unit.Seconds, bool) {
	row, ok := legacyMLAOverheadUS[kv][heads]
	if !ok || batch < 1 {
		return 0, false
	}
	x := math.Min(math.Log2(float64(batch)), float64(len(row)-1))
	i := min(int(x), len(row)-2)
	f := x - float64(i)
	us := row[i] + f*(row[i+1]-row[i])
	return unit.Seconds(us * 1e-6), true
}

// legacyExcess is the excess to take off a row of t answering s (kv:
// the row's KV dtype): zero unless t is legacy-collected and the query
// does not keep the bias.
func (t *MLATable) legacyExcess(s MLAShape, kv dtype.KVCache) unit.Seconds {
	if !t.LegacyCollector || s.KeepCollectorBias {
		return 0
	}
	d, _ := LegacyMLAOverhead(kv, s.Heads, s.Batch)
	return d
}

// shiftDown takes d off e's time and bounds, never below zero
// (Costs.MLAModule floors the result at the module's DRAM streaming
// time).
func shiftDown(e cost.Estimate, d unit.Seconds) cost.Estimate {
	d = min(d, e.Time)
	e.Time -= d
	e.Lo = max(0, e.Lo-d)
	e.Hi = max(e.Time, e.Hi-d)
	return e
}
