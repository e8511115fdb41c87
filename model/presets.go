package model

import (
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/infile"
)

// presetFS holds verbatim copies of HF config.json files from
// ai-dynamo/aiconfigurator @ 095f58a (Apache-2.0); see presets/README.md.
//
//go:embed presets/*.json
var presetFS embed.FS

// presetFiles maps a preset name to its embedded config.json.
var presetFiles = map[string]string{
	"kimi-k2.5":        "moonshotai--Kimi-K2.5_config.json",
	"kimi-k2":          "moonshotai--Kimi-K2-Instruct_config.json",
	"deepseek-v3":      "deepseek-ai--DeepSeek-V3_config.json",
	"deepseek-r1":      "deepseek-ai--DeepSeek-R1_config.json",
	"qwen3-235b-a22b":  "Qwen--Qwen3-235B-A22B_config.json",
	"qwen3-30b-a3b":    "Qwen--Qwen3-30B-A3B_config.json",
	"gpt-oss-120b":     "openai--gpt-oss-120b_config.json",
	"mixtral-8x7b":     "mistralai--Mixtral-8x7B-v0.1_config.json",
	"glm-5":            "zai-org--GLM-5_config.json",
	"llama-4-maverick": "meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json",
}

// PresetNames lists the embedded presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presetFiles))
	for n := range presetFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PresetForRepo returns the preset whose config.json is that of the
// Hugging Face repository repo ("deepseek-ai/DeepSeek-V3", matched without
// regard to case), and whether there is one. A quantized or otherwise
// derived checkpoint ("Qwen/Qwen3-235B-A22B-FP8") is another repository and
// matches no preset.
func PresetForRepo(repo string) (string, bool) {
	repo = strings.ToLower(strings.Trim(repo, "/"))
	for name, file := range presetFiles {
		if strings.ToLower(PresetRepo(file)) == repo {
			return name, true
		}
	}
	return "", false
}

// PresetFile is the embedded config file of preset name ("deepseek-v3" ->
// "deepseek-ai--DeepSeek-V3_config.json"), and whether there is one.
func PresetFile(name string) (string, bool) {
	f, ok := presetFiles[strings.ToLower(name)]
	return f, ok
}

// PresetRepo is the Hugging Face repository of a config file named as
// aiconfigurator names them ("deepseek-ai--DeepSeek-V3_config.json" ->
// "deepseek-ai/DeepSeek-V3"); "" for a name not of that form.
func PresetRepo(file string) string {
	base, ok := strings.CutSuffix(filepath.Base(file), "_config.json")
	org, name, found := strings.Cut(base, "--")
	if !ok || !found || org == "" || name == "" {
		return ""
	}
	return org + "/" + name
}

// Preset imports the embedded preset name (case-insensitive). Each call
// returns a fresh Config the caller may modify.
func Preset(name string) (*Config, error) {
	file, ok := presetFiles[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("unknown model preset %q; presets: %s", name, strings.Join(PresetNames(), ", "))
	}
	c, err := Load(presetFS, "presets/"+file)
	if err != nil {
		return nil, fmt.Errorf("embedded preset %s: %w", name, err)
	}
	c.Name = strings.ToLower(name)
	return c, nil
}

// Resolve returns the preset called nameOrPath, or else imports the
// config.json file at that path; "-" reads it from standard input (named
// "stdin" in errors). A name that is neither an existing file nor a preset
// is an error that lists the presets. Every error is a *ResolveError.
func Resolve(nameOrPath string) (*Config, error) { return ResolveIn(nameOrPath, os.Stdin) }

// ResolveIn is Resolve with "-" reading stdin. Every error is a
// *ResolveError (wrapping a *ConfigError where the file is at fault).
func ResolveIn(nameOrPath string, stdin io.Reader) (c *Config, err error) {
	defer func() {
		if err != nil {
			c, err = nil, &ResolveError{Name: nameOrPath, Err: err}
		}
	}()
	if nameOrPath == "-" {
		return loadReader("stdin", stdin)
	}
	if _, ok := presetFiles[strings.ToLower(nameOrPath)]; ok {
		return Preset(nameOrPath)
	}
	if st, err := os.Stat(nameOrPath); err == nil {
		if !st.IsDir() {
			return LoadFile(nameOrPath)
		}
		hint := ""
		if cf := filepath.Join(nameOrPath, "config.json"); isFile(cf) {
			hint = fmt.Sprintf(" (the model's config is %s)", cf)
		}
		return nil, fmt.Errorf("model %q: is a directory, not a config.json%s", nameOrPath, hint)
	}
	if strings.HasSuffix(nameOrPath, ".json") || strings.ContainsRune(nameOrPath, os.PathSeparator) {
		return nil, fmt.Errorf("model %q: no such file, and not a preset (presets: %s)", nameOrPath, strings.Join(PresetNames(), ", "))
	}
	return Preset(nameOrPath)
}

// loadReader imports the config.json read from r; name is used in errors
// and as Config.Name.
func loadReader(name string, r io.Reader) (*Config, error) {
	data, err := infile.ReadFile(infile.Stdin, r, infile.MaxModelConfig)
	if err != nil {
		return nil, fmt.Errorf("read model config %s: %w", name, err)
	}
	return Parse(name, data)
}

// isFile reports whether path names a regular file (or a link to one).
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
