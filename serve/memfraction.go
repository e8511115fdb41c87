package serve

import (
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
)

// MiB is 2^20 bytes.
const MiB unit.Bytes = 1 << 20

// vllmMemFraction is vLLM's default gpu_memory_utilization
// (vllm/config/cache.py: 0.9).
const vllmMemFraction = 0.90

// FractionInputs is what an engine's default share of GPU memory depends
// on besides its scheduler settings (Config): the GPU, the replica's
// parallel layout, the engine version and the model's vision tower.
type FractionInputs struct {
	// GPUMemory is one GPU's memory as the engine reads it (SGLang:
	// nvidia-smi memory.total, get_device_memory_capacity, in MiB).
	GPUMemory unit.Bytes
	// TP is the engine's tp_size: every GPU of the replica (SGLang runs
	// DP attention inside its TP group).
	TP int
	// DP is the number of DP-attention ranks (SGLang dp_size with
	// --enable-dp-attention); 1 without DP attention.
	DP int
	// Version is the engine's version as its image or package names it
	// ("0.5.1.post1"); "" or one that does not parse is taken as the
	// newest.
	Version string
	// Vision is the model's vision tower as SGLang reads it
	// (model.Vision); zero for a text-only model.
	Vision model.Vision
}

// DefaultMemFraction is the share of each GPU's memory engine c.Engine
// takes by default under c's settings: vLLM's gpu_memory_utilization
// 0.90; SGLang's mem_fraction_static as its server derives it from the
// GPU's memory (sglangMemFraction). 0.90 for an unknown engine.
func DefaultMemFraction(c *Config, in FractionInputs) float64 {
	if c.Engine != SGLang {
		return vllmMemFraction
	}
	return sglangMemFraction(c, in)
}

// sglangMemFraction is SGLang's default mem_fraction_static, the share of
// GPU memory for the weights and the KV pool (activations, CUDA graphs
// and communicator buffers take the rest), as
// `python/sglang/srt/server_args.py` derives it when --mem-fraction-static
// is not given: round((gpu_mem - reserved) / gpu_mem, 3), gpu_mem in MiB,
// then scaled down for a multimodal model (adjust_mem_fraction_for_vlm).
// reserved, in MiB, by version:
//
//   - from 0.5.3 (sgl-project/sglang PR #10975, "Use more general
//     heuristics to set the default value of --mem-fraction-static",
//     merged 2025-09-27, after 0.5.2; _handle_gpu_memory_settings as
//     server_args.py @ 001067f and the releases between hold it):
//     512 + 1.5 x max(chunked_prefill_size, 2048) + 2 x cuda_graph_max_bs +
//     tp_size x pp_size / 8 x 1024, with DP attention + 3 x
//     cuda_graph_max_bs x dp_size (+ 1.5 x cuda_graph_max_bs x dp_size
//     when cuda_graph_max_bs > 300); at least 10 GiB on a GPU of more than
//     60 GiB; + 2 GiB for an EAGLE/MTP drafter (none for n-gram).
//     cuda_graph_max_bs is its own default by GPU memory and TP
//     (sglangCaptureSize, in requests). 0.852 on a B200 at TP8.
//   - before 0.5.3 (PR #7054, "Simplify the heuristics for setting
//     --mem-fraction-static", merged 2025-06-10; the corpus's 0.5.1
//     rows): by GPU memory, (2.8 + tp x pp / 10) GiB below 35 GiB,
//     (9.5 + tp x pp / 2) GiB below 90 GiB, (12 + tp x pp / 2) GiB below
//     160 GiB, else 32 GiB; + 4 GiB with DP attention; + 2 GiB for an
//     EAGLE/MTP drafter. 0.821 on a B200, 0.868 on an H100 at TP2.
//
// adjust_mem_fraction_for_vlm (both): a model with a vision_config is
// scaled by 0.95 x clamp(1 - 0.1 x (layers x hidden^2 / (24 x 1024^2) - 1),
// 0.8, 1.05), layers and hidden its num_hidden_layers and hidden_size
// (24 and 1024 where absent). pp_size is 1 (moecast models no pipeline
// parallelism); piecewise CUDA graphs (off by default in these releases)
// and the disaggregation-mode terms of later releases (PR #29615) are not
// modelled. The file could not be read at each release tag here (the
// repository's snapshot exceeds the fetch limit and the code index holds
// one version, 001067f); the earlier formula is as the PRs and the copies
// of server_args.py in the code index give it.
func sglangMemFraction(c *Config, in FractionInputs) float64 {
	gpu := float64(in.GPUMemory / MiB)
	if !(gpu > 0) || math.IsInf(gpu, 0) {
		return 0.88 // server_args.py: gpu_mem unknown
	}
	tp := float64(max(in.TP, 1))
	spec := c.Spec.DraftTokens > 0 && c.Spec.Lookahead > 0 // EAGLE/MTP; n-gram drafts on the host
	var reserved float64
	if sglangBefore(in.Version, 0, 5, 3) {
		switch {
		case gpu < 35*1024:
			reserved = (2.8 + tp/10) * 1024
		case gpu < 90*1024:
			reserved = (9.5 + tp/2) * 1024
		case gpu < 160*1024:
			reserved = (12 + tp/2) * 1024
		default:
			reserved = 32 * 1024
		}
		if in.DP > 1 {
			reserved += 4 * 1024
		}
	} else {
		chunk := c.MaxNumBatchedTokens
		if chunk <= 0 {
			chunk = c.MaxPrefillTokens
		}
		maxBS := float64(sglangCaptureSize(c, in.GPUMemory, in.TP) / (1 + c.Spec.DraftTokens))
		dp := float64(max(in.DP, 1))
		reserved = 512 + 1.5*float64(max(chunk, 2048)) + 2*maxBS + tp/8*1024
		if in.DP > 1 {
			reserved += 3 * maxBS * dp
			if maxBS > 300 {
				reserved += 1.5 * maxBS * dp
			}
		}
		if gpu > 60*1024 {
			reserved = max(reserved, 10*1024)
		}
	}
	if spec {
		reserved += 2 * 1024
	}
	f := math.Round((gpu-reserved)/gpu*1000) / 1000
	if v := in.Vision; v.Present {
		layers, hidden := float64(v.Layers), float64(v.Hidden)
		if layers <= 0 {
			layers = 24
		}
		if hidden <= 0 {
			hidden = 1024
		}
		ratio := layers * hidden * hidden / (24 * 1024 * 1024)
		f *= 0.95 * min(1.05, max(0.8, 1-0.1*(ratio-1)))
	}
	return f
}

// SGLangChunkReserve reports whether SGLang at version v reserves memory
// outside mem_fraction_static by its chunked_prefill_size (from 0.5.3:
// 1.5 MiB per token; sglangMemFraction), not by GPU memory alone.
func SGLangChunkReserve(v string) bool { return !sglangBefore(v, 0, 5, 3) }

// sglangBefore reports whether SGLang version v ("0.5.1.post1",
// "v0.5.1-rc0") is older than major.minor.patch; a version that does not
// parse (a nightly tag, "") is taken as the newest.
func sglangBefore(v string, major, minor, patch int) bool {
	ma, mi, ok := parseVersion(v)
	if !ok {
		return false
	}
	if ma != major || mi != minor {
		return ma < major || (ma == major && mi < minor)
	}
	// the patch: the third part's leading digits ("1.post1", "1-rc0")
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 4)
	p := 0
	if len(parts) > 2 {
		digits := parts[2]
		if i := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
			digits = digits[:i]
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return false
		}
		p = n
	}
	return p < patch
}

// DefaultMaxRunning is the limit on running requests engine c.Engine
// derives from c.Memory when none is given: for SGLang,
// max_running_requests per DP-attention rank (Memory.Groups) from the
// tokens its KV pool holds and the model's context length, times the
// ranks (sglangMaxRunning); c.MaxNumSeqs as it is for another engine or
// without a KV pool.
func DefaultMaxRunning(c *Config, context int) int {
	m := c.Memory
	if c.Engine != SGLang || !(m.KVBytesPerToken > 0) || !(m.KVCapacity > 0) {
		return c.MaxNumSeqs
	}
	tokens := math.Min(math.Floor(float64(m.KVCapacity)/float64(m.KVBytesPerToken)), maxTokens)
	return sglangMaxRunning(int(tokens), context) * max(m.Groups, 1)
}

// SetDefaultMaxRunning sets c.MaxNumSeqs to the limit engine c.Engine
// derives from its KV pool (DefaultMaxRunning) for model m, whose
// max_position_embeddings is SGLang's context_len, where c.Memory holds a
// KV pool: what simulate (scenarios' ServeConfig) and plan (SimConfig)
// run with when no limit is given.
func SetDefaultMaxRunning(c *Config, m *model.Config) {
	if m != nil && c.Memory.KVCapacity > 0 {
		c.MaxNumSeqs = DefaultMaxRunning(c, m.MaxPosition)
	}
}

// sglangMaxRunning is the max_running_requests SGLang derives when
// --max-running-requests is not given, from its KV pool of tokens
// (max_total_num_tokens) and the model's context length: min(tokens / 2,
// clamp(int(tokens / context x 512), 2048, 4096)), the second the request
// pool init_memory_pool sizes (max_num_reqs,
// python/sglang/srt/model_executor/model_runner.py), the first the
// scheduler's own bound (max_total_num_tokens // 2, with the pool's size
// as min, tp_worker.py / model_runner.py); per DP-attention rank. At
// least 1.
func sglangMaxRunning(tokens, context int) int {
	reqs := 4096
	if context > 0 {
		reqs = int(math.Min(math.Max(math.Floor(float64(tokens)/float64(context)*512), 2048), 4096))
	}
	return max(1, min(tokens/2, reqs))
}
