package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	goldenfile "github.com/moecast/moecast/internal/golden"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// engineArgsDir holds the fixtures, written from the engines' formats
// (testdata/engineargs/README.md).
const engineArgsDir = "testdata/engineargs"

// TestEngineArgsFixtures converts each fixture, compares the scenario text
// with its golden file, and checks what the written scenario loads as.
func TestEngineArgsFixtures(t *testing.T) {
	type want struct {
		engine           serve.Engine
		tp, dp, ep, gpus int
		dpAttn           bool
		kv               dtype.KVCache
		spec             sim.SpecMethod
		k                int
		maxSeqs          int // 0 = not set
		maxTokens        int // 0 = not set
		memUtil          float64
		graphs           bool
		ignored          []string // substrings of the not-modelled warning
	}
	tests := []struct {
		name, file string
		acceptance []float64
		want       want
	}{
		{"vllm serve DeepSeek-V3 TP8 EP MTP", "vllm_serve_dsv3_mtp.sh", []float64{0.85}, want{
			engine: serve.VLLM, tp: 8, dp: 1, ep: 8, gpus: 8, kv: dtype.KVFP8, spec: sim.SpecMTP, k: 1,
			maxSeqs: 256, maxTokens: 8000, memUtil: 0.92, graphs: true,
			ignored: []string{"--enable-dbo", "--quantization fp8"}}},
		{"vllm non-default args Qwen3-235B TP4 DP2 EP EAGLE-3", "vllm_nondefault_qwen3_dp.log", []float64{0.8, 0.6, 0.4}, want{
			engine: serve.VLLM, tp: 4, dp: 2, ep: 8, gpus: 8, kv: dtype.KVBF16, spec: sim.SpecEAGLE3, k: 3,
			maxSeqs: 512, maxTokens: 4096, memUtil: 0.88, graphs: true,
			ignored: []string{"max_model_len=32768", "compilation_config.level=3"}}},
		{"sglang launch_server Kimi-K2 DP-attention EP8 EAGLE-3", "sglang_launch_kimi.sh", []float64{0.7}, want{
			engine: serve.SGLang, tp: 8, dp: 1, ep: 8, gpus: 8, dpAttn: true, kv: dtype.KVFP8, spec: sim.SpecEAGLE3, k: 3,
			maxSeqs: 512, maxTokens: 16384, memUtil: 0.85, graphs: true,
			ignored: []string{"--enable-two-batch-overlap", "--cuda-graph-bs 1 2 4 8"}}},
		{"sglang ServerArgs Qwen3-30B TP2", "sglang_serverargs_qwen3.log", nil, want{
			engine: serve.SGLang, tp: 2, dp: 1, ep: 1, gpus: 2, kv: dtype.KVBF16, spec: sim.SpecNone,
			maxTokens: 8192, memUtil: 0.871, graphs: true,
			ignored: []string{"enable_torch_compile=True"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(engineArgsDir, tt.file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			d, err := ReadEngineArgs(path, data)
			require.NoError(t, err)
			imp, err := d.Scenario(ImportOptions{GPU: "h200-sxm", Acceptance: tt.acceptance, Input: tt.file})
			require.NoError(t, err)
			goldenfile.Check(t, filepath.Join(engineArgsDir, strings.TrimSuffix(tt.file, filepath.Ext(tt.file))+".toml.golden"),
				string(imp.TOML)+"\n# warnings:\n#   "+strings.Join(imp.Warnings, "\n#   ")+"\n")

			s, w := imp.Scenario, tt.want
			c := s.Config
			assert.Equal(t, w.engine, s.Serving.Engine, "engine")
			assert.Equal(t, w.tp, c.Layout.TP, "tp")
			assert.Equal(t, w.dp, c.Layout.DP, "dp")
			assert.Equal(t, w.ep, c.Layout.EP, "ep")
			assert.Equal(t, w.gpus, c.GPUs, "gpus")
			assert.Equal(t, w.dpAttn, c.Layout.DPAttention, "dp_attention")
			assert.Equal(t, w.kv, c.KVCache, "kv_cache")
			assert.Equal(t, w.spec, c.Spec.Method, "spec method")
			assert.Equal(t, w.k, c.Spec.DraftTokens, "draft tokens")
			assert.InDelta(t, w.memUtil, c.GPUMemoryUtilization, 1e-12, "gpu_memory_utilization")
			assert.Equal(t, w.graphs, c.Graphs, "cuda graphs")
			assert.Equal(t, w.maxTokens, s.Serving.MaxNumBatchedTokens, "max_num_batched_tokens")
			if w.maxSeqs > 0 {
				require.NotNil(t, s.Serving.MaxNumSeqs)
				assert.Equal(t, w.maxSeqs, *s.Serving.MaxNumSeqs, "max_num_seqs")
			} else {
				assert.Nil(t, s.Serving.MaxNumSeqs, "max_num_seqs")
			}
			all := strings.Join(d.Ignored, "; ")
			for _, ig := range w.ignored {
				assert.Contains(t, all, ig, "not-modelled list")
			}
		})
	}
}

// TestEngineArgsForms checks single mappings, one input each.
func TestEngineArgsForms(t *testing.T) {
	tests := []struct {
		name string
		in   string
		key  string // scenario key to check
		want string // its TOML value; "" = absent
	}{
		{"vllm -tp alias", "vllm serve deepseek-ai/DeepSeek-V3 -tp 8", "parallel.tp", "8"},
		{"vllm underscore flag with =", "vllm serve deepseek-ai/DeepSeek-V3 --tensor_parallel_size=4", "parallel.tp", "4"},
		{"vllm-openai container", "docker run --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:v0.11.0 --model deepseek-ai/DeepSeek-V3 -tp 4", "parallel.tp", "4"},
		{"vllm api_server module", "python -m vllm.entrypoints.openai.api_server --model deepseek-ai/DeepSeek-V3 -dp 2 -tp 4 --enable-expert-parallel", "parallel.ep", "8"},
		{"vllm no-enable-expert-parallel", "vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --no-enable-expert-parallel", "parallel.ep", ""},
		{"vllm human-readable binary", "vllm serve deepseek-ai/DeepSeek-V3 --max-num-batched-tokens 8K", "runtime.max_num_batched_tokens", "8192"},
		{"vllm human-readable decimal", "vllm serve deepseek-ai/DeepSeek-V3 --max-num-batched-tokens 2.5k", "runtime.max_num_batched_tokens", "2500"},
		{"vllm enforce eager", "vllm serve deepseek-ai/DeepSeek-V3 --enforce-eager", "runtime.cuda_graphs", "false"},
		{"vllm custom all-reduce off", "vllm serve deepseek-ai/DeepSeek-V3 --disable-custom-all-reduce", "runtime.allreduce", `"nccl"`},
		{"vllm kv fp8_e5m2", "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8_e5m2", "model.kv_cache", `"fp8"`},
		{"vllm kv auto", "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype auto", "model.kv_cache", ""},
		{"vllm log dict", "x INFO non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'max_num_seqs': 64}", "runtime.max_num_seqs", "64"},
		{"vllm log last of two starts", "non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'max_num_seqs': 64}\nnon-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'max_num_seqs': 32}", "runtime.max_num_seqs", "32"},
		{"vllm long prefill threshold", "vllm serve deepseek-ai/DeepSeek-V3 --long-prefill-token-threshold 2048", "runtime.long_prefill_token_threshold", "2048"},
		{"vllm partial prefills", "vllm serve deepseek-ai/DeepSeek-V3 --max-num-partial-prefills 4 --max-long-partial-prefills 2", "runtime.max_long_partial_prefills", "2"},
		{"sglang prefill-decode interval", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --prefill-decode-interval 4", "runtime.prefill_decode_interval", "4"},
		{"sglang recv interval", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --scheduler-recv-interval 30", "runtime.scheduler_recv_interval", "30"},
		{"sglang cuda graph max bs", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --cuda-graph-max-bs 128", "runtime.cuda_graph_max_bs", "128"},
		{"sglang nsa prefill backend", "python -m sglang.launch_server --model-path zai-org/GLM-5-FP8 --nsa-prefill-backend trtllm", "runtime.nsa_prefill_backend", `"trtllm"`},
		{"vllm prefill schedule interval", "vllm serve deepseek-ai/DeepSeek-V3 -dp 8 --enable-expert-parallel --prefill-schedule-interval 4", "runtime.prefill_schedule_interval", "4"},
		{"vllm max capture size", "vllm serve deepseek-ai/DeepSeek-V3 --max-cudagraph-capture-size 64", "runtime.max_cudagraph_capture_size", "64"},
		{"vllm capture sizes, nargs", "vllm serve deepseek-ai/DeepSeek-V3 --cudagraph-capture-sizes 1 2 4 8 --max-num-seqs 8", "runtime.cudagraph_capture_sizes", "[1, 2, 4, 8]"},
		{"vllm deprecated cuda-graph-sizes", "vllm serve deepseek-ai/DeepSeek-V3 --cuda-graph-sizes 16 32", "runtime.cudagraph_capture_sizes", "[16, 32]"},
		{"vllm capture sizes in compilation-config", `vllm serve deepseek-ai/DeepSeek-V3 --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,8,16]}'`, "runtime.cudagraph_capture_sizes", "[1, 8, 16]"},
		{"vllm capture max in compilation-config", `vllm serve deepseek-ai/DeepSeek-V3 -O '{"max_cudagraph_capture_size":256}'`, "runtime.max_cudagraph_capture_size", "256"},
		{"vllm dotted compilation-config", `vllm serve deepseek-ai/DeepSeek-V3 --compilation-config.cudagraph_capture_sizes [4,8]`, "runtime.cudagraph_capture_sizes", "[4, 8]"},
		{"vllm log compilation_config", "non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'compilation_config': {'cudagraph_capture_sizes': [2, 4]}}", "runtime.cudagraph_capture_sizes", "[2, 4]"},
		{"vllm log cudagraph_capture_sizes", "non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'cudagraph_capture_sizes': [1, 3]}", "runtime.cudagraph_capture_sizes", "[1, 3]"},
		{"vllm optimisation level: no sizes", "vllm serve deepseek-ai/DeepSeek-V3 -O 3", "runtime.cudagraph_capture_sizes", ""},
		{"vllm compilation config JSON (InferenceX B200)", `vllm serve nvidia/Llama-3.3-70B-Instruct-FP8 --compilation-config '{"pass_config": {"enable_fi_allreduce_fusion": true}, "custom_ops": ["+quant_fp8", "+rms_norm"], "cudagraph_mode": "FULL_DECODE_ONLY", "splitting_ops": []}'`, "runtime.cudagraph_mode", `"FULL_DECODE_ONLY"`},
		{"vllm -O dotted, lower case", "vllm serve deepseek-ai/DeepSeek-V3 -O.cudagraph_mode=piecewise", "runtime.cudagraph_mode", `"PIECEWISE"`},
		{"vllm -O JSON", `vllm serve deepseek-ai/DeepSeek-V3 -O '{"cudagraph_mode":"NONE"}'`, "runtime.cudagraph_mode", `"NONE"`},
		{"vllm -O level only", "vllm serve deepseek-ai/DeepSeek-V3 -O3", "runtime.cudagraph_mode", ""},
		{"vllm log enum member", "non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'compilation_config': {'cudagraph_mode': <CUDAGraphMode.FULL_DECODE_ONLY: (2, 0)>}}", "runtime.cudagraph_mode", `"FULL_DECODE_ONLY"`},
		{"sglang serve CLI", "sglang serve --model-path Qwen/Qwen3-30B-A3B --tp-size 2", "parallel.tp", "2"},
		{"sglang --model alias, --tp-size", "python -m sglang.launch_server --model Qwen/Qwen3-30B-A3B --tp-size 4", "parallel.tp", "4"},
		{"sglang replicas are one scenario", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 2 --dp 4", "parallel.dp", "1"},
		{"sglang legacy enable-ep-moe", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 4 --enable-ep-moe", "parallel.ep", "4"},
		{"sglang cuda graph off", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --disable-cuda-graph", "runtime.cuda_graphs", "false"},
		{"sglang kv bf16", "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --kv-cache-dtype bfloat16", "model.kv_cache", `"bf16"`},
		{"sglang dense layers data-parallel", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 --enable-dp-attention --moe-dense-tp-size 1 --ep 8", "parallel.dp", "8"},
		{"sglang dense layers over tp", "server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8, dp_size=8, enable_dp_attention=True, moe_dense_tp_size=None)", "parallel.tp", "8"},
		{"vllm deepep low latency", "vllm serve deepseek-ai/DeepSeek-V3 -dp 8 --enable-expert-parallel --all2all-backend deepep_low_latency", "runtime.moe_a2a_backend", `"deepep_low_latency"`},
		{"vllm all2all unmodelled", "vllm serve deepseek-ai/DeepSeek-V3 -dp 8 --enable-expert-parallel --all2all-backend flashinfer_all2allv", "runtime.moe_a2a_backend", ""},
		{"sglang deepep", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 --enable-dp-attention --ep 8 --moe-a2a-backend deepep", "runtime.moe_a2a_backend", `"deepep"`},
		{"sglang legacy enable-deepep-moe", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 --enable-dp-attention --enable-deepep-moe", "runtime.moe_a2a_backend", `"deepep"`},
		{"sglang a2a none", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --moe-a2a-backend none", "runtime.moe_a2a_backend", ""},
		{"sglang a2a unmodelled", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --moe-a2a-backend mooncake", "runtime.moe_a2a_backend", ""},
		{"sglang dump dp attention", "server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8, dp_size=8, enable_dp_attention=True, ep_size=8)", "parallel.dp_attention", "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ReadEngineArgs("in.sh", []byte(tt.in))
			require.NoError(t, err)
			got, ok := d.Get(tt.key)
			if tt.want == "" {
				assert.False(t, ok, "%s set to %s", tt.key, got)
				return
			}
			assert.True(t, ok, "%s not set", tt.key)
			assert.Equal(t, tt.want, got, tt.key)
		})
	}
}

// TestEngineArgsCompilationConfig: one --compilation-config holding
// cudagraph_mode and the capture sizes yields all of them (one reader,
// vLLM's CompilationConfig keys), as do dotted flags given one key each
// and a log's printed dict; the keys moecast does not model are listed
// one by one.
func TestEngineArgsCompilationConfig(t *testing.T) {
	for _, tc := range []struct{ name, in, ignored string }{
		{"JSON", `vllm serve deepseek-ai/DeepSeek-V3 --compilation-config '{"pass_config": {"enable_fi_allreduce_fusion": true}, "cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [16, 1, 8], "max_cudagraph_capture_size": 16, "splitting_ops": []}'`, "compilation_config.pass_config="},
		{"dotted", "vllm serve deepseek-ai/DeepSeek-V3 -O.cudagraph_mode=full_decode_only --compilation-config.cudagraph_capture_sizes [16,1,8] -O.max_cudagraph_capture_size=16 -O.level=3", "compilation_config.level=3"},
		{"log", "non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'compilation_config': {'level': 3, 'cudagraph_mode': <CUDAGraphMode.FULL_DECODE_ONLY: (2, 0)>, 'cudagraph_capture_sizes': [16, 1, 8], 'max_cudagraph_capture_size': 16}}", "compilation_config.level=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadEngineArgs("in.sh", []byte(tc.in))
			require.NoError(t, err)
			for key, want := range map[string]string{
				"runtime.cudagraph_mode":             `"FULL_DECODE_ONLY"`,
				"runtime.cudagraph_capture_sizes":    "[16, 1, 8]",
				"runtime.max_cudagraph_capture_size": "16",
			} {
				got, ok := d.Get(key)
				assert.True(t, ok, "%s not set", key)
				assert.Equal(t, want, got, key)
			}
			all := strings.Join(d.Ignored, "; ")
			assert.Contains(t, all, tc.ignored)
			assert.NotContains(t, all, "cudagraph", "the read keys are not listed as not modelled")
			imp, err := d.Scenario(ImportOptions{GPU: "h200-sxm", Input: "in.sh"})
			require.NoError(t, err)
			c := imp.Scenario.Config
			assert.True(t, c.EagerPrefill, "FULL_DECODE_ONLY")
			assert.Equal(t, []int{1, 8, 16}, c.CaptureBatches)
			assert.Equal(t, 16, c.CaptureSize)
		})
	}
}

// TestEngineArgsSpec checks the speculative methods and draft lengths.
func TestEngineArgsSpec(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		method string
		k      int
		warn   string // substring of a warning; "" = none expected
	}{
		{"vllm deepseek_mtp", `vllm serve deepseek-ai/DeepSeek-V3 --speculative-config '{"method":"deepseek_mtp","num_speculative_tokens":2}'`, "mtp", 2, ""},
		{"vllm dotted keys", "vllm serve deepseek-ai/DeepSeek-V3 --speculative-config.method mtp --speculative-config.num_speculative_tokens=3", "mtp", 3, ""},
		{"vllm method from eagle3 draft name", `vllm serve Qwen/Qwen3-235B-A22B --speculative-config '{"model":"org/Qwen3-EAGLE3","num_speculative_tokens":4}'`, "eagle3", 4, ""},
		{"vllm eagle priced as eagle3", `vllm serve Qwen/Qwen3-235B-A22B --speculative-config '{"method":"eagle","model":"x","num_speculative_tokens":2}'`, "eagle3", 2, "EAGLE-1/2"},
		{"vllm ngram", `vllm serve Qwen/Qwen3-235B-A22B --speculative-config '{"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":4}'`, "ngram", 5, ""},
		{"vllm before 0.8 flags", "vllm serve Qwen/Qwen3-235B-A22B --speculative-model '[ngram]' --num-speculative-tokens 4", "ngram", 4, ""},
		{"sglang NEXTN chain", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4", "mtp", 3, ""},
		{"sglang EAGLE with NextN draft is MTP", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm EAGLE --speculative-draft-model-path lmsys/DeepSeek-V3-NextN --speculative-num-steps 1", "mtp", 1, ""},
		{"sglang EAGLE with no draft model drafts with the model's own MTP layer (InferenceX dsr1_fp8_b200_mtp.sh)", "python3 -m sglang.launch_server --model-path=deepseek-ai/DeepSeek-R1-0528 --tensor-parallel-size=8 --speculative-algorithm EAGLE --speculative-num-steps 2 --speculative-num-draft-tokens 3 --speculative-eagle-topk 1", "mtp", 2, ""},
		{"sglang EAGLE drafting from the model's own path is MTP", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm EAGLE --speculative-draft-model-path deepseek-ai/DeepSeek-V3 --speculative-num-draft-tokens 2", "mtp", 1, ""},
		{"sglang EAGLE with a head of its own", "python -m sglang.launch_server --model-path meta-llama/Llama-2-7b-chat-hf --speculative-algorithm EAGLE --speculative-draft-model-path lmsys/sglang-EAGLE-llama2-chat-7B --speculative-num-steps 3", "eagle3", 3, "EAGLE-1/2"},
		{"sglang tree drafting", "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm EAGLE3 --speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8", "eagle3", 7, "tree drafting"},
		{"sglang dump without speculation", "server_args=ServerArgs(model_path='x/y', speculative_algorithm=None, speculative_num_steps=None)", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ReadEngineArgs("in.sh", []byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.method, d.Spec.Method, "method")
			assert.Equal(t, tt.k, d.Spec.DraftTokens, "K")
			if tt.warn != "" {
				assert.Contains(t, strings.Join(d.Warnings, "\n"), tt.warn)
			}
			if strings.Contains(tt.in, "config.method") {
				assert.Equal(t, "--speculative-config.method mtp --speculative-config.num_speculative_tokens 3", d.Spec.From, "as written")
			}
		})
	}
}

// TestEngineArgsBad checks that unusable input is one positioned line.
func TestEngineArgsBad(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nothing recognisable", "echo hello", "found none of `vllm serve`"},
		{"unterminated quote", "vllm serve x \\\n  --speculative-config '{", "in.sh:2: command line: column 24: unterminated ' quote"},
		{"tp not a number", "vllm serve x -tp eight", `-tp: argument 4: "eight" is not an integer`},
		{"tp zero", "vllm serve x --tensor-parallel-size 0", "0 must be at least 1"},
		{"pipeline parallel", "vllm serve x -pp 2", "pipeline parallelism (2 stages)"},
		{"memory out of range", "vllm serve x --gpu-memory-utilization 1.5", "1.5 must be in (0, 1]"},
		{"fp4 kv cache", "python -m sglang.launch_server --model-path x --kv-cache-dtype fp4_e2m1", `KV-cache dtype "fp4_e2m1" has no moecast equivalent`},
		{"no model", "vllm serve --max-num-seqs 8", "no model"},
		{"stray value", "vllm serve x -tp 8 9", "a value that follows no flag"},
		{"bad spec json", "vllm serve x --speculative-config '{bad'", "not a JSON object"},
		{"bad compilation json", "vllm serve x --compilation-config '{bad'", "not a JSON object"},
		{"unknown cudagraph mode", `vllm serve x --compilation-config '{"cudagraph_mode":"FULLY"}'`, `unknown cudagraph_mode "FULLY"`},
		{"unknown nsa prefill backend", "python -m sglang.launch_server --model-path x --nsa-prefill-backend flashmla", `unknown backend "flashmla"`},
		{"draft LLM", `vllm serve x --speculative-config '{"model":"meta-llama/Llama-3.2-1B","num_speculative_tokens":3}'`, "a separate draft LLM"},
		{"spec without K", `vllm serve x --speculative-config '{"method":"mtp"}'`, "num_speculative_tokens missing"},
		{"capture size 0", "vllm serve x --cudagraph-capture-sizes 0 8", "capture size 0 must be at least 1"},
		{"capture size not a number", "vllm serve x --cudagraph-capture-sizes 8 many", `"many" is not an integer`},
		{"compilation capture sizes not a list", `vllm serve x --compilation-config '{"cudagraph_capture_sizes":{"a":1}}'`, "cudagraph_capture_sizes: "},
		{"sglang standalone", "python -m sglang.launch_server --model-path x --speculative-algorithm STANDALONE --speculative-num-steps 2", `"STANDALONE" has no moecast equivalent`},
		{"sglang attention TP inside DP", "python -m sglang.launch_server --model-path x --tp 8 --dp 4 --enable-dp-attention", "attention split inside a DP group"},
		{"sglang dense TP between", "python -m sglang.launch_server --model-path x --tp 8 --dp 8 --enable-dp-attention --moe-dense-tp-size 2", "a dense-MLP TP of 2"},
		{"sglang ep does not divide", "python -m sglang.launch_server --model-path x --tp 8 --ep 3", "ep_size 3 does not divide tp_size 8"},
		{"log dict cut short", "INFO non-default args: {'model': 'x', 'tensor_parallel_size': 8", "in.sh:1: vLLM non-default args: column"},
		{"log dict of the wrong type", "non-default args: ['model']", "want a {...} dict"},
		{"serverargs value missing", "server_args=ServerArgs(model_path=)", "want a value"},
		{"serverargs string not closed", "\n\nserver_args=ServerArgs(model_path='x, tp_size=2)\n", "in.sh:3:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadEngineArgs("in.sh", []byte(tt.in))
			require.Error(t, err)
			var pe *Error
			assert.True(t, errors.As(err, &pe), "error is %T, not *Error", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.True(t, strings.HasPrefix(err.Error(), "in.sh:"), "error names the file: %s", err)
		})
	}
}

// TestEngineArgvOneWord checks that a command line given as one word is
// split, and that a config file's arguments are said to be unread.
func TestEngineArgvOneWord(t *testing.T) {
	d, err := EngineArgv([]string{"vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --config 'my args.yaml'"})
	require.NoError(t, err)
	tp, _ := d.Get("parallel.tp")
	assert.Equal(t, "8", tp)
	assert.Contains(t, strings.Join(d.Warnings, "\n"), "--config my args.yaml: the YAML file's arguments were not read")
	d, err = EngineArgv([]string{"python -m sglang.launch_server --model-path x/y --config c.yaml"})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(d.Warnings, "\n"), "--config c.yaml: the YAML file's arguments were not read")
	_, err = EngineArgv([]string{"vllm serve 'x"})
	require.Error(t, err)
	assert.Equal(t, "<args>:1: command line: column 12: unterminated ' quote", err.Error())
}

// TestEngineArgsModel checks how the model's config is found.
func TestEngineArgsModel(t *testing.T) {
	dir := t.TempDir()
	preset, err := os.ReadFile("../model/presets/Qwen--Qwen3-30B-A3B_config.json")
	require.NoError(t, err)
	cfgs := filepath.Join(dir, "configs")
	require.NoError(t, os.MkdirAll(cfgs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfgs, "acme--Tiny-MoE-FP8_config.json"), preset, 0o644))
	local := filepath.Join(dir, "models", "Tiny-Local")
	require.NoError(t, os.MkdirAll(local, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(local, "config.json"), preset, 0o644))
	out := filepath.Join(dir, "out", "s.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	rel := "../model/presets/Qwen--Qwen3-30B-A3B_config.json"

	tests := []struct {
		name, model string
		opts        ImportOptions
		key, value  string // the [model] line written (an absolute path stays absolute)
		err         string
	}{
		{"preset by repository", "deepseek-ai/deepseek-v3", ImportOptions{}, "preset", "deepseek-v3", ""},
		{"quantized repository is no preset", "Qwen/Qwen3-30B-A3B-FP8", ImportOptions{}, "", "", "not a preset's repository"},
		{"configs directory by id", "acme/Tiny-MoE-FP8", ImportOptions{ModelConfigDir: cfgs}, "config", filepath.ToSlash(filepath.Join(cfgs, "acme--Tiny-MoE-FP8_config.json")), ""},
		{"configs directory by path base", "/mnt/models/Tiny-MoE-FP8/", ImportOptions{ModelConfigDir: cfgs}, "config", filepath.ToSlash(filepath.Join(cfgs, "acme--Tiny-MoE-FP8_config.json")), ""},
		{"local directory", local, ImportOptions{}, "config", filepath.ToSlash(filepath.Join(local, "config.json")), ""},
		{"path base names a preset", "/data/Qwen3-30B-A3B", ImportOptions{}, "preset", "qwen3-30b-a3b", ""},
		{"--model-config absolute", "whatever/Model", ImportOptions{ModelConfig: filepath.Join(local, "config.json")}, "config", filepath.ToSlash(filepath.Join(local, "config.json")), ""},
		{"--model-config relative to the scenario", "whatever/Model", ImportOptions{ModelConfig: rel, Path: "testdata/out/s.toml"}, "config", "../../" + rel, ""},
		{"--model-config missing", "whatever/Model", ImportOptions{ModelConfig: filepath.Join(dir, "none.json")}, "", "", "--model-config"},
		{"unknown id", "acme/Unknown", ImportOptions{ModelConfigDir: cfgs}, "", "", "nor in " + cfgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := EngineArgv([]string{"vllm", "serve", tt.model, "-tp", "2"})
			require.NoError(t, err)
			o := tt.opts
			o.GPU = "h200-sxm"
			if o.Path == "" {
				o.Path = out
			}
			imp, err := d.Scenario(o)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, string(imp.TOML), "\n"+tt.key+` = "`+tt.value+`"`)
		})
	}
}

// TestEngineArgsOptions checks the options a scenario needs.
func TestEngineArgsOptions(t *testing.T) {
	mtp := `vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --speculative-config '{"method":"mtp","num_speculative_tokens":2}'`
	tests := []struct {
		name, in string
		opts     ImportOptions
		err      string
	}{
		{"no GPU", "vllm serve deepseek-ai/DeepSeek-V3 -tp 8", ImportOptions{}, "give --gpu"},
		{"unknown GPU", "vllm serve deepseek-ai/DeepSeek-V3 -tp 8", ImportOptions{GPU: "h900"}, `--gpu "h900": unknown GPU`},
		{"spec needs acceptance", mtp, ImportOptions{GPU: "h200-sxm"}, "give --acceptance"},
		{"acceptance count", mtp, ImportOptions{GPU: "h200-sxm", Acceptance: []float64{0.9, 0.8, 0.7}}, "3 values for 2 draft tokens"},
		{"acceptance per position", mtp, ImportOptions{GPU: "h200-sxm", Acceptance: []float64{0.9, 0.8}}, ""},
		{"layout the model cannot take", "vllm serve deepseek-ai/DeepSeek-V3 -tp 3", ImportOptions{GPU: "h200-sxm"}, "does not load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ReadEngineArgs("in.sh", []byte(tt.in))
			require.NoError(t, err)
			_, err = d.Scenario(tt.opts)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestPyLiteral checks the Python literal reader on the reprs the engines
// print.
func TestPyLiteral(t *testing.T) {
	tests := []struct {
		name, in string
		kind     pyKind
		check    func(t *testing.T, v pyValue)
		err      string
	}{
		{"dict of scalars", `{'a': 1, "b": -2.5e3, 'c': True, 'd': None, 'e': 'x\'y'}`, pyDict, func(t *testing.T, v pyValue) {
			assert.Equal(t, []string{"a", "b", "c", "d", "e"}, v.Keys)
			assert.Equal(t, int64(1), v.Vals[0].Int)
			assert.Equal(t, -2500.0, v.Vals[1].Float)
			assert.True(t, v.Vals[2].Bool)
			assert.Equal(t, pyNone, v.Vals[3].Kind)
			assert.Equal(t, "x'y", v.Vals[4].Str)
		}, ""},
		{"call with keywords", `ServerArgs(model_path='m', tp_size=8, cuda_graph_bs=[1, 2, 4], x={})`, pyCall, func(t *testing.T, v pyValue) {
			assert.Equal(t, "ServerArgs", v.Str)
			tp, ok := v.get("tp_size")
			require.True(t, ok)
			assert.Equal(t, int64(8), tp.Int)
			bs, _ := v.get("cuda_graph_bs")
			assert.Len(t, bs.Items, 3)
		}, ""},
		{"object reprs kept as text", `{'f': <function cmd at 0x7f>, 'e': <LoadFormat.AUTO: 'auto'>, 'n': inf, 's': {1, 2}, 't': (1,)}`, pyDict, func(t *testing.T, v pyValue) {
			assert.Equal(t, pyOpaque, v.Vals[0].Kind)
			assert.Equal(t, "<LoadFormat.AUTO: 'auto'>", v.Vals[1].Raw)
			assert.Equal(t, pyOpaque, v.Vals[2].Kind)
			assert.Equal(t, pyList, v.Vals[3].Kind)
			assert.Len(t, v.Vals[4].Items, 1)
		}, ""},
		{"prefixed strings", `[b'raw', r"x\y"]`, pyList, func(t *testing.T, v pyValue) {
			assert.Equal(t, "raw", v.Items[0].Str)
			assert.Equal(t, pyStr, v.Items[1].Kind)
		}, ""},
		{"nested call", `CompilationConfig(level=3, pass_config=PassConfig(enable_fusion=False))`, pyCall, func(t *testing.T, v pyValue) {
			pc, _ := v.get("pass_config")
			assert.Equal(t, pyCall, pc.Kind)
		}, ""},
		{"unclosed dict", `{'a': 1`, 0, nil, "{ not closed"},
		{"missing comma", `{'a': 1 'b': 2}`, 0, nil, "want ','"},
		{"set then dict", `{1, 'a': 2}`, 0, nil, "a set item followed by a dict key"},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), 0, nil, "nested more than"},
		{"bad escape", `'\x4'`, 0, nil, `bad \x escape`},
		{"junk after", `{} x`, 0, nil, "after the value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parsePy(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.kind, v.Kind)
			tt.check(t, v)
		})
	}
}

// TestShellWords checks the command-line splitter.
func TestShellWords(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"plain", "vllm serve m -tp 8", []string{"vllm", "serve", "m", "-tp", "8"}, ""},
		{"continuations and comment", "# start\nA=1 vllm serve m \\\n  --x 'a b' \\\r\n  --y \"c \\\"d\\\"\"", []string{"A=1", "vllm", "serve", "m", "--x", "a b", "--y", `c "d"`}, ""},
		{"adjacent quotes", `--c='{"k": 1}'x`, []string{`--c={"k": 1}x`}, ""},
		{"unterminated double", `a "b`, nil, `unterminated " quote`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := shellWords(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzReadEngineArgs feeds arbitrary text to the importer: it returns a
// deployment or a one-line *Error, never panics; a deployment's scenario
// either loads or fails with one line. The seeds are the fixtures and
// broken variants of them (go test runs the seeds; run
// `go test ./scenarios -fuzz FuzzReadEngineArgs -fuzztime 30s` to explore).
func FuzzReadEngineArgs(f *testing.F) {
	ents, err := os.ReadDir(engineArgsDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".golden") || strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(engineArgsDir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		s := string(data)
		f.Add(s)
		f.Add(s[:len(s)/2])
		f.Add(strings.ReplaceAll(s, "8", "0"))
		f.Add(strings.ReplaceAll(s, "'", ""))
	}
	f.Add("vllm serve m -tp 99999999999999999999")
	f.Add("vllm serve m --max-num-batched-tokens 1e300k")
	f.Add("non-default args: {'model': 'm', 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': -1}}")
	f.Add("server_args=ServerArgs(model_path='m', tp_size=8, dp_size=0, enable_dp_attention=True)")
	// --compilation-config and the capture-size flags: JSON, dotted keys,
	// a log's dict, optimisation levels, and broken or hostile sizes.
	for _, a := range []string{
		`--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 2, 4, 8], "max_cudagraph_capture_size": 8}'`,
		`--compilation-config '{"cudagraph_capture_sizes": []}'`,
		`--compilation-config '{"cudagraph_capture_sizes": [0, -1, 1e30, "x", null, [1]]}'`,
		`--compilation-config '{"max_cudagraph_capture_size": 9223372036854775808}'`,
		`--compilation-config '{"cudagraph_mode": 3, "pass_config": {"x": {"y": [1]}}}'`,
		`--compilation-config '{"cudagraph_capture_sizes": "1 2 4"}'`,
		`--compilation-config '[1, 2]'`,
		`--compilation-config '{'`,
		`-O3`,
		`-O 99999999999999999999999`,
		`-O.cudagraph_mode=FULL -O.cudagraph_capture_sizes=[4,8]`,
		`--compilation-config.cudagraph_capture_sizes [4,8] --compilation-config.max_cudagraph_capture_size 8`,
		`--cudagraph-capture-sizes 1 2 4 8 --max-cudagraph-capture-size 8`,
		`--cudagraph-capture-sizes`,
		`--cudagraph-capture-sizes -4 0`,
		`--cuda-graph-sizes 512 --cudagraph-capture-sizes 1`,
		`--max-cudagraph-capture-size -1`,
	} {
		f.Add("vllm serve m -tp 8 " + a)
	}
	f.Add("non-default args: {'model': 'm', 'compilation_config': {'cudagraph_mode': <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, 'cudagraph_capture_sizes': [1, 2, 4], 'max_cudagraph_capture_size': 4}}")
	f.Add("non-default args: {'model': 'm', 'cudagraph_capture_sizes': [0], 'compilation_config': {'cudagraph_capture_sizes': None}}")
	f.Add("server_args=ServerArgs(model_path='m', tp_size=8, speculative_algorithm='EAGLE', speculative_draft_model_path=None, speculative_num_draft_tokens=-3)")
	f.Fuzz(func(t *testing.T, src string) {
		d, err := ReadEngineArgs("fuzz.sh", []byte(src))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *scenarios.Error: %T %v", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has a newline: %q", err)
			}
			return
		}
		imp, err := d.Scenario(ImportOptions{GPU: "h200-sxm", Acceptance: []float64{0.5}})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error has a newline: %q", err)
			}
			return
		}
		if imp.Scenario == nil {
			t.Fatal("no scenario and no error")
		}
	})
}

// TestEngineArgsScriptVariables checks that a script's assignments before
// the command are expanded in its arguments, as the shell would.
func TestEngineArgsScriptVariables(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH --gres=gpu:8\nset -euo pipefail\nMODEL=\"zai-org/GLM-5-FP8\"\nexport TP=8\nPORT=8000\n" +
		"exec vllm serve $MODEL \\\n  --tensor-parallel-size ${TP} --max-num-seqs ${SEQS:-64} --port $PORT --served-model-name $UNSET\n"
	d, err := ReadEngineArgs("serve.sh", []byte(script))
	require.NoError(t, err)
	assert.Equal(t, "zai-org/GLM-5-FP8", d.Model)
	tp, _ := d.Get("parallel.tp")
	assert.Equal(t, "8", tp)
	seqs, _ := d.Get("runtime.max_num_seqs")
	assert.Equal(t, "64", seqs, "${SEQS:-64} takes its default")

	d, err = ReadEngineArgs("serve.sh", []byte("vllm serve $MODEL -tp 8"))
	require.NoError(t, err)
	_, err = d.Scenario(ImportOptions{GPU: "h200-sxm"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `model "$MODEL": a shell variable the input does not set`)
}

// TestEngineArgsSharedScripts reads the vllm serve scripts of the shared
// InferenceX token-position runs (../shared/data/serving, read in place;
// skipped when the folder is absent): real scripts, with SBATCH comments,
// variables and dotted flags.
func TestEngineArgsSharedScripts(t *testing.T) {
	const dir = "../../shared/data/serving/inferencex_token_position"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared serving data not present at %s", dir)
	}
	tests := []struct {
		file, model string
		tp, ep      string
		spec        string
		k           int
	}{
		{"glm-5/serve_glm5_sbatch.sh", "zai-org/GLM-5-FP8", "8", "", "mtp", 1},
		{"minimax-m2.5/serve_minimax_tep8_sbatch.sh", "MiniMaxAI/MiniMax-M2.5", "8", "8", "", 0},
		{"qwen3.5/serve_qwen35_tp8_sbatch.sh", "Qwen/Qwen3.5-397B-A17B", "8", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			d, err := ReadEngineArgs(tt.file, data)
			require.NoError(t, err)
			assert.Equal(t, "vllm", d.Engine)
			assert.Equal(t, tt.model, d.Model)
			tp, _ := d.Get("parallel.tp")
			assert.Equal(t, tt.tp, tp)
			ep, _ := d.Get("parallel.ep")
			assert.Equal(t, tt.ep, ep)
			assert.Equal(t, tt.spec, d.Spec.Method)
			assert.Equal(t, tt.k, d.Spec.DraftTokens)
		})
	}
}
