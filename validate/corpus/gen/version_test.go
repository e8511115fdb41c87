package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// row is a getter over a map of aiconfigurator columns.
func row(cols map[string]string) func(string) string { return func(c string) string { return cols[c] } }

// TestRowVersion: a release in backend_version wins; a nightly or empty
// one falls to the image the source names (a release tag read as its
// release, a nightly tag as the release before its build), then to the
// image InferenceX ran on the measured date; otherwise no version.
func TestRowVersion(t *testing.T) {
	for _, c := range []struct {
		name string
		cols map[string]string
		want string
	}{
		{"release column", map[string]string{"backend": "vllm", "backend_version": "0.19.0",
			"silicon_data_source": "source_file=x.csv; image=vllm/vllm-openai:v0.18.0"}, "0.19.0"},
		{"release image under a nightly column", map[string]string{"backend": "sglang", "backend_version": "nightly-dev",
			"silicon_data_source": "source_file=x.csv; measured=2026-03-03; image=lmsysorg/sglang:v0.5.9-cu130"}, "0.5.9"},
		{"sglang nightly image", map[string]string{"backend": "sglang", "backend_version": "nightly-dev",
			"silicon_data_source": "source_file=2026-04-06.csv; measured=2026-03-20; image=lmsysorg/sglang:nightly-dev-cu13-20260317-1eea7448"}, "0.5.9"},
		{"sglang nightly of February", map[string]string{"backend": "sglang", "backend_version": "nightly-dev-20260216-d3bae71e",
			"silicon_data_source": "db-dump/2026-04-27; config_id=1; lmsysorg/sglang:nightly-dev-20260216-d3bae71e"}, "0.5.8.post1"},
		{"vllm nightly image", map[string]string{"backend": "vllm", "backend_version": "nightly-5b8c30d62b754b57",
			"silicon_data_source": "image=vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306"}, "0.18.0"},
		{"unknown nightly image", map[string]string{"backend": "vllm", "backend_version": "nightly",
			"silicon_data_source": "image=vllm/vllm-openai:nightly-0000000"}, ""},
		{"trtllm release image", map[string]string{"backend": "trtllm", "backend_version": "",
			"silicon_data_source": "image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post2"}, "1.2.0rc6.post2"},
		{"dated, fp4 sglang before v0.5.5", map[string]string{"backend": "sglang", "model_path": "deepseek-ai/DeepSeek-R1", "system": "b200_sxm",
			"precision": "fp4", "silicon_data_source": "source_file=2026-04-06.csv; measured=2025-11-10T00:00:00.000Z; wip=False"}, "0.5.3rc1"},
		{"dated, DeepSeek-V3 dump row read as R1", map[string]string{"backend": "sglang", "model_path": "deepseek-ai/DeepSeek-V3", "system": "b200_sxm",
			"precision": "fp8", "silicon_data_source": "db-dump/2026-04-27; config_id=9; measured=2025-11-18T00:00:00.000Z"}, "0.5.5"},
		{"dated, V3 outside the dump is not R1", map[string]string{"backend": "sglang", "model_path": "deepseek-ai/DeepSeek-V3", "system": "b200_sxm",
			"precision": "fp8", "silicon_data_source": "source_file=x.csv; measured=2025-11-18T00:00:00.000Z"}, ""},
		{"dated, gb200 dynamo trtllm", map[string]string{"backend": "trtllm", "model_path": "deepseek-ai/DeepSeek-R1", "system": "gb200",
			"precision": "fp4", "silicon_data_source": "source_file=x.csv; measured=2025-11-17T00:00:00.000Z"}, "0.5.1-rc0.pre3"},
		{"dated, vllm v0.10.2", map[string]string{"backend": "vllm", "model_path": "openai/gpt-oss-120b", "system": "h100_sxm",
			"precision": "fp4", "silicon_data_source": "source_file=x.csv; measured=2025-11-02T00:00:00.000Z"}, "0.10.2"},
		{"another date", map[string]string{"backend": "vllm", "model_path": "openai/gpt-oss-120b", "system": "h100_sxm",
			"precision": "fp4", "silicon_data_source": "source_file=x.csv; measured=2025-11-03T00:00:00.000Z"}, ""},
		{"no source at all", map[string]string{"backend": "sglang", "backend_version": "nightly-dev", "model_path": "Qwen/Qwen3.5-397B-A17B",
			"system": "b200_sxm", "precision": "bf16", "silicon_data_source": "source_file=qwen3.5-397b-gap-analysis.csv; silicon_concurrency=4"}, ""},
	} {
		v := rowVersion(row(c.cols))
		assert.Equal(t, c.want, v.version, c.name)
		if c.want != "" {
			assert.NotEmpty(t, v.source, c.name)
		}
	}
}

// TestReleaseOfImage: tags as the engines spell their releases.
func TestReleaseOfImage(t *testing.T) {
	for img, want := range map[string]string{
		"lmsysorg/sglang:v0.5.3rc1-cu129-b200":                   "0.5.3rc1",
		"lmsysorg/sglang:v0.5.10.post1-cu130":                    "0.5.10.post1",
		"lmsysorg/sglang:v0.5.8.post1-cu130-runtime":             "0.5.8.post1",
		"vllm/vllm-openai:v0.19.0-cu130":                         "0.19.0",
		"vllm/vllm-openai:v0.10.2":                               "0.10.2",
		"nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2":     "1.1.0rc2.post2",
		"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1":     "0.8.1",
		"nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1-rc0.pre1": "0.5.1-rc0.pre1",
		"vllm/vllm-openai:nightly":                               "",
		"lmsysorg/sglang:nightly-dev-20260216-d3bae71e":          "",
		"nvcr.io/nvidia/tensorrt-llm/release:gpt-oss-dev":        "",
	} {
		got, ok := releaseOfImage(img)
		assert.Equal(t, want, got, img)
		assert.Equal(t, want != "", ok, img)
	}
}

// TestVersionsOf: the version is the key's last field; a layout whose
// deployments ran two versions counts two, "" (unknown) counting as one.
func TestVersionsOf(t *testing.T) {
	keys := []string{"a|tp8|" + versionKey + "0.5.9", "a|tp8|" + versionKey + "0.5.8", "a|tp4|" + versionKey + "0.5.9",
		"b|tp8|" + versionKey, "b|tp8|" + versionKey + "0.10.2", "c|" + versionKey + "1.0"}
	n := versionsOf(keys)
	assert.Equal(t, map[string]int{"a|tp8": 2, "a|tp4": 1, "b|tp8": 2, "c": 1}, n)
	assert.Equal(t, "a|tp8", layoutOfKey("a|tp8|"+versionKey+"0.5.9"))
	assert.Equal(t, "v0.5.9", versionSlug("0.5.9"))
	assert.Equal(t, "version-unknown", versionSlug(""))
}

// TestScenarioTextVersion: engine_version and async_scheduling go into
// [runtime] when set, and are left out otherwise.
func TestScenarioTextVersion(t *testing.T) {
	st := scenarioText{name: "x", config: "c.json", gpu: "h100-sxm", gpus: 8, tp: 8, dp: 1, ep: 1, engine: "vllm", engineVersion: "0.10.2", async: true}
	s := st.String()
	assert.Contains(t, s, "[runtime]\nengine = \"vllm\"\nengine_version = \"0.10.2\"\nasync_scheduling = true\n")
	st.engineVersion, st.async = "", false
	s = st.String()
	assert.NotContains(t, s, "engine_version")
	assert.NotContains(t, s, "async_scheduling")
}

// TestShippedVersions: every shipped aiconfigurator entry's rows resolve
// to the one engine_version its scenario states (a layout whose rows ran
// several versions is split), and only the entries listed as unresolved
// state none.
func TestShippedVersions(t *testing.T) {
	ents, err := filepath.Glob("../aiconfigurator/*.toml")
	require.NoError(t, err)
	require.NotEmpty(t, ents)
	verRE := regexp.MustCompile(`(?m)^engine_version = "([^"]*)"$`)
	copiesRE := regexp.MustCompile(`# (\d+) rows of other collections repeat`)
	var unset []string
	for _, sc := range ents {
		text, err := os.ReadFile(sc)
		require.NoError(t, err)
		f, err := os.Open(strings.TrimSuffix(sc, ".toml") + ".csv")
		require.NoError(t, err)
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err)
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		m := verRE.FindStringSubmatch(string(text))
		state := ""
		if m != nil {
			state = m[1]
		} else {
			unset = append(unset, filepath.Base(sc))
		}
		other := 0
		for _, r := range recs[1:] {
			if rowVersion(func(c string) string { return r[col[c]] }).version != state {
				other++
			}
		}
		// Only rows of other collections that repeat a speculative run's
		// figures (specCopies, counted in the scenario's comment) may
		// resolve otherwise: they are that run's measurement.
		copies := 0
		if c := copiesRE.FindStringSubmatch(string(text)); c != nil {
			copies, _ = strconv.Atoi(c[1])
		}
		assert.LessOrEqual(t, other, copies, "%s: rows of another engine version than %q", sc, state)
		first := rowVersion(func(c string) string { return recs[1][col[c]] })
		assert.Equal(t, state, first.version, "%s: its first row's version", sc)
	}
	assert.Equal(t, []string{"b200-sxm-sglang-qwen3.5-397b-a17b-bf16-tp8-dp1-ep1.toml"}, unset)
}

// TestRowVersionH200: an H200 row that names no image takes the image
// InferenceX's H200 config ran all day on its measured date, none on a
// day the image changed.
func TestRowVersionH200(t *testing.T) {
	for _, c := range []struct {
		backend, model, precision, day, want string
	}{
		{"vllm", "openai/gpt-oss-120b", "fp4", "2025-11-02", "0.10.2"},
		{"vllm", "openai/gpt-oss-120b", "fp4", "2025-11-04", ""},
		{"vllm", "openai/gpt-oss-120b", "fp4", "2025-11-20", "0.11.0"},
		{"vllm", "openai/gpt-oss-120b", "fp4", "2025-12-20", "0.11.2"},
		{"vllm", "openai/gpt-oss-120b", "fp4", "2026-02-10", "0.13.0"},
		{"vllm", "openai/gpt-oss-120b", "fp4", "2026-02-25", ""},
		{"sglang", "deepseek-ai/DeepSeek-R1", "fp8", "2025-11-02", "0.5.2rc2"},
		{"sglang", "deepseek-ai/DeepSeek-R1", "fp8", "2025-11-10", ""},
		{"sglang", "deepseek-ai/DeepSeek-R1", "fp8", "2025-12-15", "0.5.5"},
		{"vllm", "meta-llama/Llama-3.1-70B", "fp8", "2025-10-29", "0.10.2"},
		{"trtllm", "openai/gpt-oss-120b", "fp4", "2025-11-20", ""},
	} {
		v := rowVersion(row(map[string]string{"backend": c.backend, "model_path": c.model, "system": "h200_sxm", "precision": c.precision,
			"silicon_data_source": "source_file=x.csv; measured=" + c.day + "T00:00:00.000Z"}))
		assert.Equal(t, c.want, v.version, c.model+" "+c.day)
	}
}
