// Command gen builds moecast's shipped accuracy corpus (validate/corpus)
// from the public serving measurements in ../shared/data/serving: it copies
// the measured rows and files (verbatim, or a row filter of them), writes
// one scenario per deployment and the manifest that pairs them, and copies
// the model configs the scenarios name. Run by `go generate
// ./validate/corpus`; nothing in the output is written by hand.
//
// Every row goes into the corpus, including the ones moecast cannot
// simulate today: an entry moecast cannot express (disaggregated serving,
// pipeline parallelism, a model with no config) carries a `skip` reason;
// everything else gets a scenario, and whatever moecast does not know yet
// (a GPU, an engine, an architecture) fails when the scenario loads and is
// counted with that error. The corpus scores it once moecast learns it.
package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	serving := flag.String("serving", "../../../shared/data/serving", "the serving data directory")
	configs := flag.String("configs", "../../../shared/data/model_configs", "the model configs directory")
	out := flag.String("out", ".", "the corpus directory to write")
	flag.Parse()
	g := &gen{serving: *serving, configs: *configs, out: *out, usedConfigs: map[string]bool{}}
	if err := g.run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

type gen struct {
	serving, configs, out string
	usedConfigs           map[string]bool
	entries               []entry
}

// entry is one [[entry]] of the manifest.
type entry struct {
	Name       string
	Source     string
	Scenario   string // path relative to the corpus
	Results    []string
	Format     string
	Skip       string
	GPU        string
	Model      string
	Engine     string
	Checkpoint string
	Baseline   string // a peer's own error on the same work (summary.txt)
	Exclude    string // a corpus rule's finding: the rows do not represent the engine
}

func (g *gen) run() error {
	for _, d := range []string{"aiconfigurator", "inferencex", "llmservingsim", "configs"} {
		if err := os.RemoveAll(filepath.Join(g.out, d)); err != nil {
			return err
		}
	}
	if err := g.aiconfigurator(); err != nil {
		return err
	}
	if err := g.inferenceX(); err != nil {
		return err
	}
	if err := g.llmServingSim(); err != nil {
		return err
	}
	if err := g.copyConfigs(); err != nil {
		return err
	}
	return g.manifest()
}

func (g *gen) write(rel string, data []byte) error {
	p := filepath.Join(g.out, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (g *gen) copyFile(src, rel string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return g.write(rel, data)
}

// modelConfig finds the config of model id (org/name) for a checkpoint
// precision among the shared configs: NVIDIA's -NVFP4 release for fp4, a
// -FP8 release for fp8 when there is one, else the model's own. The org
// is not compared (zhipuai/GLM-5 is zai-org's). An fp4 checkpoint with no
// NVFP4 release of its own takes, in order, NVIDIA's NVFP4 release of an
// architecture twin (nvfp4Twins; the configs are checked equal but for
// their quantization) or the row's quant mode applied to NVIDIA's FP8
// ModelOpt release of the model (nvfp4FromFP8). An fp8 checkpoint with no
// -FP8 config among the shared ones takes its release's published
// quantization_config on the model's own config (fp8Releases). "" when
// none.
func (g *gen) modelConfig(id, precision string) (string, error) {
	name := id[strings.LastIndex(id, "/")+1:]
	ents, err := os.ReadDir(g.configs)
	if err != nil {
		return "", err
	}
	fp4 := false
	var tries []string
	switch precision {
	case "fp4", "nvfp4":
		if !strings.HasPrefix(strings.ToLower(name), "gpt-oss") { // gpt-oss's own checkpoint is MXFP4
			tries = append(tries, "-NVFP4")
			fp4 = true
		}
	case "fp8":
		tries = append(tries, "-FP8", "-Instruct-FP8")
	}
	// The release's own name, then without -Instruct (the same
	// architecture), then without a quantization suffix (the row's
	// precision picks the release), each also as meta-llama names them
	// (Meta-Llama-3.1-*).
	var names []string
	for _, n := range []string{name, strings.TrimSuffix(name, "-Instruct")} {
		names = append(names, n)
		for _, q := range []string{"-NVFP4", "-FP8"} {
			if strings.HasSuffix(n, q) {
				names = append(names, strings.TrimSuffix(n, q))
			}
		}
	}
	lookup := func(s string) string {
		for _, nm := range names {
			if n := find2(ents, nm+s); n != "" {
				return n
			}
			if n := find2(ents, "Meta-"+nm+s); n != "" {
				return n
			}
		}
		return ""
	}
	use := func(n string) string {
		g.usedConfigs[n] = true
		if q := strings.TrimSuffix(n, "_config.json") + "_hf_quant_config.json"; fileExists(filepath.Join(g.configs, q)) {
			g.usedConfigs[q] = true
		}
		return n
	}
	if len(tries) > 0 {
		if n := lookup(tries[0]); n != "" {
			return use(n), nil
		}
	}
	if precision == "fp8" {
		if n, err := g.fp8Release(names, lookup); n != "" || err != nil {
			return n, err
		}
	}
	if fp4 {
		if n, err := g.nvfp4Twin(ents, names); n != "" || err != nil {
			return n, err
		}
		if n, err := g.nvfp4FromFP8(ents, lookup); n != "" || err != nil {
			return n, err
		}
	}
	for _, s := range append(tries[min(1, len(tries)):], "") {
		if n := lookup(s); n != "" {
			return use(n), nil
		}
	}
	return "", nil
}

// nvfp4Twins names, for a model with no NVFP4 release among the shared
// configs, a model of the same architecture that has one: DeepSeek-V3.1
// is DeepSeek-V3's and R1's architecture (the same config.json but for
// its quantization), and NVIDIA's DeepSeek-V3.1-NVFP4 quantizes it as its
// R1 NVFP4 release does (routed and shared experts and dense MLPs NVFP4,
// attention and lm_head excluded, FP8 KV cache).
var nvfp4Twins = map[string]string{"DeepSeek-R1": "DeepSeek-V3.1", "DeepSeek-V3": "DeepSeek-V3.1"}

// nvfp4Twin is the NVFP4 release of the architecture twin of the first
// name that has one, after checking that the two configs agree on every
// key but the quantization and the build's provenance.
func (g *gen) nvfp4Twin(ents []os.DirEntry, names []string) (string, error) {
	for _, nm := range names {
		twin, ok := nvfp4Twins[nm]
		if !ok {
			continue
		}
		own, rel := find2(ents, nm), find2(ents, twin+"-NVFP4")
		if own == "" || rel == "" {
			continue
		}
		if err := sameArchitecture(filepath.Join(g.configs, own), filepath.Join(g.configs, rel)); err != nil {
			return "", err
		}
		g.usedConfigs[rel] = true
		if q := strings.TrimSuffix(rel, "_config.json") + "_hf_quant_config.json"; fileExists(filepath.Join(g.configs, q)) {
			g.usedConfigs[q] = true
		}
		return rel, nil
	}
	return "", nil
}

// provenanceKeys are the config.json keys that do not describe the
// architecture (derived_by: the generator's note on a config it wrote).
var provenanceKeys = map[string]bool{"quantization_config": true, "transformers_version": true, "_name_or_path": true, "torch_dtype": true, "derived_by": true}

// sameArchitecture fails unless configs a and b agree on every key but
// provenanceKeys.
func sameArchitecture(a, b string) error {
	var ca, cb map[string]any
	for _, x := range []struct {
		p string
		c *map[string]any
	}{{a, &ca}, {b, &cb}} {
		raw, err := os.ReadFile(x.p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, x.c); err != nil {
			return fmt.Errorf("%s: %w", x.p, err)
		}
	}
	for _, k := range keysOf(ca, cb) {
		if provenanceKeys[k] {
			continue
		}
		va, _ := json.Marshal(ca[k])
		vb, _ := json.Marshal(cb[k])
		if !bytes.Equal(va, vb) {
			return fmt.Errorf("%s and %s are not one architecture: %s is %s against %s", filepath.Base(a), filepath.Base(b), k, va, vb)
		}
	}
	return nil
}

func keysOf(ms ...map[string]any) []string {
	seen := map[string]bool{}
	var ks []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
	}
	sort.Strings(ks)
	return ks
}

// nvfp4FromFP8 derives an NVFP4 checkpoint description from NVIDIA's FP8
// ModelOpt release of the model (config.json and hf_quant_config.json
// with quant_algo FP8): the same config and the same exclude list and KV
// cache, quant_algo NVFP4 with 16-element groups (ModelOpt's NVFP4
// format). Written to the corpus as derived--<release>-as-NVFP4; "" when
// the model has no such release.
func (g *gen) nvfp4FromFP8(ents []os.DirEntry, lookup func(string) string) (string, error) {
	n := lookup("-Instruct-FP8")
	if n == "" {
		n = lookup("-FP8")
	}
	if n == "" {
		return "", nil
	}
	qp := filepath.Join(g.configs, strings.TrimSuffix(n, "_config.json")+"_hf_quant_config.json")
	raw, err := os.ReadFile(qp)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var hq map[string]any
	if err := json.Unmarshal(raw, &hq); err != nil {
		return "", fmt.Errorf("%s: %w", qp, err)
	}
	q, _ := hq["quantization"].(map[string]any)
	if q == nil || q["quant_algo"] != "FP8" {
		return "", nil
	}
	q["quant_algo"] = "NVFP4"
	q["group_size"] = 16
	hq["derived_by"] = "moecast validate/corpus/gen from " + filepath.Base(qp) + ": quant_algo FP8 -> NVFP4 (group_size 16), the row's quant mode on NVIDIA's FP8 release; no NVFP4 release of the model among the shared configs"
	out, err := json.MarshalIndent(hq, "", "  ")
	if err != nil {
		return "", err
	}
	base := "derived--" + strings.TrimSuffix(n[strings.Index(n, "--")+2:], "_config.json") + "-as-NVFP4"
	if err := g.copyFile(filepath.Join(g.configs, n), "configs/"+base+"_config.json"); err != nil {
		return "", err
	}
	if err := g.write("configs/"+base+"_hf_quant_config.json", append(out, '\n')); err != nil {
		return "", err
	}
	return base + "_config.json", nil
}

// vllmDPSlip is N for a row of vLLM's TP-EP run recorded as DP (see
// aiconfigurator): aggregated, tp_size = attention_dp_size = N > 1,
// moe_tp_size at most 1 and moe_ep_size N x N; else 0.
func vllmDPSlip(backend, mode string, tp, dp, moeTP, ep int) int {
	if backend == "vllm" && mode == "agg" && dp > 1 && tp == dp && moeTP <= 1 && ep == tp*dp {
		return tp
	}
	return 0
}

// idLayoutRE finds the layout an aiconfigurator row's id names
// (..._tp8_ep8_1013, ..._tp8_0_ep8_0_248).
var idLayoutRE = regexp.MustCompile(`_tp(\d+)(?:_0)?_ep(\d+)(?:_0)?_`)

// headsOf is the attention heads of a corpus config (the text model's
// for a multimodal wrapper); 0 when it does not say.
func (g *gen) headsOf(cfg string) int {
	raw, err := os.ReadFile(filepath.Join(g.configs, cfg))
	if err != nil {
		raw, err = os.ReadFile(filepath.Join(g.out, "configs", cfg))
		if err != nil {
			return 0
		}
	}
	var c struct {
		Heads int `json:"num_attention_heads"`
		Text  struct {
			Heads int `json:"num_attention_heads"`
		} `json:"text_config"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return 0
	}
	return max(c.Heads, c.Text.Heads)
}

func find2(ents []os.DirEntry, base string) string {
	for _, e := range ents {
		n := e.Name()
		if i := strings.Index(n, "--"); i >= 0 && strings.EqualFold(n[i+2:], base+"_config.json") {
			return n
		}
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func (g *gen) copyConfigs() error {
	var names []string
	for n := range g.usedConfigs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := g.copyFile(filepath.Join(g.configs, n), "configs/"+n); err != nil {
			return err
		}
	}
	return nil
}

// gpuName maps a source's GPU name to moecast's preset name (whether or
// not moecast has it: an unknown one fails when the scenario loads).
func gpuName(system string) string {
	s := strings.ToLower(strings.TrimSpace(system))
	s = strings.ReplaceAll(s, "_", "-")
	return s
}

var slugRE = regexp.MustCompile(`[^a-z0-9.]+`)

func slug(parts ...string) string {
	s := strings.ToLower(strings.Join(parts, "-"))
	return strings.Trim(slugRE.ReplaceAllString(s, "-"), "-")
}

// dpAttentionEngine reports whether a row's dp > 1 is data-parallel
// attention in moecast's sense (attention unsplit on every GPU, the MLP
// side TP-split over the DP ranks' tokens): SGLang's --enable-dp-attention
// and TensorRT-LLM's attention DP. vLLM's --data-parallel-size runs DP
// engine cores, each with attention split over its own TP group, and
// with --enable-expert-parallel the experts over all TP x DP GPUs
// (vllm-project/vllm `vllm/model_executor/layers/fused_moe/config.py` @
// 002d607, FusedMoEParallelConfig.make: the TP group is flattened over
// DP and becomes the EP group; its docstring's case TP = 2, DP = 2 with
// EP is "2 engine instances and the experts are split between the 4
// devices"): moecast's tp = TP, dp = DP, dp_attention = false, whose
// attention groups are the DP ranks.
func dpAttentionEngine(backend string) bool { return backend != "vllm" }

// scenarioText is one generated scenario.
type scenarioText struct {
	name, config, gpu   string
	gpus, tp, dp, ep    int
	dpAttention         bool
	engine              string
	maxSeqs, maxBatched int
	kvCache             string  // [model] kv_cache; "" = auto
	gmu                 float64 // runtime.gpu_memory_utilization; 0 = the default
	recv                int     // runtime.scheduler_recv_interval (SGLang); 0 = the default
	cudagraphMode       string  // runtime.cudagraph_mode (vLLM); "" = the default
	maxCapture          int     // runtime.max_cudagraph_capture_size (vLLM); 0 = the default
	numGPUBlocks        int     // runtime.num_gpu_blocks (vLLM); 0 = the profiled KV cache
	graphMax            int     // runtime.cuda_graph_max_bs (SGLang); 0 = the default
	mxfp4Act            string  // runtime.mxfp4_activation; "" = the engine's default
	mxfp4Backend        string  // runtime.mxfp4_moe_backend (vLLM); "" = the engine's pick
	nsaPrefill          string  // runtime.nsa_prefill_backend (SGLang); "" = the default
	spec                string  // speculative method; "" = none
	draftTokens         int
	acceptance          []float64 // speculative.acceptance; nil = left out (not documented)
	customGPU           string    // a [hardware.custom_gpu] body, for a GPU with no preset
	engineVersion       string    // runtime.engine_version; "" = no source gives it (the newest's defaults)
	async               bool      // runtime.async_scheduling = true (the command line's); false = the version's default
	comments            []string
	// disagg, when set, replaces [parallel] by [disagg].
	disagg *disaggText
}

// disaggText is a generated scenario's [disagg]: the transfer fabric and
// each pool's workers and layout.
type disaggText struct {
	transfer        string
	prefill, decode poolText
}

type poolText struct {
	workers, tp, dp, ep int
	a2a                 string  // moe_a2a_backend; "" = the engine's default
	maxSeqs             int     // the pool's max_num_seqs; 0 = the scenario's
	recv                int     // the pool's scheduler_recv_interval (SGLang); 0 = the scenario's
	maxTotal            int     // the pool's max_total_tokens (SGLang); 0 = not set
	memFraction         float64 // the pool's gpu_memory_utilization; 0 = the scenario's
	chunk               int     // the pool's max_num_batched_tokens; 0 = the scenario's
	maxPrefill          int     // the pool's max_prefill_tokens (SGLang); 0 = the engine's
}

func (p poolText) gpus() int { return p.workers * p.tp * p.dp }

func (p poolText) String() string {
	s := fmt.Sprintf("workers = %d\ntp = %d\ndp = %d\nep = %d\ndp_attention = %t\n", p.workers, p.tp, p.dp, p.ep, p.dp > 1)
	if p.a2a != "" {
		s += fmt.Sprintf("moe_a2a_backend = %q\n", p.a2a)
	}
	if p.maxSeqs > 0 {
		s += fmt.Sprintf("max_num_seqs = %d\n", p.maxSeqs)
	}
	if p.recv > 0 {
		s += fmt.Sprintf("scheduler_recv_interval = %d\n", p.recv)
	}
	if p.maxTotal > 0 {
		s += fmt.Sprintf("max_total_tokens = %d\n", p.maxTotal)
	}
	if p.memFraction > 0 {
		s += "gpu_memory_utilization = " + strconv.FormatFloat(p.memFraction, 'f', -1, 64) + "\n"
	}
	if p.chunk > 0 {
		s += fmt.Sprintf("max_num_batched_tokens = %d\n", p.chunk)
	}
	if p.maxPrefill > 0 {
		s += fmt.Sprintf("max_prefill_tokens = %d\n", p.maxPrefill)
	}
	return s
}

// systemNodeGPUs is each aiconfigurator system's num_gpus_per_node
// (systems/<system>.yaml @ 095f58a: a GB200/GB300 compute tray holds 4,
// an HGX board 8).
var systemNodeGPUs = map[string]int{"gb200": 4, "gb300": 4, "b200-sxm": 8, "b300-sxm": 8, "h100-sxm": 8, "h200-sxm": 8}

// wideEPBackend is the moe_a2a_backend of an SGLang pool with DP attention
// whose experts span more GPUs than one node of its system: aiconfigurator
// models such a pool as SGLang "wide EP" (its SGLang wideEP op tables:
// DeepEP normal and low-latency dispatch, wideep_context/generation_moe;
// aiconfigurator auto-enables wide EP when a node cannot hold the MoE
// model twice), i.e. --moe-a2a-backend deepep with --deepep-mode auto.
// Other pools keep the engine's default (every rank sees the DP group's
// tokens).
func wideEPBackend(backend, system string, dp, ep int) string {
	if backend != "sglang" || dp <= 1 || ep <= systemNodeGPUs[system] || systemNodeGPUs[system] == 0 {
		return ""
	}
	return "deepep"
}

// transferFabric is the NVLink preset of each aiconfigurator system (its
// GPU preset's Fabric in kernels, TestTransferFabric): aiconfigurator's
// disaggregated runs are single-system, so the KV cache crosses the box's
// (or the NVL72 rack's) NVLink. Every system of systemNodeGPUs has one:
// without it a disaggregated row is skipped as "no NVLink preset known"
// (H200 was missing: aiconfigurator systems/h200_sxm.yaml @ 095f58a is
// an 8-GPU HGX board, NVLink 4 as H100's).
var transferFabric = map[string]string{"b200-sxm": "nvlink5", "b300-sxm": "nvlink5", "gb200": "nvlink5-nvl72", "gb300": "nvlink5-nvl72",
	"h100-sxm": "nvlink4", "h200-sxm": "nvlink4"}

func (s scenarioText) String() string {
	var b strings.Builder
	b.WriteString("# Generated by validate/corpus/gen (go generate ./validate/corpus); do not edit.\n")
	for _, c := range s.comments {
		b.WriteString("# " + c + "\n")
	}
	fmt.Fprintf(&b, "name = %q\n\n[model]\nconfig = %q\n", s.name, s.config)
	if s.kvCache != "" {
		fmt.Fprintf(&b, "kv_cache = %q\n", s.kvCache)
	}
	b.WriteString("\n[hardware]\n")
	if s.gpu != "" {
		fmt.Fprintf(&b, "gpu = %q\n", s.gpu)
	}
	fmt.Fprintf(&b, "gpus = %d\ncalibration = \"embedded\"\n\n", s.gpus)
	if s.customGPU != "" {
		b.WriteString("[hardware.custom_gpu]\n" + s.customGPU + "\n")
	}
	if d := s.disagg; d != nil {
		fmt.Fprintf(&b, "[disagg]\ntransfer = %q\n\n[disagg.prefill]\n%s\n[disagg.decode]\n%s\n[runtime]\nengine = %q\n", d.transfer, d.prefill, d.decode, s.engine)
	} else {
		fmt.Fprintf(&b, "[parallel]\ntp = %d\ndp = %d\nep = %d\ndp_attention = %t\n\n[runtime]\nengine = %q\n", s.tp, s.dp, s.ep, s.dpAttention, s.engine)
	}
	if s.engineVersion != "" {
		fmt.Fprintf(&b, "engine_version = %q\n", s.engineVersion)
	}
	if s.async {
		b.WriteString("async_scheduling = true\n")
	}
	if s.gmu > 0 {
		fmt.Fprintf(&b, "gpu_memory_utilization = %s\n", strconv.FormatFloat(s.gmu, 'f', -1, 64))
	}
	if s.maxSeqs > 0 {
		fmt.Fprintf(&b, "max_num_seqs = %d\n", s.maxSeqs)
	}
	if s.maxBatched > 0 {
		fmt.Fprintf(&b, "max_num_batched_tokens = %d\n", s.maxBatched)
	}
	if s.recv > 0 {
		fmt.Fprintf(&b, "scheduler_recv_interval = %d\n", s.recv)
	}
	if s.cudagraphMode != "" {
		fmt.Fprintf(&b, "cudagraph_mode = %q\n", s.cudagraphMode)
	}
	if s.maxCapture > 0 {
		fmt.Fprintf(&b, "max_cudagraph_capture_size = %d\n", s.maxCapture)
	}
	if s.numGPUBlocks > 0 {
		fmt.Fprintf(&b, "num_gpu_blocks = %d\n", s.numGPUBlocks)
	}
	if s.graphMax > 0 {
		fmt.Fprintf(&b, "cuda_graph_max_bs = %d\n", s.graphMax)
	}
	if s.mxfp4Act != "" {
		fmt.Fprintf(&b, "mxfp4_activation = %q\n", s.mxfp4Act)
	}
	if s.mxfp4Backend != "" {
		fmt.Fprintf(&b, "mxfp4_moe_backend = %q\n", s.mxfp4Backend)
	}
	if s.nsaPrefill != "" {
		fmt.Fprintf(&b, "nsa_prefill_backend = %q\n", s.nsaPrefill)
	}
	if s.spec != "" {
		// The acceptance is not in the result files: without one
		// moecast documents for the draft it is left out, so the
		// scenario says what it lacks when it loads.
		fmt.Fprintf(&b, "\n[speculative]\nmethod = %q\ndraft_tokens = %d\n", s.spec, s.draftTokens)
		if len(s.acceptance) > 0 {
			a := make([]string, len(s.acceptance))
			for i, v := range s.acceptance {
				a[i] = strconv.FormatFloat(v, 'f', -1, 64)
			}
			fmt.Fprintf(&b, "acceptance = [%s]\n", strings.Join(a, ", "))
		}
	}
	return b.String()
}

// aiconfigurator splits silicon_sample_dev.csv by deployment: one CSV of
// rows (the header and the rows verbatim) and one scenario per
// deployment.
func (g *gen) aiconfigurator() error {
	src := filepath.Join(g.serving, "aiconfigurator", "silicon_sample_dev.csv")
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	cr := csv.NewReader(bytes.NewReader(data))
	header, err := cr.Read()
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	type group struct {
		key  string
		rows [][]string
	}
	groups := map[string]*group{}
	var order []string
	layoutCols := []string{"system", "backend", "model_path", "precision", "gemm_quant_mode", "moe_quant_mode", "mode",
		"tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
		"prefill_num_workers", "prefill_tp_size", "prefill_attention_dp_size", "prefill_moe_ep_size",
		"decode_num_workers", "decode_tp_size", "decode_attention_dp_size", "decode_moe_ep_size"}
	var recs [][]string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	getter := func(rec []string) func(string) string { return func(c string) string { return rec[col[c]] } }
	dump := dumpRuns{}
	for _, rec := range recs {
		dump.add(getter(rec))
	}
	keys := make([]string, len(recs))
	spec := make([]bool, len(recs))
	for i, rec := range recs {
		var k []string
		for _, c := range layoutCols {
			k = append(k, rec[col[c]])
		}
		// Rows of one layout run with different command lines (an
		// InferenceX script changed with the image) are different
		// deployments.
		rtp, _ := strconv.Atoi(rec[col["tp_size"]])
		bs, _ := strconv.Atoi(rec[col["batch_size"]])
		rdp, _ := strconv.Atoi(rec[col["attention_dp_size"]])
		rc := bs * max(rdp, 1)
		if l, ok := launchOfRun(rec[col["backend"]], rec[col["model_path"]], rec[col["precision"]], rec[col["system"]], rtp, rc, rec[col["silicon_data_source"]],
			dump.dumpRun(getter(rec))); ok {
			k = append(k, l.name)
			spec[i] = l.spec != ""
			// The script's DP-attention command line is a deployment of
			// its own (its rows record the TP-EP run's columns).
			if l.dpAttnRun(rec[col["silicon_data_source"]]) {
				k = append(k, "dpattn")
			}
			// A script that sets a flag by concurrency runs several
			// command lines.
			if v := l.variant(rc); v != "" {
				k = append(k, v)
			}
		}
		// A config whose rows of each input length ran a recipe of
		// their own is one deployment per recipe.
		if r, ok := recipeOf(rec[col["model_path"]], rec[col["system"]], atoiOr(rec[col["isl"]]), rec[col["silicon_data_source"]]); ok && r.isl != 0 {
			k = append(k, fmt.Sprintf("isl%d", r.isl))
		}
		// The engine version is part of the setup: rows of one layout
		// that ran different versions are different deployments (the
		// version is the key's last field; versionsOf reads it).
		k = append(k, versionKey+rowVersion(getter(rec)).version)
		keys[i] = strings.Join(k, "|")
	}
	// A row with the figures of a speculative deployment's row is that
	// deployment's measurement (specCopies): it joins that deployment,
	// after the deployment's own rows (the first row names the command
	// line).
	copies := specCopies(recs, getter, spec)
	moved := map[string][]string{}
	for pass := 0; pass < 2; pass++ {
		for i, rec := range recs {
			j, isCopy := copies[i]
			if isCopy != (pass == 1) {
				continue
			}
			key := keys[i]
			if isCopy {
				key = keys[j]
				moved[key] = append(moved[key], rec[col["id"]]+" (= "+recs[j][col["id"]]+")")
			}
			if groups[key] == nil {
				groups[key] = &group{key: key}
				order = append(order, key)
			}
			groups[key].rows = append(groups[key].rows, rec)
		}
	}
	sort.Strings(order)
	versions := versionsOf(order) // of the deployments, copies joined
	slugs := map[string]int{}
	for _, key := range order {
		gr := groups[key]
		r0 := gr.rows[0]
		get := func(c string) string { return r0[col[c]] }
		atoi := func(c string) int { n, _ := strconv.Atoi(get(c)); return n }
		model := get("model_path")
		short := model[strings.LastIndex(model, "/")+1:]
		ckpt := get("precision")
		if q := get("moe_quant_mode"); q != "" {
			ckpt = q
		} else if q := get("gemm_quant_mode"); q != "" {
			ckpt = q
		}
		tp, pp, dp, ep := atoi("tp_size"), atoi("pp_size"), atoi("attention_dp_size"), atoi("moe_ep_size")
		layout := fmt.Sprintf("tp%d-dp%d-ep%d", tp, dp, ep)
		mode := get("mode")
		rcp, hasRecipe := recipeOf(model, get("system"), atoi("isl"), get("silicon_data_source"))
		hasRecipe = hasRecipe && mode == "disagg"
		// The README's conversion slip: tp_size written as tp x ep, the
		// row's id naming the layout it ran (..._tp8_ep8_...).
		slipTP := 0
		if m := idLayoutRE.FindStringSubmatch(get("id")); m != nil {
			n, _ := strconv.Atoi(m[1])
			e, _ := strconv.Atoi(m[2])
			if e > 1 && ep == e && tp == n*e {
				slipTP = n
			}
		} else if mtp := atoi("moe_tp_size"); mode == "agg" && get("system") != "gb200" && get("system") != "gb300" &&
			tp > 8 && mtp > 1 && ep > 1 && tp == mtp*ep {
			// No layout in the id: the same slip when tp_size (beyond
			// one 8-GPU box) = moe_tp_size x moe_ep_size, both above 1
			// (moe_tp_size holds the tp, as in the rows whose ids say).
			slipTP = mtp
		}
		// A second slip, vLLM's: a TP-EP run (vllm serve
		// --tensor-parallel-size N --enable-expert-parallel: N GPUs,
		// experts over N ranks, no DP) recorded as attention_dp_size N
		// and moe_ep_size N x N. Every aiconfigurator vLLM agg row with
		// attention_dp_size > 1 has this shape (97 rows; no other DP
		// layout appears); 40 of them carry ids naming tpN_epN
		// (..._c16_tp4_ep4_1317) and 25 more repeat exactly the figures
		// of such rows, or of rows recorded as tpN dp1 epN (the Kimi-K2.5
		// gap-analysis rows), and the rest share the same dump's config
		// ids' shape. A real TP-N x DP-N deployment on N x N GPUs could not
		// match the N-GPU TP-EP run's TPOT at every concurrency, as these
		// rows do (within the noise floor).
		dpSlip := vllmDPSlip(get("backend"), mode, tp, dp, atoi("moe_tp_size"), ep)
		if pp > 1 {
			layout += fmt.Sprintf("-pp%d", pp)
		}
		if mode == "disagg" {
			layout = fmt.Sprintf("disagg-p%sx-tp%s-dp%s-ep%s-d%sx-tp%s-dp%s-ep%s", get("prefill_num_workers"), get("prefill_tp_size"),
				get("prefill_attention_dp_size"), get("prefill_moe_ep_size"), get("decode_num_workers"), get("decode_tp_size"),
				get("decode_attention_dp_size"), get("decode_moe_ep_size"))
		}
		base := slug(get("system"), get("backend"), short, ckpt, layout)
		l, hasLaunch := launchOfRun(get("backend"), model, get("precision"), get("system"), tp, atoi("batch_size")*max(dp, 1), get("silicon_data_source"),
			dump.dumpRun(get))
		if hasLaunch && l.spec != "" {
			base = slug(base, l.spec) // the speculative config's run
		}
		dpAttnRun := hasLaunch && mode == "agg" && l.dpAttnRun(get("silicon_data_source"))
		if dpAttnRun {
			base = slug(base, "dpattn") // the script's DP_ATTENTION=true command line
		}
		if v := l.variant(atoi("batch_size") * max(dp, 1)); hasLaunch && v != "" && !l.clientCapped(atoi("batch_size")*max(dp, 1)) {
			// (A capped deployment keeps the layout's name: it is skipped,
			// and its rows are the only ones of their dates.)
			// The script's command lines, by concurrency.
			base = slug(base, v)
		}
		if hasRecipe && rcp.isl != 0 {
			base = slug(base, fmt.Sprintf("isl%d", rcp.isl)) // the config's recipe for this input length
		}
		ver := rowVersion(get)
		if versions[layoutOfKey(key)] > 1 {
			// One layout's rows ran several engine versions: each
			// version's rows are an entry, named by it.
			slugs[base]++ // the layout's name stays taken: another deployment of it keeps its own name
			base = slug(base, versionSlug(ver.version))
		}
		if v := get("backend_version"); slugs[base] > 0 {
			base = slug(base, v) // the same deployment on another engine version
		}
		for n := 2; slugs[base] > 0; n++ {
			base = slug(strings.TrimSuffix(base, fmt.Sprintf("-%d", n-1)), strconv.Itoa(n))
		}
		slugs[base]++
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		_ = w.Write(header)
		for _, r := range gr.rows {
			_ = w.Write(r)
		}
		w.Flush()
		results := "aiconfigurator/" + base + ".csv"
		if err := g.write(results, buf.Bytes()); err != nil {
			return err
		}
		e := entry{Name: "aiconfigurator/" + base, Source: "aiconfigurator", Results: []string{results}, Format: "aiconfigurator",
			GPU: get("system"), Model: short, Engine: get("backend"), Checkpoint: ckpt}
		cfg, err := g.modelConfig(model, get("precision"))
		if err != nil {
			return err
		}
		pool := func(p string) poolText {
			n, _ := strconv.Atoi(get(p + "_num_workers"))
			t, _ := strconv.Atoi(get(p + "_tp_size"))
			d, _ := strconv.Atoi(get(p + "_attention_dp_size"))
			x, _ := strconv.Atoi(get(p + "_moe_ep_size"))
			return poolText{workers: max(n, 1), tp: t, dp: max(d, 1), ep: max(x, 1),
				a2a: wideEPBackend(get("backend"), gpuName(get("system")), d, x)}
		}
		pre, dec := pool("prefill"), pool("decode")
		switch {
		case hasRecipe && !rcp.kvOnly:
			pre, dec = rcp.prefill.pool(pre.workers), rcp.decode.pool(dec.workers)
		case hasRecipe:
			pre, dec = rcp.prefill.settings(pre), rcp.decode.settings(dec)
		}
		switch {
		case mode == "disagg" && (get("prefill_pp_size") != "" && get("prefill_pp_size") != "1" || get("decode_pp_size") != "" && get("decode_pp_size") != "1"):
			e.Skip = "pipeline parallelism in a disaggregated pool: moecast's pools have no pp"
		case mode == "disagg" && (get("prefill_num_workers") == "" || get("decode_num_workers") == ""):
			// aiconfigurator's own harness refuses these rows: its
			// estimator needs both pools' worker counts and batch sizes
			// (tools/accuracy_regression_testing/predict_silicon_sample.py
			// and tools/accuracy_tracking/make_silicon_refs.py @ 095f58a,
			// REQUIRED_DISAGG_FIELDS: "cli_estimate cannot run disagg
			// without these (older dumps lack them)"). The pool sizes are
			// not recoverable: InferenceX's configs run one pool layout at
			// one concurrency with several worker counts and with DP
			// attention, which these rows do not record either.
			e.Skip = "worker counts not recorded: prefill_num_workers or decode_num_workers is empty (an older dump; aiconfigurator's own " +
				"harness requires them, REQUIRED_DISAGG_FIELDS), so the pools' sizes are unknown"
		case mode == "disagg" && cfg == "":
			e.Skip = "no model config for " + model + " among the shared model configs"
		case mode == "disagg" && (pre.tp <= 0 || dec.tp <= 0):
			e.Skip = "no pool layout (prefill_tp_size, decode_tp_size) in the row"
		case mode == "disagg" && transferFabric[gpuName(get("system"))] == "":
			e.Skip = "no NVLink preset known for system " + get("system")
		case mode == "disagg" && g.headsOf(cfg) > 0 && (g.headsOf(cfg)%pre.tp != 0 || g.headsOf(cfg)%dec.tp != 0):
			e.Skip = fmt.Sprintf("recorded pool layout cannot have run: prefill tp %d or decode tp %d does not split the model's %d attention heads "+
				"(engines refuse it); the layout it ran is not recorded", pre.tp, dec.tp, g.headsOf(cfg))
		case mode == "disagg":
			sys := gpuName(get("system"))
			st := scenarioText{
				name:   fmt.Sprintf("%s %s on %dx %s, %s %s (aiconfigurator silicon_sample)", short, ckpt, pre.gpus()+dec.gpus(), get("system"), get("backend"), layout),
				config: "../configs/" + cfg, gpu: sys, gpus: pre.gpus() + dec.gpus(), engine: get("backend"),
				disagg: &disaggText{transfer: transferFabric[sys], prefill: pre, decode: dec}, engineVersion: ver.version,
				comments: []string{fmt.Sprintf("Rows: %s (%d rows of ai-dynamo/aiconfigurator @ 095f58a silicon_sample.csv, Apache-2.0).", results, len(gr.rows)),
					"Engine settings the CSV does not record take moecast's defaults for the engine and GPU.",
					"Transfer: the system's NVLink preset (aiconfigurator's disaggregated runs are single-system).",
					"Each pool's experts: moe_ep_size ranks (moe_tp_size, the experts' tensor split, is not modelled)."},
			}
			if !hasRecipe && aicGeneratorKV(len(gr.rows), func(i int, c string) string { return gr.rows[i][col[c]] }) {
				st.kvCache = "fp8"
				st.comments = append(st.comments, aicGeneratorKVNote)
			}
			if hasRecipe && rcp.kvOnly {
				st.kvCache = rcp.kvCache
				what := "KV-cache dtype"
				if rcp.prefill != (recipePool{}) || rcp.decode != (recipePool{}) {
					what = "KV-cache dtype and pools' engine settings"
				}
				st.comments[1] = what + ": the deployment's launch recipes, whose pool layouts are the recorded ones: " + rcp.source +
					"; engine settings they do not set take moecast's defaults for the engine and GPU."
			}
			if hasRecipe && !rcp.kvOnly {
				st.kvCache = rcp.kvCache
				st.name = fmt.Sprintf("%s %s on %dx %s, %s disagg-p%dx-tp%d-dp%d-ep%d-d%dx-tp%d-dp%d-ep%d (aiconfigurator silicon_sample)", short, ckpt,
					pre.gpus()+dec.gpus(), get("system"), get("backend"), pre.workers, pre.tp, pre.dp, pre.ep, dec.workers, dec.tp, dec.dp, dec.ep)
				st.comments[1] = "Pools' layouts, expert exchange and KV-cache dtype: the deployment's launch recipe, not the dump's layout columns " +
					"(recorded: " + layout + "): " + rcp.source + "; engine settings it does not set take moecast's defaults for the engine and GPU."
				st.comments = st.comments[:len(st.comments)-1]
			} else if pre.a2a != "" || dec.a2a != "" {
				st.comments = append(st.comments, "An SGLang pool with DP attention whose experts span more than one node of the system (4 GPUs on GB200/GB300, 8 on HGX) runs wide EP: moe_a2a_backend = \"deepep\" (aiconfigurator's SGLang wideEP model).")
			}
			if hasRecipe {
				if f := rcp.prefill.flags(get("backend")); f != "" {
					st.comments = append(st.comments, "Prefill pool's engine settings (the recipe's): "+f+".")
				}
				if f := rcp.decode.flags(get("backend")); f != "" {
					st.comments = append(st.comments, "Decode pool's engine settings (the recipe's): "+f+".")
				}
			}
			st.comments = append(st.comments, versionNote(ver))
			e.Scenario = "aiconfigurator/" + base + ".toml"
			if err := g.write(e.Scenario, []byte(st.String())); err != nil {
				return err
			}
		case pp > 1:
			e.Skip = "pipeline parallelism: moecast has no [parallel] pp"
		case cfg == "":
			e.Skip = "no model config for " + model + " among the shared model configs"
		case tp <= 0 || max(dp, 1)*tp <= 0:
			e.Skip = "no layout (tp_size) in the row"
		case hasLaunch && l.clientCapped(atoi("batch_size")*max(dp, 1)):
			// The row records the client's cap, not the run's $CONC
			// (launch.clientConc): the server's limit and the number of
			// requests are unknown.
			e.Skip = "concurrency not recorded: " + l.clientWhy
		case slipTP == 0 && get("backend") != "trtllm" && g.headsOf(cfg) > 0 && g.headsOf(cfg)%tp != 0:
			e.Skip = fmt.Sprintf("recorded layout cannot have run: tp_size %d splits neither the model's %d attention heads nor its experts evenly "+
				"(engines refuse it) and the row's id names the same layout; the layout it ran is not recorded (likely the engine's --tp world size "+
				"with DP attention and expert parallelism over the NVL72 domain)", tp, g.headsOf(cfg))
		default:
			st := scenarioText{
				name:   fmt.Sprintf("%s %s on %dx %s, %s %s (aiconfigurator silicon_sample)", short, ckpt, tp*max(dp, 1), get("system"), get("backend"), layout),
				config: "../configs/" + cfg, gpu: gpuName(get("system")), gpus: tp * max(dp, 1),
				tp: tp, dp: max(dp, 1), ep: max(ep, 1), dpAttention: dp > 1 && dpAttentionEngine(get("backend")), engine: get("backend"), engineVersion: ver.version,
				comments: []string{fmt.Sprintf("Rows: %s (%d rows of ai-dynamo/aiconfigurator @ 095f58a silicon_sample.csv, Apache-2.0).", results, len(gr.rows)),
					"Engine settings the CSV does not record take moecast's defaults for the engine and GPU."},
			}
			if !hasLaunch && aicGeneratorKV(len(gr.rows), func(i int, c string) string { return gr.rows[i][col[c]] }) {
				st.kvCache = "fp8"
				st.comments = append(st.comments, aicGeneratorKVNote)
			}
			if hasLaunch {
				st.kvCache, st.gmu, st.maxSeqs, st.cudagraphMode = l.kvCache, l.gmu, l.maxSeqs, l.cudagraphMode
				st.spec, st.draftTokens = l.spec, l.draftTokens
				if l.acceptance > 0 {
					st.acceptance = []float64{l.acceptance}
				}
				st.maxCapture = l.maxCapture
				st.mxfp4Act = l.mxfp4Act
				st.mxfp4Backend = l.mxfp4Backend
				st.nsaPrefill = l.nsaPrefill
				st.async = l.async
				if l.maxBatched > 0 {
					st.maxBatched = l.maxBatched
				}
				st.recv = l.recvAt(atoi("batch_size") * max(dp, 1))
				st.graphMax = l.graphMaxAt(atoi("batch_size") * max(dp, 1))
				st.comments[1] = "Server command line: " + l.source + "; engine settings it does not set take moecast's defaults for the engine and GPU."
				switch {
				case l.spec != "" && l.acceptance > 0:
					st.comments = append(st.comments, fmt.Sprintf("Speculative acceptance %g at each of the %d draft positions: the figure moecast documents for DeepSeek-V3's MTP layer "+
						"(the DeepSeek-V3 technical report, arXiv 2412.19437 §5.4.3, on natural text); the acceptance on the rows' random-token prompts is not published, "+
						"and this one is not fitted to them.", l.acceptance, l.draftTokens))
				case l.spec != "":
					st.comments = append(st.comments, "Speculative acceptance: not published for this model's MTP layer, nor in the rows; left out, so the scenario is not scored.")
				}
			}
			if m := moved[key]; len(m) > 0 {
				st.comments = append(st.comments, fmt.Sprintf("%d rows of other collections repeat this deployment's figures (TTFT and TPOT within 0.01 ms, same GPU, model, engine, "+
					"precision, layout, lengths and concurrency) with no speculative decoding recorded: the same measurement, so they are this deployment's rows, "+
					"not a plain run's (gen: specCopies); validate's duplicate rule scores each measurement once: %s.", len(m), strings.Join(m, ", ")))
			}
			if dpSlip > 0 && !dpAttnRun {
				st.tp, st.dp, st.ep, st.gpus, st.dpAttention = dpSlip, 1, dpSlip, dpSlip, false
				st.name = fmt.Sprintf("%s %s on %dx %s, %s tp%d-dp1-ep%d (aiconfigurator silicon_sample)", short, ckpt, st.gpus, get("system"), get("backend"), dpSlip, dpSlip)
				st.comments = append(st.comments, fmt.Sprintf("attention_dp_size %d, moe_ep_size %d = tp x dp: vLLM's TP-EP run recorded as DP (the rows whose ids name the layout say tp%d_ep%d); the layout used here is tp%d ep%d.", dp, ep, dpSlip, dpSlip, dpSlip, dpSlip))
			}
			if slipTP > 0 {
				st.tp, st.gpus = slipTP, slipTP*max(dp, 1)
				st.name = fmt.Sprintf("%s %s on %dx %s, %s tp%d-dp%d-ep%d (aiconfigurator silicon_sample)", short, ckpt, st.gpus, get("system"), get("backend"), slipTP, max(dp, 1), ep)
				st.comments = append(st.comments, fmt.Sprintf("tp_size %d = tp %d x ep %d: the serving README's conversion slip; the layout used here is tp%d ep%d.", tp, slipTP, ep, slipTP, ep))
			}
			// The script's DP_ATTENTION=true command line: vLLM DP tp x TP 1,
			// experts over the DP ranks (FusedMoEParallelConfig.make: EP =
			// TP x DP with --enable-expert-parallel); moecast's vLLM DP
			// (dpAttentionEngine) has no attention DP of SGLang's kind.
			if dpAttnRun {
				st.tp, st.dp, st.ep, st.gpus, st.dpAttention = 1, tp, tp, tp, false
				st.name = fmt.Sprintf("%s %s on %dx %s, %s tp1-dp%d-ep%d (aiconfigurator silicon_sample)", short, ckpt, st.gpus, get("system"), get("backend"), tp, tp)
				st.comments = append(st.comments, fmt.Sprintf("Recorded layout %s (tp_size %d, attention_dp_size %d, moe_ep_size %d); [parallel] is the command line's "+
					"DP_ATTENTION=true run, vLLM --tensor-parallel-size=1 --data-parallel-size=%d --enable-expert-parallel, not the record's (gen: launch layout): %s.",
					layout, tp, dp, ep, tp, l.dpAttnWhy))
			}
			// The expert parallelism the script ran, where it proves the
			// record wrong (launch.ep): the record stays in the comment.
			if run := l.epAt(st.tp, st.ep); hasLaunch && run != st.ep {
				st.comments = append(st.comments, fmt.Sprintf("Recorded layout %s (tp_size %d, attention_dp_size %d, moe_ep_size %d); "+
					"[parallel] ep = %d is the command line's, not the record's (gen: launch layout): %s.", layout, tp, dp, ep, run, l.epWhy))
				st.ep = run
				st.name = fmt.Sprintf("%s %s on %dx %s, %s tp%d-dp%d-ep%d (aiconfigurator silicon_sample)", short, ckpt, st.gpus, get("system"), get("backend"), st.tp, st.dp, st.ep)
			}
			st.comments = append(st.comments, versionNote(ver))
			e.Scenario = "aiconfigurator/" + base + ".toml"
			if err := g.write(e.Scenario, []byte(st.String())); err != nil {
				return err
			}
		}
		g.entries = append(g.entries, e)
	}
	return nil
}

// The GLM-5 token-position runs' vLLM: serve_glm5_sbatch.sh (InferenceX @
// 843c625) ran the image vllm/vllm-openai:nightly, and every result file
// is dated 2026-02-13 ("date": "20260213-..."); vLLM v0.16.0 was released
// on 2026-02-26 (ai-dynamo/dynamo PR #6614, "Bump vLLM from 0.15.1 to
// 0.16.0", GitHub release only), so that nightly is main on its way to
// v0.16.0. The version-dependent defaults it fixes: async scheduling on
// (from v0.14.0), no full-ISL admission and the speculative host bubble
// (both before v0.19.0).
const (
	glm5NightlyVersion    = "0.16.0.dev"
	inferenceXNightlyNote = "vLLM: the image vllm/vllm-openai:nightly of the runs' dates (result files dated 2026-02-13 to 2026-02-16), main before v0.16.0 (released 2026-02-26, ai-dynamo/dynamo PR #6614), so engine_version 0.16.0.dev, as GLM-5's runs of the same sweep."
	glm5NightlyNote       = "vLLM: the image vllm/vllm-openai:nightly of the runs' date (result files dated 2026-02-13), main before v0.16.0 (released 2026-02-26, ai-dynamo/dynamo PR #6614), so engine_version 0.16.0.dev."
)

// inferenceX copies the token-position result files verbatim, one entry
// per model and layout (the layout is in the file name: tp8, tep8 = TP8
// with expert parallelism, dep8 = attention DP8 with EP8).
//
// The client (SemiAnalysisAI/InferenceX @ 843c625,
// experimental/token_position_decode_slo/<model>/): bmk_*_sbatch.sh runs
// benchmark_serving_random.py with --random-input-len L
// --random-output-len 128 --num-warmups 2C --num-prompts 10C
// --max-concurrency C --request-rate inf --ignore-eos, never --profile
// (bmk_minimax_sbatch.sh:55-56,73-83; only profile_serving.sh passes it,
// writing results/profile_*.json, none of which is here). The client
// posts text prompts to /v1/completions (benchmark_serving_random.py:507),
// so no chat template and no reasoning or tool parser applies (vLLM's
// serving_completion.py has none); fixed lengths, no range ratio
// (:144-146), no prefix (--random-prefix-len 0), distinct prompts of
// consecutive token ids from a random offset (:147-156); the warm-ups
// repeat the first prompt (:311, :329-339); TTFT is the first streamed
// chunk with choices (:84-88), TPOT (latency - TTFT) / (output - 1),
// medians (:237-288). The servers' torch profiler (MiniMax
// --profiler-config, GLM-5 VLLM_TORCH_PROFILER_DIR, Qwen3.5 none) runs
// only between /start_profile and /stop_profile (vLLM
// vllm/profiler/wrapper.py, WorkerProfiler.start), which the sweep never
// calls: the runs were not profiled. What they show instead is the
// capacity rule's finding (beyondCapacity).
func (g *gen) inferenceX() error {
	base := filepath.Join(g.serving, "inferencex_token_position")
	// spec and draft are the server's --speculative-config method and
	// num_speculative_tokens (serve_glm5_sbatch.sh: mtp, 1), acceptance
	// its draft's documented acceptance and acceptanceNote where that
	// figure is from (0, "": none documented).
	// version is the vLLM the server image ran where the result files
	// date it and versionNote says how ("": the newest).
	models := []struct {
		dir, id, short, ckpt string
		spec                 string
		draft                int
		acceptance           float64
		acceptanceNote       string
		version, versionNote string
	}{
		{"glm-5", "zai-org/GLM-5-FP8", "GLM-5", "fp8", "mtp", 1, mtpAcceptanceGLM5, mtpAcceptanceGLM5Note, glm5NightlyVersion, glm5NightlyNote},
		{"minimax-m2.5", "MiniMaxAI/MiniMax-M2.5", "MiniMax-M2.5", "fp8", "", 0, 0, "", glm5NightlyVersion, inferenceXNightlyNote},
		{"qwen3.5", "Qwen/Qwen3.5-397B-A17B", "Qwen3.5-397B-A17B", "bf16", "", 0, 0, "", glm5NightlyVersion, inferenceXNightlyNote},
	}
	layoutRE := regexp.MustCompile(`_vllm_(tp8|tep8|dep8)_`)
	for _, m := range models {
		ents, err := os.ReadDir(filepath.Join(base, m.dir, "results"))
		if err != nil {
			return err
		}
		byLayout := map[string][]string{}
		runs := map[string][]closedLoopRun{}
		for _, e := range ents {
			sub := layoutRE.FindStringSubmatch(e.Name())
			if sub == nil {
				return fmt.Errorf("%s: no layout (tp8, tep8, dep8) in the file name", e.Name())
			}
			rel := "inferencex/" + m.dir + "/" + e.Name()
			src := filepath.Join(base, m.dir, "results", e.Name())
			if err := g.copyFile(src, rel); err != nil {
				return err
			}
			byLayout[sub[1]] = append(byLayout[sub[1]], rel)
			run, err := readClosedLoopRun(src)
			if err != nil {
				return err
			}
			runs[sub[1]] = append(runs[sub[1]], run)
		}
		cfg, err := g.modelConfig(m.id, m.ckpt)
		if err != nil {
			return err
		}
		var layouts []string
		for l := range byLayout {
			layouts = append(layouts, l)
		}
		sort.Strings(layouts)
		for _, l := range layouts {
			files := byLayout[l]
			sort.Strings(files)
			e := entry{Name: "inferencex/" + m.dir + "/" + l, Source: "inferencex", Results: files, Format: "inferencex",
				GPU: "h200_sxm", Model: m.short, Engine: "vllm", Checkpoint: m.ckpt}
			st := scenarioText{name: fmt.Sprintf("%s on 8x H200, vLLM %s (InferenceX token-position runs)", m.short, l),
				config: "../configs/" + cfg, gpu: "h200-sxm", gpus: 8, tp: 8, dp: 1, ep: 1, engine: "vllm",
				spec: m.spec, draftTokens: m.draft,
				comments: []string{"Server arguments: SemiAnalysisAI/InferenceX @ 843c625 experimental/token_position_decode_slo/" + m.dir + "/serve_*_sbatch.sh (Apache-2.0)."}}
			if m.acceptance > 0 {
				st.acceptance = []float64{m.acceptance}
				st.comments = append(st.comments, m.acceptanceNote)
			}
			if m.version != "" {
				st.engineVersion = m.version
				st.comments = append(st.comments, m.versionNote)
			}
			switch l {
			case "tep8":
				st.ep = 8
			case "dep8":
				st.tp, st.dp, st.ep, st.dpAttention = 1, 8, 8, true
			}
			ranks := 1
			if st.dpAttention {
				ranks = st.dp
			}
			e.Exclude = beyondCapacity(runs[l], ranks)
			if cfg == "" {
				e.Skip = "no model config for " + m.id + " among the shared model configs"
			} else {
				e.Scenario = "inferencex/" + m.dir + "-" + l + ".toml"
				if err := g.write(e.Scenario, []byte(st.String())); err != nil {
					return err
				}
			}
			g.entries = append(g.entries, e)
		}
		sameClient(g.entries[len(g.entries)-len(layouts):])
	}
	return nil
}

// sameClient extends the capacity rule over one model's deployments: they
// were measured by the same client sweep (bmk_*_sbatch.sh, the layout
// named by PARALLEL_TAG) on the same cluster, so where one fails the rule
// the delay outside the engine may be the client's or the network's, which
// the others share; a deployment that passes only with its looser bound
// (attention DP) cannot be cleared of it.
func sameClient(ents []entry) {
	failed := ""
	for _, e := range ents {
		if e.Exclude != "" {
			failed = e.Name
			break
		}
	}
	if failed == "" {
		return
	}
	for i := range ents {
		if ents[i].Exclude == "" {
			ents[i].Exclude = "measured by the same client sweep and cluster as " + failed + ", whose TTFT is beyond its server's own capacity " +
				"(see that entry): the delay outside the engine may be the client's or the network's, which this deployment shares"
		}
	}
}

// closedLoopRun is what the capacity rule reads of one token-position
// result file: a closed loop of conc requests of inputLen prompt tokens
// each, the input rate the server sustained over the run (total input
// tokens / duration, decode included) and the median TTFT.
type closedLoopRun struct {
	file      string
	conc      int
	inputLen  float64 // tokens per request
	inputRate float64 // tok/s
	ttft      float64 // median, s
}

// readClosedLoopRun reads the fields of the experiment's client's result
// JSON (benchmark_serving_random.py: max_concurrency, completed,
// total_input_tokens, duration, median_ttft in seconds).
func readClosedLoopRun(path string) (closedLoopRun, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return closedLoopRun{}, err
	}
	var f struct {
		Conc       int     `json:"max_concurrency"`
		Completed  int     `json:"completed"`
		Input      float64 `json:"total_input_tokens"`
		Duration   float64 `json:"duration"`
		MedianTTFT float64 `json:"median_ttft"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return closedLoopRun{}, fmt.Errorf("%s: %v", path, err)
	}
	if f.Conc <= 0 || f.Completed <= 0 || f.Input <= 0 || f.Duration <= 0 || f.MedianTTFT <= 0 {
		return closedLoopRun{}, fmt.Errorf("%s: want max_concurrency, completed, total_input_tokens, duration and median_ttft > 0", path)
	}
	return closedLoopRun{file: filepath.Base(path), conc: f.Conc, inputLen: f.Input / float64(f.Completed),
		inputRate: f.Input / f.Duration, ttft: f.MedianTTFT}, nil
}

// capacityMargin is the capacity rule's margin: a low-load run prefills
// its few prompts in smaller steps than the saturated run that measured
// the rate (4 prompts of 1k tokens fill half of one 8192-token step
// where the saturated runs filled every step's budget), so it may take
// longer per token; a median TTFT beyond twice the bound is not that.
const capacityMargin = 2.0

// beyondCapacity is the capacity rule of the InferenceX token-position
// entries: it returns why the deployment's rows do not represent the
// engine, or "" to score them. In a closed loop of C requests of L
// prompt tokens at most C prompts are in the server at once, so a
// request's first token waits for at most C x L tokens of prefill (its
// own included) and the decode steps between. The deployment's own runs
// bound how long that takes: a run's total input tokens over its
// duration is a prefill rate the engine sustained while also decoding,
// and a token's prefill costs no less at a longer context, so the
// highest rate of the runs at length L or longer, X, gives
// bound = C x L / X (with attention DP over d ranks a request prefills
// on one rank at X / d: bound = C x L x d / X). A run whose median TTFT
// exceeds capacityMargin x bound had its requests wait outside the
// engine (the client, the network or the API server), a delay of
// unknown size that the other runs of the server carry as well: the
// whole deployment is excluded, and the worst run is named.
func beyondCapacity(runs []closedLoopRun, dpRanks int) string {
	worst, ratio := -1, 0.0
	var worstBound, worstRate float64
	for i, r := range runs {
		x := 0.0
		for _, o := range runs {
			if o.inputLen >= r.inputLen {
				x = math.Max(x, o.inputRate)
			}
		}
		bound := float64(r.conc) * r.inputLen * float64(max(dpRanks, 1)) / x
		if q := r.ttft / bound; q > capacityMargin && q > ratio {
			worst, ratio, worstBound, worstRate = i, q, bound, x
		}
	}
	if worst < 0 {
		return ""
	}
	r := runs[worst]
	return fmt.Sprintf("TTFT beyond the server's own capacity (%s: median TTFT %.2f s at C=%d, %.0f input tokens, "+
		"%.1f x the %.2f s this deployment needs to prefill all C prompts at the input rate its own runs sustained at that length or longer, %.0f tok/s): "+
		"the requests waited outside the engine (client, network or API server), a delay of unknown size in every run of this server",
		r.file, r.ttft, r.conc, r.inputLen, ratio, worstBound, worstRate)
}

// llmServingSim copies each example's request log, engine arguments and
// LLMServingSim's own summary (its error on the same work).
func (g *gen) llmServingSim() error {
	base := filepath.Join(g.serving, "llmservingsim")
	ents, err := os.ReadDir(base)
	if err != nil {
		return err
	}
	if err := g.copyFile(filepath.Join(base, "LICENSE"), "llmservingsim/LICENSE"); err != nil {
		return err
	}
	for _, d := range ents {
		if !d.IsDir() {
			continue
		}
		dir := d.Name()
		var meta struct {
			Model  string `json:"model"`
			VLLM   string `json:"vllm_version"`
			Engine struct {
				TP         int    `json:"tensor_parallel_size"`
				DP         int    `json:"data_parallel_size"`
				EP         bool   `json:"enable_expert_parallel"`
				MaxSeqs    int    `json:"max_num_seqs"`
				MaxBatched int    `json:"max_num_batched_tokens"`
				DType      string `json:"dtype"`
			} `json:"engine_kwargs"`
			Hardware struct {
				TotalMemory int64 `json:"device_total_memory_bytes"`
			} `json:"hardware"`
			KVCache struct {
				NumGPUBlocks int `json:"num_gpu_blocks"`
				BlockSize    int `json:"block_size"`
			} `json:"kv_cache"`
		}
		raw, err := os.ReadFile(filepath.Join(base, dir, "meta.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return fmt.Errorf("%s/meta.json: %w", dir, err)
		}
		for _, f := range []string{"requests.jsonl", "summary.txt"} {
			if err := g.copyFile(filepath.Join(base, dir, f), "llmservingsim/"+dir+"/"+f); err != nil {
				return err
			}
		}
		hw := dir[:strings.Index(dir, "_")]
		gpu := map[string]string{"RTXPRO6000": "rtx-pro-6000-server"}[hw]
		custom, customNote := customGPUs[hw], ""
		if custom != "" {
			gpu, customNote = "-", customGPUNotes[hw]
		}
		if gpu == "" {
			gpu = strings.ToLower(hw)
		}
		short := meta.Model[strings.LastIndex(meta.Model, "/")+1:]
		e := entry{Name: "llmservingsim/" + dir, Source: "llmservingsim", Results: []string{"llmservingsim/" + dir + "/requests.jsonl"},
			Format: "requestlog", GPU: hw, Model: short, Engine: "vllm", Checkpoint: meta.Engine.DType,
			Baseline: "llmservingsim/" + dir + "/summary.txt"}
		cfg, err := g.modelConfig(meta.Model, "bf16")
		if err != nil {
			return err
		}
		if cfg == "" {
			e.Skip = "no model config for " + meta.Model + " among the shared model configs"
		} else {
			tp := max(meta.Engine.TP, 1)
			st := scenarioText{name: fmt.Sprintf("%s on %dx %s, vLLM %s TP%d (LLMServingSim example)", short, tp, hw, meta.VLLM, tp),
				config: "../../configs/" + cfg, gpu: gpu, gpus: tp * max(meta.Engine.DP, 1), tp: tp, dp: max(meta.Engine.DP, 1), ep: 1,
				engine: "vllm", maxSeqs: meta.Engine.MaxSeqs, maxBatched: meta.Engine.MaxBatched,
				comments: []string{"Engine arguments: casys-kaist/LLMServingSim @ 5daddb2 bench/examples/" + dir + "/meta.json (MIT).",
					"RTX PRO 6000 is moecast's Server Edition preset; LLMServingSim's config.json gives 96 GB at 1.6 TB/s."}}
			if meta.Engine.EP {
				st.ep = st.gpus
			}
			if custom != "" {
				st.gpu, st.customGPU = "", custom
				st.comments = append(st.comments[:1], customNote)
				if m := meta.Hardware.TotalMemory; m > 0 {
					// vLLM applies gpu_memory_utilization to the total
					// cudaMemGetInfo reports (torch.cuda.mem_get_info),
					// which the run recorded; it is below nvidia-smi's.
					st.customGPU = memoryLine.ReplaceAllString(custom, fmt.Sprintf(`memory = "%dB"`, m))
					st.comments = append(st.comments, fmt.Sprintf("Memory: %d B, the device total the run's torch reported (meta.json hardware.device_total_memory_bytes), the total vLLM's gpu_memory_utilization applies to (Worker.determine_available_memory: torch.cuda.mem_get_info).", m))
				}
			}
			if kv := meta.KVCache; kv.NumGPUBlocks > 0 {
				// The run's KV cache as its engine sized it: given, not
				// predicted (moecast's memory profile misses part of
				// vLLM 0.19's reserve: bench/RESULTS-lssrtx.md).
				st.numGPUBlocks = kv.NumGPUBlocks
				st.comments = append(st.comments, fmt.Sprintf("KV cache: %d blocks of %d tokens per GPU, what the run's engine allocated (meta.json kv_cache.num_gpu_blocks), given as vLLM's num_gpu_blocks_override (mechanism vllm-num-gpu-blocks).", kv.NumGPUBlocks, kv.BlockSize))
			}
			if meta.VLLM != "" {
				st.engineVersion = meta.VLLM
				st.comments = append(st.comments, "Engine version "+meta.VLLM+": the run's meta.json vllm_version.")
			} else {
				st.comments = append(st.comments, versionNote(engineVersion{}))
			}
			e.Scenario = "llmservingsim/" + dir + "/scenario.toml"
			if err := g.write(e.Scenario, []byte(st.String())); err != nil {
				return err
			}
		}
		g.entries = append(g.entries, e)
	}
	return nil
}

// memoryLine is the memory key of a custom GPU body.
var memoryLine = regexp.MustCompile(`(?m)^memory = "[^"]*"`)

// customGPUs are the examples' GPUs moecast has no preset for, as
// [hardware.custom_gpu] bodies from their makers' datasheets; the
// calibration stays "embedded" (no table is for them: the ops price at
// the default efficiencies).
var customGPUs = map[string]string{
	"RTX4090": `name = "rtx-4090"
label = "NVIDIA GeForce RTX 4090"
arch = "sm_89"
sms = 128
memory = "24564MiB"
bandwidth = "1008GB/s"
l2 = "72MB"
bf16 = "165.2TFLOPS"
fp8 = "330.3TFLOPS"
int8 = "660.6TFLOPS"
gemm_mem_efficiency = 0.83
gemm_compute_efficiency = 0.96
fa2_mixed_read_bandwidth = "1.45TB/s"
`,
}

var customGPUNotes = map[string]string{
	"RTX4090": "RTX 4090 (no moecast preset): NVIDIA Ada Lovelace GPU architecture whitepaper (v2.1), GeForce RTX 4090: 128 SMs, " +
		"24 GB GDDR6X at 21 Gbps on 384 bits = 1008 GB/s, 72 MB L2, dense tensor peaks with FP32 accumulate (vLLM's) 165.2 TFLOPS " +
		"FP16/BF16, 330.3 FP8, 660.6 INT8 TOPS; 24,564 MiB as nvidia-smi reports it. " +
		"GEMM fractions: vLLM 0.19.0's own bf16 projections on an RTX 4090, timed layer by layer by LLMServingSim's profiler " +
		"(casys-kaist/LLMServingSim @ 5daddb2, MIT, profiler/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16/tp1/dense.csv): " +
		"qkv/o/gate_up/down at 17-128 tokens, 64 rows, median DRAM traffic over latency 0.831 of 1008 GB/s (quartiles 0.77-0.85); " +
		"at 1024-2048 tokens, 260 rows, median 0.960 of 165.2 TFLOP/s (quartiles 0.93-0.98: the card clocks above the whitepaper's boost). " +
		"FA2 mixed-batch read rate: the same profile's attention.csv, a prefill chunk beside n decodes at KV length >= 512 less the chunk alone, " +
		"against q_heads/kv_heads x the decodes' KV bytes: median 1.45 TB/s over 384 rows (quartiles 1.05-1.83).",
}

// manifest writes manifest.toml.
func (g *gen) manifest() error {
	var b strings.Builder
	b.WriteString(`# moecast's shipped accuracy corpus. Generated by validate/corpus/gen
# (go generate ./validate/corpus) from ../shared/data/serving; do not edit.
# Sources and licenses: SOURCES.md.

[[source]]
name = "aiconfigurator"
origin = "ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/silicon_sample.csv"
license = "Apache-2.0"
mapping = "one row = one deployment at one concurrency: closed loop, C = batch_size x attention_dp_size, 10 x C requests, fixed isl/osl; mean TTFT and TPOT"

[[source]]
name = "inferencex"
origin = "SemiAnalysisAI/InferenceX @ 843c625, experimental/token_position_decode_slo/*/results"
license = "Apache-2.0"
mapping = "one file = one run of the experiment's own client (benchmark_serving_random.py, a minimal fork of vLLM's benchmark_serving; latencies in seconds): streaming /v1/completions with text prompts (no chat template), closed loop at max_concurrency after 2 x C warm-up requests of the first prompt, num_prompts = 10 x C requests, fixed lengths (no range ratio, no prefix), ignore_eos, no --profile; median and p99 TTFT, TPOT, E2E. An entry with exclude fails the capacity rule (gen: beyondCapacity)"

[[source]]
name = "llmservingsim"
origin = "casys-kaist/LLMServingSim @ 5daddb2, bench/examples/*/requests.jsonl"
license = "MIT"
mapping = "one log = 300 ShareGPT requests at ~10 req/s, replayed request by request (arrivals, lengths); TTFT from the engine's queue time; mean, median, p90, p99"
`)
	for _, e := range g.entries {
		b.WriteString("\n[[entry]]\n")
		fmt.Fprintf(&b, "name = %q\nsource = %q\n", e.Name, e.Source)
		if e.Scenario != "" {
			fmt.Fprintf(&b, "scenario = %q\n", e.Scenario)
		}
		if e.Skip != "" {
			fmt.Fprintf(&b, "skip = %q\n", e.Skip)
		}
		if e.Exclude != "" {
			fmt.Fprintf(&b, "exclude = %q\n", e.Exclude)
		}
		q := make([]string, len(e.Results))
		for i, r := range e.Results {
			q[i] = strconv.Quote(r)
		}
		fmt.Fprintf(&b, "results = [%s]\nformat = %q\n", strings.Join(q, ", "), e.Format)
		fmt.Fprintf(&b, "gpu = %q\nmodel = %q\nengine = %q\ncheckpoint = %q\n", e.GPU, e.Model, e.Engine, e.Checkpoint)
		if e.Baseline != "" {
			fmt.Fprintf(&b, "baseline = %q\n", e.Baseline)
		}
	}
	return g.write("manifest.toml", []byte(b.String()))
}

// atoiOr is s as an int, 0 where it is not one.
func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
