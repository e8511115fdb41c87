package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/validate"
)

// Hardening round 9 (session 9's hostile-input review). One table test per
// class of defect; each row failed before its class was fixed.

// TestOutputsNeverOverwriteFilesReadThroughScenario: an output flag is
// refused when it names a file the command reads through its scenario or
// corpus (the model config a scenario names, its workload.trace, a
// corpus's manifest, scenarios, results), not only its positional
// arguments and flag values. Before, `--html CONFIG.json` replaced the
// model config with the report and `validate corpus DIR --markdown
// DIR/manifest.toml` the manifest, exit 0.
func TestOutputsNeverOverwriteFilesReadThroughScenario(t *testing.T) {
	dir := t.TempDir()
	cfg := copyTo(t, dir, "qwen3.json", "../../../../scenarios/configs/qwen3-235b-a22b-fp8.json")
	other := copyTo(t, dir, "other.json", cfg)
	trace := copyTo(t, dir, "trace.jsonl", benchFixtures+"mooncake.jsonl")
	src, err := os.ReadFile("../../../../scenarios/qwen3-235b-h100-tp4.toml")
	require.NoError(t, err)
	text := replaceOnce(t, string(src), `config = "configs/qwen3-235b-a22b-fp8.json"`, `config = "qwen3.json"`)
	sc := filepath.Join(dir, "s.toml")
	require.NoError(t, os.WriteFile(sc, []byte(text), 0o644))
	withTrace := filepath.Join(dir, "replay.toml")
	require.NoError(t, os.WriteFile(withTrace, []byte(replaceOnce(t, text, "[workload]\n", "[workload]\ntrace = \"trace.jsonl\"\n")), 0o644))

	// A corpus of one entry on that scenario, in a directory of its own.
	cdir := filepath.Join(dir, "corpus")
	require.NoError(t, os.MkdirAll(filepath.Join(cdir, "s"), 0o755))
	copyTo(t, cdir, "qwen3.json", cfg)
	require.NoError(t, os.WriteFile(filepath.Join(cdir, "s", "e.toml"),
		[]byte(replaceOnce(t, text, `config = "qwen3.json"`, `config = "../qwen3.json"`)), 0o644))
	res := copyTo(t, filepath.Join(cdir, "s"), "r.json", benchFixtures+"vllm-c16.json")
	manifest := filepath.Join(cdir, "manifest.toml")
	require.NoError(t, os.WriteFile(manifest, []byte("[[entry]]\nname = \"e\"\nscenario = \"s/e.toml\"\nresults = [\"s/r.json\"]\n"), 0o644))
	ccfg, cscen := filepath.Join(cdir, "qwen3.json"), filepath.Join(cdir, "s", "e.toml")

	// validate trace and calib from-trace read a trace on a scenario with
	// a model config of its own.
	vdir := filepath.Join(dir, "v")
	require.NoError(t, os.MkdirAll(vdir, 0o755))
	vcfg := copyTo(t, vdir, "gpt-oss-20b_config.json", "../../../../validate/testdata/gpt-oss-20b_config.json")
	vsc := copyTo(t, vdir, "s.toml", gptOssScenario)
	tr := traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"

	for _, tc := range []struct {
		name   string
		args   []string
		target string // must be unchanged
	}{
		{"validate trace --html onto the scenario's model config", []string{"validate", "trace", tr, "--scenario", vsc, "--html", vcfg}, vcfg},
		{"calib from-trace -o onto the scenario's model config", []string{"calib", "from-trace", tr, "--scenario", vsc, "-o", vcfg}, vcfg},
		{"predict --html onto its model config", []string{"predict", sc, "--html", cfg}, cfg},
		{"predict --html onto its model config spelled another way", []string{"predict", sc, "--html", dir + "/./qwen3.json"}, cfg},
		{"simulate --html onto its model config", []string{"simulate", sc, "--requests", "10", "--html", cfg}, cfg},
		{"simulate --html onto its workload.trace", []string{"simulate", withTrace, "--html", trace}, trace},
		{"plan --html onto its model config", []string{"plan", sc, "--html", cfg}, cfg},
		{"sweep --html onto its model config", []string{"sweep", sc, "--set", "workload.batch=1,2", "--html", cfg}, cfg},
		{"sweep --html onto a model config named only in --set", []string{"sweep", sc, "--set", "model.config=" + other + "," + cfg, "--html", other}, other},
		{"sweep --serving --html onto its model config", []string{"sweep", sc, "--serving", "--set", "workload.concurrency=1,2", "--html", cfg}, cfg},
		{"validate bench --html onto the scenario's model config", []string{"validate", "bench", benchFixtures + "vllm-c16.json", "--scenario", sc, "--html", cfg}, cfg},
		{"validate corpus DIR --markdown onto its manifest", []string{"validate", "corpus", cdir, "--markdown", manifest}, manifest},
		{"validate corpus DIR --html onto its manifest", []string{"validate", "corpus", cdir, "--html", manifest}, manifest},
		{"validate corpus --markdown onto an entry's results", []string{"validate", "corpus", manifest, "--markdown", res}, res},
		{"validate corpus --markdown onto an entry's scenario", []string{"validate", "corpus", cdir, "--markdown", cscen}, cscen},
		{"validate corpus --html onto an entry's model config", []string{"validate", "corpus", cdir, "--html", ccfg}, ccfg},
		{"validate corpus --accuracy-json onto an entry's results", []string{"validate", "corpus", cdir, "--accuracy-json", res}, res},
		{"validate corpus --accuracy-json onto its manifest", []string{"validate", "corpus", manifest, "--accuracy-json", manifest}, manifest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.ReadFile(tc.target)
			require.NoError(t, err)
			assertRefusedOneLine(t, "is one of the inputs", tc.args...)
			after, err := os.ReadFile(tc.target)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(before, after), "%s changed", tc.target)
		})
	}
	// The same commands write a report beside their inputs.
	out := filepath.Join(cdir, "report.md")
	code, _, stderr := runCLI(t, "validate", "corpus", cdir, "--markdown", out)
	require.Equal(t, ExitOK, code, stderr)
	_, err = os.Stat(out)
	assert.NoError(t, err)
	// Two outputs onto one file: refused before any work, the file kept.
	both := filepath.Join(t.TempDir(), "both")
	assertRefusedOneLine(t, "name the same file", "validate", "corpus", cdir, "--markdown", both, "--accuracy-json", both)
	_, err = os.Stat(both)
	assert.True(t, os.IsNotExist(err), "%s written", both)
	// --accuracy-json writes a summary that reads back.
	accOut := filepath.Join(t.TempDir(), "accuracy.json")
	code, _, stderr = runCLI(t, "validate", "corpus", cdir, "--accuracy-json", accOut)
	require.Equal(t, ExitOK, code, stderr)
	b, err := os.ReadFile(accOut)
	require.NoError(t, err)
	tab, err := validate.ReadAccuracy(accOut, b)
	require.NoError(t, err)
	assert.Contains(t, tab.Corpus, cdir)
}

// TestRepeatedListItemsRefused: a list whose items are points of the
// output refuses a repeated item, naming the flag or key and both items,
// as --concurrency and --request-rate already did. Before, predict
// --batch 8,8, workload.batch = [8, 8], --prefill 1024,1024 and sweep
// --set KEY=V,V printed the same row twice, and --goodput ttft:1,ttft:2
// kept the last objective without a word (exit 0).
func TestRepeatedListItemsRefused(t *testing.T) {
	dir := t.TempDir()
	sc := copyTo(t, dir, "in.toml", "../../../../scenarios/gpt-oss-120b-h200-tp1.toml")
	src, err := os.ReadFile(sc)
	require.NoError(t, err)
	dup := filepath.Join(dir, "dup.toml")
	require.NoError(t, os.WriteFile(dup, []byte(replaceOnce(t, string(src), "batch = [", "batch = [8, 8, ")), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"predict --batch", []string{"predict", sc, "--batch", "1,8,8"}, "--batch: batch 8 (item 3) repeats item 2"},
		{"workload.batch", []string{"predict", dup}, "dup.toml:"},
		{"workload.batch names the key", []string{"predict", dup}, "workload.batch: batch 8 (item 2) repeats item 1"},
		{"predict --prefill", []string{"predict", sc, "--prefill", "1024,512,1024"}, "--prefill: chunk 1024 (item 3) repeats item 1"},
		{"sweep --set values", []string{"sweep", sc, "--set", "workload.context=1024,2048,1024"}, "--set workload.context: value 1024 (item 3) repeats item 1"},
		{"simulate --goodput objectives", []string{"simulate", sc, "--goodput", "ttft:2000,tpot:50,ttft:100"}, `--goodput: "ttft:100": ttft given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertRefusedOneLine(t, tc.want, tc.args...)
		})
	}
}

// TestSimulateRequestsBeyondModelContextWarned: a simulated request
// longer than the model's max_position_embeddings (an engine refuses it)
// is priced as asked with a warning naming the length and the limit, as
// predict --context already warns; the figures are those without the
// warning. Before, simulate --input-tokens 1000000 on a 40,960-token model
// printed a TTFT of 21 minutes without a word.
func TestSimulateRequestsBeyondModelContextWarned(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // "" no such warning
	}{
		{"input beyond the limit", []string{"--input-tokens", "40000", "--output-tokens", "1000"}, "request of 41000 tokens (input + output) exceeds the model's max_position_embeddings (40960)"},
		{"within the limit", []string{"--input-tokens", "39000", "--output-tokens", "1000"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"simulate", "qwen3-235b-h100-tp4", "--concurrency", "1", "--requests", "2"}, tc.args...)
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, ExitOK, code, stderr)
			assert.NotEmpty(t, stdout)
			if tc.want == "" {
				assert.NotContains(t, stdout+stderr, "max_position_embeddings")
				return
			}
			assert.Contains(t, stdout, "warning: concurrency 1: "+tc.want)
		})
	}
}

// TestCorpusManifestFormatNamed: an entry's format that no reader has is
// the manifest's error, at the entry's line and key (exit 2), as its
// other keys are. Before, the entry's rows were counted "unreadable
// results" and the scorecard printed without them, exit 0.
func TestCorpusManifestFormatNamed(t *testing.T) {
	dir := t.TempDir()
	copyTo(t, dir, "r.json", benchFixtures+"vllm-c16.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kimi.toml"), nil, 0o644))
	m := filepath.Join(dir, "manifest.toml")
	require.NoError(t, os.WriteFile(m, []byte("[[entry]]\nname = \"a\"\nscenario = \"kimi.toml\"\nresults = [\"r.json\"]\n\n[[entry]]\nname = \"b\"\nscenario = \"kimi.toml\"\nresults = [\"r.json\"]\nformat = \"vlm\"\n"), 0o644))
	code, stdout, stderr := runCLI(t, "validate", "corpus", dir)
	assert.Equal(t, ExitInput, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, filepath.Join(dir, "manifest.toml")+`:6: entry[2].format: unknown result format "vlm" (want one of `)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
}

// TestSGLangRankSharesRefused: under SGLang's DP attention each rank
// takes its share of the step budget (chunked_prefill_size / ranks) and
// of max_running_requests (// dp_size); a value below the ranks leaves a
// share of 0, which is refused at its key rather than run as 1 (exit 2).
// Before, max_num_seqs = 1 and 3 on 4 ranks both simulated as 1 per rank,
// and max_num_batched_tokens = 3 as a 1-token chunk per rank, exit 0.
func TestSGLangRankSharesRefused(t *testing.T) {
	dir := t.TempDir()
	agg := "name = \"s\"\n[model]\npreset = \"qwen3-30b-a3b\"\n[hardware]\ngpu = \"h200-sxm\"\n[parallel]\ntp = 1\ndp = 4\nep = 4\ndp_attention = true\n[runtime]\nengine = \"sglang\"\n%s\n[workload]\ninput_tokens = 1024\noutput_tokens = 64\nconcurrency = [8]\nrequests = 16\n"
	disagg := "name = \"d\"\n[model]\npreset = \"qwen3-30b-a3b\"\n[hardware]\ngpu = \"h200-sxm\"\n[disagg]\ntransfer = \"nvlink4\"\n[disagg.prefill]\ntp = 1\ndp = 4\nep = 4\ndp_attention = true\n%s\n[disagg.decode]\ntp = 1\ndp = 2\nep = 2\ndp_attention = true\n[runtime]\nengine = \"sglang\"\n[workload]\ninput_tokens = 1024\noutput_tokens = 64\nconcurrency = [8]\nrequests = 16\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"max_num_seqs below the ranks", fmt.Sprintf(agg, "max_num_seqs = 3"), "s.toml:13: runtime.max_num_seqs: 3 over 4 attention DP ranks"},
		{"max_num_batched_tokens below the ranks", fmt.Sprintf(agg, "max_num_batched_tokens = 3"), "s.toml:13: runtime.max_num_batched_tokens: 3 over 4 attention DP ranks"},
		{"a pool's max_num_batched_tokens below its ranks", fmt.Sprintf(disagg, "max_num_batched_tokens = 2"), "s.toml:13: disagg.prefill.max_num_batched_tokens: 2 over 4 attention DP ranks"},
		{"a pool's max_num_seqs below its ranks", fmt.Sprintf(disagg, "max_num_seqs = 3"), "s.toml:13: disagg.prefill.max_num_seqs: 3 over 4 attention DP ranks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "s.toml")
			require.NoError(t, os.WriteFile(p, []byte(tc.text), 0o644))
			assertRefusedOneLine(t, tc.want, "simulate", p)
		})
	}
	// At the ranks, one each: served.
	p := filepath.Join(dir, "s.toml")
	require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf(agg, "max_num_seqs = 4\nmax_num_batched_tokens = 4096")), 0o644))
	code, _, stderr := runCLI(t, "simulate", p)
	assert.Equal(t, ExitOK, code, stderr)
}

// TestRepeatedInputFilesRefused: an input file given twice, however
// spelled, is refused before any work (exit 2). Before, validate bench
// R R compared each row twice (weighing it double in its summary) and
// trace summary T T printed the trace as two ranks, exit 0.
func TestRepeatedInputFilesRefused(t *testing.T) {
	dir := t.TempDir()
	bench := copyTo(t, dir, "b.json", benchFixtures+"vllm-c16.json")
	hard := filepath.Join(dir, "hard.json")
	require.NoError(t, os.Link(bench, hard))
	tr := traceData + "tracelens_vllm_decode_full_graph_execution.json.gz"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"validate bench R R", []string{"validate", "bench", bench, bench, "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, bench + ": given twice (arguments 1 and 2)"},
		{"validate bench R and a hard link of it", []string{"validate", "bench", bench, hard, "--scenario", "kimi-k2.5-h200-nvlink-tp8"}, hard + ": given twice (arguments 1 and 2)"},
		{"trace summary T ./T", []string{"trace", "summary", tr, "./" + tr}, "given twice (arguments 1 and 2)"},
		{"validate trace T T", []string{"validate", "trace", tr, tr, "--scenario", gptOssScenario}, "given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertRefusedOneLine(t, tc.want, tc.args...)
		})
	}
	// The words after -- are the engine's: a path may repeat there.
	code, stdout, stderr := runCLI(t, "scenario", "from-vllm-args", "--gpu", "h200-sxm", "--", "vllm", "serve", "Qwen/Qwen3-30B-A3B", "--chat-template", bench, "--served-model-name", bench)
	assert.Equal(t, ExitOK, code, stderr)
	assert.NotEmpty(t, stdout)
}

// TestPrefillBeyondKVWarned: predict --prefill prices a lone request's
// chunk as simulate would, but a request whose prefix and chunk do not fit
// in the KV cache cannot run there (simulate calls it unservable): the step
// is priced as asked with a warning naming the tokens and the cache, as
// predict's decode rows say "does not fit". Before, 254,000 + 8,000 tokens
// on the 8x RTX PRO 6000 scenario (decode batch 1 at 262,144: "4.11 GB
// short") printed a 5.7 s step without a word.
func TestPrefillBeyondKVWarned(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // "" none
	}{
		{"beyond the cache", []string{"--prefill", "1,8000", "--prefix", "254000"}, "warning: prefill 8000 after 254000 cached tokens: does not fit: the KV cache holds"},
		{"within it", []string{"--prefill", "8000", "--prefix", "1000"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"predict", "kimi-k2.5-rtx-pro-6000-pcie-tp8"}, tc.args...)...)
			require.Equal(t, ExitOK, code, stderr)
			if tc.want == "" {
				assert.NotContains(t, stdout, "does not fit")
				return
			}
			assert.Contains(t, stdout, tc.want)
		})
	}
}

// assertRefusedOneLine runs the command and checks the bad-input contract:
// exit 2, nothing on stdout, one line on stderr that contains want.
func assertRefusedOneLine(t *testing.T, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	assert.Equal(t, ExitInput, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, want)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
}
