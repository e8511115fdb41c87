package serve

import (
	"strconv"
	"strings"
)

// Host work per step: what the engine's host loop does between two GPU
// steps, measured at op level on the CPU side of the profiler traces in
// ../shared/data/traces (AMD-AGI/TraceLens @ 171dd74, tests/traces;
// bench/RESULTS-host.md has the extraction and every figure). The traces
// hold the model runner's side of one step (input preparation and the
// launch); the scheduler's own pass (vLLM Scheduler.schedule and
// update_from_output, SGLang get_next_batch_to_run and
// process_batch_result) is outside them and is not priced. Each trace was
// recorded with Python stacks on (torch.profiler with_stack), which slows
// the Python it records, so the figures are upper bounds of that part.
//
// When the work shows: without overlap every step waits for it (wall = GPU
// + host); with vLLM's async scheduling the engine schedules and prepares
// step N+1 while step N runs, so a decode step costs max(GPU, host); with
// SGLang's overlap scheduler every batch, prefill too, is launched before
// the previous batch's results are processed (sgl-project/sglang
// `python/sglang/srt/managers/scheduler.py` @ 0003215, event_loop_overlap:
// the loop receives requests, builds the next batch, launches it, then
// processes the last batch's result; is_disable_overlap_for_batch turns
// this off only for two consecutive prefill batches under the environment
// variable SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP and for grammar
// syncs under speculative decoding).

// vllmHost is the vLLM V1 model runner's host time before the GPU can run
// a step, on the TraceLens vLLM decode trace
// (vllm_decode_full/graph_execution.json.gz: `execute_32_context_0...
// _generation_32`, 32 decodes, FULL CUDA graph, MI300X, gpt-oss-20b):
// 1.52 ms from the step annotation to _model_forward (_update_states
// 0.27 ms, _prepare_inputs 0.65 ms, _build_attention_metadata 0.15 ms,
// synchronize_input_prep 0.16 ms, the rest Python between them). The
// mixed-step trace of the same build (vllm_prefilldecode_piecewise: 9
// prefills beside 37 decodes, 8192 tokens) spends 4.18 ms before its
// forward, of which _update_states 2.04 ms (about 0.2 ms per request added
// to the input batch), and the B200 eager prefill trace of an older build
// (one 888-token prefill) 5.46 ms. One decode trace cannot split the
// step's figure into per-step and per-sequence parts, so PerSeq stays 0
// and a step with new requests is priced at the decode step's figure (low
// by 2.7-3.9 ms on those two steps).
var vllmHost = HostOverhead{PerStep: 1.52e-3}

// sglangHost is SGLang's model-runner host time before the GPU can run a
// decode batch, on the TraceLens SGLang trace
// (sglang_Qwen3-8B_decode.json.gz: `step[DECODE bs=32]`, MI300X): 0.70 ms
// from the step annotation to the graph replay, less one 463 ms
// aten::copy_ inside populate_from_forward_batch during which the GPU
// idles (a stall of the profiled run, not work of a step: the GPU is busy
// 0.03 ms of it). Its extend trace (15 prefills, 15360 tokens) spends
// 0.41 ms before its eager forward, less a like stall.
var sglangHost = HostOverhead{PerStep: 0.70e-3}

// vllmAsyncDefault: vLLM turns async scheduling on by default from v0.14.0
// (its release notes: "Async scheduling is now enabled by default",
// vllm-project/vllm PR #27614); before it SchedulerConfig.async_scheduling
// defaults to False (`vllm/config/scheduler.py` @ 01230b4). A version
// that does not parse as major.minor (a nightly tag, "") is taken as
// newer.
func vllmAsyncDefault(v string) bool {
	major, minor, ok := parseVersion(v)
	if !ok {
		return true
	}
	return major > 0 || minor >= 14
}

// ReserveFullISLDefault reports whether engine e at version v ("" =
// unknown, taken as the newest) admits a waiting request only when its
// whole sequence fits in the free KV (Config.ReserveFullISL): vLLM's
// SchedulerConfig.scheduler_reserve_full_isl, default True, came with
// vllm-project/vllm PR #37307 (reviewed 2026-03-24); v0.19.0 has it on
// by default (the resolved config of LLMServingSim's vLLM 0.19.0 runs,
// casys-kaist/LLMServingSim @ 5daddb2 bench/examples/RTX4090_Llama-3.1-8B/
// meta.json: "scheduler_reserve_full_isl": true, not set by the engine
// arguments). Earlier versions (whether v0.18 has it is not checked) and
// SGLang: false.
func ReserveFullISLDefault(e Engine, v string) bool { return vllmFrom(e, v, 19) }

// SpecPrepBubbleDefault reports whether engine e at version v overlaps a
// speculative (EAGLE/MTP) decode step's host preparation only with the
// previous step's draft passes (Spec.PrepBubble): vLLM before v0.19.0.
// vllm-project/vllm PR #24799 (async scheduling x spec decoding, merged
// 2025-11): the next step's prepare_inputs waits for the target forward
// to finish, "we're only overlapping with the drafting here ... a known
// compromise"; PR #29957 (2025-12-03): "the prepare CPU work for the
// current step could only overlap with the draft model's GPU execution
// from the previous step. This limited overlap created bubbles"; PR
// #32951 "Zero-bubble async scheduling + spec decoding" (opened
// 2026-01-23, DeepSeek-V3.2 MTP TP8 on H100 at concurrency 1: TPOT 9.19 ->
// 8.90 ms), first released in v0.19.0 (its release notes). A version that
// does not parse is taken as the newest: no bubble.
func SpecPrepBubbleDefault(e Engine, v string) bool { return vllmBetween(e, v, 0, 18) }

// SamplerSortDefault reports whether engine e at version v runs its
// profile run's dummy sampler through vLLM's PyTorch-native top-k/top-p
// path, which sorts the whole vocabulary of every row
// (sim.MemoryProfile.SamplerSort): vLLM from PR #26859 "Disable
// FlashInfer sampler by default" (merged 2025-10-14, after v0.11.0) until
// PR #33538 "Triton-based Top-k and Top-p sampler kernels" (merged
// 2026-02-17; PR #32558 on the path it replaced: "The current pytorch
// sort-based top-p/top-k implementation uses a large amount of memory").
// Read here as v0.12 to v0.16: the 0.16.0.dev nightlies before
// 2026-02-17 run the sort; whether v0.16.0 itself took PR #33538 is not
// read (no corpus row is of it), and v0.11.1-0.11.2, which have the sort,
// are read with v0.11.0 (major.minor only). Earlier versions sample with
// FlashInfer when it is installed, later ones with the Triton kernel
// (PR #40376 turns FlashInfer back on); neither sorts. A version that
// does not parse is taken as the newest: no sort.
func SamplerSortDefault(e Engine, v string) bool { return vllmBetween(e, v, 12, 16) }

// SamplerTritonDefault reports whether engine e at version v runs its
// profile run's dummy sampler through vLLM's Triton top-k/top-p kernel
// (sim.MemoryProfile.SamplerTriton): vLLM from PR #33538 "Triton-based
// Top-k and Top-p sampler kernels" (merged 2026-02-17; apply_top_k_top_p
// takes it from 8 rows, vllm/v1/sample/ops/topk_topp_sampler.py @
// ba2f0acc2, 2026-03-24) until PR #40376 "Enable FlashInfer top-k/top-p
// sampler by default" (merged 2026-04-29). Read here as v0.17 to v0.19:
// v0.17.0 and v0.18.0 come after the merge (v0.18.1 is of 2026-03-30),
// and on 2026-04-21 main's log message (PR #40465) names v0.21 as the
// release after the next, so v0.19.0 predates PR #40376; v0.20.0 is not
// read (no corpus row is of it). A version that does not parse is taken
// as the newest: FlashInfer's sampler, no Triton buffer.
func SamplerTritonDefault(e Engine, v string) bool { return vllmBetween(e, v, 17, 19) }

// ARFusionDefault reports whether engine e at version v runs vLLM's
// all-reduce + RMSNorm fusion pass, whose FlashInfer workspace the memory
// profile counts (sim.MemoryProfile.ARFusion): on by default at -O2 for
// TP > 1 on Hopper and Blackwell with FlashInfer installed from PR #34299
// (merged 2026-02-11; enable_allreduce_rms_fusion, vllm/config/vllm.py @
// ba2f0acc2, which also turns it off with DP or PP, PR #34392, and for
// DeepSeek-V3 NVFP4 checkpoints, model_executor/models/config.py). Read
// here as v0.16 and later: the 0.16.0.dev nightlies after 2026-02-11 run
// it (the corpus's one, GLM-5 on H200, is the nightly of 2026-02-13), and
// v0.16.0 was released on 2026-02-26 (whether its branch took it is not
// read); the 0.16.0.dev nightlies before the merge are read with the later
// ones. A version that does not parse is taken as the newest: on.
func ARFusionDefault(e Engine, v string) bool { return vllmFrom(e, v, 16) }

// FICutlassMoEDefault reports whether engine e at version v picks
// FlashInfer's CUTLASS fused MoE for block-fp8 routed experts on Hopper
// with expert parallelism, whose per-call workspace the memory profile's
// forward holds (sim.MemoryProfile.FICutlassMoE): the fp8 MoE oracle's
// "On Hopper for Block Fp8, prefer Triton for TP and FI CUTLASS for EP"
// (vllm/model_executor/layers/fused_moe/oracle/fp8.py, PR #34260, merged
// 2026-02-19; read at ba2f0acc2 with flashinfer 0.6.6). Read here as v0.17
// and later, like the fusion pass of the same weeks; a version that does
// not parse is taken as the newest: on.
func FICutlassMoEDefault(e Engine, v string) bool { return vllmFrom(e, v, 17) }

// IndexerWorkspaceDefault reports whether engine e at version v keeps the
// sparse-attention indexer's prefill workspace, 40 x max_model_len keys,
// from its profile run (sim.MemoryProfile.IndexerWorkspace): vLLM since
// PR #27532 (merged 2025-12-12), which brought the shared workspace
// manager (vllm/v1/worker/workspace.py) and the 40 x max_model_len
// buffer (get_max_prefill_buffer_size, vllm/v1/attention/backends/mla/
// indexer.py; the profile run reserves it in sparse_attn_indexer,
// vllm/model_executor/layers/sparse_attn_indexer.py @ f120bd42d, still
// the same on main in 2026-09). Read here as v0.14 and later (v0.13.0's
// branch point against the merge is not read); a version that does not
// parse is taken as the newest: kept. Only DSA models have the buffer.
func IndexerWorkspaceDefault(e Engine, v string) bool { return vllmFrom(e, v, 14) }

// vllmFrom reports whether engine e is vLLM at 0.minor or later; a
// version that does not parse is taken as the newest (true).
func vllmFrom(e Engine, v string, minor int) bool {
	if e != VLLM {
		return false
	}
	ma, mi, ok := parseVersion(v)
	return !ok || ma > 0 || mi >= minor
}

// vllmBetween reports whether engine e is vLLM from 0.lo to 0.hi; a
// version that does not parse is taken as the newest (false).
func vllmBetween(e Engine, v string, lo, hi int) bool {
	if e != VLLM {
		return false
	}
	ma, mi, ok := parseVersion(v)
	return ok && ma == 0 && mi >= lo && mi <= hi
}

// VersionKnown reports whether engine version v reads as
// [v]MAJOR.MINOR[...] ("0.12.0", "v0.5.3rc1", "0.5.1.post1"), the form
// the version-dependent defaults (AsyncDefault, ReserveFullISLDefault,
// SpecPrepBubbleDefault, SpecSyncDefault, DefaultMemFraction) follow;
// another ("nightly", "") is taken as the newest.
func VersionKnown(v string) bool {
	_, _, ok := parseVersion(v)
	return ok
}

// ParseVersion reads the leading major.minor of an engine version
// ("0.12.0", "v0.15.1", "0.5.1.post1"); ok is false for another form
// ("nightly", "").
func ParseVersion(v string) (major, minor int, ok bool) { return parseVersion(v) }

// parseVersion reads the leading major.minor of an engine version
// ("0.12.0", "v0.15.1", "0.5.1.post1").
func parseVersion(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, false
	}
	return major, minor, true
}

// EngineHost is engine e's measured host work per step (zero for an
// unknown engine). SimConfig and the scenarios put it on Config.Host.
func EngineHost(e Engine) HostOverhead {
	if !e.valid() {
		return HostOverhead{}
	}
	return engines[e].host
}

// AsyncDefault reports whether engine e at version v ("" = unknown, taken
// as the newest) hides host work behind the GPU by default
// (Config.AsyncScheduling): vLLM from v0.14.0, SGLang's overlap scheduler
// in every version the corpus holds (on by default in
// `python/sglang/srt/server_args.py`, disable_overlap_schedule False),
// except with EAGLE/MTP up to v0.5.10, where the V1 worker turns it off
// (SpecSyncDefault; the scenarios apply it).
func AsyncDefault(e Engine, v string) bool {
	if !e.valid() {
		return true
	}
	return engines[e].asyncDefault(v)
}

// SpecSyncDefault reports whether engine e at version v ("" = unknown,
// taken as the newest) runs EAGLE/MTP speculative decoding with its
// synchronous worker by default (Spec.Sync): SGLang up to v0.5.10, whose
// default EAGLE worker is V1 (speculative/eagle_worker.py) unless the
// server's environment sets SGLANG_ENABLE_SPEC_V2. Sources:
//   - sgl-project/sglang PR #11398 (2025-10-09) added the overlapped V2
//     worker behind `export SGLANG_ENABLE_SPEC_V2=1`, and PR #12113 made
//     it that environment variable (environ.py EnvBool(False));
//     server_args.py _handle_speculative_decoding of that line: "if not
//     envs.SGLANG_ENABLE_SPEC_V2.get(): self.disable_overlap_schedule =
//     True" ("Overlap scheduler is disabled because of using eagle3 or
//     standalone speculative decoding"); DeepSeek-V3/R1 is not among the
//     architectures that turn V2 on by themselves (DeepSeek-V4, MiMo,
//     hybrid-mamba models with extra_buffer do);
//   - PR #18719 (2026-02-12) still sets SGLANG_ENABLE_SPEC_V2=1 by hand
//     on the nightly MTP/EAGLE tests; InferenceX PR #1017 (2026-04-14)
//     adds it to an SGLang v0.5.10.post1 MTP recipe;
//   - PR #25464 (2026-05-16, "Deprecate Spec V1") removed the V1 worker,
//     after which EAGLE always runs the V2 worker (PR #27964 retires the
//     variable).
//
// The first release after PR #25464 is not read here, so versions from
// v0.5.11 are taken as V2 (the newest behaviour); that may be early for
// v0.5.11. vLLM has no such split (its EAGLE/MTP path runs under async
// scheduling since vllm-project/vllm PR #31998; AsyncDefault).
func SpecSyncDefault(e Engine, v string) bool {
	if e != SGLang {
		return false
	}
	major, minor, ok := parseVersion(v)
	if !ok || major > 0 || minor > 5 {
		return false
	}
	return minor < 5 || versionPatch(v) <= 10
}

// versionPatch is the leading number of an engine version's third part
// ("0.5.10.post1": 10, "0.5.9": 9); 0 when there is none.
func versionPatch(v string) int {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 4)
	if len(parts) < 3 {
		return 0
	}
	n := 0
	for _, c := range parts[2] {
		if c < '0' || c > '9' || n > 1e6 {
			break
		}
		n = 10*n + int(c-'0')
	}
	return n
}

// SpecSyncForwards is the number of model-runner forwards SGLang's V1
// EAGLE worker runs in one step (sgl-project/sglang
// `python/sglang/srt/speculative/eagle_worker.py`,
// forward_batch_generation, the file at 00559ea): a decode step runs
// draft (its own ForwardBatch.init_new and the draft CUDA graph's
// replay), verify (the target's TARGET_VERIFY forward) and
// forward_draft_extend_after_decode (a third ForwardBatch.init_new and the
// draft-extend graph); a prefill step runs the target extend and
// forward_draft_extend. Between them the host syncs on GPU results
// (`torch.sum(batch.seq_lens).item()` in _draft_preprocess_decode,
// `seq_lens_sum = ...sum().item()` before the draft extend, the accept
// lengths copied to the host in verify), so the GPU waits for each
// forward's host preparation. Each forward is priced at the engine's
// measured host work per step (Config.Host, one model-runner forward's
// preparation); the verify's per-request bookkeeping in Python and the
// scheduler's own pass are not priced.
func SpecSyncForwards(prefill bool) int {
	if prefill {
		return 2
	}
	return 3
}

// hostWall is the wall time of a step of GPU time gpu whose host loop does
// host seconds of work: hidden behind the GPU (the longer of the two) when
// the engine overlaps that step, added otherwise.
func hostWall(gpu, host float64, overlap bool) float64 {
	if overlap {
		return max(gpu, host)
	}
	return gpu + host
}
