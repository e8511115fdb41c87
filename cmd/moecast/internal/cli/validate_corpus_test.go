package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
	"github.com/moecast/moecast/validate/corpus"
)

// testCorpus writes a small corpus: one scorable entry, one skipped by
// the manifest, one whose scenario names a GPU moecast does not know, one
// whose results cannot be read.
func testCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := scenarios.EmbeddedSource("qwen3-235b-h100-tp4")
	require.NoError(t, err)
	cfg, err := os.ReadFile("../../../../scenarios/configs/qwen3-235b-a22b-fp8.json")
	require.NoError(t, err)
	ok := strings.Replace(string(src), `config = "configs/qwen3-235b-a22b-fp8.json"`, `config = "qwen.json"`, 1)
	unknown := strings.Replace(ok, `gpu = "h100-sxm"`, `gpu = "z9000"`, 1)
	csvRows, err := os.ReadFile(benchFixtures + "aiconfigurator-rows.csv")
	require.NoError(t, err)
	for name, data := range map[string]string{
		"ok.toml":      ok,
		"unknown.toml": unknown,
		"run.json":     `{"mean_ttft_ms": 150, "median_ttft_ms": 140, "p99_ttft_ms": 300, "mean_tpot_ms": 12, "max_concurrency": 4, "num_prompts": 12, "completed": 12, "total_input_tokens": 3072, "total_output_tokens": 384, "duration": 3}`,
		"runs.jsonl": `{"mean_ttft_ms": 150, "mean_tpot_ms": 12, "max_concurrency": 2, "num_prompts": 8, "completed": 8, "total_input_tokens": 2048, "total_output_tokens": 256}
{"mean_ttft_ms": 150, "mean_tpot_ms": 12, "max_concurrency": 8, "num_prompts": 16, "completed": 16, "total_input_tokens": 4096, "total_output_tokens": 512}
`,
		"rows.csv":  string(csvRows),
		"qwen.json": string(cfg),
		"manifest.toml": `[[source]]
name = "test"
license = "MIT"

[[entry]]
name = "ok"
source = "test"
scenario = "ok.toml"
results = ["run.json"]
gpu = "h100_sxm"
model = "Qwen3-235B"
engine = "vllm"
checkpoint = "fp8"

[[entry]]
name = "ok-more"
scenario = "ok.toml"
results = ["runs.jsonl"]
gpu = "h100_sxm"
model = "Qwen3-235B"
engine = "vllm"
checkpoint = "fp8"

[[entry]]
name = "disagg"
skip = "disaggregated serving"
results = ["rows.csv"]

[[entry]]
name = "unknown-gpu"
scenario = "unknown.toml"
results = ["run.json"]

[[entry]]
name = "unreadable"
scenario = "ok.toml"
results = ["garbled.json"]
`,
		"garbled.json": `{"mean_ttft_ms": "fast", "max_concurrency": 4}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	return dir
}

func TestValidateCorpusJSON(t *testing.T) {
	dir := testCorpus(t)
	code, stdout, stderr := runCLI(t, "validate", "corpus", dir, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	for _, k := range []string{"partitions", "overall", "skipped", "rows"} {
		assert.Contains(t, raw, k, "contract key %q", k)
	}
	var parts []map[string]any
	require.NoError(t, json.Unmarshal(raw["partitions"], &parts))
	require.Len(t, parts, 1)
	for _, k := range []string{"name", "n", "tpot_mape", "ttft_mape", "tpot_bias", "ttft_bias"} {
		assert.Contains(t, parts[0], k)
	}
	assert.Equal(t, "h100_sxm / Qwen3-235B / vllm / fp8", parts[0]["name"])
	var got view.CorpusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, 8, got.Total, "1 + 2 + 3 CSV rows + 1 + 1 unreadable entry")
	assert.Equal(t, 3, got.Scored)
	reasons := map[string]int{}
	for _, s := range got.Skipped {
		reasons[s.Reason] = s.Count
	}
	assert.Equal(t, map[string]int{
		"cannot express: disaggregated serving":                                  3,
		`cannot express: hardware.gpu: unknown GPU "z9000"`:                      1,
		`unreadable results: mean_ttft_ms: want a number, got the string "fast"`: 1,
	}, reasons)
	require.Len(t, got.Rows, 8)
	assert.Equal(t, 8, got.Rows[2].Concurrency, "rows in the corpus's order")
	r := got.Rows[0]
	require.NotNil(t, r.TTFTErrorPct)
	require.NotNil(t, r.Predicted["ttft"].Median, "median measured: predicted too")
	assert.Nil(t, r.Predicted["ttft"].P90, "p90 not measured: not predicted")
	assert.Equal(t, 4, r.Concurrency)
	assert.Equal(t, 12, r.Requests)
}

func TestValidateCorpusTextCSV(t *testing.T) {
	dir := testCorpus(t)
	code, stdout, stderr := runCLI(t, "validate", "corpus", filepath.Join(dir, "manifest.toml"))
	require.Equal(t, ExitOK, code, stderr)
	for _, want := range []string{"overall   3 of 8 rows scored", "By deployment", "Not scored, by reason", "Worst points"} {
		assert.Contains(t, stdout, want)
	}
	code, stdout, stderr = runCLI(t, "validate", "corpus", dir, "--format", "csv")
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, 9, strings.Count(stdout, "\n"), "a header and one line per row")
	md := filepath.Join(t.TempDir(), "acc.md")
	code, _, stderr = runCLI(t, "validate", "corpus", dir, "--markdown", md, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(b), "**3 of 8 rows scored.**")
	assert.Contains(t, string(b), "| h100_sxm / Qwen3-235B / vllm / fp8 | 3 |")
	page := filepath.Join(t.TempDir(), "c.html")
	code, _, stderr = runCLI(t, "validate", "corpus", dir, "--html", page, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	b, err = os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg", "the MAPE chart")
	assert.Contains(t, string(b), "Not scored")
}

// BenchmarkValidateCorpus times the shipped corpus as docs/ACCURACY.md
// runs it (the CI budget: under 60 s on 2 cores):
//
//	go test ./cmd/moecast/internal/cli -run XXX -bench ValidateCorpus -benchtime 1x -cpu 2
func BenchmarkValidateCorpus(b *testing.B) {
	m, err := openCorpus("")
	require.NoError(b, err)
	for b.Loop() {
		res, err := scoreCorpus(corpusInput{Manifest: m, Every: 1, MaxRows: view.AccuracyMaxRows})
		require.NoError(b, err)
		b.ReportMetric(float64(res.Card.Scored), "rows_scored")
	}
}

func TestValidateCorpusBad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[[entry]]\nname = \"a\"\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{filepath.Join(dir, "nope")}, "nope: no such file or directory"},
		{"no manifest in dir", []string{dir}, "manifest.toml"},
		{"bad manifest", []string{bad}, "bad.toml:1: entry[1].results: missing"},
		{"every and max-rows", []string{"--every", "2", "--max-rows", "3"}, "give --every or --max-rows, not both"},
		{"every zero", []string{"--every", "0"}, "--every: want 1 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"validate", "corpus"}, tc.args...)...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

// TestValidateCorpusExclude: the rows of an entry whose manifest says
// exclude are counted, not scored, under the entry's reason, although its
// scenario loads.
func TestValidateCorpusExclude(t *testing.T) {
	dir := testCorpus(t)
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.toml"))
	require.NoError(t, err)
	withExcl := string(manifest) + `
[[entry]]
name = "excluded"
scenario = "ok.toml"
exclude = "TTFT beyond the server's own capacity"
results = ["runs.jsonl"]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.toml"), []byte(withExcl), 0o644))
	code, stdout, stderr := runCLI(t, "validate", "corpus", dir, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var got view.CorpusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, 10, got.Total, "the 8 rows of testCorpus and the 2 excluded")
	assert.Equal(t, 3, got.Scored, "as without the excluded entry")
	reasons := map[string]int{}
	for _, s := range got.Skipped {
		reasons[s.Reason] = s.Count
	}
	assert.Equal(t, 2, reasons["unreliable: TTFT beyond the server's own capacity"])
	for _, r := range got.Rows[8:] {
		assert.Equal(t, "excluded", r.Entry)
		assert.Nil(t, r.TTFTErrorPct)
	}
}

// TestValidateCorpusBelowBound: a row whose mean TPOT is below the
// decode step's physical lower bound (Qwen3-235B FP8 on 4 H100: about
// 5.5 GB of weights per GPU each step, 1.6 ms at 3.35 TB/s) is counted,
// not scored, with its reason and figures; the same deployment at 12 ms
// is scored.
func TestValidateCorpusBelowBound(t *testing.T) {
	dir := testCorpus(t)
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.toml"))
	require.NoError(t, err)
	withFast := string(manifest) + `
[[entry]]
name = "too-fast"
scenario = "ok.toml"
results = ["fast.json"]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.toml"), []byte(withFast), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fast.json"), []byte(`{"mean_ttft_ms": 150, "mean_tpot_ms": 1, "max_concurrency": 4, "num_prompts": 12, "completed": 12, "total_input_tokens": 3072, "total_output_tokens": 384, "duration": 3}`), 0o644))
	code, stdout, stderr := runCLI(t, "validate", "corpus", dir, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var got view.CorpusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, 3, got.Scored, "as without the too-fast entry")
	last := got.Rows[len(got.Rows)-1]
	assert.Equal(t, "too-fast", last.Entry)
	assert.True(t, strings.HasPrefix(last.Skip, validate.ExcludeBelowBound), last.Skip)
	assert.Contains(t, last.Skip, "mean TPOT 1 ms < ")
	assert.Empty(t, got.Rows[0].Skip, "the same deployment at 12 ms")
}

// TestValidateCorpusHugeLengths: a row whose mean lengths no run can have
// (a corrupt file: 1e30 input tokens per request) is skipped for its
// lengths, named as recorded, not excluded by a lower bound computed from
// them (2.8e+24 ms) nor with a wrapped integer.
func TestValidateCorpusHugeLengths(t *testing.T) {
	dir := testCorpus(t)
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.toml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.toml"), []byte(string(manifest)+`
[[entry]]
name = "huge"
scenario = "ok.toml"
results = ["huge.json"]
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "huge.json"), []byte(`{"mean_ttft_ms": 150, "mean_tpot_ms": 12, "max_concurrency": 4, "num_prompts": 12, "completed": 12, "total_input_tokens": 12e30, "total_output_tokens": 384, "duration": 3}`), 0o644))
	code, stdout, stderr := runCLI(t, "validate", "corpus", dir, "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var got view.CorpusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	last := got.Rows[len(got.Rows)-1]
	require.Equal(t, "huge", last.Entry)
	assert.Regexp(t, `input length: (9.9+e\+29|1e\+30) exceeds the limit`, last.Skip)
	assert.NotContains(t, last.Skip, validate.ExcludeBelowBound)
}

// TestValidateCorpusBaselineAlwaysScored: a row with a peer's own error
// beside it (LLMServingSim's summary.txt) is scored whatever the
// subsample, and does not count in it.
func TestValidateCorpusBaselineAlwaysScored(t *testing.T) {
	dir := testCorpus(t)
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.toml"))
	require.NoError(t, err)
	withBase := string(manifest) + `
[[entry]]
name = "with-baseline"
scenario = "ok.toml"
results = ["run.json"]
baseline = "base.txt"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.toml"), []byte(withBase), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "base.txt"), []byte("TPOT Mean  12.0  12.1  +0.8%\n"), 0o644))
	tests := []struct {
		name       string
		args       []string
		wantScored int
	}{
		{"all", nil, 4},
		{"every 2: rows 1 and 3 of the three, and the baseline", []string{"--every", "2"}, 3},
		{"every 100: the first row and the baseline", []string{"--every", "100"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"validate", "corpus", dir, "--format", "json"}, tt.args...)...)
			require.Equal(t, ExitOK, code, stderr)
			var got view.CorpusJSON
			require.NoError(t, json.Unmarshal([]byte(stdout), &got))
			assert.Equal(t, tt.wantScored, got.Scored)
			last := got.Rows[len(got.Rows)-1]
			assert.Equal(t, "with-baseline", last.Entry)
			assert.Empty(t, last.Skip, "the baseline's row is scored")
		})
	}
}

// TestShippedCorpusExpressesQwen35FP8AndGLM5MTP holds the two groups of
// shipped entries the corpus once could not express: Qwen3.5-397B's
// fp8_block rows load the FP8 release's config (routed experts 8-bit, so
// checkpointMismatch finds nothing, where the model's bf16 config would
// not hold the checkpoint), and the GLM-5 vLLM MTP deployment loads with
// its draft's documented acceptance.
func TestShippedCorpusExpressesQwen35FP8AndGLM5MTP(t *testing.T) {
	m, err := scenarios.ReadManifest(corpus.FS, corpus.Manifest)
	require.NoError(t, err)
	byName := map[string]scenarios.ManifestEntry{}
	for _, e := range m.Entries {
		byName[e.Name] = e
	}
	load := func(name string) (*scenarios.Scenario, scenarios.ManifestEntry) {
		e, ok := byName[name]
		require.True(t, ok, name)
		require.Empty(t, e.Skip, name)
		sc, err := m.Scenario(e)
		require.NoError(t, err, name)
		return sc, e
	}
	fp8, e := load("aiconfigurator/b200-sxm-sglang-qwen3.5-397b-a17b-fp8-block-tp8-dp1-ep1")
	assert.Equal(t, "fp8_block", e.Checkpoint)
	assert.Empty(t, checkpointMismatch(fp8, e.Checkpoint))
	q := fp8.Config.Model.Quant
	assert.Equal(t, 8.0, q.RoutedExperts.Bits)
	assert.Equal(t, [2]int{128, 128}, q.Block)
	assert.Equal(t, 16.0, q.Router.Bits, "the router is in modules_to_not_convert")
	bf16, _ := load("aiconfigurator/b200-sxm-sglang-qwen3.5-397b-a17b-bf16-tp8-dp1-ep1")
	assert.Contains(t, checkpointMismatch(bf16, "fp8_block"), "routed experts as bf16")

	glm, e := load("inferencex/glm-5/tp8")
	assert.Equal(t, "vllm", e.Engine)
	assert.Equal(t, 1, glm.Config.Spec.DraftTokens)
	assert.Equal(t, []float64{0.3659}, glm.Config.Spec.Acceptance)
}
