package model

import "fmt"

// hfKimiVision mirrors the vision_config of KimiK25ForConditionalGeneration
// (MoonViT), read only to state what the text model leaves out.
type hfKimiVision struct {
	VisionConfig *struct {
		Hidden int `json:"vt_hidden_size"`
		Inter  int `json:"vt_intermediate_size"`
		Layers int `json:"vt_num_hidden_layers"`
	} `json:"vision_config"`
}

// noteVision notes a multimodal wrapper's vision tower, which moecast does
// not count: decode of text never runs it. For Kimi-K2.5 it gives the
// tower's size from its dimensions: per layer q/k/v/o (4h^2 + 4h), the MLP
// (2hi + h + i) and two LayerNorms (4h); the Kimi-K2.5 model card states
// 400M for its MoonViT encoder.
func noteVision(d *doc, c *Config, arch string) {
	if arch != "KimiK25ForConditionalGeneration" {
		return
	}
	var v hfKimiVision
	if d.decode(&v) != nil || v.VisionConfig == nil {
		return
	}
	h, i, n := float64(v.VisionConfig.Hidden), float64(v.VisionConfig.Inter), v.VisionConfig.Layers
	if h <= 0 || i <= 0 || n <= 0 || h > maxHidden || i > maxInter || n > maxLayers {
		return
	}
	params := float64(n) * (4*h*h + 4*h + 2*h*i + h + i + 4*h)
	c.Notes = append(c.Notes, fmt.Sprintf("vision tower not counted (MoonViT, vision_config: %d layers, hidden %d, intermediate %d: %.2fB parameters, %.2f GB in bf16; "+
		"the model card states 400M), nor its patch-merger projector: text decode never runs them, though vLLM loads them by default",
		n, v.VisionConfig.Hidden, v.VisionConfig.Inter, params/1e9, 2*params/1e9))
}
