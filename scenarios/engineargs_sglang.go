package scenarios

import (
	"fmt"
	"strings"
)

// SGLang's arguments: the fields of ServerArgs
// (python/sglang/srt/server_args.py), which are both the argparse dest
// names and what "server_args=ServerArgs(...)" prints; the flag aliases as
// SGLang's server-arguments documentation lists them
// (docs.sglang.io/advanced_features/server_arguments: --tp/--tensor-parallel-size,
// --dp/--data-parallel-size, --ep/--expert-parallel-size, --model).

// sglangAliases maps SGLang's alternative flag names to the field's flag.
var sglangAliases = map[string]string{
	"model":                  "model-path",
	"tp":                     "tp-size",
	"tensor-parallel-size":   "tp-size",
	"dp":                     "dp-size",
	"data-parallel-size":     "dp-size",
	"ep":                     "ep-size",
	"expert-parallel-size":   "ep-size",
	"pipeline-parallel-size": "pp-size",
}

// sglangBools are SGLang's store_true flags.
var sglangBools = setOf(
	"enable-dp-attention", "enable-ep-moe", "enable-deepep-moe", "enable-mixed-chunk", "disable-overlap-schedule",
	"disable-cuda-graph", "disable-custom-all-reduce", "disable-radix-cache", "trust-remote-code",
	"enable-torch-compile", "enable-dp-lm-head", "enable-two-batch-overlap", "enable-single-batch-overlap",
	"skip-server-warmup", "enable-metrics", "log-requests", "disable-cuda-graph-padding", "enable-p2p-check",
	"enable-nan-detection", "enable-cache-report", "enable-hierarchical-cache", "enable-eplb",
	"disable-shared-experts-fusion", "disable-chunked-prefix-cache", "enable-symm-mem", "enable-nccl-nvls",
	"enable-memory-saver", "allow-auto-truncate", "enable-custom-logit-processor",
	"enable-flashinfer-allreduce-fusion", "is-embedding", "skip-tokenizer-init", "enable-multimodal",
	"show-time-cost", "enable-deterministic-inference", "enable-piecewise-cuda-graph",
	"enable-return-hidden-states", "disable-fast-image-processor", "enable-layerwise-nvtx-marker",
	"enable-priority-scheduling", "enable-dynamic-chunking", "stream-output", "enable-lora",
	"delete-ckpt-after-loading", "enable-request-time-stats-logging", "enable-trace", "disable-outlines-disk-cache",
	"enable-tokenizer-batch-encode", "disable-tokenizer-batch-decode", "enable-mscclpp", "enable-multi-layer-eagle",
	"triton-attention-reduce-in-fp32", "enable-weights-cpu-backup", "enable-fp32-lm-head", "sleep-on-idle",
)

// sglangRead are the fields fromSGLang reads: each takes one value.
var sglangRead = setOf("model_path", "tp_size", "dp_size", "ep_size", "pp_size", "max_running_requests",
	"chunked_prefill_size", "kv_cache_dtype", "mem_fraction_static", "speculative_algorithm", "speculative_num_steps",
	"speculative_eagle_topk", "speculative_num_draft_tokens", "speculative_draft_model_path", "quantization",
	"context_length", "max_prefill_tokens", "moe_dense_tp_size", "prefill_decode_interval",
	"scheduler_recv_interval", "cuda_graph_max_bs", "nsa_prefill_backend")

// sglangQuiet are ServerArgs fields with no bearing on a performance
// prediction: read without a remark.
var sglangQuiet = setOf(
	"host", "port", "tokenizer_path", "tokenizer_mode", "tokenizer_worker_num", "skip_tokenizer_init", "load_format",
	"model_loader_extra_config", "trust_remote_code", "revision", "served_model_name", "chat_template",
	"hf_chat_template_name", "completion_template", "api_key", "admin_api_key", "log_level", "log_level_http",
	"log_requests", "log_requests_level", "log_requests_format", "log_requests_target", "random_seed",
	"download_dir", "file_storage_path", "enable_metrics", "enable_metrics_for_all_schedulers", "enable_cache_report",
	"show_time_cost", "decode_log_interval", "reasoning_parser", "tool_call_parser", "tool_server",
	"skip_server_warmup", "warmups", "watchdog_timeout", "soft_watchdog_timeout", "dist_timeout", "dist_init_addr",
	"node_rank", "nccl_port", "base_gpu_id", "gpu_id_step", "otlp_traces_endpoint", "enable_trace",
	"crash_dump_folder", "weight_version", "fastapi_root_path", "grpc_mode", "ssl_keyfile", "ssl_certfile",
	"ssl_ca_certs", "ssl_keyfile_password", "enable_ssl_refresh", "device", "model_impl", "sampling_defaults",
	"uvicorn_access_log_exclude_prefixes", "tokenizer_metrics_custom_labels_header", "enable_request_time_stats_logging",
	"collect_tokens_histogram", "kv_events_config", "export_metrics_to_file", "export_metrics_to_file_dir",
	"custom_sigquit_handler", "gc_warning_threshold_secs", "preferred_sampling_params",
)

// sglangNotable are ServerArgs fields that change performance and that
// moecast does not model, each with its default as ServerArgs prints it. A
// ServerArgs log line prints every field, its defaults and the values
// SGLang derived at start-up among them; of the fields not read, it is
// these that are listed when they differ from the default (the rest are
// counted).
var sglangNotable = map[string]string{
	"quantization": "None", "context_length": "None", "max_total_tokens": "None", "max_prefill_tokens": "16384",
	"schedule_policy": "'fcfs'", "enable_torch_compile": "False", "enable_two_batch_overlap": "False",
	"enable_single_batch_overlap": "False", "enable_dp_lm_head": "False",
	"attn_cp_size": "1", "moe_dp_size": "1", "disaggregation_mode": "'null'",
	"enable_hierarchical_cache": "False", "enable_eplb": "False", "ep_num_redundant_experts": "0",
	"num_continuous_decode_steps": "1", "cpu_offload_gb": "0", "torchao_config": "''",
	"enable_deterministic_inference": "False", "enable_lora": "None", "enable_nccl_nvls": "False",
	"enable_symm_mem": "False", "speculative_draft_model_quantization": "None", "enable_piecewise_cuda_graph": "False",
	"nnodes": "1", "json_model_override_args": "'{}'", "dtype": "'auto'", "enable_dynamic_chunking": "False",
	"enable_mscclpp": "False", "enable_flashinfer_allreduce_fusion": "False", "disable_shared_experts_fusion": "False",
}

// fromSGLang maps SGLang's arguments onto scenario keys. dump is true for
// a ServerArgs log line (every field present).
func (d *Deployment) fromSGLang(file string, line int, args []engineArg, dump bool) error {
	d.set("runtime.engine", quoteTOML("sglang"), "")
	fail := func(a engineArg, err error) error { return argsError(file, line, a, "%v", err) }
	tp, dp, ep := 1, 1, 1
	var (
		tpArg, dpArg, epArg engineArg
		dpAttn, epMoE       engineArg
		denseTP             engineArg
		spec                = map[string]engineArg{}
		unread              int
	)
	for _, a := range args {
		switch a.Dest {
		case "model_path":
			d.Model = argStr(a)
		case "tp_size", "dp_size", "ep_size", "pp_size":
			if a.Val.Kind == pyNone {
				continue
			}
			n, err := argInt(a, false)
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fail(a, err)
			}
			switch a.Dest {
			case "tp_size":
				tp, tpArg = n, a
			case "dp_size":
				dp, dpArg = n, a
			case "ep_size":
				ep, epArg = n, a
			case "pp_size":
				if n > 1 {
					return argsError(file, line, a, "pipeline parallelism (%d stages) cannot be expressed in a moecast scenario", n)
				}
			}
		case "enable_dp_attention":
			dpAttn = a
		case "moe_dense_tp_size":
			if a.Val.Kind != pyNone {
				denseTP = a
			}
		case "enable_ep_moe", "enable_deepep_moe":
			if on, err := argBool(a); err != nil {
				return fail(a, err)
			} else if on {
				epMoE = a
				if a.Dest == "enable_deepep_moe" { // the older spelling of --moe-a2a-backend deepep
					d.set("runtime.moe_a2a_backend", quoteTOML("deepep"), a.written())
				}
			}
		case "moe_a2a_backend":
			if a.Val.Kind == pyNone {
				continue
			}
			v := argStr(a)
			if v == "none" {
				continue // the default
			}
			if _, ok := moeA2ABackends[v]; !ok {
				d.warnf("%s: moecast does not model this expert-parallel exchange; priced as every rank seeing the DP group's tokens", a.written())
				continue
			}
			d.set("runtime.moe_a2a_backend", quoteTOML(v), a.written())
		case "max_running_requests":
			if a.Val.Kind == pyNone {
				continue
			}
			n, err := argInt(a, false)
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fail(a, err)
			}
			d.setInt("runtime.max_num_seqs", n, a.written())
		case "chunked_prefill_size":
			if a.Val.Kind == pyNone {
				continue
			}
			n, err := argInt(a, false)
			if err != nil {
				return fail(a, err)
			}
			if n <= 0 {
				d.warnf("%s turns chunked prefill off; moecast's SGLang scheduler always chunks, at the engine's default size for the GPU", a.written())
				continue
			}
			d.setInt("runtime.max_num_batched_tokens", n, a.written())
		case "prefill_decode_interval":
			n, err := argInt(a, false)
			if err == nil && n < 0 {
				err = fmt.Errorf("%d must be at least 0", n)
			}
			if err != nil {
				return fail(a, err)
			}
			d.setInt("runtime.prefill_decode_interval", n, a.written())
		case "cuda_graph_max_bs":
			n, err := argInt(a, false)
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fail(a, err)
			}
			d.setInt("runtime.cuda_graph_max_bs", n, a.written())
		case "nsa_prefill_backend":
			v := argStr(a)
			if !nsaPrefillBackends[v] {
				return fail(a, fmt.Errorf("unknown backend %q (want one of %s)", v, nsaPrefillBackendNames()))
			}
			d.set("runtime.nsa_prefill_backend", quoteTOML(v), a.written())
		case "scheduler_recv_interval":
			n, err := argInt(a, false)
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fail(a, err)
			}
			d.setInt("runtime.scheduler_recv_interval", n, a.written())
		case "kv_cache_dtype":
			v, err := kvCacheValue(d, argStr(a))
			if err != nil {
				return fail(a, err)
			}
			if v != "" {
				d.set("model.kv_cache", quoteTOML(v), a.written())
			}
		case "mem_fraction_static":
			if a.Val.Kind == pyNone {
				continue
			}
			f, err := argFloat(a)
			if err == nil && !(f > 0 && f <= 1) {
				err = fmt.Errorf("%g must be in (0, 1]", f)
			}
			if err != nil {
				return fail(a, err)
			}
			d.set("runtime.gpu_memory_utilization", formatFloat(f),
				a.written()+" (SGLang's share for weights and the KV pool, read as the engine's share of memory)")
		case "enable_mixed_chunk", "disable_overlap_schedule", "disable_cuda_graph", "disable_custom_all_reduce":
			on, err := argBool(a)
			if err != nil {
				return fail(a, err)
			}
			switch a.Dest {
			case "enable_mixed_chunk":
				d.set("runtime.mixed_chunk", fmt.Sprint(on), a.written())
			case "disable_overlap_schedule":
				if on || !dump {
					d.set("runtime.async_scheduling", fmt.Sprint(!on), a.written())
				}
			case "disable_cuda_graph":
				if on || !dump {
					d.set("runtime.cuda_graphs", fmt.Sprint(!on), a.written())
				}
			case "disable_custom_all_reduce":
				if on {
					d.set("runtime.allreduce", quoteTOML("nccl"), a.written())
				}
			}
		case "config":
			if !dump {
				d.warnf("%s: the YAML file's arguments were not read; put them on the command line", a.written())
			}
		case "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
			"speculative_num_draft_tokens", "speculative_draft_model_path":
			spec[a.Dest] = a
		default:
			switch def, notable := sglangNotable[a.Dest]; {
			case sglangQuiet[a.Dest]:
			case dump && !notable:
				unread++
			case dump && a.Val.Raw == def:
			case dump && a.Val.falsy():
			default:
				d.ignore(a)
			}
		}
	}
	if d.Model == "" {
		return &Error{File: file, Line: line, Msg: "no model: the arguments give no --model-path"}
	}
	if err := d.sglangLayout(file, line, tp, dp, ep, tpArg, dpArg, epArg, dpAttn, epMoE, denseTP); err != nil {
		return err
	}
	if err := d.sglangSpec(file, line, spec); err != nil {
		return err
	}
	if unread > 0 {
		d.warnf("%d other ServerArgs fields were not read: at their defaults, derived by SGLang at start-up, or without effect on moecast's prediction", unread)
	}
	return nil
}

// sglangLayout maps SGLang's layout onto moecast's. SGLang's tp_size is
// the GPUs of one server; with --enable-dp-attention, dp_size attention
// groups of tp/dp GPUs each share the dense MLP and lm_head over all tp GPUs
// (moecast: tp = tp_size, dp_attention, attention unsplit), or with
// --moe-dense-tp-size 1 run them data-parallel too (moecast: tp = 1,
// dp = tp_size, dp_attention); without DP attention, dp_size > 1 starts that
// many independent replicas of tp_size GPUs.
func (d *Deployment) sglangLayout(file string, line, tp, dp, ep int, tpArg, dpArg, epArg, dpAttn, epMoE, denseTP engineArg) error {
	attn := false
	if dpAttn.Dest != "" {
		on, err := argBool(dpAttn)
		if err != nil {
			return argsError(file, line, dpAttn, "%v", err)
		}
		attn = on
	}
	from := func(a engineArg) string {
		if a.Dest == "" {
			return ""
		}
		return a.written()
	}
	switch {
	case attn && dp > 1:
		if tp%dp != 0 {
			return argsError(file, line, dpArg, "dp_size %d does not divide tp_size %d (DP attention splits the tp_size GPUs into dp_size groups)", dp, tp)
		}
		if tp/dp > 1 {
			return argsError(file, line, dpArg, "DP attention with %d attention groups of %d GPUs (tp %d / dp %d): attention split inside a DP group cannot be expressed (moecast's dp_attention runs attention unsplit on every GPU)",
				dp, tp/dp, tp, dp)
		}
		dense := 0
		if denseTP.Dest != "" {
			n, err := argInt(denseTP, false)
			if err != nil {
				return argsError(file, line, denseTP, "%v", err)
			}
			dense = n
		}
		switch dense {
		case 0, tp: // the default: the dense MLP over all tp_size GPUs
			d.setInt("parallel.tp", tp, from(tpArg))
			d.setInt("parallel.dp", 1, from(dpArg)+" with DP attention: the attention groups are parallel.dp_attention")
		case 1:
			d.setInt("parallel.tp", 1, from(denseTP)+": dense layers data-parallel too")
			d.setInt("parallel.dp", tp, from(tpArg)+" "+from(dpArg))
		default:
			return argsError(file, line, denseTP, "a dense-MLP TP of %d inside tp_size %d cannot be expressed (moecast: 1 or tp_size)", dense, tp)
		}
		d.set("parallel.dp_attention", "true", from(dpAttn))
	case attn:
		if denseTP.Dest != "" {
			d.ignore(denseTP)
		}
		d.setInt("parallel.tp", tp, from(tpArg))
		d.warnf("%s with dp_size 1 runs plain tensor parallelism", from(dpAttn))
	case dp > 1:
		if denseTP.Dest != "" {
			d.ignore(denseTP)
		}
		d.setInt("parallel.tp", tp, from(tpArg))
		d.setInt("parallel.dp", 1, from(dpArg)+": independent replicas; this scenario is one of them")
		d.warnf("%s without DP attention starts %d independent replicas of %d GPUs; the scenario is one replica: give it 1/%d of the load",
			from(dpArg), dp, tp, dp)
	default:
		if denseTP.Dest != "" {
			d.ignore(denseTP)
		}
		d.setInt("parallel.tp", tp, from(tpArg))
	}
	switch {
	case epMoE.Dest != "" && epArg.Dest == "":
		d.setInt("parallel.ep", tp, from(epMoE)+" (EP = tp_size)")
	case ep > 1:
		if tp%ep != 0 {
			return argsError(file, line, epArg, "ep_size %d does not divide tp_size %d", ep, tp)
		}
		d.setInt("parallel.ep", ep, from(epArg))
	}
	return nil
}

// sglangSpec maps SGLang's speculative decoding: NEXTN (and EAGLE with a
// NextN/MTP draft, or with no draft model at all: SGLang's ServerArgs then
// takes the model's own path as the draft for the MTP-carrying
// architectures, DeepseekV3ForCausalLM, Glm4MoeForCausalLM and others,
// "DeepSeek MTP does not require setting speculative_draft_model_path",
// python/sglang/srt/server_args.py, in v0.5.x's _handle_speculative_decoding
// and @ 001067f's _handle_eagle_family; InferenceX's dsr1_fp8_b200_mtp.sh
// runs it so) is the model's MTP layer; EAGLE3 an EAGLE-3 head; EAGLE
// an EAGLE-1/2 head, priced as EAGLE-3; NGRAM (LOOKAHEAD in older
// releases) n-gram drafting. K, the tokens drafted per step, is
// speculative_num_draft_tokens - 1 (SGLang counts the verified root token
// among the draft tokens: a chain of num_steps drafts verifies num_steps + 1),
// else speculative_num_steps.
func (d *Deployment) sglangSpec(file string, line int, spec map[string]engineArg) error {
	alg, ok := spec["speculative_algorithm"]
	if !ok || argStr(alg) == "" {
		return nil
	}
	draft := ""
	if a, ok := spec["speculative_draft_model_path"]; ok && a.Val.Kind != pyNone {
		draft = strings.ToLower(argStr(a))
	}
	own := draft == "" || (d.Model != "" && draft == strings.ToLower(d.Model)) // the model drafts for itself
	var m string
	switch name := strings.ToUpper(argStr(alg)); {
	case name == "NEXTN" || (name == "EAGLE" && (own || strings.Contains(draft, "nextn") || strings.Contains(draft, "mtp"))):
		m = "mtp"
	case name == "EAGLE3":
		m = "eagle3"
	case name == "EAGLE":
		m = "eagle3"
		d.warnf("%s (an EAGLE-1/2 head) priced as an EAGLE-3 head: one decoder layer drafting from the target's hidden states", alg.written())
	case name == "NGRAM" || name == "LOOKAHEAD":
		m = "ngram"
	default:
		return argsError(file, line, alg, "speculative algorithm %q has no moecast equivalent (want NEXTN, EAGLE, EAGLE3 or NGRAM)", argStr(alg))
	}
	num := func(key string) (int, engineArg, bool, error) {
		a, ok := spec[key]
		if !ok || a.Val.Kind == pyNone {
			return 0, a, false, nil
		}
		n, err := argInt(a, false)
		if err != nil {
			return 0, a, false, argsError(file, line, a, "%v", err)
		}
		return n, a, true, nil
	}
	steps, stepsArg, hasSteps, err := num("speculative_num_steps")
	if err != nil {
		return err
	}
	drafts, draftsArg, hasDrafts, err := num("speculative_num_draft_tokens")
	if err != nil {
		return err
	}
	topk, topkArg, hasTopk, err := num("speculative_eagle_topk")
	if err != nil {
		return err
	}
	var k int
	from := []string{alg.written()}
	switch {
	case hasDrafts:
		k = drafts - 1
		from = append(from, draftsArg.written())
	case hasSteps:
		k = steps
		from = append(from, stepsArg.written())
	default:
		return argsError(file, line, alg, "neither speculative_num_steps nor speculative_num_draft_tokens given: the draft length is unknown (SGLang picks it per model at start-up; its ServerArgs log line shows it)")
	}
	if k < 1 {
		return argsError(file, line, draftsArg, "%d draft tokens verify no speculative token", drafts)
	}
	if hasTopk && topk > 1 {
		d.warnf("%s: tree drafting (%d branches per step) priced as a chain of K = %d drafts, the tokens one verify step checks", topkArg.written(), topk, k)
	}
	if hasSteps && hasDrafts && m != "ngram" && (!hasTopk || topk <= 1) && steps+1 != drafts {
		d.warnf("%s and %s: a chain of %d drafts verifies %d tokens; K = %d taken from the draft tokens", stepsArg.written(), draftsArg.written(), steps, steps+1, k)
	}
	d.Spec = SpecArgs{Method: m, DraftTokens: k, From: strings.Join(from, " ")}
	return nil
}
