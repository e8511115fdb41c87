package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
)

// ModelShow is `model show`'s JSON document; the text form prints the same.
// Sizes are in bytes.
type ModelShow struct {
	Name              string          `json:"name"`
	Architecture      string          `json:"architecture"`
	ModelType         string          `json:"model_type"`
	Family            string          `json:"family"`
	Layers            int             `json:"layers"`
	DenseLayers       int             `json:"dense_layers"`
	MoELayers         int             `json:"moe_layers"`
	MTPLayers         int             `json:"mtp_layers"`
	Hidden            int             `json:"hidden"`
	Vocab             int             `json:"vocab"`
	DenseIntermediate int             `json:"dense_intermediate"`
	TieEmbeddings     bool            `json:"tie_word_embeddings"`
	Attention         AttentionShow   `json:"attention"`
	MoE               MoEShow         `json:"moe"`
	Quantization      string          `json:"quantization"`
	Params            ParamsShow      `json:"params"`
	Layout            LayoutShow      `json:"layout"`
	Weights           []WeightRowShow `json:"weights"`
	// WeightsBytes and WeightsPerGPUBytes exclude the MTP layers (vLLM
	// loads them only for MTP speculative decoding); *_with_mtp include them.
	WeightsBytes              float64  `json:"weights_bytes"`
	WeightsPerGPUBytes        float64  `json:"weights_per_gpu_bytes"`
	WeightsBytesWithMTP       float64  `json:"weights_bytes_with_mtp"`
	WeightsPerGPUBytesWithMTP float64  `json:"weights_per_gpu_bytes_with_mtp"`
	KV                        []KVShow `json:"kv_cache"`
	// LayerKinds lists the groups of alike layers of a model whose layers
	// differ (hybrids, local/global attention, per-layer widths); absent
	// for a model of uniform layers.
	LayerKinds []LayerKindShow `json:"layer_kinds,omitempty"`
	// RecurrentStateBytesPerSeq is the linear-attention / Mamba state one
	// sequence holds over the model (0 without recurrent layers).
	RecurrentStateBytesPerSeq float64  `json:"recurrent_state_bytes_per_seq,omitempty"`
	Notes                     []string `json:"notes"`
}

type LayerKindShow struct {
	Name   string `json:"name"`
	Layers int    `json:"layers"`
	Mixer  string `json:"mixer"`
	// Attention: kind, heads/kv heads x head dim, window, sparse top-k.
	Attention string `json:"attention,omitempty"`
	FFN       string `json:"ffn"`
}

type AttentionShow struct {
	Kind          string `json:"kind"`
	Heads         int    `json:"heads"`
	KVHeads       int    `json:"kv_heads"`
	HeadDim       int    `json:"head_dim,omitempty"`
	QLoRARank     int    `json:"q_lora_rank,omitempty"`
	KVLoRARank    int    `json:"kv_lora_rank,omitempty"`
	QKNopeDim     int    `json:"qk_nope_head_dim,omitempty"`
	QKRopeDim     int    `json:"qk_rope_head_dim,omitempty"`
	VHeadDim      int    `json:"v_head_dim,omitempty"`
	SlidingWindow int    `json:"sliding_window,omitempty"`
	SlidingLayers int    `json:"sliding_layers,omitempty"`
	IndexHeads    int    `json:"index_heads,omitempty"`
	IndexHeadDim  int    `json:"index_head_dim,omitempty"`
	IndexTopK     int    `json:"index_topk,omitempty"`
}

type MoEShow struct {
	Experts            int `json:"experts"`
	TopK               int `json:"top_k"`
	Shared             int `json:"shared"`
	Intermediate       int `json:"intermediate"`
	SharedIntermediate int `json:"shared_intermediate"`
}

type ParamsShow struct {
	Total  float64 `json:"total"`
	Active float64 `json:"active"`
	MTP    float64 `json:"mtp"`
}

type LayoutShow struct {
	TP             int  `json:"tp"`
	EP             int  `json:"ep"`
	DP             int  `json:"dp"`
	DPAttention    bool `json:"dp_attention"`
	AttentionTP    int  `json:"attention_tp"`
	ExpertTP       int  `json:"expert_tp"`
	ExpertsPerRank int  `json:"experts_per_rank"`
}

type WeightRowShow struct {
	Class       string  `json:"class"`
	Format      string  `json:"format"`
	Params      float64 `json:"params"`
	Bytes       float64 `json:"bytes"`
	PerGPUBytes float64 `json:"per_gpu_bytes"`
}

type KVShow struct {
	DType          string  `json:"dtype"`
	BytesPerToken  float64 `json:"bytes_per_token"`
	PerGPUPerToken float64 `json:"per_gpu_bytes_per_token"`
	// Checkpoint: the checkpoint declares this KV-cache dtype
	// (kv_cache_scheme / kv_cache_quant_algo), the scenario's default.
	Checkpoint bool `json:"from_checkpoint,omitempty"`
}

func (sh *ModelShow) Text(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("model         %s", sh.Name)
	p("architecture  %s (model_type %s)", sh.Architecture, sh.ModelType)
	p("layers        %d: %d dense, %d MoE; %d MTP", sh.Layers, sh.DenseLayers, sh.MoELayers, sh.MTPLayers)
	dense := ""
	if sh.DenseLayers > 0 {
		dense = fmt.Sprintf(", dense intermediate %d", sh.DenseIntermediate)
	}
	p("dims          hidden %d, vocab %d%s", sh.Hidden, sh.Vocab, dense)
	a := sh.Attention
	if strings.HasPrefix(a.Kind, "mla") {
		p("attention     %s: %d heads, q_lora %d, kv_lora %d, qk nope/rope %d/%d, v %d", a.Kind, a.Heads, a.QLoRARank, a.KVLoRARank, a.QKNopeDim, a.QKRopeDim, a.VHeadDim)
		if a.IndexHeads > 0 {
			p("              DSA indexer: %d heads x %d, top-%d tokens", a.IndexHeads, a.IndexHeadDim, a.IndexTopK)
		}
	} else {
		p("attention     %s: %d query heads, %d kv heads, head_dim %d", a.Kind, a.Heads, a.KVHeads, a.HeadDim)
		if a.SlidingLayers > 0 {
			p("              sliding window %d tokens on %d layers", a.SlidingWindow, a.SlidingLayers)
		}
	}
	for _, k := range sh.LayerKinds {
		a := ""
		if k.Attention != "" {
			a = " " + k.Attention
		}
		p("  kind        %3d x %-22s %s%s; ffn %s", k.Layers, k.Name, k.Mixer, a, k.FFN)
	}
	if sh.RecurrentStateBytesPerSeq > 0 {
		p("state         %s per sequence (recurrent layers, instead of KV)", unit.Bytes(sh.RecurrentStateBytesPerSeq))
	}
	m := sh.MoE
	shared := "no shared expert"
	if m.Shared > 0 {
		shared = fmt.Sprintf("%d shared (intermediate %d)", m.Shared, m.SharedIntermediate)
	}
	p("moe           %d routed experts, top-%d, intermediate %d; %s", m.Experts, m.TopK, m.Intermediate, shared)
	p("quantization  %s", sh.Quantization)
	p("params        %.2fB total, %.2fB active per token, %.2fB in MTP layers", sh.Params.Total/1e9, sh.Params.Active/1e9, sh.Params.MTP/1e9)
	l := sh.Layout
	dpa := ""
	if l.DPAttention {
		dpa = ", dp-attention"
	}
	p("layout        tp %d, ep %d, dp %d%s: attention-TP %d, expert-TP %d, %d experts per GPU", l.TP, l.EP, l.DP, dpa, l.AttentionTP, l.ExpertTP, l.ExpertsPerRank)
	p("")
	t := &report.Table{Columns: []report.Column{{Name: "class"}, {Name: "format"}, {Name: "params_b", Text: "%.3f"}, {Name: "total_gb", Text: "%.3f"}, {Name: "per_gpu_gb", Text: "%.3f"}}}
	for _, r := range sh.Weights {
		t.Add(r.Class, r.Format, r.Params/1e9, r.Bytes/1e9, r.PerGPUBytes/1e9)
	}
	if sh.MTPLayers > 0 {
		t.Add("sum (no mtp)", "", sh.Params.Total/1e9, sh.WeightsBytes/1e9, sh.WeightsPerGPUBytes/1e9)
		t.Add("sum with mtp", "", (sh.Params.Total+sh.Params.MTP)/1e9, sh.WeightsBytesWithMTP/1e9, sh.WeightsPerGPUBytesWithMTP/1e9)
	} else {
		t.Add("sum", "", sh.Params.Total/1e9, sh.WeightsBytes/1e9, sh.WeightsPerGPUBytes/1e9)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := t.Render(w, report.Text); err != nil {
		return err
	}
	b.Reset()
	p("")
	for _, kv := range sh.KV {
		from := ""
		if kv.Checkpoint {
			from = " (from checkpoint)"
		}
		p("kv cache %-4s %s per token, %s per token per GPU%s", kv.DType, unit.Bytes(kv.BytesPerToken), unit.Bytes(kv.PerGPUPerToken), from)
	}
	for _, n := range sh.Notes {
		p("note: %s", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
