package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/dtype"
)

// This file reads quantization_config and decides the storage format of
// each weight class, the way vLLM's quantization configs dispatch:
//
//   - fp8 (Fp8Config): every linear layer and the fused MoE experts, except
//     the modules listed in modules_to_not_convert / ignored_layers;
//   - mxfp4 (Mxfp4Config): only the fused MoE experts; linear layers stay
//     unquantized;
//   - compressed-tensors (CompressedTensorsConfig): each linear module whose
//     name or class a config group targets and that the ignore list does not
//     name; ignore entries are exact module names or "re:" regexes matched
//     from the start of the name (Python re.match).
//
// In all three, vLLM builds the MoE router as ReplicatedLinear with
// quant_config=None and keeps embed_tokens and lm_head (VocabParallelEmbedding
// / ParallelLMHead, not LinearBase) unquantized, so those stay in the
// checkpoint dtype.

// hfQuant mirrors quantization_config.
type hfQuant struct {
	QuantMethod string `json:"quant_method"`
	// fp8
	Fmt              string `json:"fmt"`
	ActivationScheme string `json:"activation_scheme"`
	WeightBlockSize  []int  `json:"weight_block_size"`
	// fp8 (vLLM spelling) and mxfp4 / HF
	IgnoredLayers       []string `json:"ignored_layers"`
	ModulesToNotConvert []string `json:"modules_to_not_convert"`
	// compressed-tensors
	Format       string             `json:"format"`
	ConfigGroups map[string]ctGroup `json:"config_groups"`
	Ignore       []string           `json:"ignore"` // also ModelOpt's exclude list in config.json
	// KVCacheScheme is compressed-tensors' (and ModelOpt's, in
	// config.json) KV-cache quantization: null, an args object
	// ({"num_bits": 8, "type": "float"}) or a name ("FP8").
	KVCacheScheme json.RawMessage `json:"kv_cache_scheme"`
	// ModelOpt (quant_method modelopt; hf_quant_config.json's
	// "quantization" object)
	QuantAlgo        string                 `json:"quant_algo"`
	KVCacheQuantAlgo *string                `json:"kv_cache_quant_algo"`
	ExcludeModules   []string               `json:"exclude_modules"`
	QuantizedLayers  map[string]moLayer     `json:"quantized_layers"`
	GroupSize        *int                   `json:"group_size"`
	Producer         *struct{ Name string } `json:"producer"`
	// MoEQuantAlgo is the routed experts' ModelOpt algorithm in an fp8
	// config (nvidia's DeepSeek-V4 NVFP4 releases: quant_method fp8,
	// moe_quant_algo NVFP4).
	MoEQuantAlgo string `json:"moe_quant_algo"`
}

// moLayer is one entry of ModelOpt's quantized_layers.
type moLayer struct {
	QuantAlgo string `json:"quant_algo"`
	GroupSize *int   `json:"group_size"`
}

type ctGroup struct {
	Targets          []string `json:"targets"`
	Weights          *ctArgs  `json:"weights"`
	InputActivations *ctArgs  `json:"input_activations"`
}

type ctArgs struct {
	NumBits   int    `json:"num_bits"`
	Type      string `json:"type"`
	Symmetric *bool  `json:"symmetric"`
	GroupSize *int   `json:"group_size"`
	Strategy  string `json:"strategy"`
	// BlockStructure is [rows, cols] for strategy "block" (null otherwise).
	BlockStructure []int `json:"block_structure"`
}

// modules names the HF modules of each weight class at a representative
// layer (attention at layer 0, dense MLP at the first dense layer, experts at
// the first MoE layer), without a wrapper prefix such as "language_model.".
type modules struct {
	attention, dense, shared, routed []string
	// mixer maps a recurrent mixer's projection, as MixerLinears names it
	// ("in_proj_ba"), to the checkpoint modules fused into it at the first
	// layer of that mixer ("model.layers.0.linear_attn.in_proj_b", "...
	// in_proj_a"); nil where the mixer takes the attention class's format.
	mixer map[string][]string
}

// hfModules builds module names: attn lists the self_attn projections,
// mlp the dense MLP's projections, sharedPath the shared expert's module
// ("mlp.shared_experts"), expertPath one routed expert's module
// ("mlp.experts.0"), expertProjs its projections. The dense MLP sits at
// "mlp" (Llama-4: see hfModulesAt).
func hfModules(c *Config, attn, mlp []string, sharedPath, expertPath string, expertProjs []string) modules {
	return hfModulesAt(c, attn, "mlp", mlp, sharedPath, expertPath, expertProjs)
}

// hfModulesAt is hfModules with the dense MLP's module path.
func hfModulesAt(c *Config, attn []string, densePath string, mlp []string, sharedPath, expertPath string, expertProjs []string) modules {
	var m modules
	firstDense, firstMoE := -1, -1
	for i := range c.Layers {
		if c.IsMoELayer(i) {
			if firstMoE < 0 {
				firstMoE = i
			}
		} else if firstDense < 0 {
			firstDense = i
		}
	}
	for _, p := range attn {
		m.attention = append(m.attention, "model.layers.0.self_attn."+p)
	}
	if firstDense >= 0 {
		for _, p := range mlp {
			m.dense = append(m.dense, fmt.Sprintf("model.layers.%d.%s.%s", firstDense, densePath, p))
		}
	}
	if firstMoE >= 0 {
		if sharedPath != "" {
			for _, p := range mlp {
				m.shared = append(m.shared, fmt.Sprintf("model.layers.%d.%s.%s", firstMoE, sharedPath, p))
			}
		}
		for _, p := range expertProjs {
			m.routed = append(m.routed, fmt.Sprintf("model.layers.%d.%s.%s", firstMoE, expertPath, p))
		}
	}
	return m
}

var (
	mlaProjs   = []string{"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"}
	gqaProjs   = []string{"q_proj", "k_proj", "v_proj", "o_proj"}
	swigluProj = []string{"gate_proj", "up_proj", "down_proj"}
)

// applyQuant fills c.Quant from q (nil: unquantized) for modules m, with
// base the checkpoint dtype. Keys in errors are under quantization_config.
func applyQuant(d *doc, c *Config, q *hfQuant, m modules, base dtype.Format) error {
	c.Quant = Quant{
		RoutedExperts: base, SharedExpert: base, Attention: base, DenseMLP: base,
		Embedding: base, LMHead: base, Router: base, Base: base, Method: "none",
	}
	if q == nil {
		var err error
		if d, q, err = fallbackQuant(d); err != nil || q == nil {
			return err
		}
	}
	if q.QuantMethod == "" && (q.QuantAlgo != "" || (q.Producer != nil && q.Producer.Name == "modelopt")) {
		// ModelOpt's config.json block without quant_method (Qwen's
		// FP8-Static-PerTensor release): vLLM sets quant_method from the
		// producer (vllm/config/model.py _parse_quant_hf_config).
		q.QuantMethod = "modelopt"
	}
	// decide sets the format of every class whose modules pick() quantizes.
	decide := func(pick func(module string) (dtype.Format, bool)) {
		classes := []struct {
			name string
			f    *dtype.Format
			mods []string
		}{
			{"attention", &c.Quant.Attention, m.attention},
			{"dense MLP", &c.Quant.DenseMLP, m.dense},
			{"shared expert", &c.Quant.SharedExpert, m.shared},
			{"routed experts", &c.Quant.RoutedExperts, m.routed},
		}
		for ci, cl := range classes {
			var first string
			formats := map[string]dtype.Format{}
			for _, mod := range cl.mods {
				f, ok := pick(mod)
				if !ok {
					f = base
				}
				formats[mod[strings.LastIndexByte(mod, '.')+1:]] = f
			}
			if ci == 0 && attentionSplit(c, formats) {
				continue
			}
			for i, mod := range cl.mods {
				f := formats[mod[strings.LastIndexByte(mod, '.')+1:]]
				if i == 0 {
					*cl.f, first = f, mod
				} else if f != *cl.f {
					c.Notes = append(c.Notes, fmt.Sprintf("quantization_config: %s modules differ (%s: %s, %s: %s); %s's format used for the class",
						cl.name, first, cl.f.Name, mod, f.Name, first))
				}
			}
		}
		mixerFormats(c, m.mixer, pick, base)
	}
	switch q.QuantMethod {
	case "fp8":
		f := dtype.Format{Name: "fp8", Bits: 8, Compute: dtype.FP8}
		c.Quant.Method = "fp8 per-tensor"
		if b := q.WeightBlockSize; b != nil {
			if len(b) != 2 || b[0] <= 0 || b[1] <= 0 {
				return d.keyErr("weight_block_size", "want two positive sizes [out, in], got %s", jsonInts(b))
			}
			f = dtype.Format{Name: fmt.Sprintf("fp8-b%dx%d", b[0], b[1]), Bits: 8, GroupSize: b[0] * b[1], ScaleBits: 32, Compute: dtype.FP8}
			if b[0] == 128 && b[1] == 128 {
				f = dtype.FP8Block128
			}
			c.Quant.Block = [2]int{b[0], b[1]}
			c.Quant.Method = fmt.Sprintf("fp8 block [%d,%d]", b[0], b[1])
		}
		// The names are matched without a multimodal wrapper's prefix
		// ("model.language_model.layers.0..." is "model.layers.0..."): the
		// engine names its modules with the wrapper's prefix and matches
		// the list as written, which is the same match (moduleName).
		var skip []string
		for _, p := range append(append([]string(nil), q.IgnoredLayers...), q.ModulesToNotConvert...) {
			skip = append(skip, moduleName(p))
		}
		decide(func(mod string) (dtype.Format, bool) { return f, !globListMatch(skip, mod) })
		if q.MoEQuantAlgo != "" {
			// the routed experts in a ModelOpt format, the rest fp8
			ef, err := modeloptFormat(d, "moe_quant_algo", q.MoEQuantAlgo, q.GroupSize)
			if err != nil {
				return err
			}
			if len(m.routed) > 0 && !globListMatch(skip, m.routed[0]) {
				c.Quant.RoutedExperts = ef
			}
			c.Quant.Method += ", experts " + q.MoEQuantAlgo
		}
		if err := modeloptKV(d, c, q); err != nil {
			return err
		}
	case "mxfp4":
		c.Quant.Method = "mxfp4 (experts)"
		experts := m.routed
		m = modules{routed: experts}
		decide(func(mod string) (dtype.Format, bool) {
			return dtype.MXFP4, !globListMatch(q.ModulesToNotConvert, mod)
		})
	case "compressed-tensors":
		if err := ctKV(d, c, q.KVCacheScheme); err != nil {
			return err
		}
		return applyCompressedTensors(d, c, q, decide)
	case "modelopt", "modelopt_fp4", "modelopt_mixed", "modelopt_mxfp8":
		return applyModelOpt(d, c, q, decide)
	case "":
		return d.keyErr("quant_method", "missing")
	default:
		return d.keyErr("quant_method", "unsupported quantization method %q; supported: compressed-tensors, fp8, modelopt, mxfp4", q.QuantMethod)
	}
	return nil
}

// mixerFormats sets Quant.MixerLinear for each recurrent-mixer projection
// of mixer whose checkpoint shards pick() stores otherwise than the
// attention class. A fused projection takes its shards' format when they
// agree, as the engines' skip rule does (sgl-project/sglang @ 006d096
// python/sglang/srt/layers/quantization/utils.py is_layer_skipped: a fused
// layer is skipped when every shard is, and shards that differ are a
// load error; vLLM's quant_utils.is_layer_skipped is the same rule); when
// they differ, the first shard's format is used and a note says so.
func mixerFormats(c *Config, mixer map[string][]string, pick func(string) (dtype.Format, bool), base dtype.Format) {
	var names []string
	for n := range mixer {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		shards := mixer[n]
		if len(shards) == 0 {
			continue
		}
		var f dtype.Format
		for i, mod := range shards {
			g, ok := pick(mod)
			if !ok {
				g = base
			}
			if i == 0 {
				f = g
			} else if g != f {
				c.Notes = append(c.Notes, fmt.Sprintf("quantization_config: the shards of %s differ (%s: %s, %s: %s); %s's format used",
					n, shards[0], f.Name, mod, g.Name, shards[0]))
			}
		}
		if f == c.Quant.Attention {
			continue
		}
		if c.Quant.MixerLinear == nil {
			c.Quant.MixerLinear = map[string]dtype.Format{}
		}
		c.Quant.MixerLinear[n] = f
		c.Notes = append(c.Notes, fmt.Sprintf("recurrent mixer: %s stored %s (%s)", n, f.Name, strings.Join(shards, ", ")))
	}
}

// ctTarget is one compiled config group.
type ctTarget struct {
	name    string
	targets []matcher
	format  dtype.Format
	grouped bool // strategy group or tensor_group: format.GroupSize is group_size
}

// matcher matches a module name: exact, "re:" regex from the start, or the
// class name "Linear" (every module given here is a linear layer).
type matcher struct {
	exact string
	re    *regexp.Regexp
	all   bool
}

func (m matcher) match(mod string) bool {
	switch {
	case m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(mod)
	}
	return m.exact == mod
}

func compileMatchers(d *doc, key string, list []string) ([]matcher, error) {
	var ms []matcher
	for _, s := range list {
		switch {
		case s == "Linear":
			ms = append(ms, matcher{all: true})
		case strings.HasPrefix(s, "re:"):
			// Python re.match anchors at the start only.
			re, err := regexp.Compile(`^(?:` + strings.TrimPrefix(s, "re:") + `)`)
			if err != nil {
				return nil, d.keyErr(key, "invalid regex %q: %s", s, regexpMsg(err))
			}
			ms = append(ms, matcher{re: re})
		default:
			ms = append(ms, matcher{exact: s})
		}
	}
	return ms, nil
}

func anyMatch(ms []matcher, mod string) bool {
	for _, m := range ms {
		if m.match(mod) {
			return true
		}
	}
	return false
}

func applyCompressedTensors(d *doc, c *Config, q *hfQuant, decide func(func(string) (dtype.Format, bool))) error {
	ignore, err := compileMatchers(d, "ignore", q.Ignore)
	if err != nil {
		return err
	}
	var names []string
	for n := range q.ConfigGroups {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return d.keyErr("config_groups", "compressed-tensors config has no config_groups")
	}
	var groups []ctTarget
	for _, n := range names {
		g := q.ConfigGroups[n]
		ts, err := compileMatchers(d, "targets", g.Targets)
		if err != nil {
			return err
		}
		f, err := ctFormat(d, c, n, g)
		if err != nil {
			return err
		}
		groups = append(groups, ctTarget{name: n, targets: ts, format: f, grouped: g.Weights.isGrouped()})
	}
	c.Quant.Method = "compressed-tensors " + q.Format
	decide(func(mod string) (dtype.Format, bool) {
		if anyMatch(ignore, mod) {
			return dtype.Format{}, false
		}
		for _, g := range groups {
			if anyMatch(g.targets, mod) {
				return g.format, true
			}
		}
		return dtype.Format{}, false
	})
	return checkGroupSizes(d, c, groups)
}

// isGrouped reports whether the weights are quantized in groups of
// group_size along the input dimension.
func (a *ctArgs) isGrouped() bool { return a.Strategy == "group" || a.Strategy == "tensor_group" }

// checkGroupSizes rejects a group_size larger than the input features of a
// linear layer its config group quantizes: compressed-tensors groups run
// along each layer's input dimension, so such a group cannot exist.
func checkGroupSizes(d *doc, c *Config, groups []ctTarget) error {
	classes := []struct {
		name string
		ls   []Linear
	}{
		{"attention", c.AttentionLinears()}, {"dense MLP", c.DenseMLPLinears()},
		{"shared expert", c.SharedExpertLinears()}, {"routed experts", c.ExpertLinears()},
	}
	for _, g := range groups {
		if !g.grouped {
			continue
		}
		for _, cl := range classes {
			for _, l := range cl.ls {
				if l.Format == g.format && l.In > 0 && g.format.GroupSize > l.In {
					return d.keyErr("group_size", "config group %q: group_size %d exceeds the %d input features of %s %s",
						g.name, g.format.GroupSize, l.In, cl.name, l.Name)
				}
			}
		}
	}
	return nil
}

// ctFormat converts a compressed-tensors group's weight arguments into a
// storage format. Scales are taken as 16-bit (the checkpoint dtype, bf16;
// the dtype of presets/moonshotai--Kimi-K2.5_config.json; not checked
// against the safetensors) for int groups and as fp32 for fp8 blocks; an
// asymmetric scheme adds a num_bits zero point per group.
func ctFormat(d *doc, c *Config, name string, g ctGroup) (dtype.Format, error) {
	w := g.Weights
	if w == nil {
		return dtype.Format{}, d.keyErr("weights", "config group %q has no weights scheme", name)
	}
	if w.NumBits != 4 && w.NumBits != 8 {
		return dtype.Format{}, d.keyErr("num_bits", "config group %q: unsupported num_bits %d (want 4 or 8)", name, w.NumBits)
	}
	actBits := 16
	if a := g.InputActivations; a != nil {
		actBits = a.NumBits
	}
	f := dtype.Format{Bits: float64(w.NumBits), Compute: dtype.BF16}
	var kind string
	switch w.Type {
	case "int":
		kind = fmt.Sprintf("int%d", w.NumBits)
		if actBits == 8 && w.NumBits == 8 {
			f.Compute = dtype.INT8
		}
	case "float":
		kind = fmt.Sprintf("fp%d", w.NumBits)
		switch {
		case w.NumBits == 8 && actBits == 8:
			f.Compute = dtype.FP8
		case w.NumBits == 4 && actBits == 4:
			f.Compute = dtype.FP4
		}
	default:
		return dtype.Format{}, d.keyErr("type", "config group %q: unsupported weight type %q (want int or float)", name, w.Type)
	}
	switch w.Strategy {
	case "group", "tensor_group":
		if w.GroupSize == nil || *w.GroupSize <= 0 {
			return dtype.Format{}, d.keyErr("group_size", "config group %q: strategy %q needs a positive group_size", name, w.Strategy)
		}
		f.GroupSize = *w.GroupSize
		f.ScaleBits = 16
		if w.Type == "float" && w.NumBits == 4 {
			f.ScaleBits = 8 // NVFP4: fp8 e4m3 scale per 16
		}
		f.Name = fmt.Sprintf("%s-g%d", kind, f.GroupSize)
	case "channel":
		f.Name = kind + "-ch"
		c.Notes = append(c.Notes, fmt.Sprintf("quantization_config group %q: per-channel scales (one per output row) not counted in weight bytes", name))
	case "tensor", "":
		f.Name = kind
	case "block":
		b := w.BlockStructure
		if len(b) != 2 || b[0] <= 0 || b[1] <= 0 {
			return dtype.Format{}, d.keyErr("block_structure", "config group %q: want [rows, cols], got %s", name, jsonInts(b))
		}
		f.GroupSize, f.ScaleBits = b[0]*b[1], 32
		f.Name = fmt.Sprintf("%s-b%dx%d", kind, b[0], b[1])
		if f == dtype.FP8Block128 || (b[0] == 128 && b[1] == 128 && w.NumBits == 8 && w.Type == "float") {
			f.Name = dtype.FP8Block128.Name
		}
		c.Quant.Block = [2]int{b[0], b[1]}
	default:
		return dtype.Format{}, d.keyErr("strategy", "config group %q: unsupported strategy %q", name, w.Strategy)
	}
	if w.Symmetric != nil && !*w.Symmetric && f.GroupSize > 0 {
		f.ScaleBits += float64(w.NumBits)
		f.Name += "-asym"
	}
	if f == dtype.INT4G32 {
		f = dtype.INT4G32
	}
	if w.Type == "float" && w.NumBits == 4 && f.GroupSize == 32 && f.Compute == dtype.BF16 {
		// fp4 weights with one 8-bit scale per 32 (compressed-tensors
		// "mxfp4-pack-quantized", scale_dtype uint8: e8m0) is MXFP4
		f = dtype.MXFP4
	}
	return f, nil
}

// globListMatch reports whether any pattern names mod or one of its parent
// modules: "model.layers.*.self_attn" matches
// "model.layers.0.self_attn.q_proj" (HF modules_to_not_convert).
func globListMatch(patterns []string, mod string) bool {
	parts := strings.Split(mod, ".")
	for _, p := range patterns {
		for n := len(parts); n > 0; n-- {
			prefix := strings.Join(parts[:n], ".")
			if ok, _ := path.Match(p, prefix); ok || p == prefix {
				return true
			}
		}
		// HF also matches by substring (`key in module_name`).
		if p != "" && !strings.ContainsAny(p, "*?[") && strings.Contains(mod, p) {
			return true
		}
	}
	return false
}

// regexpMsg is what is wrong with a regex, without Go's "error parsing
// regexp:" prefix and the anchoring moecast wraps around the pattern.
func regexpMsg(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return err.Error()
}

// jsonInts writes v as JSON writes a list ("[1, 2]"), for messages.
func jsonInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// attentionSplit handles attention projections stored in different
// formats (formats: by projection name). The class takes the format of
// the first projection by name (GQA: q_proj's, for qkv_proj); each projection whose
// own Linear exists (every MLA projection; o_proj of GQA, whose q, k and v
// vLLM fuses into one qkv_proj and so must share a format) keeps its own in
// Quant.AttentionLinear. It reports false when the formats do not differ or
// the split cannot be expressed (GQA's q, k, v differing).
func attentionSplit(c *Config, formats map[string]dtype.Format) bool {
	distinct := map[dtype.Format]bool{}
	for _, f := range formats {
		distinct[f] = true
	}
	if len(distinct) < 2 {
		return false
	}
	own := map[string]bool{"o_proj": true}
	if c.Attn.Kind == MLA {
		for _, n := range []string{"q_a_proj", "q_b_proj", "q_proj", "kv_a_proj_with_mqa", "kv_b_proj"} {
			own[n] = true
		}
	} else if formats["q_proj"] != formats["k_proj"] || formats["q_proj"] != formats["v_proj"] {
		return false
	}
	var names []string
	for n := range formats {
		if !own[n] {
			return false
		}
		names = append(names, n)
	}
	sort.Strings(names)
	c.Quant.Attention = formats[names[0]]
	c.Quant.AttentionLinear = map[string]dtype.Format{}
	var parts []string
	for _, n := range names {
		c.Quant.AttentionLinear[n] = formats[n]
		parts = append(parts, n+" "+formats[n].Name)
	}
	if f, ok := formats["q_proj"]; ok && c.Attn.Kind != MLA {
		c.Quant.Attention = f // qkv_proj
	}
	c.Notes = append(c.Notes, "attention projections in different formats: "+strings.Join(parts, ", "))
	return true
}

// byMixerLinear applies MixerLinear to the projections it names.
func (q *Quant) byMixerLinear(ls []Linear) []Linear {
	for i := range ls {
		if f, ok := q.MixerLinear[ls[i].Name]; ok {
			ls[i].Format = f
		}
	}
	return ls
}

// byLinear applies AttentionLinear to the projections it names.
func (q *Quant) byLinear(ls []Linear) []Linear {
	for i := range ls {
		if f, ok := q.AttentionLinear[ls[i].Name]; ok {
			ls[i].Format = f
		}
	}
	return ls
}

// AttentionFormatName names the attention class's format(s): the class
// format, then each projection stored otherwise ("bf16, o_proj nvfp4").
func (q *Quant) AttentionFormatName() string {
	var names []string
	for n, f := range q.AttentionLinear {
		if f != q.Attention {
			names = append(names, n+" "+f.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(append([]string{q.Attention.Name}, names...), ", ")
}
