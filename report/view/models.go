package view

import (
	"io"

	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/report"
)

// ModelsTable is `moecast models`' table of the embedded model presets:
// dimensions, storage formats, parameter counts (billions) and the weight
// bytes (GB) of the checkpoint as vLLM loads it on one GPU (TP=EP=DP=1,
// MTP layers left out).
func ModelsTable() (*report.Table, error) {
	t := &report.Table{Columns: []report.Column{
		{Name: "name"}, {Name: "architecture"}, {Name: "layers"}, {Name: "hidden"},
		{Name: "experts"}, {Name: "top_k"}, {Name: "shared"}, {Name: "attention"},
		{Name: "expert_format"}, {Name: "other_format"},
		{Name: "params_b", Text: "%.1f"}, {Name: "active_b", Text: "%.1f"}, {Name: "weights_gb", Text: "%.1f"},
	}}
	for _, n := range model.PresetNames() {
		c, err := model.Preset(n)
		if err != nil {
			return nil, err // an embedded preset that does not import is a bug, not bad input
		}
		p := c.Params()
		w := c.Weights(model.Layout{TP: 1, EP: 1, DP: 1})
		t.Add(n, c.Architecture, c.Layers, c.Hidden, c.MoE.Experts, c.MoE.TopK, c.MoE.Shared, AttentionName(c),
			c.Quant.RoutedExperts.Name, c.Quant.Attention.Name,
			p.Total/1e9, p.Active/1e9, w.PerGPUTotal(false).GB())
	}
	return t, nil
}

// AttentionName is "mla", "mla+dsa" or "gqa" (with "+swa" when some layers
// use a sliding window).
func AttentionName(c *model.Config) string {
	n := c.Attn.Kind.String()
	if c.Attn.IndexHeads > 0 {
		n += "+dsa"
	}
	if c.Attn.SlidingLayers > 0 {
		n += "+swa"
	}
	return n
}

// TableViews are the views of a result that is one table: every format
// is the table's rendering.
func TableViews(t *report.Table) report.Views {
	return report.Views{Render: t.Render}
}

// Views of `model show`: its JSON document and its text.
func (sh *ModelShow) Views() report.Views {
	return report.Views{JSON: func() any { return sh }, Text: sh.Text}
}

// GPUsViews are `moecast gpus`' views: the GPU and the fabric presets,
// as two text tables under titles, {"gpus": [...], "fabrics": [...]} or
// two CSV tables an empty line apart.
func GPUsViews() report.Views {
	gpus, fabrics := GPUTable(), FabricTable()
	return report.Views{Render: func(w io.Writer, f report.Format) error {
		switch f {
		case report.JSON:
			return RenderPair(w, string(f), `{"gpus": `, gpus, `, "fabrics": `, fabrics, "}\n")
		case report.CSV:
			return RenderPair(w, string(f), "", gpus, "\n", fabrics, "")
		}
		return RenderPair(w, string(report.Text), "GPUs\n", gpus, "\nFabrics (bandwidths per GPU, per direction)\n", fabrics, "")
	}}
}
