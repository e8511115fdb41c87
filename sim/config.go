package sim

import (
	"fmt"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// Config is everything one decode-step evaluation depends on.
type Config struct {
	Model   *model.Config
	KVCache dtype.KVCache
	GPU     kernels.GPU
	GPUs    int
	Fabric  comm.Fabric
	// NIC joins nodes of Fabric.NodeGPUs GPUs when the replica spans
	// several (hardware.nic): collectives across nodes are priced on it
	// (comm/multinode.go). The zero Link: the fabric alone.
	NIC       comm.Link
	Layout    model.Layout
	Graphs    bool      // runtime.cuda_graphs
	AllReduce comm.Impl // runtime.allreduce
	// AllReducePolicy is the serving engine's all-reduce policy, which
	// resolves comm.Auto and names the engine's measured all-reduce tables
	// (serve.EngineInfo.AllReduce; zero: vLLM's).
	AllReducePolicy comm.Policy
	// Engine names the serving engine ("vllm", "sglang"; "" unknown): where
	// several engines' measured tables price an op (prefill attention),
	// its own answer first (kernels.Costs.Engine).
	Engine string
	// MoEA2A is the engine's expert-parallel token exchange
	// (runtime.moe_a2a_backend): with DeepEP, under DP attention and EP,
	// dispatch and combine are priced from the calibration's DeepEP tables
	// (normal kernels for steps with prefill, low-latency for decode steps
	// under A2ADeepEP) with the NCCL all-to-all model as fallback, and each
	// rank's routed experts compute only the pairs dispatched to it
	// (kernels.MoEShape.DeepEP).
	MoEA2A A2A
	// CaptureSize is the largest step, in tokens per attention rank, the
	// engine has captured CUDA graphs for: a decode step above it runs
	// eagerly (vLLM's max_cudagraph_capture_size; SGLang's
	// cuda_graph_max_bs x tokens per decode), and with piecewise graphs a
	// mixed step above it runs eagerly. 0 = no limit on decode steps
	// (every decode step replays a graph) and CaptureTokens for mixed ones.
	CaptureSize int
	// CaptureBatches are the decode batch sizes, in sequences per
	// attention rank and ascending, the engine captured CUDA graphs for
	// when it pads a decode batch to the next captured size (SGLang:
	// serve.CaptureBatches). A decode-only step of n sequences per rank at
	// most the largest runs the graph of the smallest size >= n: every op
	// at that size, the padding rows attending one key each. Empty: no
	// padding (each decode step is priced at its own size).
	CaptureBatches []int
	// MLACollectorBias prices the MLA decode module from a legacy-
	// collected perf-database table as measured, its collector's excess
	// kept (kernels.MLATable.LegacyCollector; the mla-collector mechanism
	// off). False: the excess measured on b200_sxm is taken off.
	MLACollectorBias bool
	// AnyEngineMLAPrefill lets another engine's MLA prefill table price a
	// vLLM step on every architecture (kernels.Costs.AnyEngineMLAPrefill;
	// the vllm-own-mla-prefill mechanism off).
	AnyEngineMLAPrefill bool
	// GDNRoofline prices Gated DeltaNet state updates by the roofline even
	// where a gdn table (the perf database's gdn_perf rows) covers them
	// (the gdn-table mechanism off).
	GDNRoofline bool
	// MoERouting is the perf database's skewed routing distribution the
	// routed experts are priced with where the chosen MoE table has rows
	// of it (kernels.MoEShape.Routing; the moe-routing mechanism, from
	// kernels.PerfDBRouting); "" prices uniform random routing.
	MoERouting string
	// EagerPrefill: the engine runs every step with a prefill chunk
	// without CUDA graphs (SGLang: only decode, verify and idle batches
	// replay graphs; serve.EagerPrefill). False: vLLM's piecewise graphs
	// for mixed and prefill steps up to the capture size.
	EagerPrefill bool
	// EngineLaunch: an eagerly launched kernel costs the engine's own host
	// time per kernel, measured on its profiler trace
	// (kernels.EngineHostLaunch(Engine): vLLM 44.3 us, SGLang 17.3 us).
	// False: kernels.HostLaunchLatency, PyTorch's tiny-op figure.
	EngineLaunch bool
	// LaunchAhead: the host issues an eager step's kernels ahead of the
	// GPU (launches are asynchronous), so the step's launch time is the
	// host time of all its eagerly launched kernels beyond the step's GPU
	// time, max(0, host - GPU), not each op's own excess summed.
	LaunchAhead bool
	// SparseMLA: DeepSeek Sparse Attention layers (an MLA model with a DSA
	// indexer) run as vLLM's FLASHMLA_SPARSE backend runs them on a bf16
	// KV cache: every token of the step, decode and prefill, in absorbed
	// MQA form (W_UK and W_UV on every token) through FlashMLA's sparse
	// kernel, q heads padded to its tile, each query over index_topk
	// entries (kernels.SparseMLA). False, or on a GPU without that kernel:
	// decodes through the MLA decode kernel over their selected keys and
	// prefill chunks un-absorbed (kv_b_proj up-projection, MHA over the
	// selected keys).
	SparseMLA bool
	// SparsePrefill: DSA layers' prefill chunks (not their decodes) run
	// absorbed through FlashMLA's sparse kernel as with SparseMLA, as
	// SGLang's NSA backend runs them with a FlashMLA prefill implementation
	// (flashmla_sparse, or flashmla_auto on a fresh extend) where it does
	// not take its dense MHA_ONE_SHOT path (GLM-5 on Blackwell never does).
	// Decodes keep the MLA decode kernel. Ignored where SparseMLA is set.
	SparsePrefill bool
	// IndexerTopK: DSA layers' decode rows select their index_topk keys in
	// a top-k kernel of its own after the indexer's scores (vLLM's
	// top_k_per_row_decode, SGLang's fast_topk_transform_fused), priced
	// per row and key (kernels.IndexerTopK: sm_90, sm_100, sm_103; zero
	// elsewhere). False: the decode scores op alone, which prices the
	// index keys' bytes.
	IndexerTopK bool
	// DecodePiecewise: uniform decode steps replay piecewise CUDA graphs,
	// attention launched eagerly between the pieces, as mixed steps do
	// (vLLM's cudagraph_mode PIECEWISE, its default before v0.11.0:
	// vllm-project/vllm#25444). False: full graphs for decode steps
	// (FULL_AND_PIECEWISE, FULL_DECODE_ONLY; SGLang).
	DecodePiecewise bool
	// GPUMemoryUtilization is the fraction of GPU memory the engine may use
	// (vLLM gpu_memory_utilization).
	GPUMemoryUtilization float64
	// Profile is the engine's memory-profile run that sizes the reserve
	// (MemoryProfile; zero: aiconfigurator's fixed 3.5 GiB + nccl_mem).
	Profile MemoryProfile
	Spec    Spec

	// KernelTables and CommTables are calibration tables (issue 4) consulted
	// before the roofline / alpha-beta models; nil means roofline only.
	KernelTables kernels.Lookup
	CommTables   comm.Lookup
	// Efficiency overrides the roofline efficiencies; the zero value means
	// kernels.EfficiencyFor(GPU).
	Efficiency kernels.Efficiency
}

// Limits of what sim accepts: far above any real deployment, and low
// enough that every token count a step computes in int arithmetic fits:
// sequences per group x query tokens x attention groups per TP group x DP
// is at most 2^24 x (MaxDraftTokens+1) x 2^16 < 2^45 (tp x dp = gpus <=
// 2^16), and the memory and roofline figures are float64 products.
const (
	MaxBatchSize = 1 << 24 // sequences in a step (workload.batch)
	MaxContext   = 1 << 24 // tokens per sequence (workload.context)
	MaxRanks     = 1 << 16 // hardware.gpus and each of parallel.tp, dp, ep
)

func fieldErrorf(field, format string, args ...any) *model.FieldError {
	return &model.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// shape is the parallel layout reduced to the numbers the step needs.
//
// Layout model (vLLM, with SGLang's DP attention as the one extension):
//
//   - attnTP = TP, or 1 with DPAttention: attention heads are split attnTP
//     ways. The GPUs form G = GPUs/attnTP attention groups, each running
//     ceil(B/G) of the B sequences (idle DP ranks run a padded dummy batch,
//     as vLLM pads DP ranks to the largest one, so every rank costs the
//     largest group's tokens).
//   - The MLP side (dense MLP, shared expert, embedding, lm_head) is split
//     over TP (model.Weights holds it so). Its TP group works on the tokens
//     of TP/attnTP attention groups: with attnTP = TP that is one group's
//     tokens and the TP AllReduce follows o_proj and the MLP/MoE sum; with
//     DP attention and TP > 1 an all-gather over TP follows attention and a
//     reduce-scatter follows the MLP instead (SGLang --enable-dp-attention).
//   - Routed experts: one copy over all GPUs as EP slots x expert-TP
//     (model.Layout.ExpertTP = TP*DP/EP). The DP groups (DP of them) feed
//     it: with DP = 1 every rank already holds all tokens (TP8 EP8 without
//     DP attention: no all-to-all, the AllReduce combines); with DP > 1
//     and EP > 1 each MoE layer has an all-to-all dispatch and combine; with
//     DP > 1 and EP = 1 vLLM's naive path all-gathers the DP groups' tokens
//     before the experts and reduce-scatters after.
type shape struct {
	gpus, tp, dp, ep int
	attnTP           int // attention split
	groups           int // attention groups G = GPUs/attnTP
	gather           int // attention groups per TP group (TP/attnTP)
	moeTP            int // expert split (model.Layout.ExpertTP)
	dpExchange       bool
}

func (c *Config) validate() (shape, error) {
	var sh shape
	m := c.Model
	if m == nil {
		return sh, fieldErrorf("Model", "no model")
	}
	if err := m.Validate(); err != nil {
		return sh, &model.FieldError{Field: "Model", Msg: err.Error()}
	}
	l := c.Layout
	for _, r := range []struct {
		key string
		v   int
	}{{"GPUs", c.GPUs}, {"Layout.TP", l.TP}, {"Layout.DP", l.DP}, {"Layout.EP", l.EP}} {
		if r.v > MaxRanks {
			return sh, fieldErrorf(r.key, "%d exceeds the limit of %d", r.v, MaxRanks)
		}
	}
	if c.GPUs < 1 {
		return sh, fieldErrorf("GPUs", "must be >= 1, got %d", c.GPUs)
	}
	if l.TP < 1 {
		return sh, fieldErrorf("Layout.TP", "must be >= 1, got %d", l.TP)
	}
	if l.DP == 0 && c.GPUs%l.TP == 0 {
		l.DP = c.GPUs / l.TP // the scenario default: dp = gpus/tp
	}
	if l.DP < 1 {
		return sh, fieldErrorf("Layout.DP", "must be >= 1, got %d", l.DP)
	}
	if l.EP < 1 {
		return sh, fieldErrorf("Layout.EP", "must be >= 1, got %d", l.EP)
	}
	if c.GPUs != l.TP*l.DP {
		return sh, fieldErrorf("GPUs", "gpus = %d but tp x dp = %d x %d = %d", c.GPUs, l.TP, l.DP, l.TP*l.DP)
	}
	if l.EP > c.GPUs {
		return sh, fieldErrorf("Layout.EP", "ep = %d exceeds the %d GPUs", l.EP, c.GPUs)
	}
	if err := m.CheckLayout(l); err != nil {
		if le, ok := err.(*model.LayoutError); ok {
			return sh, &model.FieldError{Field: "Layout." + le.Field, Msg: le.Msg}
		}
		return sh, &model.FieldError{Field: "Layout", Msg: err.Error()}
	}
	if err := c.GPU.Validate(); err != nil {
		return sh, &model.FieldError{Field: "GPU", Msg: err.Error()}
	}
	if c.GPUs > 1 && !(c.Fabric.BW > 0) {
		return sh, fieldErrorf("Fabric", "fabric %q has no bandwidth; %d GPUs need one", c.Fabric.Name, c.GPUs)
	}
	if c.AllReduce > comm.TwoShot {
		return sh, fieldErrorf("AllReduce", "unknown implementation %d", c.AllReduce)
	}
	if !(c.GPUMemoryUtilization > 0 && c.GPUMemoryUtilization <= 1) {
		return sh, fieldErrorf("GPUMemoryUtilization", "must be in (0, 1], got %g", c.GPUMemoryUtilization)
	}
	if c.CaptureSize < 0 || c.CaptureSize > MaxBatchSize {
		return sh, fieldErrorf("CaptureSize", "must be in [0, %d] tokens, got %d", MaxBatchSize, c.CaptureSize)
	}
	for i, b := range c.CaptureBatches {
		if b < 1 || b > MaxBatchSize || (i > 0 && b <= c.CaptureBatches[i-1]) {
			return sh, fieldErrorf("CaptureBatches", "must be ascending sizes in [1, %d], got %v", MaxBatchSize, c.CaptureBatches)
		}
	}
	if p := c.Profile; p.Tokens < 0 || p.Tokens > MaxBatchSize || p.Seqs < 0 || p.Seqs > MaxBatchSize {
		return sh, fieldErrorf("Profile", "tokens %d and seqs %d must be in [0, %d]", p.Tokens, p.Seqs, MaxBatchSize)
	}
	if p := c.Profile; p.MaxModelLen < 0 || p.MaxModelLen > MaxContext || (p.IndexerWorkspace && p.MaxModelLen == 0) {
		return sh, fieldErrorf("Profile", "max_model_len %d must be in [1, %d] with the indexer workspace, [0, %d] without", p.MaxModelLen, MaxContext, MaxContext)
	}
	if c.KVCache > dtype.KVFP8 {
		return sh, fieldErrorf("KVCache", "unknown KV-cache dtype %d", c.KVCache)
	}
	if err := c.Spec.validate(); err != nil {
		return sh, err
	}
	if c.Spec.Method == SpecMTP && m.MTPLayers == 0 {
		return sh, fieldErrorf("Spec.Method", "mtp needs MTP layers, and %s has none (num_nextn_predict_layers = 0); use eagle3 or ngram", m.Name)
	}
	c.Layout = l
	sh = shape{gpus: c.GPUs, tp: l.TP, dp: l.DP, ep: l.EP}
	sh.attnTP = l.AttentionTP()
	sh.groups = c.GPUs / sh.attnTP
	sh.gather = l.TP / sh.attnTP
	sh.moeTP = l.ExpertTP()
	sh.dpExchange = l.DP > 1
	return sh, nil
}

// A2A is an engine's expert-parallel token exchange.
type A2A uint8

const (
	// A2ANone: every EP rank sees the DP group's tokens (vLLM's naive and
	// allgather_reducescatter backends, SGLang's "none").
	A2ANone A2A = iota
	// A2ADeepEP: DeepEP, normal kernels for steps with prefill and
	// low-latency kernels for decode steps (SGLang --moe-a2a-backend
	// deepep, --deepep-mode auto).
	A2ADeepEP
	// A2ADeepEPLowLatency: DeepEP low-latency kernels for every step (vLLM
	// deepep_low_latency; SGLang --deepep-mode low_latency).
	A2ADeepEPLowLatency
	// A2ADeepEPNormal: DeepEP normal kernels for every step (vLLM
	// deepep_high_throughput; SGLang --deepep-mode normal).
	A2ADeepEPNormal
)

// impl is the DeepEP kernel set of a step (comm.EPShape.Impl): "" without
// DeepEP.
func (a A2A) impl(decode bool) string {
	switch a {
	case A2ADeepEP:
		if decode {
			return comm.DeepEPLowLatency
		}
		return comm.DeepEPNormal
	case A2ADeepEPLowLatency:
		return comm.DeepEPLowLatency
	case A2ADeepEPNormal:
		return comm.DeepEPNormal
	}
	return ""
}
