package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// vLLM's arguments, as vllm/engine/arg_utils.py EngineArgs.add_cli_args
// (vllm-project/vllm @ 99d7eb5) and the OpenAI server's make_arg_parser
// define them. Destinations are the argparse dest names, which are also the
// keys of the "non-default args" log line.

// vllmAliases maps vLLM's short flags to their long names.
var vllmAliases = map[string]string{
	"tp":  "tensor-parallel-size",
	"pp":  "pipeline-parallel-size",
	"dp":  "data-parallel-size",
	"dcp": "decode-context-parallel-size",
	"dpn": "data-parallel-rank",
	"dpr": "data-parallel-start-rank",
	"dpl": "data-parallel-size-local",
	"dpa": "data-parallel-address",
	"dpp": "data-parallel-rpc-port",
	"dpb": "data-parallel-backend",
	"q":   "quantization",
	"O":   "compilation-config",
	// The short form later releases give --enable-expert-parallel (not
	// at the commit above).
	"ep": "enable-expert-parallel",
}

// vllmBools are vLLM's boolean flags (argparse BooleanOptionalAction or
// store_true): they take no value, and "--no-X" negates the optional ones.
var vllmBools = setOf(
	"enable-expert-parallel", "enforce-eager", "disable-custom-all-reduce", "async-scheduling",
	"trust-remote-code", "enable-prefix-caching", "enable-chunked-prefill", "disable-log-stats",
	"disable-log-requests", "enable-log-requests", "enable-auto-tool-choice", "enable-dbo", "enable-eplb",
	"disable-sliding-window", "disable-cascade-attn", "skip-tokenizer-init", "enable-prompt-embeds",
	"enable-sleep-mode", "data-parallel-hybrid-lb", "enable-lora", "disable-uvicorn-access-log", "headless",
	"disable-frontend-multiprocessing", "enable-request-id-headers", "enable-force-include-usage",
	"enable-server-load-tracking", "disable-fastapi-docs", "return-tokens-as-token-ids",
	"enable-tokenizer-info-endpoint", "calculate-kv-scales", "kv-sharing-fast-prefill",
	"disable-hybrid-kv-cache-manager", "disable-chunked-mm-input", "enable-mm-embeds",
	"disable-nccl-for-dp-synchronization", "ray-workers-use-nsight", "fully-sharded-loras",
	"aggregate-engine-logging", "enable-log-outputs", "enable-ssl-refresh", "use-tqdm-on-load",
	"skip-mm-profiling", "interleave-mm-strings", "disable-mm-preprocessor-cache",
	"enable-multimodal-encoder-data-parallel", "use-v2-block-manager", "enable-prompt-tokens-details",
	"log-error-stack", "allow-credentials",
)

// vllmRead are the destinations fromVLLM reads: each takes one value.
var vllmRead = setOf("model", "tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size",
	"enable_expert_parallel", "max_num_seqs", "max_num_batched_tokens", "kv_cache_dtype", "gpu_memory_utilization",
	"enforce_eager", "disable_custom_all_reduce", "async_scheduling", "speculative_config", "speculative_model",
	"num_speculative_tokens", "config", "quantization", "max_model_len", "long_prefill_token_threshold",
	"max_num_partial_prefills", "max_long_partial_prefills", "max_cudagraph_capture_size", "prefill_schedule_interval",
	"compilation_config")

// vllmQuiet are vLLM arguments with no bearing on a performance
// prediction (serving, logging, tokenizer, access, process placement):
// read without a remark.
var vllmQuiet = setOf(
	"host", "port", "uds", "uvicorn_log_level", "disable_uvicorn_access_log", "allow_credentials", "allowed_origins",
	"allowed_methods", "allowed_headers", "api_key", "lora_modules", "prompt_adapters", "chat_template",
	"chat_template_content_format", "response_role", "ssl_keyfile", "ssl_certfile", "ssl_ca_certs",
	"enable_ssl_refresh", "ssl_cert_reqs", "root_path", "middleware", "return_tokens_as_token_ids",
	"disable_frontend_multiprocessing", "enable_request_id_headers", "enable_auto_tool_choice",
	"tool_call_parser", "tool_parser_plugin", "tool_server", "log_config_file", "max_log_len",
	"disable_fastapi_docs", "enable_prompt_tokens_details", "enable_server_load_tracking",
	"enable_force_include_usage", "enable_tokenizer_info_endpoint", "enable_log_outputs",
	"h11_max_incomplete_event_size", "h11_max_header_count", "log_error_stack", "served_model_name",
	"tokenizer", "tokenizer_mode", "tokenizer_revision", "trust_remote_code", "download_dir", "revision",
	"code_revision", "hf_token", "seed", "disable_log_stats", "disable_log_requests", "enable_log_requests",
	"api_server_count", "headless", "reasoning_parser", "structured_outputs_config",
	"guided_decoding_backend", "logits_processor_pattern", "generation_config",
	"override_generation_config", "max_logprobs", "logprobs_mode", "load_format",
	"safetensors_load_strategy", "use_tqdm_on_load", "allowed_local_media_path", "allowed_media_domains",
	"otlp_traces_endpoint", "collect_detailed_traces", "show_hidden_metrics_for_version",
	"aggregate_engine_logging", "data_parallel_address", "data_parallel_rpc_port", "data_parallel_rank",
	"data_parallel_start_rank", "data_parallel_backend", "distributed_executor_backend", "worker_cls",
	"worker_extension_cls", "model_loader_extra_config", "ignore_patterns", "max_parallel_loading_workers",
	"config_format", "hf_config_path", "enable_sleep_mode", "subparser", "dispatch_function",
	"disable_log_stats", "pt_load_map_location", "ray_workers_use_nsight",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// fromVLLM maps vLLM's arguments onto scenario keys. line is the log line
// the arguments came from (0 for a command line).
func (d *Deployment) fromVLLM(file string, line int, args []engineArg, cmdline bool) error {
	d.set("runtime.engine", quoteTOML("vllm"), "")
	tp, dp := 1, 1
	var (
		ep       engineArg
		hasEP    bool
		spec     = pyValue{Kind: pyDict}
		specFrom []string
		specAt   engineArg
	)
	fail := func(a engineArg, err error) error { return argsError(file, line, a, "%v", err) }
	for _, a := range args {
		switch a.Dest {
		case "model_tag", "model":
			if s := argStr(a); s != "" && (d.Model == "" || a.Dest == "model_tag") {
				d.Model = s
			}
		case "tensor_parallel_size", "data_parallel_size":
			n, err := argInt(a, false)
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fail(a, err)
			}
			if a.Dest == "tensor_parallel_size" {
				tp = n
				d.setInt("parallel.tp", n, a.written())
			} else {
				dp = n
				d.setInt("parallel.dp", n, a.written())
			}
		case "pipeline_parallel_size":
			n, err := argInt(a, false)
			if err != nil {
				return fail(a, err)
			}
			if n > 1 {
				return argsError(file, line, a, "pipeline parallelism (%d stages) cannot be expressed in a moecast scenario", n)
			}
		case "all2all_backend":
			if a.Val.Kind == pyNone {
				continue
			}
			v := argStr(a)
			if _, ok := moeA2ABackends[v]; !ok {
				d.warnf("%s: moecast does not model this expert-parallel exchange; priced as every rank seeing the DP group's tokens", a.written())
				continue
			}
			d.set("runtime.moe_a2a_backend", quoteTOML(v), a.written())
		case "enable_expert_parallel":
			on, err := argBool(a)
			if err != nil {
				return fail(a, err)
			}
			ep, hasEP = a, on
		case "max_num_seqs", "max_num_batched_tokens":
			if a.Val.Kind == pyNone {
				continue
			}
			n, err := argInt(a, a.Dest == "max_num_batched_tokens")
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fail(a, err)
			}
			d.setInt("runtime."+a.Dest, n, a.written())
		case "long_prefill_token_threshold", "max_num_partial_prefills", "max_long_partial_prefills", "max_cudagraph_capture_size",
			"prefill_schedule_interval":
			n, err := argInt(a, false)
			lo := 1 // SchedulerConfig: max_num_*_partial_prefills and prefill_schedule_interval ge=1
			if a.Dest == "long_prefill_token_threshold" {
				lo = 0
			}
			if err == nil && n < lo {
				err = fmt.Errorf("%d must be at least %d", n, lo)
			}
			if err != nil {
				return fail(a, err)
			}
			d.setInt("runtime."+a.Dest, n, a.written())
		case "kv_cache_dtype":
			v, err := kvCacheValue(d, argStr(a))
			if err != nil {
				return fail(a, err)
			}
			if v != "" {
				d.set("model.kv_cache", quoteTOML(v), a.written())
			}
		case "gpu_memory_utilization":
			f, err := argFloat(a)
			if err == nil && !(f > 0 && f <= 1) {
				err = fmt.Errorf("%g must be in (0, 1]", f)
			}
			if err != nil {
				return fail(a, err)
			}
			d.set("runtime.gpu_memory_utilization", formatFloat(f), a.written())
		case "enforce_eager":
			on, err := argBool(a)
			if err != nil {
				return fail(a, err)
			}
			d.set("runtime.cuda_graphs", fmt.Sprint(!on), a.written())
		case "disable_custom_all_reduce":
			on, err := argBool(a)
			if err != nil {
				return fail(a, err)
			}
			if on {
				d.set("runtime.allreduce", quoteTOML("nccl"), a.written())
			}
		case "async_scheduling":
			on, err := argBool(a)
			if err != nil {
				return fail(a, err)
			}
			d.set("runtime.async_scheduling", fmt.Sprint(on), a.written())
		case "speculative_config":
			v, err := specValue(a)
			if err != nil {
				return fail(a, err)
			}
			for i, k := range v.Keys { // dotted flags add keys one at a time
				spec.Keys, spec.Vals = append(spec.Keys, k), append(spec.Vals, v.Vals[i])
			}
			specFrom, specAt = append(specFrom, a.written()), a
		case "speculative_model", "num_speculative_tokens": // vLLM before 0.8 (EngineArgs @ 001999d)
			if a.Val.Kind == pyNone {
				continue
			}
			key := map[string]string{"speculative_model": "model", "num_speculative_tokens": "num_speculative_tokens"}[a.Dest]
			v := a.Val
			if key == "num_speculative_tokens" {
				n, err := argInt(a, false)
				if err != nil {
					return fail(a, err)
				}
				v = pyValue{Kind: pyInt, Int: int64(n), Float: float64(n)}
			}
			spec.Keys, spec.Vals = append(spec.Keys, key), append(spec.Vals, v)
			specFrom, specAt = append(specFrom, a.written()), a
		case "cudagraph_capture_sizes", "cuda_graph_sizes":
			// --cudagraph-capture-sizes (nargs="+"), and the deprecated
			// --cuda-graph-sizes it replaced, which EngineArgs copies into
			// compilation_config.cudagraph_capture_sizes
			// (vllm/engine/arg_utils.py, create_engine_config).
			if a.Val.Kind == pyNone {
				continue
			}
			if err := d.setCaptureSizes(a.Val, a.written()); err != nil {
				return fail(a, err)
			}
		case "compilation_config":
			if err := d.vllmCompilation(a); err != nil {
				return fail(a, err)
			}
		case "config":
			d.warnf("%s: the YAML file's arguments were not read; put them on the command line", a.written())
		default:
			if !vllmQuiet[a.Dest] && !(!cmdline && a.Val.falsy()) {
				d.ignore(a)
			}
		}
	}
	if hasEP {
		// vLLM's FusedMoEParallelConfig: with expert parallelism the experts
		// spread over all TP x DP ranks.
		d.setInt("parallel.ep", tp*dp, ep.written()+fmt.Sprintf(" (EP = TP x DP = %d)", tp*dp))
	}
	if len(spec.Keys) > 0 {
		if err := d.vllmSpec(spec, strings.Join(specFrom, " "), d.Model); err != nil {
			return argsError(file, line, specAt, "%v", err)
		}
	}
	if d.Model == "" {
		return &Error{File: file, Line: line, Msg: "no model: the arguments give neither `vllm serve MODEL` nor --model"}
	}
	return nil
}

// setCaptureSizes sets runtime.cudagraph_capture_sizes from a list of
// token counts: a Python list (a log), words "1 2 4" (nargs="+" on a
// command line) or a JSON array (a dotted flag).
func (d *Deployment) setCaptureSizes(v pyValue, from string) error {
	var items []pyValue
	switch v.Kind {
	case pyList:
		items = v.Items
	case pyInt:
		items = []pyValue{v}
	case pyStr:
		f := strings.FieldsFunc(strings.Trim(strings.TrimSpace(v.Str), "[]()"), func(r rune) bool { return r == ',' || r == ' ' })
		for _, w := range f {
			items = append(items, pyValue{Kind: pyStr, Str: w, Raw: w})
		}
	default:
		return fmt.Errorf("%s is not a list of sizes", v.Raw)
	}
	if len(items) == 0 {
		return fmt.Errorf("no capture sizes")
	}
	words := make([]string, len(items))
	for i, it := range items {
		n, err := argInt(engineArg{Val: it}, false)
		if err == nil && n < 1 {
			err = fmt.Errorf("capture size %d must be at least 1", n)
		}
		if err != nil {
			return err
		}
		words[i] = strconv.Itoa(n)
	}
	d.set("runtime.cudagraph_capture_sizes", "["+strings.Join(words, ", ")+"]", from)
	return nil
}

// vllmCompilation reads --compilation-config (-O): a JSON object or, in
// a log, the printed dict, or one key of the dotted form
// (-O.cudagraph_mode=FULL, --compilation-config.cudagraph_capture_sizes
// [4,8]). Of vllm/config/compilation.py's CompilationConfig it reads
// cudagraph_mode (canonical, cudaGraphModes), cudagraph_capture_sizes and
// max_cudagraph_capture_size; its other keys (pass_config, custom_ops,
// splitting_ops, level, ...) are listed as not modelled, and so is an
// optimization level (-O3).
func (d *Deployment) vllmCompilation(a engineArg) error {
	v := a.Val
	switch v.Kind {
	case pyNone:
		return nil
	case pyInt:
		d.ignore(a) // -O3: the optimization level
		return nil
	case pyStr:
		if t := strings.TrimSpace(v.Str); t != "" && strings.Trim(t, "0123456789") == "" {
			d.ignore(a)
			return nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(v.Str), &m); err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
		v = jsonToPy(m)
	case pyDict:
	default:
		return fmt.Errorf("%s is not a compilation config", v.Raw)
	}
	for i, key := range v.Keys {
		val := v.Vals[i]
		from := "compilation_config." + key + "=" + val.Raw
		if val.Kind == pyNone {
			continue
		}
		switch key {
		case "cudagraph_mode":
			name := val.Str
			if val.Kind != pyStr {
				name = val.Raw // a log's CUDAGraphMode.FULL_DECODE_ONLY or a bare name
				if j := strings.LastIndex(name, "."); j >= 0 {
					name = name[j+1:]
				}
				name = strings.TrimSuffix(strings.TrimPrefix(name, "<"), ">")
				if j := strings.Index(name, ":"); j >= 0 {
					name = name[:j]
				}
			}
			mode, err := parseCUDAGraphMode(name)
			if err != nil {
				return err
			}
			d.set("runtime.cudagraph_mode", quoteTOML(mode), from)
		case "cudagraph_capture_sizes":
			if err := d.setCaptureSizes(val, from); err != nil {
				return fmt.Errorf("cudagraph_capture_sizes: %v", err)
			}
		case "max_cudagraph_capture_size":
			n, err := argInt(engineArg{Val: val}, false)
			if err == nil && n < 1 {
				err = fmt.Errorf("%d must be at least 1", n)
			}
			if err != nil {
				return fmt.Errorf("max_cudagraph_capture_size: %v", err)
			}
			d.setInt("runtime.max_cudagraph_capture_size", n, from)
		default:
			if !val.falsy() {
				d.Ignored = append(d.Ignored, from)
			}
		}
	}
	return nil
}

// specValue reads --speculative-config: a dict in a log, JSON on a
// command line, or one key of a dotted flag.
func specValue(a engineArg) (pyValue, error) {
	switch a.Val.Kind {
	case pyDict:
		return a.Val, nil
	case pyNone:
		return pyValue{Kind: pyDict}, nil
	case pyStr:
		var m map[string]any
		if err := json.Unmarshal([]byte(a.Val.Str), &m); err != nil {
			return pyValue{}, fmt.Errorf("not a JSON object: %v", err)
		}
		return jsonToPy(m), nil
	}
	return pyValue{}, fmt.Errorf("%s is not a speculative config", a.Val.Raw)
}

// jsonToPy converts a decoded JSON value to the literal model.
func jsonToPy(x any) pyValue {
	switch v := x.(type) {
	case nil:
		return pyValue{Kind: pyNone, Raw: "None"}
	case bool:
		return pyValue{Kind: pyBool, Bool: v, Raw: map[bool]string{true: "True", false: "False"}[v]}
	case float64:
		if v == float64(int64(v)) && v >= -1<<53 && v <= 1<<53 {
			return pyValue{Kind: pyInt, Int: int64(v), Float: v, Raw: fmt.Sprint(int64(v))}
		}
		return pyValue{Kind: pyFloat, Float: v, Raw: fmt.Sprint(v)}
	case string:
		return pyValue{Kind: pyStr, Str: v, Raw: fmt.Sprintf("%q", v)}
	case []any:
		out := pyValue{Kind: pyList, Raw: fmt.Sprint(v)}
		for _, e := range v {
			out.Items = append(out.Items, jsonToPy(e))
		}
		return out
	case map[string]any:
		out := pyValue{Kind: pyDict, Raw: fmt.Sprint(v)}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, jsonToPy(v[k]))
		}
		return out
	}
	return pyValue{Kind: pyOpaque, Raw: fmt.Sprint(x)}
}

// vllmMTP are vLLM's MTP method names (vllm/config/speculative.py
// MTPModelTypes @ f19b16d; all but "mtp" deprecated aliases of it).
var vllmMTP = []string{"mtp", "deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "glm_ocr_mtp", "ernie_mtp",
	"exaone_moe_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "longcat_flash_mtp", "pangu_ultra_moe_mtp", "step3p5_mtp"}

// vllmSpec maps vLLM's speculative config ({"method", "model",
// "num_speculative_tokens"}) onto a moecast method. Without "method",
// vLLM infers it from the draft's name (SpeculativeConfig.__post_init__:
// "ngram" -> ngram; an EAGLE head's config names eagle/eagle3).
func (d *Deployment) vllmSpec(sp pyValue, from, target string) error {
	str := func(k string) string {
		if v, ok := sp.get(k); ok && v.Kind != pyNone {
			return v.text()
		}
		return ""
	}
	method, draft := strings.ToLower(str("method")), str("model")
	if method == "" {
		switch l := strings.ToLower(draft); {
		case l == "ngram" || l == "[ngram]":
			method = "ngram"
		case strings.Contains(l, "eagle3"):
			method = "eagle3"
		case strings.Contains(l, "eagle"):
			method = "eagle"
		case l == "" || l == strings.ToLower(target):
			return fmt.Errorf("no method and no draft model: vLLM cannot infer the speculative method")
		default:
			return fmt.Errorf("draft model %q: a separate draft LLM (draft_model) has no moecast method (want an MTP, EAGLE or n-gram draft)", draft)
		}
	}
	var m string
	switch {
	case slices.Contains(vllmMTP, method):
		m = "mtp"
	case method == "eagle3":
		m = "eagle3"
	case method == "eagle":
		m = "eagle3"
		d.warnf("speculative method eagle (an EAGLE-1/2 head) priced as an EAGLE-3 head: one decoder layer drafting from the target's hidden states")
	case method == "ngram" || method == "[ngram]" || method == "ngram_gpu":
		m = "ngram"
	default:
		return fmt.Errorf("speculative method %q has no moecast equivalent (want an MTP method, eagle, eagle3 or ngram)", method)
	}
	kv, ok := sp.get("num_speculative_tokens")
	if !ok || kv.Kind == pyNone {
		return fmt.Errorf("num_speculative_tokens missing (vLLM would take it from the draft's config, which moecast does not read)")
	}
	k, err := argInt(engineArg{Val: kv}, false)
	if err != nil || k < 1 {
		return fmt.Errorf("num_speculative_tokens %s must be a positive integer", kv.Raw)
	}
	d.Spec = SpecArgs{Method: m, DraftTokens: k, From: from}
	for i, key := range sp.Keys {
		switch key {
		case "method", "model", "num_speculative_tokens":
		default:
			if v := sp.Vals[i]; !v.falsy() {
				d.Ignored = append(d.Ignored, "speculative_config."+key+"="+v.Raw)
			}
		}
	}
	return nil
}
