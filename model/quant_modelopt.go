package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/dtype"
)

// This file reads NVIDIA ModelOpt checkpoints (quant_method "modelopt" in
// config.json's quantization_config, or the "quantization" object of the
// hf_quant_config.json beside it) and the KV-cache dtype a checkpoint
// declares. As in vLLM's ModelOpt configs
// (vllm/model_executor/layers/quantization/modelopt.py), quant_algo names
// the format of every linear layer and fused MoE not excluded by
// exclude_modules (hf_quant_config.json) or ignore (config.json), matched
// as fnmatch patterns on module names; MIXED_PRECISION gives each module's
// algorithm in quantized_layers instead. The MoE router (quant_config=None),
// embed_tokens and lm_head (not LinearBase) stay in the checkpoint dtype.

// modeloptAlgos lists the quant_algo values moecast reads, with the weight
// format of each.
var modeloptAlgos = map[string]dtype.Format{
	// static per-tensor fp8 weights and activations
	"FP8": dtype.FP8Tensor,
	// fp8 weights per output channel, activations per token
	"FP8_PER_CHANNEL_PER_TOKEN": {Name: "fp8-ch", Bits: 8, Compute: dtype.FP8},
	// fp8 block-scaled weights (128x128), dynamic activations
	"FP8_PB_WO": dtype.FP8Block128,
	"NVFP4":     dtype.NVFP4,
	// NVFP4 weights and activations, AWQ-smoothed: the same storage
	"NVFP4_AWQ":   dtype.NVFP4,
	"W4A16_NVFP4": dtype.NVFP4A16,
	"MXFP8":       dtype.MXFP8,
	"MXFP4":       dtype.MXFP4,
	// INT4 AWQ, one fp16 scale per 128 weights; W4A8 runs the GEMM in fp8
	"W4A8_AWQ":  {Name: "int4-g128-a8", Bits: 4, GroupSize: 128, ScaleBits: 16, Compute: dtype.FP8},
	"W4A16_AWQ": {Name: "int4-g128", Bits: 4, GroupSize: 128, ScaleBits: 16, Compute: dtype.BF16},
	"INT4_AWQ":  {Name: "int4-g128", Bits: 4, GroupSize: 128, ScaleBits: 16, Compute: dtype.BF16},
	// SmoothQuant int8, per-channel weight scales
	"W8A8_SQ_PER_CHANNEL": {Name: "int8-ch", Bits: 8, Compute: dtype.INT8},
	"INT8_SQ":             {Name: "int8-ch", Bits: 8, Compute: dtype.INT8},
}

func modeloptAlgoNames() string {
	var s []string
	for k := range modeloptAlgos {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(append(s, "MIXED_PRECISION"), ", ")
}

// modeloptFormat is the weight format of quant_algo algo (key names it in
// errors); groupSize, when given, must be the format's group.
func modeloptFormat(d *doc, key, algo string, groupSize *int) (dtype.Format, error) {
	f, ok := modeloptAlgos[strings.ToUpper(algo)]
	if !ok {
		return dtype.Format{}, d.keyErr(key, "unsupported ModelOpt quantization algorithm %q; supported: %s", algo, modeloptAlgoNames())
	}
	if groupSize != nil && f.GroupSize > 0 && f.GroupSize <= 128 && *groupSize != f.GroupSize {
		if *groupSize <= 0 {
			return dtype.Format{}, d.keyErr("group_size", "must be positive, got %d", *groupSize)
		}
		if strings.HasPrefix(f.Name, "int4") {
			f.GroupSize = *groupSize
			f.Name = fmt.Sprintf("int4-g%d", *groupSize) + strings.TrimPrefix(f.Name, "int4-g128")
		} else {
			return dtype.Format{}, d.keyErr("group_size", "%s has a fixed group of %d weights, got %d", algo, f.GroupSize, *groupSize)
		}
	}
	return f, nil
}

// fallbackQuant finds the quantization of a text model whose own config
// has none: a multimodal wrapper's top-level quantization_config (nvidia's
// Kimi-K2.5-NVFP4 keeps it there, beside text_config), else ModelOpt's
// hf_quant_config.json. It returns the object's doc (for error positions)
// and nil when there is neither.
func fallbackQuant(d *doc) (*doc, *hfQuant, error) {
	if d.top != nil && d.top.raw != nil && findKey(d.top.raw, "quantization_config") >= 0 {
		qd, err := d.top.sub("quantization_config")
		if err == nil {
			var q hfQuant
			if err := qd.decode(&q); err != nil {
				return nil, nil, err
			}
			return qd, &q, nil
		}
	}
	side := d.side
	if side == nil {
		return d, nil, nil
	}
	var head struct {
		Producer    *struct{ Name string } `json:"producer"`
		QuantMethod string                 `json:"quant_method"`
	}
	if err := side.decode(&head); err != nil {
		return nil, nil, err
	}
	if head.Producer != nil && head.Producer.Name != "" && head.Producer.Name != "modelopt" {
		return nil, nil, side.keyErr("name", "producer %q: hf_quant_config.json is read as NVIDIA ModelOpt's (producer modelopt)", head.Producer.Name)
	}
	qd, err := side.sub("quantization")
	if err != nil {
		return nil, nil, err
	}
	var q hfQuant
	if err := qd.decode(&q); err != nil {
		return nil, nil, err
	}
	if q.QuantMethod == "" {
		q.QuantMethod = "modelopt"
		if head.QuantMethod != "" {
			q.QuantMethod = head.QuantMethod
		}
	}
	return qd, &q, nil
}

// moduleName strips the multimodal wrappers' prefixes from a module name
// or pattern, so that ModelOpt's lists match moecast's module names
// ("language_model.model.layers.0.mlp" and
// "model.language_model.layers.0.mlp" are "model.layers.0.mlp";
// "language_model.lm_head" is "lm_head").
func moduleName(s string) string {
	for _, p := range []struct{ from, to string }{
		{"language_model.model.", "model."},
		{"model.language_model.", "model."},
		{"language_model.", ""},
	} {
		if strings.HasPrefix(s, p.from) {
			return p.to + strings.TrimPrefix(s, p.from)
		}
	}
	return s
}

// applyModelOpt sets the formats of a ModelOpt checkpoint.
func applyModelOpt(d *doc, c *Config, q *hfQuant, decide func(func(string) (dtype.Format, bool))) error {
	var exclude []string
	for _, p := range append(append([]string(nil), q.ExcludeModules...), q.Ignore...) {
		exclude = append(exclude, moduleName(p))
	}
	if err := modeloptKV(d, c, q); err != nil {
		return err
	}
	algo := strings.ToUpper(q.QuantAlgo)
	switch algo {
	case "":
		c.Quant.Method = "modelopt (weights unquantized)"
		return nil
	case "MIXED_PRECISION":
		if len(q.QuantizedLayers) == 0 {
			return d.keyErr("quantized_layers", "quant_algo MIXED_PRECISION needs quantized_layers (each module's quant_algo)")
		}
		layers := map[string]dtype.Format{}
		seen := map[string]bool{}
		keys := make([]string, 0, len(q.QuantizedLayers))
		for k := range q.QuantizedLayers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			l := q.QuantizedLayers[k]
			f, err := modeloptFormat(d, "quant_algo", l.QuantAlgo, l.GroupSize)
			if err != nil {
				return err
			}
			layers[moduleName(k)] = f
			seen[strings.ToUpper(l.QuantAlgo)] = true
		}
		var algos []string
		for a := range seen {
			algos = append(algos, a)
		}
		sort.Strings(algos)
		c.Quant.Method = "modelopt MIXED_PRECISION (" + strings.Join(algos, ", ") + ")"
		decide(func(mod string) (dtype.Format, bool) {
			if globListMatch(exclude, mod) {
				return dtype.Format{}, false
			}
			// the module or the fused module above it ("...mlp.experts")
			parts := strings.Split(mod, ".")
			for n := len(parts); n > 0; n-- {
				if f, ok := layers[strings.Join(parts[:n], ".")]; ok {
					return f, true
				}
			}
			return dtype.Format{}, false
		})
		return nil
	}
	f, err := modeloptFormat(d, "quant_algo", q.QuantAlgo, q.GroupSize)
	if err != nil {
		return err
	}
	c.Quant.Method = "modelopt " + algo
	if f == dtype.FP8Tensor {
		c.Quant.Method += " (static per-tensor)"
	}
	decide(func(mod string) (dtype.Format, bool) { return f, !globListMatch(exclude, mod) })
	return nil
}

// modeloptKV reads kv_cache_quant_algo (hf_quant_config.json and some
// config.json blocks) or kv_cache_scheme (config.json).
func modeloptKV(d *doc, c *Config, q *hfQuant) error {
	if a := q.KVCacheQuantAlgo; a != nil {
		switch strings.ToUpper(*a) {
		case "FP8":
			setKV(d, c, "kv_cache_quant_algo")
			return nil
		case "", "NONE":
			return nil
		}
		return d.keyErr("kv_cache_quant_algo", "unsupported KV-cache quantization %q; supported: FP8 (or null)", *a)
	}
	return ctKV(d, c, q.KVCacheScheme)
}

// ctKV reads kv_cache_scheme: null or absent (the model dtype), fp8 as an
// args object {"num_bits": 8, "type": "float"} or the name "FP8".
func ctKV(d *doc, c *Config, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		if strings.EqualFold(name, "fp8") {
			setKV(d, c, "kv_cache_scheme")
			return nil
		}
		return d.keyErr("kv_cache_scheme", "unsupported KV-cache quantization %q; supported: FP8 (or null)", name)
	}
	var a ctArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return d.keyErr("kv_cache_scheme", "want null, a name or a quantization args object")
	}
	if a.NumBits == 8 && a.Type == "float" {
		setKV(d, c, "kv_cache_scheme")
		return nil
	}
	return d.keyErr("kv_cache_scheme", "unsupported KV-cache quantization: num_bits %d, type %q; supported: 8-bit float (fp8)", a.NumBits, a.Type)
}

func setKV(d *doc, c *Config, key string) {
	c.Quant.KVCache = dtype.KVFP8
	c.Quant.KVCacheDeclared = true
	c.Quant.KVCacheFrom = d.file + ": " + d.prefix + key
}
