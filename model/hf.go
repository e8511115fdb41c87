package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/dtype"

	"github.com/moecast/moecast/internal/infile"
)

// This file imports a Hugging Face config.json: it reads `architectures`
// first, picks the family importer (hf_<family>.go), decodes the family's
// raw struct and converts it once into a Config. Nested text models
// (Kimi-K2.5's KimiK25ForConditionalGeneration) are read from text_config.

// ConfigError is a problem in a config.json, with its position when known.
type ConfigError struct {
	File      string // the file name as given to Load
	Line, Col int    // 1-based; 0 when the position is not known
	Key       string // the offending key, dotted from the file's root ("text_config.hidden_size")
	Msg       string
	Err       error // the underlying error, if any
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// family imports one HF architecture.
type family struct {
	arch string
	// parse decodes d (the text model's JSON) into a Config.
	parse func(d *doc) (*Config, error)
}

// families lists the supported architectures (text model's architectures[0]).
var families = []family{
	{"DeepseekV3ForCausalLM", parseDeepseekV3},
	{"GlmMoeDsaForCausalLM", parseGlmMoeDsa},
	{"Qwen3MoeForCausalLM", parseQwen3Moe},
	{"MixtralForCausalLM", parseMixtral},
	{"GptOssForCausalLM", parseGptOss},
	{"Glm4MoeForCausalLM", parseGlm4Moe},
	{"Llama4ForCausalLM", parseLlama4},
	{"LlamaForCausalLM", parseLlama},
	{"Qwen3ForCausalLM", parseQwen3},
	{"MiMoForCausalLM", parseMiMo},
	{"Qwen3_5ForCausalLM", parseQwen35},
	{"Qwen3_5MoeForCausalLM", parseQwen35Moe},
	{"DeepseekV32ForCausalLM", parseDeepseekV32},
	{"NemotronHForCausalLM", parseNemotronH},
	{"MiniMaxM2ForCausalLM", parseMiniMax},
	{"MiniMaxM3ForCausalLM", parseMiniMax},
	{"MiniMaxM3SparseForCausalLM", parseMiniMax},
	{"Gemma4ForCausalLM", parseGemma4},
	{"MiMoV2FlashForCausalLM", parseMiMoV2},
	{"Step3p7FlashForCausalLM", parseStep3p7},
	{"DeciLMForCausalLM", parseDeciLM},
	{"KimiLinearForCausalLM", parseKimiLinear},
	{"DeepseekV4ForCausalLM", parseDeepseekV4},
}

// wrappers are multimodal architectures whose text model sits under
// text_config; the value is the architecture assumed when text_config has
// no architectures of its own.
var wrappers = map[string]string{
	"KimiK25ForConditionalGeneration": "DeepseekV3ForCausalLM",
	"Llama4ForConditionalGeneration":  "Llama4ForCausalLM",
	// Qwen3-VL: the text model is Qwen3 (dense) or Qwen3-MoE with
	// interleaved M-RoPE, which costs the same (vLLM qwen3_vl.py,
	// qwen3_vl_moe.py).
	"Qwen3VLForConditionalGeneration":         "Qwen3ForCausalLM",
	"Qwen3VLMoeForConditionalGeneration":      "Qwen3MoeForCausalLM",
	"Qwen3_5ForConditionalGeneration":         "Qwen3_5ForCausalLM",
	"Qwen3_5MoeForConditionalGeneration":      "Qwen3_5MoeForCausalLM",
	"MiniMaxM3SparseForConditionalGeneration": "MiniMaxM3SparseForCausalLM",
	"Gemma4ForConditionalGeneration":          "Gemma4ForCausalLM",
	"KimiK3ForConditionalGeneration":          "KimiLinearForCausalLM",
}

// supportedArchitectures lists the config.json architectures Load accepts.
func supportedArchitectures() []string {
	var s []string
	for _, f := range families {
		s = append(s, f.arch)
	}
	for w := range wrappers {
		s = append(s, w)
	}
	sort.Strings(s)
	return s
}

// LoadFile reads a config.json from the file system. Errors name path as
// given ("read model config: read /tmp: is a directory").
func LoadFile(path string) (*Config, error) {
	data, err := infile.ReadFile(path, nil, infile.MaxModelConfig)
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	qpath := quantSidecar(path)
	var qdata []byte
	if qpath != "" {
		if qdata, err = infile.ReadFile(qpath, nil, infile.MaxModelConfig); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("read model quantization config: %w", err)
			}
			qpath, qdata = "", nil
		}
	}
	return parseWithQuant(path, data, qpath, qdata)
}

// Load reads and imports the HF config.json at path in fsys, with the
// ModelOpt hf_quant_config.json beside it when there is one (quantSidecar).
func Load(fsys fs.FS, path string) (*Config, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	qpath := quantSidecar(path)
	var qdata []byte
	if qpath != "" {
		if qdata, err = fs.ReadFile(fsys, qpath); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("read model quantization config: %w", err)
			}
			qpath, qdata = "", nil
		}
	}
	return parseWithQuant(path, data, qpath, qdata)
}

// quantSidecar is where ModelOpt's hf_quant_config.json sits for the
// config.json at path: beside it in a checkpoint directory
// ("dir/config.json" -> "dir/hf_quant_config.json"), and for a config
// saved under a prefix ("X_config.json", as aiconfigurator's model_configs
// name them) "X_hf_quant_config.json". A path not ending in config.json
// has none ("").
func quantSidecar(path string) string {
	if !strings.HasSuffix(path, "config.json") || strings.HasSuffix(path, "hf_quant_config.json") {
		return ""
	}
	return strings.TrimSuffix(path, "config.json") + "hf_quant_config.json"
}

// head is the part of config.json read before the family is known.
type head struct {
	Architectures []string        `json:"architectures"`
	ModelType     string          `json:"model_type"`
	TextConfig    json.RawMessage `json:"text_config"`
}

// Parse imports config.json content; name is used in errors and as
// Config.Name.
func Parse(name string, data []byte) (*Config, error) {
	return parseWithQuant(name, data, "", nil)
}

// parseWithQuant is Parse with the content of ModelOpt's
// hf_quant_config.json (qname, used in errors; qdata nil: none). It is read
// only when config.json has no quantization_config, neither in the text
// model nor at the top level of a multimodal wrapper: vLLM takes
// config.json's quantization_config first and ModelOpt's file otherwise
// (vllm/model_executor/model_loader/weight_utils.py get_quant_config;
// ModelOptFp8Config.get_config_filenames is ["hf_quant_config.json"]).
func parseWithQuant(name string, data []byte, qname string, qdata []byte) (*Config, error) {
	data = nonFinite(data)
	root := &doc{file: name, data: data, raw: data}
	if err := checkObject(root); err != nil {
		return nil, err
	}
	root.top = root
	if qdata != nil {
		side := &doc{file: qname, data: qdata, raw: qdata}
		if err := checkObject(side); err != nil {
			return nil, err
		}
		root.side = side
	}
	var h head
	if err := root.decode(&h); err != nil {
		return nil, err
	}
	if len(h.Architectures) == 0 {
		return nil, root.keyErr("architectures", "missing or empty; supported: %s", strings.Join(supportedArchitectures(), ", "))
	}
	arch := h.Architectures[0]
	d := root
	if inner, ok := wrappers[arch]; ok {
		if len(h.TextConfig) == 0 || string(h.TextConfig) == "null" {
			return nil, root.keyErr("text_config", "%s keeps its text model under text_config, which is missing", arch)
		}
		var err error
		if d, err = root.sub("text_config"); err != nil {
			return nil, err
		}
		var th head
		if err := d.decode(&th); err != nil {
			return nil, err
		}
		if len(th.Architectures) > 0 {
			arch = th.Architectures[0]
		} else {
			arch = inner
		}
	}
	i := slices.IndexFunc(families, func(f family) bool { return f.arch == arch })
	if i < 0 {
		return nil, d.keyErr("architectures", "unsupported architecture %q; supported: %s", arch, strings.Join(supportedArchitectures(), ", "))
	}
	c, err := families[i].parse(d)
	if err != nil {
		return nil, err
	}
	if d != root && findKey(d.raw, "tie_word_embeddings") < 0 {
		// A wrapper keeps tie_word_embeddings at the top level (Qwen3-VL).
		var t struct {
			Tie bool `json:"tie_word_embeddings"`
		}
		if err := root.decode(&t); err != nil {
			return nil, err
		}
		c.TieEmbeddings = t.Tie
	}
	c.Name = name
	c.Architecture = arch
	if c.ModelType == "" {
		c.ModelType = h.ModelType
	}
	noteVision(root, c, h.Architectures[0])
	return c, nil
}

// nonFinite returns data with the bare Infinity, -Infinity and NaN tokens
// that Python's json module writes (Nemotron-H time_step_limit) blanked to
// null (NaN to 0), padded with spaces so that every offset is kept; data
// itself when it has none. moecast reads none of the keys that carry them.
func nonFinite(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	out := bytes.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case bytes.HasPrefix(out[i:], []byte("-Infinity")):
			copy(out[i:], " null    ")
			i += 8
		case bytes.HasPrefix(out[i:], []byte("Infinity")):
			copy(out[i:], "null    ")
			i += 7
		case bytes.HasPrefix(out[i:], []byte("NaN")):
			copy(out[i:], "0  ")
			i += 2
		}
	}
	return out
}

// checkObject rejects input that is not a single JSON object, with the
// position of the syntax error.
func checkObject(d *doc) error {
	var v json.RawMessage
	if err := d.decode(&v); err != nil {
		return err
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return &ConfigError{File: d.file, Line: 1, Col: 1, Msg: "want a JSON object at the top level"}
	}
	return nil
}

// doc is a JSON object inside the file: the whole file, or text_config.
type doc struct {
	file   string
	data   []byte // the whole file
	raw    []byte // this object
	base   int    // offset of raw in data
	prefix string // key prefix for errors: "" or "text_config."
	// rename maps a common key (FieldError.Field) to this family's key.
	rename map[string]string
	// top is the whole config.json (a wrapper's quantization_config may
	// sit there, outside text_config); side is ModelOpt's
	// hf_quant_config.json, nil when there is none.
	top, side *doc
}

// sub returns the object under key (found by walking the top-level tokens,
// so that its offset is known).
func (d *doc) sub(key string) (*doc, error) {
	dec := json.NewDecoder(bytes.NewReader(d.raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, d.jsonErr(err)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, d.jsonErr(err)
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, d.jsonErr(err)
		}
		if k == key {
			start := int(dec.InputOffset()) - len(v)
			if len(v) == 0 || v[0] != '{' {
				return nil, d.errAt(start, key, "want a JSON object")
			}
			return &doc{file: d.file, data: d.data, raw: v, base: d.base + start, prefix: d.prefix + key + ".", top: d.top, side: d.side}, nil
		}
	}
	return nil, d.keyErr(key, "missing")
}

// quantDoc is the quantization_config object (for error positions and
// keys), or d itself when it has none.
func (d *doc) quantDoc() *doc {
	q, err := d.sub("quantization_config")
	if err != nil {
		return d
	}
	q.rename = d.rename
	return q
}

// decode unmarshals the object into v, turning encoding/json errors into
// positioned ConfigErrors.
func (d *doc) decode(v any) error {
	if err := json.Unmarshal(d.raw, v); err != nil {
		return d.jsonErr(err)
	}
	return nil
}

func (d *doc) jsonErr(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return d.errAt(int(se.Offset)-1, "", "JSON syntax error: %s", se.Error())
	case errors.As(err, &te):
		return d.errAt(int(te.Offset)-1, te.Field, "want %s, got %s", jsonWant(te.Type), jsonGot(te.Value))
	}
	return &ConfigError{File: d.file, Msg: err.Error(), Err: err}
}

// jsonWant says in JSON's words what a Go type of a raw struct accepts
// ("an integer", "a list of strings"), never the Go type's name.
func jsonWant(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		elem := jsonWant(t.Elem())
		switch {
		case elem == "true or false":
			elem = "booleans"
		case strings.HasPrefix(elem, "a list"):
			elem = "lists"
		default:
			elem = strings.TrimPrefix(strings.TrimPrefix(elem, "an "), "a ") + "s"
		}
		return "a list of " + elem
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another value"
}

// jsonGot names the JSON value encoding/json reports ("number 1e12",
// "string", "array") for a message: a number with its text, else its kind.
func jsonGot(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return strings.TrimPrefix(v, "number ")
	case v == "number":
		return "a number"
	case v == "string":
		return "a string"
	case v == "bool":
		return "a boolean"
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	}
	return v
}

// errAt builds a ConfigError at byte offset off of this object.
func (d *doc) errAt(off int, key, format string, args ...any) error {
	line, col := position(d.data, d.base+off)
	if key != "" {
		key = d.prefix + key
	}
	return &ConfigError{File: d.file, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// keyErr builds a ConfigError for key (a common name, renamed for the
// family), at the key's position when it occurs in the object.
func (d *doc) keyErr(key, format string, args ...any) error {
	if r, ok := d.rename[key]; ok {
		key = r
	}
	msg := fmt.Sprintf(format, args...)
	if off := findKey(d.raw, key); off >= 0 {
		return d.errAt(off, key, "%s", msg)
	}
	return &ConfigError{File: d.file, Key: d.prefix + key, Msg: msg}
}

// fieldErr converts a *FieldError from Validate into a positioned error.
func (d *doc) fieldErr(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return d.keyErr(fe.Field, "%s", d.renameMsg(fe.Msg))
	}
	return err
}

// renameMsg renames the common keys quoted in a message to the family's
// keys, whole words only and in one pass (so that renames do not chain).
func (d *doc) renameMsg(msg string) string {
	if len(d.rename) == 0 {
		return msg
	}
	return keyWord.ReplaceAllStringFunc(msg, func(w string) string {
		if r, ok := d.rename[w]; ok {
			return r
		}
		return w
	})
}

var keyWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// findKey returns the offset of the first occurrence of "key": in raw, or -1.
// It is a textual search (the first match may sit in a nested object).
func findKey(raw []byte, key string) int {
	pat := []byte(`"` + key + `"`)
	for off := 0; ; {
		i := bytes.Index(raw[off:], pat)
		if i < 0 {
			return -1
		}
		j := off + i + len(pat)
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
			j++
		}
		if j < len(raw) && raw[j] == ':' {
			return off + i
		}
		off = off + i + 1
	}
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// hfDtype maps torch_dtype / dtype to the storage format of unquantized
// weights; "" means bf16 (noted).
func hfDtype(d *doc, c *Config, torchDtype, dtypeField string) (dtype.Format, error) {
	s := torchDtype
	key := "torch_dtype"
	if s == "" {
		s, key = dtypeField, "dtype"
	}
	switch s {
	case "bfloat16":
		return dtype.BF16Weights, nil
	case "float16":
		return dtype.Format{Name: "fp16", Bits: 16, Compute: dtype.BF16}, nil
	case "float32":
		return dtype.Format{Name: "fp32", Bits: 32, Compute: dtype.BF16}, nil
	case "":
		c.Notes = append(c.Notes, "torch_dtype absent: unquantized weights taken as bf16")
		return dtype.BF16Weights, nil
	}
	return dtype.Format{}, d.keyErr(key, "unsupported dtype %q (want bfloat16, float16 or float32)", s)
}
