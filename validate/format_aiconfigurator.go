package validate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/moecast/moecast/serve"
)

// NVIDIA aiconfigurator's silicon_sample.csv (ai-dynamo/aiconfigurator
// `aic-core/src/aiconfigurator_core/systems/silicon_sample.csv`): one
// measured deployment a row, with its layout, its load and its mean TTFT
// and TPOT. The columns' meaning is the one aiconfigurator's own accuracy
// harness reads (`tools/accuracy_regression_testing/
// predict_silicon_sample.py`):
//   - batch_size is the concurrency per attention-DP rank; the client's
//     concurrency is batch_size x attention_dp_size, also written as
//     `silicon_concurrency=C` in silicon_data_source;
//   - GPUs per replica = tp_size x pp_size x attention_dp_size; experts split
//     moe_tp_size ways over moe_ep_size ranks;
//   - silicon_ttft_ms and silicon_tpot_ms are means (TPOT without the first
//     token, vLLM's definition).
//
// The file does not record the client's command line. A row whose
// silicon_data_source names InferenceX's database dump (workflow_run_id=)
// or its dated CSV export (source_file=YYYY-MM-DD.csv) was measured by
// InferenceX's harness (see inferenceXClient): 10 x concurrency requests,
// each input and output length uniform on [int(0.8 L), L]. Other rows (the
// gap-analysis collections, whose client is not public) take 10 x
// concurrency requests at fixed lengths. Each row says which in a warning.
// The aggregated vLLM rows of the gap-analysis collection also carry the
// token budget per step of the deployment aiconfigurator's generator wrote
// for them (aicGeneratorBudget), which the file does not record either.
func init() {
	RegisterFormat(Format{
		Name:  "aiconfigurator",
		Looks: "a CSV whose header has silicon_ttft_ms and silicon_tpot_ms: aiconfigurator silicon_sample.csv",
		Order: 30,
		Detect: func(s *Sniff) bool {
			h := s.FirstLine()
			return bytes.Contains(h, []byte("silicon_ttft_ms")) && bytes.Contains(h, []byte("silicon_tpot_ms")) && bytes.IndexByte(h, ',') >= 0
		},
		Read: readAIConfigurator,
	})
}

// aicRequired are the columns the comparison needs.
var aicRequired = []string{"isl", "osl", "batch_size", "silicon_ttft_ms", "silicon_tpot_ms"}

func readAIConfigurator(name string, data []byte) ([]BenchResult, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, &BenchError{File: name, Line: 1, Msg: "not a CSV header: " + csvMsg(err)}
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	var missing []string
	for _, k := range aicRequired {
		if _, ok := col[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, &BenchError{File: name, Line: 1, Key: missing[0], Msg: "column missing (want " + strings.Join(aicRequired, ", ") + ")"}
	}
	var out []BenchResult
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// FieldPos panics after a failed Read: the line is the error's.
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			return nil, &BenchError{File: name, Line: line, Msg: csvMsg(err)}
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		r, err := aicRow(name, line, col, rec)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func csvMsg(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// aicRow maps one row.
func aicRow(name string, line int, col map[string]int, rec []string) (BenchResult, error) {
	r := newResult(name, line, "aiconfigurator")
	r.Multi = true
	get := func(k string) string {
		if i, ok := col[k]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var ferr error
	num := func(k string) float64 {
		s := get(k)
		if s == "" {
			return math.NaN()
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) || x < 0 {
			if ferr == nil {
				ferr = &BenchError{File: name, Line: line, Key: k, Msg: fmt.Sprintf("want a finite number >= 0, got %q", s)}
			}
			return math.NaN()
		}
		return x
	}
	count := func(k string) int {
		x := num(k)
		if math.IsNaN(x) {
			return 0
		}
		if x != math.Trunc(x) || x > 1e9 {
			if ferr == nil {
				ferr = &BenchError{File: name, Line: line, Key: k, Msg: fmt.Sprintf("want a whole number, got %g", x)}
			}
			return 0
		}
		return int(x)
	}
	r.ID = get("id")
	r.Backend = get("backend")
	r.Model = get("model_path")
	r.InputTokens, r.OutputTokens = num("isl"), num("osl")
	l := &r.Layout
	l.GPU = get("system")
	l.TP, l.PP, l.DP = count("tp_size"), count("pp_size"), count("attention_dp_size")
	l.MoETP, l.EP = count("moe_tp_size"), count("moe_ep_size")
	l.DPAttention = l.DP > 1
	l.Mode = get("mode")
	l.Precision = get("precision")
	l.Extra = map[string]string{}
	for _, k := range []string{"backend_version", "gemm_quant_mode", "moe_quant_mode", "silicon_data_source",
		"prefill_batch_size", "prefill_num_workers", "prefill_tp_size", "prefill_pp_size", "prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size",
		"decode_batch_size", "decode_num_workers", "decode_tp_size", "decode_pp_size", "decode_attention_dp_size", "decode_moe_tp_size", "decode_moe_ep_size"} {
		if v := get(k); v != "" {
			l.Extra[k] = v
		}
	}
	if l.TP > 0 {
		l.GPUs = l.TP * max(l.PP, 1) * max(l.DP, 1)
	}
	batch := count("batch_size")
	r.Concurrency = batch * max(l.DP, 1)
	if c, ok := siliconConcurrency(get("silicon_data_source")); ok {
		if l.Mode != "disagg" && r.Concurrency > 0 && c != r.Concurrency {
			r.warn("silicon_data_source says silicon_concurrency=%d, batch_size x attention_dp_size is %d: the former taken", c, r.Concurrency)
		}
		r.Concurrency = c
	}
	if r.Concurrency == 0 && l.Mode == "disagg" {
		if db := count("decode_batch_size"); db > 0 {
			r.Concurrency = db * max(count("decode_num_workers"), 1) * max(count("decode_attention_dp_size"), 1)
			r.warn("disagg row without silicon_concurrency: concurrency taken as decode_batch_size x decode_num_workers x decode_attention_dp_size = %d", r.Concurrency)
		}
	}
	if r.Concurrency > 0 {
		r.NumPrompts = 10 * r.Concurrency
		if src := get("silicon_data_source"); inferenceXSource(src) {
			r.RangeRatio, r.RangeStyle = inferenceXRangeRatio, serve.RangeBelow
			r.warn("the file does not record the client: InferenceX's harness (silicon_data_source names its database or export): 10 x concurrency = %d requests, lengths uniform on [int(%g L), L]",
				r.NumPrompts, inferenceXRangeRatio)
			if clientTokenizerMismatch(r.Backend, r.Model, l.Extra["backend_version"]) {
				r.ServerInputScale = serverTokensPerClientToken
				r.warn("client and server tokenise the prompts apart (SGLang on transformers 5, a DeepSeek tokenizer, InferenceX's client before its fix): the server sees %g x the client's input tokens",
					serverTokensPerClientToken)
			}
		} else {
			r.warn("the file does not record the client: 10 x concurrency = %d requests at fixed lengths assumed", r.NumPrompts)
		}
	}
	if b := aicGeneratorBudget(r.Backend, l.Mode, get("silicon_data_source"), batch, r.InputTokens); b > 0 {
		r.MaxNumBatchedTokens = b
		r.warn("the file does not record the engine's arguments: aiconfigurator's generator deployed the row (its gap-analysis collection): vLLM's --max-num-batched-tokens = batch_size + isl + %d = %d",
			aicGeneratorSlack, b)
	}
	ttft, tpot := num("silicon_ttft_ms"), num("silicon_tpot_ms")
	r.Metrics["ttft"] = Stats{Mean: ttft, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}
	r.Metrics["tpot"] = Stats{Mean: tpot, Median: math.NaN(), P90: math.NaN(), P99: math.NaN()}
	if ferr != nil {
		return r, ferr
	}
	if r.Concurrency == 0 {
		return r, &BenchError{File: name, Line: line, Key: "batch_size", Msg: "want a concurrency >= 1"}
	}
	return r, r.Check("isl")
}

// aicGeneratorSlack is the tokens aiconfigurator's config generator adds
// to an aggregated vLLM worker's token budget beyond its batch and the
// input length: `agg max_num_tokens = (max_batch_size or 0) +
// (SlaConfig.isl or 0) + 1500` in `src/aiconfigurator/generator/
// rule_plugin/vllm.rule` (ai-dynamo/aiconfigurator, the rule since the
// generator's vLLM support, 95ddf241a 2025-12-04, unchanged @ 095f58a;
// also rule_plugin/benchmark/vllm.rule), which
// `config/backend_config_mapping.yaml` maps to vLLM's
// --max-num-batched-tokens and the vLLM templates emit
// (`backend_templates/vllm/cli_args.j2` since 2cecd65, 2026-01-08;
// cli_args.0.12.0.j2 @ 095f58a).
const aicGeneratorSlack = 1500

// aicGeneratorBudget is the vLLM token budget per step of an aggregated
// aiconfigurator row from its gap-analysis collection
// (silicon_data_source "source_file=.../aic-auto-gap-analysis/...": the
// aiconfigurator team's own measurements of deployments its generator
// wrote; those on Dynamo images name the image, e.g. vllm-runtime:0.8.0,
// the runtime the generator's run scripts target, 5e0243e "align
// generator run script with dynamo 0.8.0"): batch + isl +
// aicGeneratorSlack, the generator's rule with the row's batch_size as
// the worker's max_batch_size (the batch aiconfigurator's own accuracy
// harness estimates the row at). 0 for any other row: its engine runs at
// its default budget. The rows' own measurements say the same: at 1k
// input on H100 their TTFT is 2-3 single-prompt prefills where vLLM's
// default 8192-token budget would prefill a whole wave of 8 at once
// (bench/RESULTS-q32h100.md).
func aicGeneratorBudget(backend, mode, src string, batch int, isl float64) int {
	if !strings.EqualFold(strings.TrimSpace(backend), "vllm") || mode != "agg" || batch <= 0 || !(isl >= 1) || isl > 1e8 {
		return 0
	}
	if !strings.Contains(src, "/aic-auto-gap-analysis/") {
		return 0
	}
	return batch + int(math.Round(isl)) + aicGeneratorSlack
}

// siliconConcurrency reads `silicon_concurrency=C` out of the data source
// column.
func siliconConcurrency(src string) (int, bool) {
	for _, part := range strings.Split(src, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && strings.TrimSpace(k) == "silicon_concurrency" {
			c, err := strconv.Atoi(strings.TrimSpace(v))
			if err == nil && c > 0 {
				return c, true
			}
		}
	}
	return 0, false
}

// inferenceXRangeRatio is the --random-range-ratio of InferenceX's
// harness: RANDOM_RANGE_RATIO 0.8 in its single-node workflow
// (SemiAnalysisAI/InferenceX @ 843c625 `.github/workflows/
// benchmark-tmpl.yml`, set since 705859d, 2025-08; read by
// `benchmarks/benchmark_lib.sh` run_benchmark_serving, which runs
// `utils/bench_serving/benchmark_serving.py` with --num-prompts 10 x
// CONC, --request-rate inf, --ignore-eos) and in its multi-node one
// (`.github/workflows/benchmark-multinode-tmpl.yml`; NVIDIA/srt-slurm's
// sa-bench, which InferenceX's NVIDIA multi-node runs use, defaults
// random_range_ratio 0.8 and num_prompts_mult 10, `src/srtctl/benchmarks/
// sa_bench.py` @ 0bce054). Both draw lengths on [int(L r), L]
// (serve.RangeBelow).
const inferenceXRangeRatio = 0.8

// inferenceXSource reports whether an aiconfigurator row's
// silicon_data_source names an InferenceX measurement: its database dump
// ("db-dump/DATE; config_id=N; ...; workflow_run_id=N; IMAGE", the
// records aiconfigurator's InferenceX adapter reads,
// `src/aiconfigurator/sdk/config_adapter/inferencex.py` @ 095f58a) or the
// dated CSV export of it ("source_file=YYYY-MM-DD.csv; model=...").
func inferenceXSource(src string) bool {
	for _, part := range strings.Split(src, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case ok && k == "workflow_run_id":
			return true
		case ok && k == "source_file" && datedCSV(v):
			return true
		}
	}
	return false
}

// datedCSV reports whether name is YYYY-MM-DD.csv.
func datedCSV(name string) bool {
	d, ok := strings.CutSuffix(name, ".csv")
	if !ok || len(d) != 10 || d[4] != '-' || d[7] != '-' {
		return false
	}
	for i, c := range d {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// serverTokensPerClientToken is the measured inflation of InferenceX's
// random prompts when its client and an SGLang server tokenise them apart
// (SemiAnalysisAI/InferenceX PR #937, 2026-03-24: DeepSeek-R1's
// tokenizer under transformers 5.3.0, a 7140-token client prompt is
// 35921 tokens on the server, 5.03x; 100 random tokens, 531).
const serverTokensPerClientToken = 5.03

// clientTokenizerMismatch reports whether an InferenceX row was measured
// with a client that tokenised its random prompts differently from the
// server, so the server prefilled about serverTokensPerClientToken x the
// recorded input. Transformers 5 rebuilds LlamaTokenizerFast's
// pre-tokenizer and decoder (Metaspace, Sequence) for tokenizers that
// declare that class over a ByteLevel BPE (DeepSeek-R1 and V3). The SGLang
// server restores the originals at startup (`python/sglang/srt/utils/
// hf_transformers_utils.py` _fix_v5_tokenizer_components); InferenceX's
// client (`utils/bench_serving/backend_request_func.py` get_tokenizer)
// decoded its random token ids with the rebuilt decoder and counted
// lengths with the rebuilt tokenizer, until ef01c22 (2026-03-27) copied
// the server's fix, which applied only to a local model directory and
// silently did nothing for a Hub id (InferenceX's scripts pass
// $MODEL, a Hub id) until 5fe6d56 (2026-05-15, PR #1381), after every
// row here. SGLang's images carry transformers 5 from v0.5.10 (4.57.1
// before: sgl-project/sglang-omni PR #675, "SGLang >=0.5.10 requires
// transformers 5.x"; InferenceX PR #937 compares a 2026-03-13 nightly on
// 4.57.1 with one on 5.3.0; nightly tags are not matched). vLLM's
// rows are not affected: its client takes vLLM's own get_tokenizer, as
// the server does.
func clientTokenizerMismatch(backend, model, version string) bool {
	if !strings.EqualFold(strings.TrimSpace(backend), "sglang") {
		return false
	}
	m := strings.ToLower(model)
	if !strings.Contains(m, "deepseek-r1") && !strings.Contains(m, "deepseek-v3") {
		return false
	}
	return sglangTransformers5(version)
}

// sglangTransformers5 reports whether SGLang version v ("0.5.10.post1")
// is 0.5.10 or later, the releases whose image carries transformers 5.
// Another form (a nightly tag, blank) is not taken as one.
func sglangTransformers5(v string) bool {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 4)
	if len(parts) < 3 {
		return false
	}
	var n [3]int
	for i := range n {
		d := parts[i]
		j := 0
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		x, err := strconv.Atoi(d[:j])
		if err != nil {
			return false
		}
		n[i] = x
	}
	return n[0] > 0 || n[1] > 5 || (n[1] == 5 && n[2] >= 10)
}
