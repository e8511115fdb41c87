package kernels

import (
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// The DeepSeek Sparse Attention indexer's top-k at decode. After the
// indexer's scores (DeepGEMM's fp8 paged MQA logits: one fp32 logit per
// cached key for each query row), every decode query row selects its
// index_topk highest-scoring keys in a kernel of its own: vLLM's
// sparse_attn_indexer calls ops.top_k_per_row_decode(logits, next_n,
// seq_lens, topk_indices, num_rows, ...) over num_rows = decode sequences x
// next_n rows (vllm-project/vllm
// vllm/model_executor/layers/sparse_attn_indexer.py, the decode branch;
// csrc top_k_per_row_decode, one thread block per row), SGLang its
// fast_topk_transform_fused. A row's cost grows with its keys, not with the
// index heads, and a step of few rows fills few SMs, so at decode the op is
// a latency-bound kernel of tens of microseconds that the scores' bytes do
// not price.
//
// Fit on aiconfigurator's kernel-level H200 rows of the top-k
// (ai-dynamo/aiconfigurator @ 095f58a,
// systems/data/h200_sxm/sparse_attention/sglang/0.5.14/glm5_topk_module_perf.parquet,
// fast_topk_transform_fused, score_mode flat, GLM-5's index_topk 2048;
// the decode-like rows of 1-8 query tokens per sequence kept in
// testdata/perfdb_topk_h200.csv): a row whose keys number at most
// index_topk selects them all and the rows show no time; above it a wave of
// rows costs IndexerTopKRowBaseSM90 + keys x IndexerTopKPerKeySM90
// (least squares over the 139 rows of at most 128 query rows and 2,049 to
// 32,776 keys: 11.15 us + 0.271 ns a key), the same for 1 and for 128 rows,
// and IndexerTopKRowsPerSMSM90 x SMs rows run in one such wave (1.36 x 132
// = 180 on the H200: 256 rows take 1.4-1.6 waves, 4,096 rows 21-26; the
// rows of 256 to 4,096 query rows within -13% / +11% at the 10th / 90th
// percentile, median -1%). TestIndexerTopKMeasured holds the fit to the
// rows. The kernel is latency-bound per row and the B200 and B300 rows of
// the same table (b200_sxm, b300_sxm, collected with GLM-5.2's config,
// index_topk 2048 as GLM-5's; testdata/perfdb_topk_b200.csv,
// perfdb_topk_b300.csv) fit the same form with nearly the same figures
// (10.67 and 10.35 us a wave, 0.285 and 0.274 ns a key, 1.35 rows per SM
// of their 148), so sm_100 and sm_103 take the H200 figures: median +0.5%
// (B200) and +4.2% (B300), 10th/90th percentiles within 20%
// (TestIndexerTopKBlackwell holds them to those rows).

// IndexerTopKShape is one step's decode top-k on one rank.
type IndexerTopKShape struct {
	Rows int // query rows: decode sequences x their verified positions (next_n)
	Keys int // keys each row ranks: its sequence's context
	TopK int // index_topk: the keys each row keeps
}

// Fitted H200 figures (see the comment above; TestIndexerTopKMeasured).
const (
	IndexerTopKRowBaseSM90   = 11.15 * unit.Microsecond
	IndexerTopKPerKeySM90    = 0.271 * unit.Nanosecond
	IndexerTopKRowsPerSMSM90 = 1.36
)

// IndexerTopK prices s on one rank: zero where every row keeps all its keys
// (Keys <= TopK) or without rows, else
//
//	t = (base + Keys x per_key) x max(1, Rows / (rows_per_SM x SMs))
//
// with the H200 figures on sm_90, sm_100 and sm_103; zero on other
// architectures, which have no rows (the op is then left to the scores'
// pricing, as before). A GPU without an SM count (a custom GPU that
// gives no hardware.custom_gpu.sms) runs its rows in one wave, the op's
// least: dividing by a single SM instead would price 128 rows as 94
// waves.
func (c *Costs) IndexerTopK(s IndexerTopKShape) cost.Estimate {
	if s.Rows <= 0 || s.TopK <= 0 || s.Keys <= s.TopK || !indexerTopKArch(c.GPU.Arch) {
		return cost.Estimate{}
	}
	waves := 1.0
	if sms := float64(c.GPU.SMs); sms > 0 {
		waves = math.Max(1, float64(s.Rows)/(IndexerTopKRowsPerSMSM90*sms))
	}
	body := (IndexerTopKRowBaseSM90 + unit.Seconds(float64(s.Keys))*IndexerTopKPerKeySM90) * unit.Seconds(waves)
	e := cost.Estimate{Time: body, Bytes: unit.Bytes(4 * float64(s.Rows) * float64(s.Keys)), Kernels: 1}
	e.Lo = body * unit.Seconds(LatencySpread.Lo)
	e.Hi = body * unit.Seconds(LatencySpread.Hi)
	e.Source = cost.Source{Kind: cost.Roofline, Formula: formulaIndexerTopK, Bound: "latency", Note: noteIndexerTopK}
	return e
}

// indexerTopKArch reports whether a has top-k rows in the perf database.
func indexerTopKArch(a Arch) bool { return a == SM90 || a == SM100 || a == SM103 }

const (
	formulaIndexerTopK = "(t_row + keys x t_key) x max(1, rows/(rows_per_SM x SMs)); 0 when keys <= index_topk"
	noteIndexerTopK    = "DSA indexer top-k per decode row (vLLM top_k_per_row_decode, SGLang fast_topk_transform_fused): fitted on the perf database's H200 kernel rows (11.15 us + 0.271 ns/key a wave of 1.36 rows/SM), which its B200/B300 rows match"
)
