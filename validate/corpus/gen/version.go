package main

import (
	"regexp"
	"strings"
)

// engineVersion is the engine version a row ran (runtime.engine_version,
// the release as the engine spells it: "0.5.9", "1.2.0rc6.post2") and
// where that is read; version "" = no source gives it.
type engineVersion struct {
	version, source string
}

// rowVersion is the engine version of an aiconfigurator row, from
// documented sources only, in this order:
//   - the row's backend_version column, where it names a release (not a
//     nightly tag, not empty);
//   - the container image its silicon_data_source names: a release tag
//     gives its release ("lmsysorg/sglang:v0.5.9-cu130": 0.5.9), a
//     nightly tag the last release before its build (nightlyReleases);
//   - for a row that names no image, the image InferenceX ran for its
//     config on the date the row was measured (datedImages).
func rowVersion(get func(string) string) engineVersion {
	bv := strings.TrimSpace(get("backend_version"))
	if bv != "" && !strings.HasPrefix(bv, "nightly") {
		return engineVersion{bv, "the rows' backend_version column"}
	}
	src := get("silicon_data_source")
	if img := imageOf(src); img != "" {
		if v, ok := releaseOfImage(img); ok {
			return engineVersion{v, "the image the rows' silicon_data_source names, " + img}
		}
		tag := img[strings.LastIndex(img, ":")+1:]
		for _, n := range nightlyReleases {
			if n.tag == tag {
				return engineVersion{n.version, "the image the rows' silicon_data_source names, " + img + ", a nightly build: " + n.why}
			}
		}
		return engineVersion{}
	}
	model := get("model_path")
	if model == "deepseek-ai/DeepSeek-V3" && strings.HasPrefix(src, "db-dump/") {
		model = "deepseek-ai/DeepSeek-R1" // InferenceX's dsr1 configs, listed as DeepSeek-V3 (see launch)
	}
	for _, d := range datedImages {
		if d.backend != get("backend") || d.model != model || d.system != get("system") || !strings.Contains(d.precisions, "|"+get("precision")+"|") {
			continue
		}
		for _, day := range d.measured {
			if strings.Contains(src, "measured="+day) {
				v, _ := releaseOfImage(d.image)
				return engineVersion{v, "no version or image in the rows; measured " + day + ": " + d.source}
			}
		}
	}
	return engineVersion{}
}

// releaseTagRE reads a release out of an image tag: vLLM's and SGLang's
// "v0.19.0-cu130", "v0.5.3rc1-cu129-b200", "v0.5.10.post1-cu130",
// TensorRT-LLM's "release:1.2.0rc6.post2" and Dynamo's runtime
// "0.5.1-rc0.pre3" (the form aiconfigurator's backend_version column
// records for those images).
var releaseTagRE = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:(?:rc|\.post|\.dev|-rc|-dev\.)\d+)*(?:\.pre\d+|\.post\d+)?)(?:-.*)?$`)

// releaseOfImage is the release an image's tag names; false for a
// nightly or another tag.
func releaseOfImage(img string) (string, bool) {
	tag := img[strings.LastIndex(img, ":")+1:]
	if strings.Contains(img, "/tensorrtllm-runtime:") || strings.Contains(img, "/sglang-runtime:") || strings.Contains(img, "/vllm-runtime:") {
		// A Dynamo runtime image: its own version, as the
		// backend_version column records the rows of the same image
		// (tensorrtllm-runtime:0.5.1-rc0.pre3: "0.5.1-rc0.pre3").
		if regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(tag) {
			return tag, true
		}
		return "", false
	}
	m := releaseTagRE.FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// nightlyRelease maps a nightly image tag to the last release before the
// build (the brief's rule: a nightly is taken as the release it
// follows). The engines' tag dates could not be read here (the
// sgl-project/sglang and vllm-project/vllm snapshots exceed the fetch
// limit); a release's date is bracketed by the first record of it in
// use: SemiAnalysisAI/InferenceX commits (the mirror, @ 843c625) and
// aiconfigurator rows (backend_version with a measured= date). A nightly
// maps to release R where R is recorded in use before the build date
// and the next release only after it.
type nightlyRelease struct {
	tag, version, why string
}

var nightlyReleases = []nightlyRelease{
	{"nightly-dev-20260216-d3bae71e", "0.5.8.post1", "built 2026-02-16 (the tag's date); SGLang v0.5.8.post1 is in use before it " +
		"(aiconfigurator rows measured 2026-02-07 with backend_version 0.5.8.post1; InferenceX e9cf9379c, 2026-02-12, MI355X image v0.5.8.post1) " +
		"and v0.5.9 only after it (InferenceX ace89a2c9, 2026-02-25, the first image v0.5.9)"},
	{"nightly-dev-cu13-20260317-1eea7448", "0.5.9", "built 2026-03-17 (the tag's date); SGLang v0.5.9 is in use from 2026-02-25 " +
		"(InferenceX ace89a2c9) and v0.5.10 only after it (v0.5.10rc0, a pre-release, first in InferenceX 5077256b0 on 2026-03-31; " +
		"the first v0.5.10 release in the rows, 0.5.10.post1, measured 2026-04-17)"},
	{"nightly-dev-cu13-20260328-a27651d5", "0.5.9", "built 2026-03-28 (the tag's date); SGLang v0.5.9 is in use from 2026-02-25 " +
		"(InferenceX ace89a2c9) and v0.5.10 only after it (v0.5.10rc0, a pre-release, first in InferenceX 5077256b0 on 2026-03-31)"},
	{"nightly-dev-cu13-20260401-b6fe0cca", "0.5.9", "built 2026-04-01 (the tag's date); the last SGLang release in use before it is v0.5.9 " +
		"(InferenceX ace89a2c9, 2026-02-25; v0.5.10rc0 of 2026-03-31, InferenceX 5077256b0, is a pre-release; the first v0.5.10 release in the rows, " +
		"0.5.10.post1, measured 2026-04-17)"},
	{"nightly-dev-20260402-d7256eb6", "0.5.9", "built 2026-04-02 (the tag's date); the last SGLang release in use before it is v0.5.9 " +
		"(InferenceX ace89a2c9, 2026-02-25; v0.5.10rc0 of 2026-03-31, InferenceX 5077256b0, is a pre-release; the first v0.5.10 release in the rows, " +
		"0.5.10.post1, measured 2026-04-17)"},
	{"nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306", "0.18.0", "vLLM main at 5b8c30d, built by 2026-04-02 20:18 UTC " +
		"(InferenceX PR #996, 08bcde8, first ran it then); vLLM v0.18.0 is in use before it (InferenceX 1d5cae1 and cec542a, 2026-03-27; " +
		"aiconfigurator rows measured 2026-03-27 with backend_version 0.18.0) and v0.18.1 and v0.19.0 only after it (InferenceX 1ac9636, " +
		"2026-04-03, moved this config from the nightly to v0.19.0-cu130; 1f44d4983, 2026-04-06, the first v0.18.1). A nightly holds main's " +
		"commits after v0.18.0: behaviour that came with v0.19.0 (vLLM PR #37307, scheduler_reserve_full_isl) may already be in it"},
}

// datedImage is the image InferenceX ran for a config on the days its
// rows were measured, for rows that name neither a version nor an image.
// InferenceX's scheduled sweeps ran at 00:00 UTC (full-sweep-*-scheduler.yml
// @ 79abd6c: cron "0 0 * * *") with the main branch of that moment; a
// row's measured= date is the run's day.
type datedImage struct {
	backend, model, system string
	precisions             string // "|fp4|fp8|"
	measured               []string
	image, source          string
}

var datedImages = []datedImage{
	{"sglang", "deepseek-ai/DeepSeek-R1", "b200_sxm", "|fp4|fp8|", []string{"2025-11-02", "2025-11-10"}, "lmsysorg/sglang:v0.5.3rc1-cu129-b200",
		"SemiAnalysisAI/InferenceX @ e06929c .github/workflows/dsr1-tmpl.yml (bmk-b200-fp4, bmk-b200-fp8: image lmsysorg/sglang:v0.5.3rc1-cu129-b200), " +
			"and @ 79abd6c .github/configs/nvidia-master.yaml (dsr1-fp4-b200-sglang, dsr1-fp8-b200-sglang: the same image), main at the 2025-11-10 00:00 UTC " +
			"scheduled sweep (workflow runs 122-124, one per sequence length); d8fe8f7 moved them to v0.5.5-cu129-amd64 at 19:55 UTC that day"},
	{"sglang", "deepseek-ai/DeepSeek-R1", "b200_sxm", "|fp4|fp8|", []string{"2025-11-18"}, "lmsysorg/sglang:v0.5.5-cu129-amd64",
		"SemiAnalysisAI/InferenceX @ 0ba7aa3 .github/configs/nvidia-master.yaml (dsr1-fp8-b200-sglang: image lmsysorg/sglang:v0.5.5-cu129-amd64, from d8fe8f7, 2025-11-10)"},
	{"trtllm", "deepseek-ai/DeepSeek-R1", "b200_sxm", "|fp4|fp8|", []string{"2025-11-02"}, "nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2",
		"SemiAnalysisAI/InferenceX @ e06929c .github/workflows/dsr1-tmpl.yml (bmk-b200-trt-fp4, bmk-b200-trt-fp8: image nvcr.io#nvidia/tensorrt-llm/release:1.1.0rc2.post2)"},
	{"trtllm", "deepseek-ai/DeepSeek-R1", "gb200", "|fp4|", []string{"2025-11-16", "2025-11-17"}, "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1-rc0.pre3",
		"SemiAnalysisAI/InferenceX @ 97f253b and 0ba7aa3 .github/workflows/full-sweep-1k1k-scheduler.yml and full-sweep-8k1k-scheduler.yml " +
			"(the GB200 DeepSeek-R1 fp4 multinode configs: image nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1-rc0.pre3, Dynamo's version as " +
			"the backend_version column records the rows of that image)"},
	{"trtllm", "meta-llama/Llama-3.1-70B", "b200_sxm", "|fp4|fp8|", []string{"2025-10-29"}, "nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2",
		"SemiAnalysisAI/InferenceX @ 9596d23 .github/workflows/70b-tmpl.yml (bmk-b200-trt-fp8, bmk-b200-trt-fp4: image nvcr.io#nvidia/tensorrt-llm/release:1.1.0rc2.post2; " +
			"2582bce removed the 70b configs that day)"},
	{"trtllm", "openai/gpt-oss-120b", "b200_sxm", "|fp4|", []string{"2025-11-02", "2025-11-14", "2025-12-02"}, "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc0.post1",
		"SemiAnalysisAI/InferenceX @ e06929c .github/workflows/gptoss-tmpl.yml (bmk-b200-trt: image nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc0.post1), " +
			"the same in .github/configs/nvidia-master.yaml (gptoss-fp4-b200-trt) @ 97f253b and @ 175fe53 (main at 2025-12-02 00:00 UTC); 1.2.0rc2 only by 0fe9dcc (2025-12-05)"},
	{"vllm", "meta-llama/Llama-3.1-70B", "b200_sxm", "|fp4|fp8|", []string{"2025-10-29"}, "vllm/vllm-openai:v0.10.2",
		"SemiAnalysisAI/InferenceX @ 9596d23 .github/workflows/70b-tmpl.yml (bmk-b200-fp8, bmk-b200-fp4: image vllm/vllm-openai:v0.10.2)"},
	{"vllm", "meta-llama/Llama-3.1-70B", "h100_sxm", "|fp8|", []string{"2025-10-29"}, "vllm/vllm-openai:v0.10.2",
		"SemiAnalysisAI/InferenceX @ 9596d23 .github/workflows/70b-tmpl.yml (bmk-h100-fp8: image vllm/vllm-openai:v0.10.2)"},
	{"vllm", "openai/gpt-oss-120b", "b200_sxm", "|fp4|", []string{"2025-11-02"}, "vllm/vllm-openai:v0.10.2",
		"SemiAnalysisAI/InferenceX @ e06929c .github/workflows/gptoss-tmpl.yml (bmk-b200: image vllm/vllm-openai:v0.10.2)"},
	{"vllm", "openai/gpt-oss-120b", "h100_sxm", "|fp4|", []string{"2025-11-02"}, "vllm/vllm-openai:v0.10.2",
		"SemiAnalysisAI/InferenceX @ e06929c .github/workflows/gptoss-tmpl.yml (bmk-h100: image vllm/vllm-openai:v0.10.2)"},
	{"vllm", "openai/gpt-oss-120b", "h100_sxm", "|fp4|", []string{"2025-12-05"}, "vllm/vllm-openai:v0.11.0",
		"SemiAnalysisAI/InferenceX @ 7c33829 .github/configs/nvidia-master.yaml (main at 2025-12-05 00:00 UTC; gptoss-fp4-h100-vllm: image vllm/vllm-openai:v0.11.0)"},
}

// versionKey marks the engine version, the last field of a row's
// deployment key.
const versionKey = "engine_version="

// layoutOfKey is a deployment key without its engine version.
func layoutOfKey(key string) string {
	if i := strings.LastIndex(key, "|"+versionKey); i >= 0 {
		return key[:i]
	}
	return key
}

// versionsOf counts, for each deployment key without its version, the
// engine versions its rows ran ("" = unknown counts as one).
func versionsOf(keys []string) map[string]int {
	seen := map[string]map[string]bool{}
	for _, k := range keys {
		l := layoutOfKey(k)
		if seen[l] == nil {
			seen[l] = map[string]bool{}
		}
		seen[l][strings.TrimPrefix(k[len(l):], "|"+versionKey)] = true
	}
	n := map[string]int{}
	for l, vs := range seen {
		n[l] = len(vs)
	}
	return n
}

// versionSlug is the name suffix of one version's entry of a layout
// whose rows ran several.
func versionSlug(v string) string {
	if v == "" {
		return "version-unknown"
	}
	return "v" + v
}

// versionNote is the scenario comment that says where its engine_version
// is read, or that no source gives it.
func versionNote(v engineVersion) string {
	if v.version == "" {
		return "Engine version: no source gives it (no release in backend_version, no image or dated run to read it from); " +
			"runtime.engine_version is left out, so the defaults that follow the version are the newest's."
	}
	return "Engine version " + v.version + ": " + v.source + "."
}
