package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/moecast/moecast/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCorpusInStep regenerates the corpus from ../shared/data/serving into
// a temporary directory and requires the committed one to be the same,
// file for file (nothing in it is written by hand). It skips where the
// shared data are absent.
func TestCorpusInStep(t *testing.T) {
	serving, configs := "../../../../shared/data/serving", "../../../../shared/data/model_configs"
	if _, err := os.Stat(serving); err != nil {
		t.Skipf("no shared serving data here (%v)", err)
	}
	out := t.TempDir()
	g := &gen{serving: serving, configs: configs, out: out, usedConfigs: map[string]bool{}}
	require.NoError(t, g.run())
	generated := map[string]bool{}
	require.NoError(t, filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		generated[rel] = true
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("..", rel))
		require.NoError(t, err, "%s: generated but not committed (go generate ./validate/corpus)", rel)
		assert.Equal(t, string(want), string(got), "%s differs from the generator's (go generate ./validate/corpus)", rel)
		return nil
	}))
	for _, dir := range []string{"aiconfigurator", "inferencex", "llmservingsim", "configs"} {
		require.NoError(t, filepath.WalkDir(filepath.Join("..", dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel("..", p)
			assert.True(t, generated[rel], "%s is committed but the generator does not write it", rel)
			return nil
		}))
	}
	assert.True(t, generated["manifest.toml"])
}

// TestModelConfigMapping holds the checkpoint-to-config mapping stated in
// docs/ACCURACY.md: NVIDIA's own release first, an architecture twin's
// NVFP4 release, the FP8 ModelOpt release re-labelled NVFP4, else the
// model's own config.
func TestModelConfigMapping(t *testing.T) {
	configs := "../../../../shared/data/model_configs"
	if _, err := os.Stat(configs); err != nil {
		t.Skipf("no shared model configs here (%v)", err)
	}
	tests := []struct {
		name, id, precision, want string
	}{
		{"own NVFP4 release", "moonshotai/Kimi-K2.5", "fp4", "nvidia--Kimi-K2.5-NVFP4_config.json"},
		{"R1 takes V3.1's NVFP4 release", "deepseek-ai/DeepSeek-R1", "fp4", "nvidia--DeepSeek-V3.1-NVFP4_config.json"},
		{"V3 takes V3.1's NVFP4 release", "deepseek-ai/DeepSeek-V3", "fp4", "nvidia--DeepSeek-V3.1-NVFP4_config.json"},
		{"R1 fp8 is its own config", "deepseek-ai/DeepSeek-R1", "fp8", "deepseek-ai--DeepSeek-R1_config.json"},
		{"Llama fp8 is NVIDIA's FP8 release", "meta-llama/Llama-3.1-70B", "fp8", "nvidia--Llama-3.1-70B-Instruct-FP8_config.json"},
		{"Llama fp4 is derived from the FP8 release", "meta-llama/Llama-3.1-70B", "fp4", "derived--Llama-3.1-70B-Instruct-FP8-as-NVFP4_config.json"},
		{"gpt-oss fp4 is its own MXFP4", "openai/gpt-oss-120b", "fp4", "openai--gpt-oss-120b_config.json"},
		{"Qwen3.5 fp8 is its FP8 release's quantization on its config", "Qwen/Qwen3.5-397B-A17B", "fp8", "derived--Qwen3.5-397B-A17B-FP8_config.json"},
		{"Qwen3.5 bf16 is its own config", "Qwen/Qwen3.5-397B-A17B", "bf16", "Qwen--Qwen3.5-397B-A17B_config.json"},
		{"no precision", "meta-llama/Llama-3.1-8B-Instruct", "", "meta-llama--Meta-Llama-3.1-8B_config.json"},
		{"unknown model", "acme/None-1B", "fp8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			g := &gen{configs: configs, out: out, usedConfigs: map[string]bool{}}
			got, err := g.modelConfig(tt.id, tt.precision)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDerivedNVFP4(t *testing.T) {
	configs := "../../../../shared/data/model_configs"
	if _, err := os.Stat(configs); err != nil {
		t.Skipf("no shared model configs here (%v)", err)
	}
	out := t.TempDir()
	g := &gen{configs: configs, out: out, usedConfigs: map[string]bool{}}
	got, err := g.modelConfig("meta-llama/Llama-3.1-70B", "fp4")
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(out, "configs", strings.TrimSuffix(got, "_config.json")+"_hf_quant_config.json"))
	require.NoError(t, err)
	var hq struct {
		Quantization struct {
			Algo    string   `json:"quant_algo"`
			KV      string   `json:"kv_cache_quant_algo"`
			Group   int      `json:"group_size"`
			Exclude []string `json:"exclude_modules"`
		} `json:"quantization"`
	}
	require.NoError(t, json.Unmarshal(raw, &hq))
	assert.Equal(t, "NVFP4", hq.Quantization.Algo)
	assert.Equal(t, 16, hq.Quantization.Group)
	assert.Equal(t, "FP8", hq.Quantization.KV, "the FP8 release's KV cache is kept")
	assert.Equal(t, []string{"lm_head"}, hq.Quantization.Exclude, "the FP8 release's exclude list is kept")
}

func TestSameArchitecture(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	a := write("a.json", `{"hidden_size": 7168, "num_hidden_layers": 61, "transformers_version": "4.46.3", "quantization_config": {"quant_method": "fp8"}}`)
	tests := []struct {
		name, body, wantErr string
	}{
		{"provenance and quantization differ", `{"hidden_size": 7168, "num_hidden_layers": 61, "transformers_version": "4.44.2"}`, ""},
		{"layers differ", `{"hidden_size": 7168, "num_hidden_layers": 62}`, "num_hidden_layers is 61 against 62"},
		{"a key missing", `{"hidden_size": 7168}`, "num_hidden_layers is 61 against null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sameArchitecture(a, write(tt.name+".json", tt.body))
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestVLLMDPSlip: only vLLM aggregated rows of the slip's shape (tp =
// dp = N, moe_ep = N x N) are read as the N-GPU TP-EP run.
func TestVLLMDPSlip(t *testing.T) {
	for _, tc := range []struct {
		name              string
		backend, mode     string
		tp, dp, moeTP, ep int
		want              int
	}{
		{"tp2 dp2 ep4", "vllm", "agg", 2, 2, 1, 4, 2},
		{"tp4 dp4 ep16", "vllm", "agg", 4, 4, 1, 16, 4},
		{"genuine DP: tp1 dp8 ep8", "vllm", "agg", 1, 8, 1, 8, 0},
		{"dp differs from tp", "vllm", "agg", 4, 2, 1, 8, 0},
		{"no DP", "vllm", "agg", 4, 1, 1, 4, 0},
		{"SGLang DP attention", "sglang", "agg", 4, 4, 1, 16, 0},
		{"disaggregated", "vllm", "disagg", 2, 2, 1, 4, 0},
		{"experts tensor-split", "vllm", "agg", 2, 2, 2, 4, 0},
	} {
		assert.Equal(t, tc.want, vllmDPSlip(tc.backend, tc.mode, tc.tp, tc.dp, tc.moeTP, tc.ep), tc.name)
	}
}

func TestIDLayout(t *testing.T) {
	tests := []struct {
		name, id string
		want     []string
	}{
		{"tp and ep", "2026_04_06_deepseek_r1_b200_sxm_sglang_fp8_agg_1024x1024_c16_tp8_ep8_1013", []string{"8", "8"}},
		{"with _0 suffixes", "2026_03_25_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c8_tp8_0_ep8_0_248", []string{"8", "8"}},
		{"no layout", "dsr1_b200_sglang_fp8_agg_1024x8192_c4_cfg199", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := idLayoutRE.FindStringSubmatch(tt.id)
			if tt.want == nil {
				assert.Nil(t, m)
				return
			}
			require.NotNil(t, m)
			assert.Equal(t, tt.want, m[1:])
		})
	}
}

// TestScenarioTextDisagg: a disaggregated scenario gives [disagg] with
// both pools in place of [parallel], and hardware.gpus is the pools' sum.
func TestScenarioTextDisagg(t *testing.T) {
	tests := []struct {
		name      string
		st        scenarioText
		want      []string
		wantNotIn []string
	}{
		{
			name: "disagg pools",
			st: scenarioText{name: "x", config: "c.json", gpu: "gb200", gpus: 40, engine: "sglang",
				disagg: &disaggText{transfer: "nvlink5-nvl72", prefill: poolText{workers: 2, tp: 1, dp: 4, ep: 4}, decode: poolText{workers: 1, tp: 1, dp: 32, ep: 32}}},
			want: []string{"gpus = 40\n", "[disagg]\ntransfer = \"nvlink5-nvl72\"\n", "[disagg.prefill]\nworkers = 2\ntp = 1\ndp = 4\nep = 4\ndp_attention = true\n",
				"[disagg.decode]\nworkers = 1\ntp = 1\ndp = 32\nep = 32\ndp_attention = true\n", "[runtime]\nengine = \"sglang\"\n"},
			wantNotIn: []string{"[parallel]"},
		},
		{
			name: "wide-EP decode pool",
			st: scenarioText{name: "x", config: "c.json", gpu: "gb200", gpus: 40, engine: "sglang",
				disagg: &disaggText{transfer: "nvlink5-nvl72", prefill: poolText{workers: 2, tp: 1, dp: 4, ep: 4},
					decode: poolText{workers: 1, tp: 1, dp: 32, ep: 32, a2a: "deepep"}}},
			want:      []string{"[disagg.decode]\nworkers = 1\ntp = 1\ndp = 32\nep = 32\ndp_attention = true\nmoe_a2a_backend = \"deepep\"\n"},
			wantNotIn: []string{"ep = 4\ndp_attention = true\nmoe_a2a_backend"},
		},
		{
			name:      "agg layout",
			st:        scenarioText{name: "x", config: "c.json", gpu: "h100-sxm", gpus: 8, tp: 8, dp: 1, ep: 1, engine: "vllm"},
			want:      []string{"[parallel]\ntp = 8\n"},
			wantNotIn: []string{"[disagg"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.st.String()
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
			for _, w := range tt.wantNotIn {
				assert.NotContains(t, got, w)
			}
			if d := tt.st.disagg; d != nil {
				assert.Equal(t, tt.st.gpus, d.prefill.gpus()+d.decode.gpus())
			}
		})
	}
}

// TestWideEPBackend: an SGLang pool with DP attention runs DeepEP when its
// experts span more GPUs than one node of the system; otherwise, and for
// other engines, the engine's default.
func TestWideEPBackend(t *testing.T) {
	for _, tc := range []struct {
		backend, system string
		dp, ep          int
		want            string
	}{
		{"sglang", "gb200", 32, 32, "deepep"},
		{"sglang", "gb300", 8, 8, "deepep"},
		{"sglang", "gb200", 4, 4, ""},
		{"sglang", "b200-sxm", 8, 8, ""},
		{"sglang", "b200-sxm", 16, 16, "deepep"},
		{"sglang", "gb200", 1, 32, ""},
		{"vllm", "gb200", 32, 32, ""},
		{"sglang", "unknown", 32, 32, ""},
	} {
		assert.Equal(t, tc.want, wideEPBackend(tc.backend, tc.system, tc.dp, tc.ep), "%+v", tc)
	}
}

// TestBeyondCapacity: the capacity rule excludes a deployment when a
// run's median TTFT exceeds twice the time to prefill all C prompts at
// the highest input rate the deployment's runs sustained at that length
// or longer, and keeps it otherwise; attention DP ranks widen the bound.
func TestBeyondCapacity(t *testing.T) {
	// The saturated run: 64 x 4096 tokens at 32,000 tok/s. At C=4 and
	// 1024 tokens the bound is 4 x 1024 / 32000 = 0.128 s.
	sat := closedLoopRun{file: "sat.json", conc: 64, inputLen: 4096, inputRate: 32000, ttft: 4}
	low := func(ttft float64) closedLoopRun {
		return closedLoopRun{file: "low.json", conc: 4, inputLen: 1024, inputRate: 1700, ttft: ttft}
	}
	assert.Empty(t, beyondCapacity([]closedLoopRun{low(0.25), sat}, 1), "within 2 x 0.128 s")
	why := beyondCapacity([]closedLoopRun{low(0.48), sat}, 1)
	assert.Contains(t, why, "low.json: median TTFT 0.48 s at C=4, 1024 input tokens, 3.8 x the 0.13 s")
	assert.Contains(t, why, "32000 tok/s")
	assert.Empty(t, beyondCapacity([]closedLoopRun{low(0.48), sat}, 8), "on one of 8 DP ranks: bound 1.02 s")
	// A rate measured only at shorter prompts does not bound a longer
	// one: the run's own rate is the only one at its length.
	long := closedLoopRun{file: "long.json", conc: 4, inputLen: 16384, inputRate: 12000, ttft: 2.7}
	assert.Empty(t, beyondCapacity([]closedLoopRun{long, sat}, 1), "bound 4 x 16384 / 12000 = 5.5 s")
	// The worst run is named.
	why = beyondCapacity([]closedLoopRun{low(0.48), sat, {file: "worse.json", conc: 8, inputLen: 1024, inputRate: 2900, ttft: 2}}, 1)
	assert.Contains(t, why, "worse.json")
}

// TestInferenceXCapacityRule holds the rule's findings on the shipped
// token-position runs: MiniMax-M2.5 tep8 and Qwen3.5 tp8 fail it at C=4
// (their medians 3.7 x and 9.0 x the bound), GLM-5 tp8 and MiniMax-M2.5
// dep8 pass it.
func TestInferenceXCapacityRule(t *testing.T) {
	base := "../../../../shared/data/serving/inferencex_token_position"
	if _, err := os.Stat(base); err != nil {
		t.Skipf("no shared serving data here (%v)", err)
	}
	for _, tc := range []struct {
		dir, layout string
		ranks       int
		want        string
	}{
		{"glm-5", "_tp8_", 1, ""},
		{"minimax-m2.5", "_dep8_", 8, ""},
		{"minimax-m2.5", "_tep8_", 1, "minimax_m25_vllm_tep8_isl1024_osl128_conc4.json: median TTFT 0.48 s at C=4, 1024 input tokens, 3.7 x"},
		{"qwen3.5", "_tp8_", 1, "qwen35_vllm_tp8_isl1024_osl128_conc4.json: median TTFT 4.57 s at C=4, 1024 input tokens, 9.0 x"},
	} {
		ents, err := os.ReadDir(filepath.Join(base, tc.dir, "results"))
		require.NoError(t, err)
		var runs []closedLoopRun
		for _, e := range ents {
			if strings.Contains(e.Name(), tc.layout) {
				r, err := readClosedLoopRun(filepath.Join(base, tc.dir, "results", e.Name()))
				require.NoError(t, err)
				runs = append(runs, r)
			}
		}
		require.NotEmpty(t, runs, tc.dir+tc.layout)
		got := beyondCapacity(runs, tc.ranks)
		if tc.want == "" {
			assert.Empty(t, got, tc.dir+tc.layout)
		} else {
			assert.Contains(t, got, tc.want, tc.dir+tc.layout)
		}
	}
}

func TestReadClosedLoopRunBad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"max_concurrency": 4, "completed": 40, "total_input_tokens": 40960, "duration": 0, "median_ttft": 0.5}`), 0o644))
	_, err := readClosedLoopRun(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "duration")
	require.NoError(t, os.WriteFile(p, []byte(`{"max_concurrency": 4, "completed": 40, "total_input_tokens": 40960, "duration": 24, "median_ttft": 0.5}`), 0o644))
	r, err := readClosedLoopRun(p)
	require.NoError(t, err)
	assert.Equal(t, closedLoopRun{file: "r.json", conc: 4, inputLen: 1024, inputRate: 40960.0 / 24, ttft: 0.5}, r)
}

// TestSameClient: one model's deployment that fails the capacity rule
// takes its siblings (the same client sweep) with it; a model with none
// failing keeps all.
func TestSameClient(t *testing.T) {
	ents := []entry{{Name: "m/dep8"}, {Name: "m/tep8", Exclude: "TTFT beyond"}}
	sameClient(ents)
	assert.Contains(t, ents[0].Exclude, "same client sweep and cluster as m/tep8")
	assert.Equal(t, "TTFT beyond", ents[1].Exclude)
	ok := []entry{{Name: "g/tp8"}}
	sameClient(ok)
	assert.Empty(t, ok[0].Exclude)
}

// TestInferenceXMTPRows holds the MTP mapping on the shipped corpus:
// DeepSeek-R1 fp8 B200 TP 8 rows of image v0.5.9-cu130 that are not the
// dump's config_id=87 figures (among them the eleven second figures at
// the plain config's points, ids ..._ep1_0_250 and so on) are in the MTP
// deployments, whose scenarios run SGLang's MTP with K = 2 at the
// documented acceptance; the plain deployments keep none of them.
func TestInferenceXMTPRows(t *testing.T) {
	dir := "../aiconfigurator/"
	const base = "b200-sxm-sglang-deepseek-r1-fp8-block-tp8-dp1-ep1"
	read := func(name string) string {
		b, err := os.ReadFile(dir + name)
		require.NoError(t, err, "the committed corpus lacks it")
		return string(b)
	}
	mtp := read(base+"-mtp-recv10.csv") + read(base+"-mtp-recv30.csv")
	// The plain deployments: image v0.5.9-cu130 (recv10, and recv30,
	// which takes the version suffix since image v0.5.6's one row of
	// 2025-12-31 has a command line of its own and the plain name).
	v059 := read(base+"-recv10.csv") + read(base+"-recv30-0.5.9.csv")
	v056 := read(base + "-recv30.csv")
	plain := v059 + v056
	for _, n := range []int{250, 258, 265, 273, 274, 290, 292, 303, 304, 308, 312} {
		id := fmt.Sprintf("_ep1_0_%d,", n)
		assert.Contains(t, mtp, id)
		assert.NotContains(t, plain, id)
	}
	// Their twins at the same points (the dump's figures) stay plain.
	for _, n := range []int{249, 255, 262, 263, 269, 284, 288, 306} {
		id := fmt.Sprintf("_ep1_0_%d,", n)
		assert.Contains(t, plain, id)
		assert.NotContains(t, mtp, id)
	}
	// Points only the MTP config ran at TP 8: conc above 64, 8k/1k above 4.
	for _, id := range []string{"_c128_tp8_0_ep1_0_300,", "_c512_tp8_0_ep1_0_276,", "8192x1024_c8_tp8_0_ep1_0_281,"} {
		assert.Contains(t, mtp, id)
	}
	assert.Equal(t, 43, strings.Count(mtp, "\n")-2, "rows (less the two headers)")
	for _, f := range []string{base + "-mtp-recv10.toml", base + "-mtp-recv30.toml"} {
		sc := read(f)
		assert.Contains(t, sc, "\n[speculative]\nmethod = \"mtp\"\ndraft_tokens = 2\nacceptance = [0.85]\n", f)
		assert.Contains(t, sc, "max_num_batched_tokens = 16384\n", f)
		assert.Contains(t, sc, "cuda_graph_max_bs = 512\n", f)
	}
	for _, f := range []string{base + "-recv10.toml", base + "-recv30-0.5.9.toml", base + "-recv30.toml"} {
		assert.NotContains(t, read(f), "[speculative]", f)
	}
	// The v0.5.9 plain rows are all of image v0.5.9-cu130; the v0.5.6 row
	// alone in its deployment, on d27433d's command line.
	assert.Equal(t, 0, strings.Count(v059, "v0.5.6"))
	assert.Equal(t, 2, strings.Count(v056, "\n"), "the header and the one v0.5.6 row")
	assert.Contains(t, v056, "_8192x1024_c64_tp8_0_ep1_0_1288,")
	assert.Contains(t, v056, "image=lmsysorg/sglang:v0.5.6-cu129-amd64")
	assert.Contains(t, read(base+"-recv30.toml"), "InferenceX @ d27433d")
	assert.Contains(t, read(base+"-recv30-0.5.9.toml"), "InferenceX @ 64c20b6")
	// Qwen3.5 fp8's MTP run: the command line, no documented acceptance.
	q := read("b200-sxm-sglang-qwen3.5-397b-a17b-fp8-block-tp4-dp1-ep1-mtp-c16.toml")
	assert.Contains(t, q, "\n[speculative]\nmethod = \"mtp\"\ndraft_tokens = 3\n")
	assert.NotContains(t, q, "acceptance =")
	assert.Contains(t, q, "cuda_graph_max_bs = 16\n")
}

// TestFP8Release: the Qwen3.5-397B fp8 checkpoint is the model's shared
// config.json, every key kept, with the release's quantization_config:
// fp8 blocks of 128 x 128, dynamic activations, and the 372 modules it
// keeps in bf16 (45 Gated DeltaNet layers' conv1d, in_proj_a, in_proj_b;
// 60 routers and shared-expert gates; 27 vision blocks' 4 linears; the
// vision merger, patch and position embeddings; the MTP layer's fc, router
// and shared-expert gate; lm_head and the token embedding), sorted.
func TestFP8Release(t *testing.T) {
	configs := "../../../../shared/data/model_configs"
	if _, err := os.Stat(configs); err != nil {
		t.Skipf("no shared model configs here (%v)", err)
	}
	out := t.TempDir()
	g := &gen{configs: configs, out: out, usedConfigs: map[string]bool{}}
	got, err := g.modelConfig("Qwen/Qwen3.5-397B-A17B", "fp8")
	require.NoError(t, err)
	derived := filepath.Join(out, "configs", got)
	own := filepath.Join(configs, "Qwen--Qwen3.5-397B-A17B_config.json")
	require.NoError(t, sameArchitecture(own, derived), "only the quantization and its provenance are added")
	ownRaw, err := os.ReadFile(own)
	require.NoError(t, err)
	raw, err := os.ReadFile(derived)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(raw), strings.TrimRight(string(ownRaw), " \n}")), "the model's keys are kept verbatim")
	var cfg struct {
		Q struct {
			Method  string   `json:"quant_method"`
			Act     string   `json:"activation_scheme"`
			Block   []int    `json:"weight_block_size"`
			NoConv  []string `json:"modules_to_not_convert"`
			WTensor *bool    `json:"weight_per_tensor"`
		} `json:"quantization_config"`
		By string `json:"derived_by"`
	}
	require.NoError(t, json.Unmarshal(raw, &cfg))
	assert.Equal(t, "fp8", cfg.Q.Method)
	assert.Equal(t, "dynamic", cfg.Q.Act)
	assert.Equal(t, []int{128, 128}, cfg.Q.Block)
	require.NotNil(t, cfg.Q.WTensor)
	assert.False(t, *cfg.Q.WTensor)
	assert.Contains(t, cfg.By, "Qwen/Qwen3.5-397B-A17B-FP8 @ ea5b4f81096f3901c91dea97f81324302495781d")
	n := cfg.Q.NoConv
	assert.Len(t, n, 372)
	assert.True(t, sort.StringsAreSorted(n))
	count := func(suffix string) int {
		c := 0
		for _, m := range n {
			if strings.HasSuffix(m, suffix) {
				c++
			}
		}
		return c
	}
	assert.Equal(t, 45, count(".linear_attn.in_proj_a"), "one per Gated DeltaNet layer")
	assert.Equal(t, 45, count(".linear_attn.conv1d"))
	assert.Equal(t, 61, count(".mlp.gate"), "every layer's router and the MTP layer's")
	assert.Equal(t, 61, count(".mlp.shared_expert_gate"))
	assert.Equal(t, 27, count(".attn.qkv"))
	assert.Contains(t, n, "model.language_model.layers.3.mlp.gate")
	assert.NotContains(t, n, "model.language_model.layers.3.linear_attn.in_proj_a", "layer 3 is full attention")
	assert.NotContains(t, n, "model.language_model.layers.0.mlp.experts", "the routed experts are fp8")
	for _, m := range []string{"lm_head", "model.language_model.embed_tokens", "mtp.fc", "model.visual.pos_embed"} {
		assert.Contains(t, n, m)
	}
	// No release without the model's own config; none for a model fp8Releases does not know.
	g2 := &gen{configs: t.TempDir(), out: t.TempDir(), usedConfigs: map[string]bool{}}
	got, err = g2.modelConfig("Qwen/Qwen3.5-397B-A17B", "fp8")
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = g.modelConfig("Qwen/Qwen3-32B", "fp8")
	require.NoError(t, err)
	assert.Equal(t, "Qwen--Qwen3-32B-FP8_config.json", got)
}

func TestFP8ReleaseBad(t *testing.T) {
	r := fp8Releases[0]
	_, err := withQuant([]byte(`{"quantization_config": {}, "text_config": {}}`), r)
	assert.ErrorContains(t, err, "already has a quantization_config")
	_, err = withQuant([]byte(`{"text_config": {"layer_types": ["mamba"]}, "vision_config": {"depth": 1}}`), r)
	assert.ErrorContains(t, err, "unknown layer type")
	_, err = withQuant([]byte(`{"text_config": {"layer_types": []}, "vision_config": {"depth": 1}}`), r)
	assert.ErrorContains(t, err, "want text_config.layer_types")
	_, err = withQuant([]byte(`[1]`), r)
	assert.Error(t, err)
}

// TestInferenceXGLM5Acceptance: the GLM-5 vLLM MTP deployment runs the
// server's K = 1 with the draft's acceptance at its first position as
// vLLM's recipe measured it, and names where the figure is from; it runs
// the vLLM of its results' date (engine_version 0.16.0.dev), as do the
// other models' runs of the same sweep.
func TestInferenceXGLM5Acceptance(t *testing.T) {
	b, err := os.ReadFile("../inferencex/glm-5-tp8.toml")
	require.NoError(t, err, "the committed corpus lacks it")
	sc := string(b)
	assert.Contains(t, sc, "\n[speculative]\nmethod = \"mtp\"\ndraft_tokens = 1\nacceptance = [0.3659]\n")
	assert.Contains(t, sc, "vllm-project/recipes @ ae68dd6 GLM/GLM5.md")
	// the runs' nightly (2026-02-13) predates v0.16.0: its version-dependent defaults
	assert.Contains(t, sc, "\n[runtime]\nengine = \"vllm\"\nengine_version = \"0.16.0.dev\"\n")
	for _, other := range []string{"../inferencex/minimax-m2.5-tep8.toml", "../inferencex/qwen3.5-tp8.toml"} {
		b, err := os.ReadFile(other)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "[speculative]", other)
		assert.Contains(t, string(b), "\n[runtime]\nengine = \"vllm\"\nengine_version = \"0.16.0.dev\"\n", other)
	}
}

// TestTransferFabric: every aiconfigurator system the generator knows
// (systemNodeGPUs) has the NVLink preset its disaggregated rows' KV cache
// crosses, and it is the system's GPU preset's own fabric (kernels).
func TestTransferFabric(t *testing.T) {
	for sys := range systemNodeGPUs {
		g, ok := kernels.LookupGPU(sys)
		require.True(t, ok, "system %s: no GPU preset", sys)
		assert.Equal(t, g.Fabric, transferFabric[sys], "system %s: transferFabric", sys)
	}
	for sys := range transferFabric {
		assert.Contains(t, systemNodeGPUs, sys, "transferFabric names %s, which systemNodeGPUs lacks", sys)
	}
}
