package serve

import (
	"fmt"
	"math"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
)

// Seq is one sequence of an engine step as the step coster sees it:
// Query new tokens this step (a prefill chunk, 1 for a decode, 1+K for a
// verify), Context tokens already in the KV cache before this step,
// Prefill for a prefill (or recompute) chunk rather than a decode or
// verify. It is sim's Seq, so that SimCoster hands a step's batch to sim
// as it is.
type Seq = sim.Seq

// StepCoster prices one engine step over a batch of sequences. cats receives
// the time per category (index = cost.Category); t is the step's GPU time.
// A decode Seq with Query 1+K is a speculative verify step and its price
// includes the draft work. Implementations must not keep seqs.
type StepCoster interface {
	StepCost(seqs []Seq) (t unit.Seconds, cats [cost.NumCategories]unit.Seconds)
}

// Memory is the KV-cache model: paged blocks of BlockSize tokens, each token
// KVBytesPerToken on every GPU of its attention group. With Groups > 1
// (DP ranks) each group has its own cache of KVCapacity per GPU. Under an
// engine whose row has a balancer (vLLM's DP engine cores, SGLang's
// DP-attention schedulers) each group is a scheduler with its own cache
// behind the front end's balancer (dpranks.go); otherwise (disaggregated
// pools, Config.PooledDP, Config.PooledSGLangDP) the groups' blocks are
// pooled under one scheduler, with SGLang's per-rank prefill budget and
// chunks in progress (sched_sglang.go).
type Memory struct {
	KVBytesPerToken unit.Bytes // per token per GPU (draft layers included)
	KVCapacity      unit.Bytes // KV-cache memory per GPU
	BlockSize       int        // tokens per block: vLLM 16 (64 with FlashMLA), SGLang page_size 1
	Groups          int        // attention groups (DP attention ranks); 1 without DP attention
	// SeqBlocks is the blocks a running request holds whatever its
	// length: the recurrent state of linear-attention / Mamba layers and
	// the sliding-window layers' KV, in blocks of the growing KV (0 for
	// models without them).
	SeqBlocks int
}

// Spec is speculative decoding as the scheduler sees it: every decode step
// verifies DraftTokens drafts per sequence (Query 1+K), and the number
// accepted is drawn from the per-position conditional acceptance chain.
type Spec struct {
	DraftTokens int       // K; 0 = no speculative decoding
	Acceptance  []float64 // conditional acceptance per position: K values, or 1 for all positions
	// Lookahead is vLLM's num_lookahead_tokens: extra KV slots reserved per
	// step for drafts the drafter writes (K for EAGLE/MTP, 0 for n-gram).
	Lookahead int
	// Sync: the engine runs each speculative iteration as separate model
	// forwards with host syncs between them and without overlap
	// scheduling (SGLang's V1 EAGLE worker, SpecSyncDefault): every
	// forward's host preparation is exposed, SpecSyncForwards of them per
	// step. Needs DraftTokens > 0 and AsyncScheduling off.
	Sync bool
	// PrepBubble: the engine overlaps its host preparation of a decode
	// step only with the previous step's draft passes, not with its
	// target forward (vLLM's async scheduling with EAGLE/MTP before the
	// zero-bubble change, SpecPrepBubbleDefault): a decode step's wall time
	// is its GPU time plus max(0, host - DraftShare x GPU). Needs
	// DraftTokens > 0 and AsyncScheduling; prefill steps are unchanged.
	PrepBubble bool
	// DraftShare is the draft passes' share of a decode step's GPU time,
	// in [0, 1) (the part of the step the host preparation overlaps under
	// PrepBubble).
	DraftShare float64
}

// HostOverhead is the host (CPU) time of one step that the step coster does
// not price: scheduling, input preparation, output processing. Async
// scheduling hides it behind the GPU for steps without prefill
// (vLLM's async scheduling, vllm-project/vllm PRs #27614/#27914);
// otherwise it adds to the step.
type HostOverhead struct {
	PerStep unit.Seconds
	PerSeq  unit.Seconds // per scheduled sequence
}

// FrontEnd is the serving API server in front of the engine core, which
// every request crosses one at a time: vLLM's OpenAI-compatible server
// tokenises prompts on one thread (vllm-project/vllm
// `vllm/entrypoints/openai/serving_engine.py`,
// ThreadPoolExecutor(max_workers=1), quoted in vllm-project/vllm issue
// #25301: "requests are forced to wait in a serialized queue for
// preprocessing (tokenization)") and sends each to the engine core, whose
// busy loop drains its input queue between steps
// (`vllm/v1/engine/core.py`, run_busy_loop: _process_input_queue, then
// _process_engine_step); SGLang's TokenizerManager tokenises in the HTTP
// server process and sends each request to the scheduler, which receives
// its requests once per iteration (`python/sglang/srt/managers/
// tokenizer_manager.py`, scheduler.py recv_requests). `vllm bench serve`'s
// random dataset sends its prompts as text (`vllm/benchmarks/datasets.py`
// @ f2e97dd, RandomDataset: decoded token ids), so every prompt is
// tokenised again by the server.
//
// The zero FrontEnd, the default, hands each request to the engine at its
// send. Measured on the shipped corpus (validate corpus --with front-end,
// 304 rows) the front end at TokenizeTime raises TTFT MAPE from 57.9% to
// 78.7%: when tokenising a prompt takes longer than a decode step the
// closed loop's requests cluster behind one another's prefills instead of
// spreading out, which the measured runs do not show. Why: with fixed
// lengths a closed loop's order of finishing is fixed in steps, not
// seconds (requests whose first tokens came in consecutive steps finish
// in consecutive steps). Without a front end a finished request's
// successor joins the very next step, so its prefill step separates the
// next finisher and prefills seldom queue; with one, the successor misses
// that step and the next finishers' successors arrive during its prefill
// and queue behind it (Llama-3.1-70B fp8 on 8x B200, vLLM, 8k/1k at C=4:
// TTFT 252 ms without, 449 ms with, one prefill step vs 1.5; measured 263
// ms). The no-front-end spacing is itself an artefact of the lockstep
// loop. What spreads a real closed loop out is the client's own spread
// of lengths (Workload.RangeStyle: InferenceX's harness draws every
// output length on [int(0.8 L), L]); with it on the corpus's InferenceX
// rows (validate corpus --with front-end, 1,310 rows) the front end at
// TokenizeTime lowers TTFT MAPE from 54.8% to 52.6% (agg vLLM 45.5% ->
// 43.0%, agg SGLang 65.8% -> 63.6%) and moves TPOT MAPE by at most 0.1
// point (bench/RESULTS-client.md). Scenarios take TokenizeTime by
// default (runtime.tokenize_us_per_token; the front-end mechanism);
// PerRequest stays 0 until the API server's own cost per request is
// measured at op level. The zero FrontEnd here is the library's default.
type FrontEnd struct {
	// PerRequest is the API server's own time per request beyond
	// tokenisation (HTTP, request building, IPC to the engine core).
	// Default 0: no op-level measurement of it is cited.
	PerRequest unit.Seconds
	// PerInputToken is tokenisation time per prompt token on the API
	// server's one thread (TokenizeTime is the cited figure).
	PerInputToken unit.Seconds
}

// TokenizeTime is FrontEnd.PerInputToken as measured, 3.6 us per token:
// the median of 26 timings (quartiles 3.2 and 5.1 us) of a Hugging Face
// fast tokenizer called through transformers' PreTrainedTokenizerFast, as
// vLLM's and SGLang's API servers call it, on one thread of a server Xeon
// (the device machine's, one H200 host; tokenizers 0.23.2, transformers
// 5.17.0), encoding prompts of 1k-16k tokens built as InferenceX's and
// vLLM's benchmark clients build them (consecutive token ids decoded to
// text) for the Llama 3 tokenizer (128k, its split pattern) and the o200k
// split pattern of gpt-oss (Llama 4's 200k vocabulary), each checked
// identical to tiktoken's encoding (bench/tokenize, bench/RESULTS-tokenize.md).
// Natural English text costs the same (median 3.6 us); the cost per token
// grows with the prompt (median 3.1 us at 1k, 4.1 us at 8k). It replaces
// 1 us per token, a figure read from desktop-CPU throughputs (vllm-project/
// vllm PR #10635; marcelroed/gigatoken README.md @ fac0114, a Ryzen 7
// 9800X3D): a server core runs the same tokenizer 2-4x slower.
const TokenizeTime unit.Seconds = 3.6e-6

// Workload is what `vllm bench serve` sends (vllm-project/vllm
// `vllm/benchmarks/serve.py` @ def9ce8, `vllm/benchmarks/datasets.py` @
// f2e97dd).
type Workload struct {
	Requests int // --num-prompts
	// MaxConcurrency is --max-concurrency: at most this many requests in
	// flight, the next sent when one finishes. 0 = no limit.
	MaxConcurrency int
	// RequestRate is --request-rate in requests/s; +Inf sends every request
	// at t = 0 (a closed loop when MaxConcurrency is set).
	RequestRate float64
	// Burstiness is --burstiness: the gamma shape of the inter-arrival
	// times (1 = Poisson, +Inf = constant intervals).
	Burstiness float64
	// InputTokens and OutputTokens are --random-input-len and
	// --random-output-len; RangeRatio is --random-range-ratio and
	// RangeStyle the client's reading of it (lengths uniform in
	// [floor(L(1-r)), ceil(L(1+r))] for vllm bench serve, in
	// [int(L r), L] for SGLang's and InferenceX's benchmark_serving.py).
	// Every request generates exactly its output length (--ignore-eos).
	InputTokens  int
	OutputTokens int
	RangeRatio   float64
	RangeStyle   RangeStyle
	// Trace replays a request log: each request's arrival and lengths, in
	// arrival order (Requests must equal its length). RequestRate,
	// Burstiness, the lengths and RangeRatio are then unused, and the run is
	// not judged overloaded (the log's latencies are of the same requests).
	Trace []TraceRequest
	// Prefix, when set, says what the prompts share, for prefix caching
	// (a request log's hash IDs, when it has them, take its place).
	Prefix *PrefixLoad
	// HashBlockTokens is the tokens each of a trace's HashIDs stands for
	// (Mooncake's block of 512 tokens); 0 = DefaultHashBlockTokens.
	HashBlockTokens int
	// Lengths, when set, is an empirical distribution of (input, output)
	// lengths: each request draws one pair uniformly (seeded) in place of
	// InputTokens, OutputTokens and RangeRatio (workload.lengths).
	Lengths []LengthPair
	// Turns > 1 makes the load sessions of Turns requests (workload.turns):
	// turn k+1 is sent ThinkTime after turn k finishes, and its prompt is
	// turn k's prompt and output followed by its own new input (the drawn
	// input length), so that a prefix cache finds the earlier turns. The
	// arrival process (rate or closed loop) starts the sessions' first
	// turns; Requests counts every turn. 0 or 1: independent requests.
	Turns     int
	ThinkTime unit.Seconds
}

// LengthPair is one (input, output) length of Workload.Lengths.
type LengthPair struct{ In, Out int }

// MaxTurns bounds Workload.Turns.
const MaxTurns = 1 << 10

// DefaultHashBlockTokens is the tokens per hash ID of Mooncake traces
// (kvcache-ai/Mooncake `FAST25-release/traces`: block size 512).
const DefaultHashBlockTokens = 512

// PrefixLoad is a synthetic workload's shared content: every request's
// first SystemTokens tokens (a system prompt), or its first
// floor(HitRate x input) tokens, are the same document for every request
// (at most one of the two is set). The rest of each request is its own
// (described, so that a preempted request finds its own blocks again).
type PrefixLoad struct {
	SystemTokens int
	HitRate      float64
}

// TraceRequest is one request of a replayed log.
type TraceRequest struct {
	Arrival                   float64 // seconds from the start, >= 0
	InputTokens, OutputTokens int
	// HashIDs are the prompt's blocks of HashBlockTokens tokens by content
	// (Mooncake's hash_ids); nil = not known.
	HashIDs []int64
	// After lists the earlier requests (indices) this one waits for and
	// Wait the seconds after the last finishes until it is sent (Mooncake
	// agentic traces' wait_for, delay + tool_wait_ms); see Request.After.
	After []int
	Wait  float64
}

// Config is one serving point: the engine's scheduler settings, its KV
// cache, speculative decoding, the workload and the seed.
type Config struct {
	Engine Engine
	// MaxNumBatchedTokens is vLLM's max_num_batched_tokens (the token budget
	// of one step) or SGLang's chunked_prefill_size (the prefill tokens of
	// one prefill batch).
	MaxNumBatchedTokens int
	// MaxNumSeqs is vLLM's max_num_seqs or SGLang's max_running_requests
	// (0 for SGLang: bounded by the KV cache only).
	MaxNumSeqs int
	// MaxPrefillTokens is SGLang's max_prefill_tokens (unused by vLLM).
	MaxPrefillTokens int
	// MixedChunk is SGLang's --enable-mixed-chunk: running decodes join the
	// prefill batch (vLLM always mixes).
	MixedChunk bool
	// ScheduleConservativeness is SGLang's --schedule-conservativeness
	// (default 1): a waiting request is admitted only while its prompt plus
	// min(output, 4096) tokens fit in the free KV less the running
	// requests' expected further tokens, scaled by a new-token ratio that
	// starts at 0.7 x this, decays each decode step to 0.14 of that and is
	// reset after a retraction (sched_sglang.go). 0 = admission by the
	// chunk's KV alone. Unused by vLLM.
	ScheduleConservativeness float64
	AsyncScheduling          bool
	// ScheduleAhead: with AsyncScheduling the engine builds each step
	// while the step before it runs, so a request that reaches the engine
	// during a step joins no earlier than the step after the next one
	// (run.go, client.stepEnd). vLLM V1's step_with_batch_queue
	// (vllm-project/vllm `vllm/v1/engine/core.py` @ 00080ee: it schedules
	// and submits batch N+1, then blocks on batch N's result; the input
	// queue is read only between two calls, so a request that arrives
	// while N runs is scheduled into N+2); SGLang's event_loop_overlap
	// (`python/sglang/srt/managers/scheduler.py` @ 0003215: receive,
	// build and launch batch i, then process batch i-1's result). An
	// idle engine (nothing in flight) schedules a request at once.
	ScheduleAhead bool
	// LongPrefillTokenThreshold is vLLM's --long-prefill-token-threshold:
	// the V1 scheduler gives a request at most this many prefill tokens in
	// one step, running and waiting requests alike (vllm-project/vllm
	// `vllm/v1/core/sched/scheduler.py` @ b4622cf, schedule: "if 0 <
	// long_prefill_token_threshold < num_new_tokens: num_new_tokens =
	// long_prefill_token_threshold"). 0 = no cap (vLLM's default). Unused
	// by SGLang.
	LongPrefillTokenThreshold int
	// ReserveFullISL is vLLM's scheduler_reserve_full_isl: a waiting (or
	// preempted) request is admitted only when the KV cache's free blocks
	// hold its whole known sequence (prompt plus the tokens it has
	// generated, less the prompt blocks other requests already hold), not
	// just its first chunk; otherwise admission stops for the step, with
	// no preemption (vllm-project/vllm `vllm/v1/core/kv_cache_manager.py`
	// @ 003df29, allocate_slots with full_sequence_must_fit, which the
	// scheduler's waiting loop passes as scheduler_reserve_full_isl and
	// breaks on None; PR #37307). On by default from v0.19.0
	// (ReserveFullISLDefault). Unused by SGLang.
	ReserveFullISL bool
	// RecoverPreempted models vLLM's prefix cache over a request's own
	// tokens: KVCacheManager.free returns a preempted request's blocks to
	// the free queue with their hashes kept, tail blocks first so they are
	// evicted first (vllm/v1/core/block_pool.py free_blocks, "Free blocks
	// in reverse order so that the tail blocks are evicted first"), and
	// its re-admission's get_computed_blocks finds those of its prompt and
	// generated tokens not yet evicted, so the recompute covers only the
	// evicted part (vllm/v1/core/kv_cache_manager.py @ 003df29). Applies
	// with prefix caching on (NoPrefixCache false, vLLM's default). Unused
	// by SGLang. Without a prefix cache of its own (a load whose requests
	// share nothing), the block pool follows the free queue by position
	// (kvcache.go); with one, the cache's own hashing.
	RecoverPreempted bool
	// MaxNumPartialPrefills and MaxLongPartialPrefills are vLLM's
	// --max-num-partial-prefills and --max-long-partial-prefills (default
	// 1; 0 reads as 1). The V1 scheduler does not limit concurrent partial
	// prefills by them (scheduler.py @ b4622cf never reads them); their one
	// effect is SchedulerConfig.__post_init__'s (`vllm/config/scheduler.py`
	// @ 01230b4): MaxNumPartialPrefills > 1 with
	// LongPrefillTokenThreshold 0 sets the threshold to int(max_model_len x
	// 0.04) (vllmLongPrefill). Unused by SGLang.
	MaxNumPartialPrefills, MaxLongPartialPrefills int
	// MaxModelLen is vLLM's max_model_len (its default: the model's
	// max_position_embeddings); read only for the threshold above. 0 =
	// unknown.
	MaxModelLen int
	// PrefillDecodeInterval is SGLang's --prefill-decode-interval: after a
	// step with prefill chunks the scheduler runs this many rounds without
	// new prefill work (sched_sglang.go). 0 (the default) = off. The flag
	// came with sgl-project/sglang PR #35017 (merged 2026-08-16), after the
	// releases the shipped corpus measured (0.5.5 to 0.5.10). Unused by
	// vLLM.
	PrefillDecodeInterval int
	// PrefillScheduleInterval is vLLM's --prefill-schedule-interval
	// (SchedulerConfig.prefill_schedule_interval, vllm-project/vllm PR
	// #44558, merged 2026-06): on an engine of DP ranks (Memory.Groups >
	// 1) prefill work, new and in progress, runs only on every N-th step
	// of a DP wave while running requests decode, unless the last step
	// that took prefills left requests waiting (sched_vllm.go). 0 or 1
	// (vLLM's default) = every step. One engine without DP ignores it, as
	// vLLM's releases do (PR #54627, open, would change that). Unused by
	// SGLang.
	PrefillScheduleInterval int
	// SchedulerRecvInterval is SGLang's --scheduler-recv-interval N: the
	// scheduler takes new requests from its input queue only when the
	// SchedulerRecvSkipper's count reaches N (sched_sglang.go, receive).
	// 0 or 1 (SGLang's default) = every iteration. SGLang refuses it with
	// DP attention (the skipper asserts not enable_dp_attention), so it
	// must be at most 1 when Memory.Groups > 1. Unused by vLLM.
	SchedulerRecvInterval int
	// CUDAGraphMax is the largest decode step the engine runs in a CUDA
	// graph, as its flag gives it: vLLM's --max-cudagraph-capture-size (in
	// tokens), SGLang's --cuda-graph-max-bs (in requests per attention
	// rank); a larger step runs eagerly (CaptureSize). 0 = the engine's
	// default for the GPU.
	CUDAGraphMax int
	// CUDAGraphSizes is vLLM's cudagraph_capture_sizes
	// (--cudagraph-capture-sizes, or compilation_config's): the step sizes,
	// in tokens, it captures CUDA graphs for; a uniform decode step pads
	// to the smallest listed size at least as large, and the largest
	// listed size within MaxNumBatchedTokens is the capture limit
	// (CaptureSize, CaptureBatches). Nil = vLLM's default list. Unused by
	// SGLang.
	CUDAGraphSizes []int
	Host           HostOverhead
	// PooledDP pools the DP ranks (Memory.Groups > 1) under one
	// scheduler with one token budget and one KV pool, the model before
	// per-rank DP; false (the default) runs each rank as the engine's
	// engine core of its own behind the engine's balancer where the
	// engine row has one (dpranks.go); SGLang's ranks are pooled by
	// PooledSGLangDP instead. Disaggregated pools are pooled.
	PooledDP bool
	// PooledSGLangDP is PooledDP for SGLang's DP-attention ranks: they
	// are pooled under one scheduler (the model before per-rank SGLang
	// DP); false (the default) runs each rank as a scheduler of its own
	// behind SGLang's DataParallelController (dpranks.go).
	PooledSGLangDP bool
	// DecodeRecompute makes an SGLang decode instance of a disaggregated
	// run compute each transferred request's last prompt token as a
	// prefill step, as vLLM's does, instead of SGLang's prebuilt
	// admission (sched_sglang.go, admitPrebuilt); set only by the
	// prebuilt-decode mechanism.
	DecodeRecompute bool
	// FrontEnd is the API server the requests cross one at a time before
	// the engine core sees them; zero (the default) = none.
	FrontEnd FrontEnd
	Memory   Memory
	Spec     Spec
	Workload Workload
	// NoPrefixCache turns the engine's prefix caching off (vLLM
	// --no-enable-prefix-caching, SGLang --disable-radix-cache). Prefix
	// caching is on by default in both; it matters only for loads that
	// describe shared content (Request.Prefix).
	NoPrefixCache bool
	// SLO is goodput's objectives (zero: no goodput).
	SLO SLO
	// Disagg, when set, serves the load disaggregated: prefill and
	// decode pools with their own memory and step prices (disagg.go);
	// Memory is then the decode pool's.
	Disagg *Disagg
	// Load, when set, replaces Workload's random dataset and arrivals
	// (a request log, a trace); Workload.MaxConcurrency still limits
	// the requests in flight. Nil: Workload.
	Load Load
	Seed uint64
}

// GiB is 2^30 bytes.
const GiB unit.Bytes = 1 << 30

// DefaultConfig is the engine's default configuration on a GPU of the given
// name and total memory (the engine row's defaults, cited there), with a
// 1024-in / 128-out random workload of 1000 requests sent at once (vllm
// bench serve's defaults), async scheduling on and no host overhead.
// Memory's KVBytesPerToken and KVCapacity must be filled in by the caller.
// An unknown engine gets vLLM's block size and no scheduler settings
// (Validate rejects it).
func DefaultConfig(e Engine, gpuName string, gpuMemory unit.Bytes) Config {
	c := Config{
		Engine:          e,
		AsyncScheduling: true,
		Memory:          Memory{BlockSize: 16, Groups: 1},
		Workload: Workload{Requests: 1000, RequestRate: math.Inf(1), Burstiness: 1,
			InputTokens: 1024, OutputTokens: 128},
	}
	if e.valid() {
		engines[e].defaults(&c, gpuName, gpuMemory)
	}
	return c
}

func fieldErrorf(field, format string, args ...any) *model.FieldError {
	return &model.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// MaxDraftTokens bounds Spec.DraftTokens.
const MaxDraftTokens = 16

// maxTokens bounds the lengths so that token counts never overflow.
const maxTokens = 1 << 24

// maxInterval bounds PrefillDecodeInterval and the other intervals.
const maxInterval = 1 << 20

// MaxArrival bounds a replayed request's arrival (seconds from the start:
// about 116 days). Beyond it the simulated clock's float64 loses the
// sub-millisecond resolution a step needs (at 1e300 s adding a 20 ms step
// is a no-op and every latency reads 0).
const MaxArrival = 1e7

func finiteNonNeg(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// validateCapture checks vLLM's capture sizes (Config.CUDAGraphSizes,
// CUDAGraphMax) against the token budget of an engine instance: the
// config's (pool "") or a disaggregated pool's ("Disagg.Prefill",
// "Disagg.Decode"), own when the pool sets its MaxNumBatchedTokens, whose
// field then names the errors of a budget that holds no size.
func (c *Config) validateCapture(budget int, pool string, own bool) error {
	if c.Engine != VLLM || len(c.CUDAGraphSizes) == 0 {
		return nil
	}
	in := *c
	in.MaxNumBatchedTokens, in.Disagg = budget, nil
	// The sizes as given, before vLLM rounds them to whole requests of
	// 1 + K tokens (vllmCaptureSizes), which it does after this check.
	plain := in
	plain.Spec.DraftTokens = 0
	sizes := vllmCaptureSizes(&plain)
	field, on := "CUDAGraphSizes", ""
	if pool != "" {
		on = " on the " + strings.ToLower(strings.TrimPrefix(pool, "Disagg.")) + " pool"
		if own {
			field = pool + ".MaxNumBatchedTokens"
		}
	}
	if len(sizes) == 0 {
		return fieldErrorf(field, "no size within max_num_batched_tokens %d, got %v (vLLM%s would capture no CUDA graph: turn them off instead)", budget, c.CUDAGraphSizes, on)
	}
	if len(vllmCaptureSizes(&in)) == 0 {
		return fieldErrorf("CUDAGraphSizes", "no size holds one decode of %d tokens (1 + draft tokens), got %v (vLLM refuses it)", 1+c.Spec.DraftTokens, c.CUDAGraphSizes)
	}
	if top := sizes[len(sizes)-1]; c.CUDAGraphMax > 0 && c.CUDAGraphMax != top {
		// vllm/config/vllm.py @ 09f030e, _set_cudagraph_sizes: "customized
		// max_cudagraph_capture_size ... should be consistent with the max
		// value of cudagraph_capture_sizes" (a ValueError).
		if field != "CUDAGraphSizes" {
			return fieldErrorf(field, "%d tokens hold capture sizes up to %d, but max_cudagraph_capture_size is %d (vLLM%s refuses both inconsistent)", budget, top, c.CUDAGraphMax, on)
		}
		return fieldErrorf("CUDAGraphMax", "%d must equal the largest capture size within max_num_batched_tokens, %d (vLLM%s refuses both inconsistent)", c.CUDAGraphMax, top, on)
	}
	return nil
}

// Validate checks every field; the first error found names its field.
func (c *Config) Validate() error { return c.validate(nil) }

// ValidatePoolBudgets is Validate for the config of a disaggregated run
// whose pools are not built yet (c.Disagg nil): the pools' own token
// budgets prefill and decode (Pool.MaxNumBatchedTokens, 0: the config's)
// are checked, and the capture sizes against each, with the errors
// Validate gives for a Disagg holding them; the rest of each pool
// (instances, memory, step coster) is checked once it is built. With
// c.Disagg set it is Validate.
func (c *Config) ValidatePoolBudgets(prefill, decode int) error {
	if c.Disagg != nil {
		return c.Validate()
	}
	return c.validate(&[2]int{prefill, decode})
}

// validate is Validate; budgets, when not nil, are the own token budgets
// of a disaggregated run's pools not yet in c.Disagg (ValidatePoolBudgets).
func (c *Config) validate(budgets *[2]int) error {
	if !c.Engine.valid() {
		return fieldErrorf("Engine", "unknown engine %d (want %s)", c.Engine, EngineNames(" or "))
	}
	k := c.Spec.DraftTokens
	if c.MaxNumBatchedTokens < 1+k || c.MaxNumBatchedTokens > maxTokens {
		return fieldErrorf("MaxNumBatchedTokens", "must be in [%d, %d], got %d", 1+k, maxTokens, c.MaxNumBatchedTokens)
	}
	if err := engines[c.Engine].validate(c); err != nil {
		return err
	}
	if !finiteNonNeg(float64(c.Host.PerStep)) {
		return fieldErrorf("Host.PerStep", "must be finite and >= 0, got %g", float64(c.Host.PerStep))
	}
	if !finiteNonNeg(float64(c.Host.PerSeq)) {
		return fieldErrorf("Host.PerSeq", "must be finite and >= 0, got %g", float64(c.Host.PerSeq))
	}
	if c.PrefillDecodeInterval < 0 || c.PrefillDecodeInterval > maxInterval {
		return fieldErrorf("PrefillDecodeInterval", "must be in [0, %d] rounds, got %d", maxInterval, c.PrefillDecodeInterval)
	}
	if c.PrefillScheduleInterval < 0 || c.PrefillScheduleInterval > maxInterval {
		return fieldErrorf("PrefillScheduleInterval", "must be in [0, %d] steps, got %d", maxInterval, c.PrefillScheduleInterval)
	}
	if c.SchedulerRecvInterval < 0 || c.SchedulerRecvInterval > maxInterval {
		return fieldErrorf("SchedulerRecvInterval", "must be in [0, %d] iterations, got %d", maxInterval, c.SchedulerRecvInterval)
	}
	if c.CUDAGraphMax < 0 || c.CUDAGraphMax > 1<<20 {
		return fieldErrorf("CUDAGraphMax", "must be in [0, %d], got %d", 1<<20, c.CUDAGraphMax)
	}
	for _, n := range c.CUDAGraphSizes {
		if n < 1 || n > 1<<20 {
			return fieldErrorf("CUDAGraphSizes", "sizes must be in [1, %d] tokens, got %d", 1<<20, n)
		}
	}
	pools := budgets // the pools' own budgets; nil: aggregated
	if c.Disagg != nil {
		pools = &[2]int{c.Disagg.Prefill.MaxNumBatchedTokens, c.Disagg.Decode.MaxNumBatchedTokens}
	}
	if pools == nil {
		if err := c.validateCapture(c.MaxNumBatchedTokens, "", false); err != nil {
			return err
		}
	}
	if c.Engine == SGLang && c.SchedulerRecvInterval > 1 && c.Memory.Groups > 1 {
		return fieldErrorf("SchedulerRecvInterval", "%d needs DP attention off (SGLang's SchedulerRecvSkipper asserts not enable_dp_attention), got %d DP ranks", c.SchedulerRecvInterval, c.Memory.Groups)
	}
	if c.MaxModelLen < 0 || c.MaxModelLen > maxTokens {
		return fieldErrorf("MaxModelLen", "must be in [0, %d] tokens, got %d", maxTokens, c.MaxModelLen)
	}
	if !finiteNonNeg(c.ScheduleConservativeness) {
		return fieldErrorf("ScheduleConservativeness", "must be finite and >= 0, got %g", c.ScheduleConservativeness)
	}
	if !finiteNonNeg(float64(c.FrontEnd.PerRequest)) {
		return fieldErrorf("FrontEnd.PerRequest", "must be finite and >= 0, got %g", float64(c.FrontEnd.PerRequest))
	}
	if !finiteNonNeg(float64(c.FrontEnd.PerInputToken)) {
		return fieldErrorf("FrontEnd.PerInputToken", "must be finite and >= 0, got %g", float64(c.FrontEnd.PerInputToken))
	}
	if err := c.validateMemory(); err != nil {
		return err
	}
	poolNames := [2]string{"Disagg.Prefill", "Disagg.Decode"}
	if c.Disagg != nil {
		if err := c.Disagg.validate(k); err != nil {
			return err
		}
	}
	if err := c.sglangRankShares(); err != nil {
		return err
	}
	if c.Disagg == nil && pools != nil {
		for i, name := range poolNames {
			if err := validatePoolBudget(name, pools[i], k); err != nil {
				return err
			}
		}
	}
	if pools != nil {
		// Each pool is an engine instance started with its own
		// --max-num-batched-tokens (Pool.MaxNumBatchedTokens, else the
		// config's), which its capture sizes are filtered by.
		for i, name := range poolNames {
			budget := c.MaxNumBatchedTokens
			if pools[i] > 0 {
				budget = pools[i]
			}
			if err := c.validateCapture(budget, name, pools[i] > 0); err != nil {
				return err
			}
		}
	}
	if err := c.SLO.validate(); err != nil {
		return err
	}
	if err := c.Spec.validate(); err != nil {
		return err
	}
	if c.Spec.PrepBubble && (!c.AsyncScheduling || c.Spec.DraftTokens <= 0) {
		return fieldErrorf("Spec.PrepBubble", "the overlap of a speculative step's host preparation with its draft passes needs async scheduling and draft tokens")
	}
	if !(c.Spec.DraftShare >= 0 && c.Spec.DraftShare < 1) {
		return fieldErrorf("Spec.DraftShare", "must be in [0, 1), got %g", c.Spec.DraftShare)
	}
	if c.Spec.Sync && c.AsyncScheduling {
		return fieldErrorf("Spec.Sync", "a synchronous speculative worker runs without overlap; AsyncScheduling must be off")
	}
	if c.Load != nil {
		// The load's requests are checked once generated; of Workload
		// only the client's limit applies.
		if c.Workload.MaxConcurrency < 0 {
			return fieldErrorf("Workload.MaxConcurrency", "must be 0 (no limit) or positive, got %d", c.Workload.MaxConcurrency)
		}
		return nil
	}
	return c.Workload.validate()
}

func (c *Config) validateMemory() *model.FieldError {
	m := c.Memory
	if m.SeqBlocks < 0 || m.SeqBlocks > math.MaxInt32/2 {
		return fieldErrorf("Memory.SeqBlocks", "must be in [0, %d], got %d", math.MaxInt32/2, m.SeqBlocks)
	}
	if !(m.KVBytesPerToken > 0) || math.IsInf(float64(m.KVBytesPerToken), 0) {
		return fieldErrorf("Memory.KVBytesPerToken", "must be finite and > 0, got %g", float64(m.KVBytesPerToken))
	}
	if !(m.KVCapacity > 0) || math.IsInf(float64(m.KVCapacity), 0) {
		return fieldErrorf("Memory.KVCapacity", "must be finite and > 0, got %g", float64(m.KVCapacity))
	}
	if m.BlockSize < 1 || m.BlockSize > 1<<16 {
		return fieldErrorf("Memory.BlockSize", "must be in [1, 65536], got %d", m.BlockSize)
	}
	if m.Groups < 1 || m.Groups > 1<<16 {
		return fieldErrorf("Memory.Groups", "must be in [1, 65536], got %d", m.Groups)
	}
	return nil
}

func (s Spec) validate() error {
	k := s.DraftTokens
	if k < 0 || k > MaxDraftTokens {
		return fieldErrorf("Spec.DraftTokens", "must be in [0, %d], got %d", MaxDraftTokens, k)
	}
	if s.Lookahead < 0 || s.Lookahead > MaxDraftTokens {
		return fieldErrorf("Spec.Lookahead", "must be in [0, %d], got %d", MaxDraftTokens, s.Lookahead)
	}
	if k == 0 {
		if len(s.Acceptance) != 0 {
			return fieldErrorf("Spec.Acceptance", "set without draft tokens")
		}
		if s.Sync {
			return fieldErrorf("Spec.Sync", "set without draft tokens")
		}
		return nil
	}
	if n := len(s.Acceptance); n != 1 && n != k {
		return fieldErrorf("Spec.Acceptance", "want 1 value or DraftTokens = %d values, got %d", k, n)
	}
	for i, a := range s.Acceptance {
		if !(a >= 0 && a <= 1) {
			return fieldErrorf("Spec.Acceptance", "value %d is %g, outside [0, 1]", i+1, a)
		}
	}
	return nil
}

func (w Workload) validateTrace() error {
	if len(w.Trace) != w.Requests {
		return fieldErrorf("Workload.Trace", "holds %d requests, Workload.Requests says %d", len(w.Trace), w.Requests)
	}
	prev := 0.0
	for i, r := range w.Trace {
		if !(r.Arrival >= prev) || !(r.Arrival <= MaxArrival) {
			return fieldErrorf("Workload.Trace", "request %d: arrival %g s: want >= 0, at most %g s and not before the previous (%g s)", i, r.Arrival, float64(MaxArrival), prev)
		}
		prev = r.Arrival
		for _, a := range r.After {
			if a < 0 || a >= i {
				return fieldErrorf("Workload.Trace", "request %d: waits for request %d, which is not an earlier one", i, a)
			}
		}
		if !finiteNonNeg(r.Wait) {
			return fieldErrorf("Workload.Trace", "request %d: wait %g s: want finite and >= 0", i, r.Wait)
		}
		if r.InputTokens < 1 || r.InputTokens > maxTokens || r.OutputTokens < 1 || r.OutputTokens > maxTokens {
			return fieldErrorf("Workload.Trace", "request %d: lengths %d in / %d out: each must be in [1, %d]", i, r.InputTokens, r.OutputTokens, maxTokens)
		}
	}
	return nil
}

func (w Workload) validatePrefix() error {
	if w.HashBlockTokens < 0 || w.HashBlockTokens > maxTokens {
		return fieldErrorf("Workload.HashBlockTokens", "must be in [0, %d], got %d", maxTokens, w.HashBlockTokens)
	}
	p := w.Prefix
	if p == nil {
		return nil
	}
	switch {
	case p.SystemTokens < 0 || p.SystemTokens > maxTokens:
		return fieldErrorf("Workload.Prefix.SystemTokens", "must be in [0, %d], got %d", maxTokens, p.SystemTokens)
	case !(p.HitRate >= 0 && p.HitRate <= 1):
		return fieldErrorf("Workload.Prefix.HitRate", "must be in [0, 1], got %g", p.HitRate)
	case p.SystemTokens > 0 && p.HitRate > 0:
		return fieldErrorf("Workload.Prefix", "a system prompt (%d tokens) and a hit rate (%g) are exclusive", p.SystemTokens, p.HitRate)
	}
	return nil
}

func (w Workload) validate() error {
	if w.Requests < 1 || w.Requests > 1<<24 {
		return fieldErrorf("Workload.Requests", "must be in [1, %d], got %d", 1<<24, w.Requests)
	}
	if w.MaxConcurrency < 0 {
		return fieldErrorf("Workload.MaxConcurrency", "must be 0 (no limit) or positive, got %d", w.MaxConcurrency)
	}
	if err := w.validatePrefix(); err != nil {
		return err
	}
	if w.Trace != nil {
		return w.validateTrace()
	}
	if !(w.RequestRate > 0) {
		return fieldErrorf("Workload.RequestRate", "must be > 0 or +Inf, got %g", w.RequestRate)
	}
	if !(w.Burstiness > 0) {
		return fieldErrorf("Workload.Burstiness", "must be > 0 or +Inf, got %g", w.Burstiness)
	}
	if w.InputTokens < 1 || w.InputTokens > maxTokens {
		return fieldErrorf("Workload.InputTokens", "must be in [1, %d], got %d", maxTokens, w.InputTokens)
	}
	if w.OutputTokens < 1 || w.OutputTokens > maxTokens {
		return fieldErrorf("Workload.OutputTokens", "must be in [1, %d], got %d", maxTokens, w.OutputTokens)
	}
	switch r := w.RangeRatio; w.RangeStyle {
	case RangeSymmetric:
		if !(r >= 0 && r < 1) {
			// vLLM's RandomDataset asserts 0 <= range_ratio < 1.
			return fieldErrorf("Workload.RangeRatio", "must be in [0, 1) for the symmetric range, got %g", r)
		}
	case RangeBelow:
		if !(r >= 0 && r <= 1) {
			return fieldErrorf("Workload.RangeRatio", "must be in [0, 1] for the below range, got %g", r)
		}
	default:
		return fieldErrorf("Workload.RangeStyle", "unknown style %d (want %s)", int(w.RangeStyle), strings.Join(RangeStyles, " or "))
	}
	if len(w.Lengths) > 1<<24 {
		return fieldErrorf("Workload.Lengths", "holds %d pairs, at most %d", len(w.Lengths), 1<<24)
	}
	maxIn, maxOut := w.InputTokens, w.OutputTokens
	if len(w.Lengths) > 0 {
		maxIn, maxOut = 0, 0
	}
	for i, l := range w.Lengths {
		if l.In < 1 || l.In > maxTokens || l.Out < 1 || l.Out > maxTokens {
			return fieldErrorf("Workload.Lengths", "pair %d: input %d, output %d: each must be in [1, %d]", i, l.In, l.Out, maxTokens)
		}
		maxIn, maxOut = max(maxIn, l.In), max(maxOut, l.Out)
	}
	if w.Turns < 0 || w.Turns > MaxTurns {
		return fieldErrorf("Workload.Turns", "must be in [0, %d], got %d", MaxTurns, w.Turns)
	}
	if w.Turns > 1 {
		if !finiteNonNeg(float64(w.ThinkTime)) {
			return fieldErrorf("Workload.ThinkTime", "must be finite and >= 0, got %g", float64(w.ThinkTime))
		}
		// The last turn's prompt holds every earlier turn's input and
		// output.
		_, hiIn := lengthRange(maxIn, w.RangeRatio, w.RangeStyle)
		_, hiOut := lengthRange(maxOut, w.RangeRatio, w.RangeStyle)
		if last := int64(w.Turns)*int64(hiIn) + int64(w.Turns-1)*int64(hiOut); last > maxTokens {
			return fieldErrorf("Workload.Turns", "%d turns of up to %d input and %d output tokens make a last prompt of %d tokens, more than %d",
				w.Turns, hiIn, hiOut, last, maxTokens)
		}
	}
	return nil
}

// ValidateRankShares is the check of sglangRankShares alone, for a
// disaggregated config once its pools are built (the rest of Validate
// runs with the point).
func (c *Config) ValidateRankShares() error { return c.sglangRankShares() }

// sglangRankShares refuses, under SGLang's DP attention, a step budget or
// running-request limit below the attention DP ranks that share it: each
// rank schedules chunked_prefill_size / ranks tokens a step and
// max_running_requests // dp_size requests (newSGLangScheduler, oneRank),
// and a share of 0 tokens or requests is no deployment, which the
// scheduler would otherwise have to run as 1. A disaggregated run's pools
// are checked with their own ranks and, where given, their own settings.
func (c *Config) sglangRankShares() error {
	if c.Engine != SGLang {
		return nil
	}
	check := func(pool string, ranks, budget, seqs int, ownBudget, ownSeqs bool) error {
		field := func(f string, own bool) string {
			if own {
				return pool + "." + f
			}
			return f
		}
		if ranks <= 1 {
			return nil
		}
		if budget < ranks {
			return fieldErrorf(field("MaxNumBatchedTokens", ownBudget), "%d over %d attention DP ranks leaves each rank 0 tokens a step (SGLang's chunked_prefill_size / dp_size); want at least %d", budget, ranks, ranks)
		}
		if seqs > 0 && seqs < ranks {
			return fieldErrorf(field("MaxNumSeqs", ownSeqs), "%d over %d attention DP ranks leaves each rank 0 running requests (SGLang's max_running_requests // dp_size); want at least %d", seqs, ranks, ranks)
		}
		return nil
	}
	if c.Disagg == nil {
		return check("", c.Memory.Groups, c.MaxNumBatchedTokens, c.MaxNumSeqs, false, false)
	}
	for _, p := range []struct {
		name string
		p    Pool
	}{{"Disagg.Prefill", c.Disagg.Prefill}, {"Disagg.Decode", c.Disagg.Decode}} {
		budget, seqs := c.MaxNumBatchedTokens, c.MaxNumSeqs
		if p.p.MaxNumBatchedTokens > 0 {
			budget = p.p.MaxNumBatchedTokens
		}
		if p.p.MaxNumSeqs > 0 {
			seqs = p.p.MaxNumSeqs
		}
		if err := check(p.name, p.p.Memory.Groups, budget, seqs, p.p.MaxNumBatchedTokens > 0, p.p.MaxNumSeqs > 0); err != nil {
			return err
		}
	}
	return nil
}
