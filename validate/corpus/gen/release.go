package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// fp8Release is an FP8 release whose config.json is not among the shared
// configs: the model's own config.json (a shared one) with the release's
// quantization_config added, every other key of the release's file being
// the model's. quant builds that block from the model's config (its
// per-module lists follow the layers); source says where the block and
// the equality of the other keys were read.
type fp8Release struct {
	model, release string // names without the org: the model's shared config, the release
	quant          func(cfg map[string]any) (map[string]any, error)
	source         string
}

// fp8Releases are the releases fp8Release knows.
var fp8Releases = []fp8Release{
	// Qwen/Qwen3.5-397B-A17B-FP8 @ ea5b4f81096f3901c91dea97f81324302495781d
	// (Apache-2.0), config.json as snapshotted verbatim, with its LICENSE
	// and the revision in SOURCE.json, in aios-tpu-infra/tpu_benchmark_daily
	// @ d280a89 models/Qwen3.5-397B-A17B-FP8/ (added at 262292a): every key
	// but quantization_config equals the shared Qwen--Qwen3.5-397B-A17B
	// config.json, and quantization_config is what qwen35FP8Quant builds
	// (checked entry for entry against that file, 372 modules). It is the
	// checkpoint InferenceX's qwen3.5-fp8 configs serve
	// (SemiAnalysisAI/InferenceX @ efd49e5 .github/configs/nvidia-master.yaml,
	// qwen3.5-fp8-b200-sglang: model Qwen/Qwen3.5-397B-A17B-FP8).
	{model: "Qwen3.5-397B-A17B", release: "Qwen3.5-397B-A17B-FP8", quant: qwen35FP8Quant,
		source: "Qwen/Qwen3.5-397B-A17B-FP8 @ ea5b4f81096f3901c91dea97f81324302495781d config.json (Apache-2.0; snapshotted verbatim in " +
			"aios-tpu-infra/tpu_benchmark_daily @ d280a89 models/Qwen3.5-397B-A17B-FP8/config.json), whose keys other than quantization_config are this config's"},
}

// qwen35FP8Quant is the quantization_config of Qwen's Qwen3.5 FP8
// release: fp8 e4m3 weights in 128 x 128 blocks with dynamic activation
// scales, except (modules_to_not_convert) lm_head, the token embedding,
// each Gated DeltaNet layer's conv1d, in_proj_a and in_proj_b, every
// layer's router (mlp.gate) and shared-expert gate, the vision tower's
// linear modules, patch embedding and position embedding, and the MTP
// layers' fc, routers and shared-expert gates; the list sorted by name,
// as the release's is.
func qwen35FP8Quant(cfg map[string]any) (map[string]any, error) {
	text, _ := cfg["text_config"].(map[string]any)
	vision, _ := cfg["vision_config"].(map[string]any)
	if text == nil || vision == nil {
		return nil, fmt.Errorf("want text_config and vision_config objects")
	}
	types, _ := text["layer_types"].([]any)
	mtp, _ := text["mtp_num_hidden_layers"].(float64)
	depth, _ := vision["depth"].(float64)
	if len(types) == 0 || depth <= 0 {
		return nil, fmt.Errorf("want text_config.layer_types and vision_config.depth")
	}
	skip := []string{"lm_head", "model.language_model.embed_tokens"}
	for i, t := range types {
		p := fmt.Sprintf("model.language_model.layers.%d.", i)
		switch t {
		case "linear_attention":
			skip = append(skip, p+"linear_attn.conv1d", p+"linear_attn.in_proj_a", p+"linear_attn.in_proj_b")
		case "full_attention":
		default:
			return nil, fmt.Errorf("text_config.layer_types[%d]: unknown layer type %v", i, t)
		}
		skip = append(skip, p+"mlp.gate", p+"mlp.shared_expert_gate")
	}
	for b := 0; b < int(depth); b++ {
		p := fmt.Sprintf("model.visual.blocks.%d.", b)
		skip = append(skip, p+"attn.proj", p+"attn.qkv", p+"mlp.linear_fc1", p+"mlp.linear_fc2")
	}
	skip = append(skip, "model.visual.merger.linear_fc1", "model.visual.merger.linear_fc2", "model.visual.patch_embed.proj", "model.visual.pos_embed", "mtp.fc")
	for j := 0; j < int(mtp); j++ {
		p := fmt.Sprintf("mtp.layers.%d.", j)
		skip = append(skip, p+"mlp.gate", p+"mlp.shared_expert_gate")
	}
	sort.Strings(skip)
	return map[string]any{
		"quant_method": "fp8", "activation_scheme": "dynamic", "weight_per_tensor": false, "act_per_tensor": false,
		"weight_block_size": []int{128, 128}, "modules_to_not_convert": skip,
	}, nil
}

// fp8Release writes the config of the FP8 release of the first of names
// that fp8Releases knows and whose own config is among the shared ones
// (lookup("")), as derived--<release>_config.json in the corpus; "" when
// none.
func (g *gen) fp8Release(names []string, lookup func(string) string) (string, error) {
	for _, r := range fp8Releases {
		found := false
		for _, nm := range names {
			found = found || strings.EqualFold(nm, r.model)
		}
		if !found {
			continue
		}
		own := lookup("")
		if own == "" {
			return "", nil
		}
		raw, err := os.ReadFile(filepath.Join(g.configs, own))
		if err != nil {
			return "", err
		}
		out, err := withQuant(raw, r)
		if err != nil {
			return "", fmt.Errorf("%s: %w", own, err)
		}
		base := "derived--" + r.release + "_config.json"
		return base, g.write("configs/"+base, out)
	}
	return "", nil
}

// withQuant is config.json raw with r's quantization_config and a
// derived_by note added as its last keys; the model's keys are kept
// verbatim.
func withQuant(raw []byte, r fp8Release) ([]byte, error) {
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	if _, ok := cfg["quantization_config"]; ok {
		return nil, fmt.Errorf("already has a quantization_config")
	}
	q, err := r.quant(cfg)
	if err != nil {
		return nil, err
	}
	qj, err := json.MarshalIndent(q, "  ", "  ")
	if err != nil {
		return nil, err
	}
	note, _ := json.Marshal("moecast validate/corpus/gen: the model's config.json with the quantization_config of " + r.source)
	body := bytes.TrimRight(raw, " \t\r\n")
	if len(body) == 0 || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("not a JSON object")
	}
	body = bytes.TrimRight(body[:len(body)-1], " \t\r\n")
	var b bytes.Buffer
	b.Write(body)
	fmt.Fprintf(&b, ",\n  \"quantization_config\": %s,\n  \"derived_by\": %s\n}\n", qj, note)
	return b.Bytes(), nil
}
