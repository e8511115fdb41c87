package serve

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
)

// Engine is the serving engine whose scheduler is simulated: an index
// into the engine table (engines).
type Engine uint8

const (
	VLLM   Engine = iota // vLLM V1 (vllm/v1/core/sched/scheduler.py @ b4622cf)
	SGLang               // SGLang (python/sglang/srt/managers/scheduler.py)
)

// EngineInfo is what other packages need to know of an engine: its names
// and which of Config's scheduler settings it has, under which names.
type EngineInfo struct {
	Name  string // as written in scenarios (runtime.engine) and JSON: "vllm"
	Title string // as written in prose: "vLLM"
	// BudgetKey and SeqsKey are the engine's own names of
	// Config.MaxNumBatchedTokens and Config.MaxNumSeqs.
	BudgetKey, SeqsKey string
	// UnlimitedSeqs: MaxNumSeqs 0 means no limit (else it must be >= 1).
	UnlimitedSeqs bool
	// MixedChunk: Config.MixedChunk is a setting of the engine; without it
	// the engine always mixes prefill chunks into decode steps.
	MixedChunk bool
	// PrefillTokens: Config.MaxPrefillTokens is a setting of the engine.
	PrefillTokens bool
	// AllReduce is the engine's all-reduce policy (which implementation
	// it runs for a size, and its measured all-reduce tables).
	AllReduce comm.Policy
}

// engineRow is everything engine-specific: adding an engine is one row
// here and one scheduler file (sched_<name>.go).
type engineRow struct {
	EngineInfo
	// defaults sets c's scheduler settings and KV block size to the
	// engine's defaults on a GPU of the given name and memory.
	defaults func(c *Config, gpuName string, gpuMemory unit.Bytes)
	// validate checks the engine's own constraints on c's settings.
	validate func(c *Config) error
	// blockSize is the KV block (page) size for model m (nil: not MLA)
	// on a GPU of architecture arch.
	blockSize func(m *model.Config, arch kernels.Arch) int
	// runs reports whether the engine serves layout l (plan enumerates
	// the layouts; this says which engines run each).
	runs func(l model.Layout) bool
	// scheduler makes the engine's scheduler for a validated c.
	scheduler func(c *Config) scheduler
	// captureSize is the largest decode step, in tokens per attention
	// rank, the engine captures a CUDA graph for under c on a GPU of the
	// given memory with tp GPUs in its tensor-parallel group (sim.Config's
	// CaptureSize).
	captureSize func(c *Config, gpuMemory unit.Bytes, tp int) int
	// captureBatches lists the decode batch sizes (sequences per
	// attention rank) the engine pads a decode batch up to
	// (sim.Config.CaptureBatches); nil: not modelled.
	captureBatches func(c *Config, gpuMemory unit.Bytes, tp int) []int
	// eagerPrefill: the engine runs steps with prefill chunks without
	// CUDA graphs (sim.Config.EagerPrefill).
	eagerPrefill bool
	// balance is the front end's choice of DP rank for a request when
	// the engine runs each attention group as an engine core of its own
	// (dpranks.go); nil: the groups are pooled under one scheduler.
	balance balancer
	// host is the engine's host work per step measured at op level
	// (host.go); zero where no measurement is cited.
	host HostOverhead
	// asyncDefault reports whether the engine at version v (as its
	// image or package names it; "" = unknown, taken as the newest)
	// overlaps a step's host work with the GPU by default.
	asyncDefault func(v string) bool
	// overlapPrefill: the overlap also covers steps with prefill chunks
	// (else only decode steps hide the host work); host.go cites each.
	overlapPrefill bool
	// pullKV: in a disaggregation the decode instance pulls each
	// request's KV (Disagg.Pull) rather than the prefill instance pushing
	// it when the prefill ends.
	pullKV bool
}

// engines is the engine table, indexed by Engine.
var engines = [...]engineRow{
	VLLM: {
		EngineInfo: EngineInfo{Name: "vllm", Title: "vLLM", BudgetKey: "max_num_batched_tokens", SeqsKey: "max_num_seqs",
			AllReduce: comm.VLLMPolicy},
		defaults:  vllmDefaults,
		validate:  vllmValidate,
		blockSize: vllmBlockSize,
		// vLLM runs attention TP-way in each of DP groups
		// (--data-parallel-size); it has no data-parallel attention
		// with TP over the MLP side.
		runs:           func(l model.Layout) bool { return !l.DPAttention },
		scheduler:      newVLLMScheduler,
		captureSize:    vllmCaptureSize,
		captureBatches: vllmCaptureBatches,
		balance:        vllmBalance,
		// vLLM's NixlConnector pulls the KV from the decode side
		// (vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py:
		// the scheduler puts the request in WAITING_FOR_REMOTE_KVS, the
		// worker starts the read in the next step, finished_recving
		// admits it); SGLang's KV sender pushes it when the prefill ends
		// (python/sglang/srt/disaggregation/prefill.py).
		pullKV:       true,
		host:         vllmHost,
		asyncDefault: vllmAsyncDefault,
	},
	SGLang: {
		EngineInfo: EngineInfo{Name: "sglang", Title: "SGLang", BudgetKey: "chunked_prefill_size", SeqsKey: "max_running_requests",
			UnlimitedSeqs: true, MixedChunk: true, PrefillTokens: true, AllReduce: comm.SGLangPolicy},
		defaults:  sglangDefaults,
		validate:  sglangValidate,
		blockSize: func(*model.Config, kernels.Arch) int { return 1 }, // page_size 1 (server_args.py default)
		// SGLang's --dp without DP attention (replicas behind its router)
		// is not enumerated; --enable-dp-attention is (DP = 1, TP = n).
		runs:           func(l model.Layout) bool { return l.DP == 1 },
		scheduler:      newSGLangScheduler,
		captureSize:    sglangCaptureSize,
		captureBatches: sglangCaptureBatches,
		// Only decode, target-verify and idle batches replay CUDA graphs
		// (sgl-project/sglang `python/sglang/srt/model_executor/
		// forward_batch_info.py` @ 003bbaf, ForwardMode.is_cuda_graph:
		// DECODE, TARGET_VERIFY, IDLE, DLLM_EXTEND); extend (prefill) and
		// mixed batches run eagerly unless --enable-piecewise-cuda-graph,
		// which is off by default (server_args.py).
		eagerPrefill: true,
		// SGLang's DP-attention ranks each run a scheduler of their own
		// behind its DataParallelController, which deals the requests
		// round robin (sglangBalance), and step together (dpranks.go).
		balance:        sglangBalance,
		host:           sglangHost,
		asyncDefault:   func(string) bool { return true },
		overlapPrefill: true,
	},
}

// Engines lists every engine in table order.
func Engines() []Engine {
	out := make([]Engine, len(engines))
	for i := range out {
		out[i] = Engine(i)
	}
	return out
}

// EngineNames is the engines' names joined by sep ("vllm or sglang").
func EngineNames(sep string) string {
	names := make([]string, len(engines))
	for i := range engines {
		names[i] = engines[i].Name
	}
	return strings.Join(names, sep)
}

func (e Engine) valid() bool { return int(e) < len(engines) }

func (e Engine) String() string {
	if e.valid() {
		return engines[e].Name
	}
	return fmt.Sprintf("engine(%d)", uint8(e))
}

// Info is the engine's row as other packages see it (zero for an unknown
// engine).
func (e Engine) Info() EngineInfo {
	if e.valid() {
		return engines[e].EngineInfo
	}
	return EngineInfo{}
}

// Runs reports whether the engine serves a replica of layout l.
func (e Engine) Runs(l model.Layout) bool { return e.valid() && engines[e].runs(l) }

// ParseEngine maps an engine's name ("vllm", "sglang") to the Engine.
func ParseEngine(s string) (Engine, bool) {
	for i := range engines {
		if engines[i].Name == s {
			return Engine(i), true
		}
	}
	return 0, false
}

// vllmDefaults: vllm-project/vllm `vllm/engine/arg_utils.py` @ 99d7eb5,
// `_set_default_args`: max_num_batched_tokens 8192 and max_num_seqs 1024
// for `vllm serve` on a GPU with at least 70 GiB whose name does not
// contain "a100"; 2048 / 256 otherwise. Block size 16 (SimMemory sets the
// attention backend's).
func vllmDefaults(c *Config, gpuName string, gpuMemory unit.Bytes) {
	if gpuMemory >= 70*GiB && !strings.Contains(strings.ToLower(gpuName), "a100") {
		c.MaxNumBatchedTokens, c.MaxNumSeqs = 8192, 1024
	} else {
		c.MaxNumBatchedTokens, c.MaxNumSeqs = 2048, 256
	}
	c.Memory.BlockSize = 16
}

func vllmValidate(c *Config) error {
	if c.MaxNumSeqs < 1 {
		return fieldErrorf("MaxNumSeqs", "must be at least 1, got %d", c.MaxNumSeqs)
	}
	if c.MaxNumBatchedTokens < c.MaxNumSeqs {
		// vLLM's SchedulerConfig rejects this too.
		return fieldErrorf("MaxNumBatchedTokens", "%d tokens is below max_num_seqs %d (a step schedules a token per sequence)", c.MaxNumBatchedTokens, c.MaxNumSeqs)
	}
	// SchedulerConfig's own checks (`vllm/config/scheduler.py` @ 01230b4:
	// ge=1 fields, verify_max_model_len).
	if c.MaxNumPartialPrefills < 0 || c.MaxNumPartialPrefills > maxTokens {
		return fieldErrorf("MaxNumPartialPrefills", "must be at least 1, got %d", c.MaxNumPartialPrefills)
	}
	if c.MaxLongPartialPrefills < 0 || c.MaxLongPartialPrefills > max(c.MaxNumPartialPrefills, 1) {
		return fieldErrorf("MaxLongPartialPrefills", "must be in [1, max_num_partial_prefills = %d], got %d", max(c.MaxNumPartialPrefills, 1), c.MaxLongPartialPrefills)
	}
	t := c.LongPrefillTokenThreshold
	if t < 0 || t > maxTokens {
		return fieldErrorf("LongPrefillTokenThreshold", "must be in [0, %d] tokens, got %d", maxTokens, t)
	}
	if t > 0 && t <= c.Spec.DraftTokens {
		// vLLM would cut a verify step's 1+K tokens too; not modelled.
		return fieldErrorf("LongPrefillTokenThreshold", "%d tokens is not above the %d draft tokens of a verify step (a verify cut short is not modelled)", t, c.Spec.DraftTokens)
	}
	if c.MaxNumPartialPrefills > 1 && c.MaxModelLen > 0 && t > c.MaxModelLen {
		return fieldErrorf("LongPrefillTokenThreshold", "%d tokens is above max_model_len %d (vLLM rejects it)", t, c.MaxModelLen)
	}
	return nil
}

// vllmLongPrefill is the long_prefill_token_threshold vLLM's V1 scheduler
// applies: the one set, or, when max_num_partial_prefills > 1 and it is
// 0, int(max_model_len x 0.04) (SchedulerConfig.__post_init__,
// `vllm/config/scheduler.py` @ 01230b4). 0 = no cap.
func vllmLongPrefill(c *Config) int {
	t := c.LongPrefillTokenThreshold
	if t == 0 && c.MaxNumPartialPrefills > 1 {
		t = int(float64(c.MaxModelLen) * 0.04)
	}
	return t
}

// ownBlocks reports whether c's prefix cache recovers a preempted
// request's own blocks (Config.RecoverPreempted, vLLM with prefix caching
// on).
func (c *Config) ownBlocks() bool {
	return c.RecoverPreempted && c.Engine == VLLM && !c.NoPrefixCache
}

// fullISL reports whether c's instances admit by the whole sequence
// (Config.ReserveFullISL, a vLLM setting).
func (c *Config) fullISL() bool { return c.ReserveFullISL && c.Engine == VLLM }

// perRankDP reports whether c's DP ranks (Memory.Groups > 1) run as
// schedulers of their own behind the engine's balancer (dpranks.go)
// rather than pooled under one: the engine row has a balancer and the
// engine's pooling switch (PooledDP for vLLM, PooledSGLangDP for SGLang)
// is off.
func (c *Config) perRankDP() bool {
	if !c.Engine.valid() || engines[c.Engine].balance == nil || c.Memory.Groups <= 1 {
		return false
	}
	if c.Engine == SGLang {
		return !c.PooledSGLangDP
	}
	return !c.PooledDP
}

// vllmBlockSize: MLA models take the block size vLLM's MLA backend forces
// on the architecture (kernels.ArchFacts.MLABlockSize: 64 for FlashMLA on
// sm_90, 128 for CUTLASS MLA on sm_100); other models and GPUs keep the
// default 16.
func vllmBlockSize(m *model.Config, arch kernels.Arch) int {
	if b := arch.Facts().MLABlockSize; b > 0 && m != nil && m.Attn.Kind == model.MLA {
		return b
	}
	return 16
}

// sglangDefaults: sgl-project/sglang `python/sglang/srt/server_args.py`:
// chunked_prefill_size 2048 below 35 GiB, 4096 below 60 GiB, 8192 below
// 160 GiB, else 16384; max_prefill_tokens 16384; mixed chunks off; page
// size 1; max_running_requests left to the KV cache (SGLang derives it
// from the pool size; not modelled).
func sglangDefaults(c *Config, _ string, gpuMemory unit.Bytes) {
	switch {
	case gpuMemory < 35*GiB:
		c.MaxNumBatchedTokens = 2048
	case gpuMemory < 60*GiB:
		c.MaxNumBatchedTokens = 4096
	case gpuMemory < 160*GiB:
		c.MaxNumBatchedTokens = 8192
	default:
		c.MaxNumBatchedTokens = 16384
	}
	c.MaxPrefillTokens = 16384
	c.ScheduleConservativeness = 1 // server_args.py: schedule_conservativeness 1.0
	c.Memory.BlockSize = 1
}

func sglangValidate(c *Config) error {
	if c.MaxNumSeqs < 0 {
		return fieldErrorf("MaxNumSeqs", "must be 0 (no limit) or positive, got %d", c.MaxNumSeqs)
	}
	if c.MaxPrefillTokens < 1 {
		return fieldErrorf("MaxPrefillTokens", "must be at least 1, got %d", c.MaxPrefillTokens)
	}
	return nil
}

// CaptureSize is the largest decode step, in tokens per attention rank,
// engine c.Engine captures a CUDA graph for with c's settings on a GPU of
// the given memory, tp GPUs in the engine's tensor-parallel group (SGLang's
// tp_size: every GPU of the replica); a larger decode step runs eagerly
// (sim.Config.CaptureSize). 0 for an unknown engine.
func CaptureSize(c *Config, gpuMemory unit.Bytes, tp int) int {
	if !c.Engine.valid() {
		return 0
	}
	return engines[c.Engine].captureSize(c, gpuMemory, tp)
}

// vllmCaptureSize is the largest of vLLM's capture sizes
// (vllmCaptureSizes), its max_cudagraph_capture_size after
// _set_cudagraph_sizes; 0 when it captures none.
func vllmCaptureSize(c *Config, _ unit.Bytes, _ int) int {
	sizes := vllmCaptureSizes(c)
	if len(sizes) == 0 {
		return 0
	}
	return sizes[len(sizes)-1]
}

// vllmCaptureSizes is the step sizes, in tokens, vLLM captures CUDA graphs
// for (vllm-project/vllm `vllm/config/vllm.py` @ 09f030e,
// _set_cudagraph_sizes): the list given (Config.CUDAGraphSizes,
// --cudagraph-capture-sizes or compilation_config's; de-duplicated,
// sorted, the sizes above max_num_batched_tokens dropped), else 1, 2, 4,
// then 8 to 248 by 8 and 256 up by 16, up to max_cudagraph_capture_size:
// --max-cudagraph-capture-size (Config.CUDAGraphMax) or by default
// min(max_num_seqs x (1 + K drafts) x 2, 512), in both cases at most
// max_num_batched_tokens. The list's largest is the capture limit vLLM
// keeps ("Truncating max_cudagraph_capture_size"). With K drafts each
// size is rounded up to a multiple of 1 + K and those then above the limit
// dropped, [1 + K] if none is left (`vllm/config/compilation.py` @ 002284d,
// adjust_cudagraph_sizes_for_spec_decode: a uniform decode graph holds
// whole requests).
func vllmCaptureSizes(c *Config) []int {
	budget := c.MaxNumBatchedTokens
	if budget <= 0 {
		budget = math.MaxInt
	}
	var out []int
	if len(c.CUDAGraphSizes) > 0 {
		for _, n := range c.CUDAGraphSizes {
			if n <= budget {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		out = slices.Compact(out)
	} else {
		top := c.CUDAGraphMax
		if top <= 0 {
			top = min(max(c.MaxNumSeqs, 0)*(1+c.Spec.DraftTokens)*2, 512)
		}
		top = min(top, budget)
		for _, n := range []int{1, 2, 4} {
			if n <= top {
				out = append(out, n)
			}
		}
		for n := 8; n <= top && n < 256; n += 8 {
			out = append(out, n)
		}
		for n := 256; n <= top; n += 16 {
			out = append(out, n)
		}
	}
	q := 1 + c.Spec.DraftTokens
	if q <= 1 || len(out) == 0 {
		return out
	}
	top := out[len(out)-1]
	var rounded []int
	for _, n := range out {
		if r := (n + q - 1) / q * q; r <= top && (len(rounded) == 0 || r > rounded[len(rounded)-1]) {
			rounded = append(rounded, r)
		}
	}
	if len(rounded) == 0 && q <= top {
		rounded = []int{q}
	}
	return rounded
}

// vllmCaptureBatches is vLLM's capture list in sequences per rank: a
// uniform decode step of n sequences of 1 + K tokens runs the graph of
// the smallest captured size s >= n(1 + K) tokens (vllm/v1/worker/
// gpu_model_runner.py pads the scheduled tokens with pad_for_cudagraph;
// vllm/v1/cudagraph_dispatcher.py @ 009eec3 keys the full decode graphs
// by the padded token count), s / (1 + K) sequences (vllmCaptureSizes
// rounds the sizes to whole requests).
func vllmCaptureBatches(c *Config, _ unit.Bytes, _ int) []int {
	q := 1 + c.Spec.DraftTokens
	var out []int
	for _, s := range vllmCaptureSizes(c) {
		out = append(out, s/q)
	}
	return out
}

// sglangCaptureSize is cuda_graph_max_bs's default by GPU memory and TP
// size (sgl-project/sglang `python/sglang/srt/server_args.py` @ 001067f,
// _handle_gpu_memory_settings: 8 below 20 GiB; 24 (tp < 4) or 80 below 35
// GiB; 32 or 160 below 60 GiB; 256 or 512 below 160 GiB; 512 above),
// in requests per rank, times the tokens of one decode (1 + K drafts).
func sglangCaptureSize(c *Config, gpuMemory unit.Bytes, tp int) int {
	small, large := 512, 512
	switch {
	case gpuMemory < 20*GiB:
		small, large = 8, 8
	case gpuMemory < 35*GiB:
		small, large = 24, 80
	case gpuMemory < 60*GiB:
		small, large = 32, 160
	case gpuMemory < 160*GiB:
		small, large = 256, 512
	}
	bs := large
	if tp < 4 {
		bs = small
	}
	if c.CUDAGraphMax > 0 {
		bs = c.CUDAGraphMax // --cuda-graph-max-bs
	}
	return bs * (1 + c.Spec.DraftTokens)
}

// CaptureBatches is the list of decode batch sizes, in sequences per
// attention rank and ascending, that engine c.Engine captures CUDA graphs
// for and pads a smaller decode batch up to (sim.Config.CaptureBatches),
// with c's settings on a GPU of the given memory, tp GPUs in its
// tensor-parallel group; nil where the engine's padding is not modelled.
func CaptureBatches(c *Config, gpuMemory unit.Bytes, tp int) []int {
	if !c.Engine.valid() || engines[c.Engine].captureBatches == nil {
		return nil
	}
	return engines[c.Engine].captureBatches(c, gpuMemory, tp)
}

// sglangCaptureBatches is SGLang's capture list (sgl-project/sglang
// `python/sglang/srt/model_executor/cuda_graph_runner.py` @ 0021673,
// get_batch_sizes_to_capture): 1, 2, 4, 8, then 16 to 160 by 8; with
// speculative decoding 1 to 8, 10 to 32 by 2, 40 to 160 by 16; on a GPU
// of more than 96 GiB also 160 to 256 by 8; then the sizes above
// cuda_graph_max_bs (sglangCaptureSize's, in requests) dropped and, when
// the largest is below it, the list extended from the largest to
// cuda_graph_max_bs by 16. Later releases (server_args.py
// _generate_cuda_graph_batch_sizes) add 12 and capture above 256 by 16,
// then 32; the list here is the cited one.
func sglangCaptureBatches(c *Config, gpuMemory unit.Bytes, tp int) []int {
	maxBS := sglangCaptureSize(c, gpuMemory, tp) / (1 + c.Spec.DraftTokens)
	var list []int
	add := func(from, to, step int) {
		for b := from; b < to; b += step {
			list = append(list, b)
		}
	}
	if c.Spec.DraftTokens == 0 {
		list = append(list, 1, 2, 4, 8)
		add(16, 161, 8)
	} else {
		add(1, 9, 1)
		add(10, 33, 2)
		add(40, 161, 16)
	}
	if gpuMemory > 96*GiB {
		add(160, 257, 8)
	}
	slices.Sort(list)
	list = slices.Compact(list)
	n := 0
	for _, b := range list {
		if b <= maxBS {
			list[n] = b
			n++
		}
	}
	list = list[:n]
	if len(list) > 0 && list[n-1] < maxBS {
		add(list[n-1]+16, maxBS+1, 16)
	}
	return list
}

// PullsKV reports whether engine e's disaggregated decode instance pulls
// each request's KV (vLLM's NixlConnector), the value of Disagg.Pull for
// it; false for SGLang, whose prefill instance pushes it, and an unknown
// engine.
func PullsKV(e Engine) bool { return e.valid() && engines[e].pullKV }

// EagerPrefill reports whether engine e runs steps with prefill chunks
// without CUDA graphs (SGLang), so that sim prices their kernels' host
// launches (sim.Config.EagerPrefill); false for vLLM's piecewise graphs
// and an unknown engine.
func EagerPrefill(e Engine) bool { return e.valid() && engines[e].eagerPrefill }

// MemoryProfile is the memory-profile run engine e sizes its reserve with
// (sim.MemoryProfile), at a token budget and sequence limit (0: the
// engine's defaults for the GPU). vLLM profiles a forward of
// max_num_batched_tokens and a sampler run over max_num_seqs rows
// (vllm/v1/worker/gpu_worker.py @ 35d5cda, determine_available_memory)
// and subtracts the peak from gpu_memory_utilization's share. SGLang's
// KV pool is GPU memory x mem_fraction_static - weights, activations,
// CUDA graphs and NCCL buffers living outside that fraction
// (python/sglang/srt/model_executor/model_runner.py
// profile_max_num_token; sim.MemoryProfile.WeightsAndKV), its fraction
// read as gpu_memory_utilization (DefaultMemFraction when not given).
// An unknown engine keeps the zero profile (aiconfigurator's fixed
// reserve).
func MemoryProfile(e Engine, gpuName string, gpuMemory unit.Bytes, tokens, seqs int) sim.MemoryProfile {
	if e == SGLang {
		return sim.MemoryProfile{WeightsAndKV: true}
	}
	if e != VLLM {
		return sim.MemoryProfile{}
	}
	c := DefaultConfig(e, gpuName, gpuMemory)
	if tokens > 0 {
		c.MaxNumBatchedTokens = tokens
	}
	if seqs > 0 {
		c.MaxNumSeqs = seqs
	}
	return sim.MemoryProfile{Tokens: c.MaxNumBatchedTokens, Seqs: c.MaxNumSeqs}
}
