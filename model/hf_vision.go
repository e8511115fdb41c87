package model

import (
	"fmt"
	"strings"
)

// hfKimiVision mirrors the vision_config of KimiK25ForConditionalGeneration
// (MoonViT), read only to state what the text model leaves out; the
// generic keys (hidden_size, intermediate_size, depth or
// num_hidden_layers) are those of the other wrappers' towers.
type hfKimiVision struct {
	VisionConfig *struct {
		Hidden    int `json:"vt_hidden_size"`
		Inter     int `json:"vt_intermediate_size"`
		Layers    int `json:"vt_num_hidden_layers"`
		HiddenG   int `json:"hidden_size"`
		InterG    int `json:"intermediate_size"`
		Depth     int `json:"depth"`
		NumLayers int `json:"num_hidden_layers"`
	} `json:"vision_config"`
}

// noteVision notes a multimodal wrapper's vision tower, which moecast does
// not count: decode of text never runs it. For Kimi-K2.5 it gives the
// tower's size from its dimensions: per layer q/k/v/o (4h^2 + 4h), the MLP
// (2hi + h + i) and two LayerNorms (4h); the Kimi-K2.5 model card states
// 400M for its MoonViT encoder.
func noteVision(d *doc, c *Config, arch string) {
	var v hfKimiVision
	if d.decode(&v) != nil || v.VisionConfig == nil {
		return
	}
	if vc := v.VisionConfig; vc.NumLayers >= 0 && vc.NumLayers <= maxLayers && vc.HiddenG >= 0 && vc.HiddenG <= maxHidden {
		c.Vision = Vision{Present: true, Layers: vc.NumLayers, Hidden: vc.HiddenG}
	} else {
		c.Vision = Vision{Present: true}
	}
	if arch != "KimiK25ForConditionalGeneration" {
		noteVisionTower(c, v)
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

// noteVisionTower notes the vision tower of a multimodal wrapper other
// than Kimi-K2.5 (Qwen3-VL, Qwen3.5, Gemma-4, MiniMax-M3, Kimi-K3), which
// moecast does not count, with its approximate size from vision_config:
// per layer q/k/v/o and a two-matrix MLP (4h^2 + 2hi), patch embedding and
// merger left out. The family's own note, if any, is replaced.
func noteVisionTower(c *Config, v hfKimiVision) {
	vc := v.VisionConfig
	h, i, n := vc.HiddenG, vc.InterG, max(vc.Depth, vc.NumLayers)
	if vc.Hidden > 0 {
		h, i, n = vc.Hidden, vc.Inter, vc.Layers
	}
	for k := len(c.Notes) - 1; k >= 0; k-- {
		if strings.HasPrefix(c.Notes[k], "vision tower not counted") {
			c.Notes = append(c.Notes[:k], c.Notes[k+1:]...)
		}
	}
	if h <= 0 || i <= 0 || n <= 0 || h > maxHidden || i > maxInter || n > maxLayers {
		c.Notes = append(c.Notes, "vision tower not counted (vision_config): text decode never runs it, though vLLM loads it by default")
		return
	}
	params := float64(n) * (4*float64(h)*float64(h) + 2*float64(h)*float64(i))
	c.Notes = append(c.Notes, fmt.Sprintf("vision tower not counted (vision_config: %d layers, hidden %d, intermediate %d: about %.2fB parameters): "+
		"text decode never runs it, though vLLM loads it by default", n, h, i, params/1e9))
}
