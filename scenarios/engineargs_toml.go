package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// ImportOptions are what a scenario needs beyond an engine's arguments.
type ImportOptions struct {
	// GPU is hardware.gpu, a preset name; the arguments never name it.
	GPU string
	// Fabric is hardware.fabric; "" = the GPU preset's usual fabric.
	Fabric string
	// ModelConfig is a config.json for the model; "" = find it from the
	// model's id (a preset, ModelConfigDir, or the model's own directory).
	ModelConfig string
	// ModelConfigDir holds config files named <org>--<name>_config.json
	// (aiconfigurator's naming), searched for the model's id.
	ModelConfigDir string
	// Acceptance is speculative.acceptance, needed when the arguments
	// configure speculative decoding: one value, or one per draft position.
	Acceptance []float64
	// Name is the scenario's name; "" = made from the model and layout.
	Name string
	// Path is the file the scenario will be written to ("" = standard
	// output); relative paths in it are written relative to its directory.
	Path string
	// Input names what was read, for the file's header ("serve.log").
	Input string
}

// Imported is a scenario written from a deployment: its TOML text, the
// scenario it loads as, and the remarks on the conversion.
type Imported struct {
	TOML     []byte
	Scenario *Scenario
	Warnings []string
}

// Scenario writes the deployment as a scenario file with the hardware and
// model config of o, and loads it back (so that what is written is a valid
// scenario). Each key carries a comment naming the argument it came from.
func (d *Deployment) Scenario(o ImportOptions) (_ *Imported, err error) {
	defer asInput(&err)
	if o.GPU == "" {
		return nil, fmt.Errorf("the engine's arguments do not name the GPU: give --gpu (one of %s)", strings.Join(kernels.GPUNames(), ", "))
	}
	if _, ok := kernels.LookupGPU(o.GPU); !ok {
		return nil, fmt.Errorf("--gpu %q: unknown GPU (presets: %s)", o.GPU, strings.Join(kernels.GPUNames(), ", "))
	}
	mkey, mval, mfrom, warn, err := d.resolveModel(o)
	if err != nil {
		return nil, err
	}
	out := &Imported{Warnings: append([]string(nil), d.Warnings...)}
	if warn != "" {
		out.Warnings = append(out.Warnings, warn)
	}
	if len(d.Ignored) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("not modelled, so not in the scenario: %s", strings.Join(d.Ignored, ", ")))
	}
	if d.Spec.Method != "" && len(o.Acceptance) == 0 {
		return nil, fmt.Errorf("%s configures speculative decoding (%s, K = %d) but the acceptance rate is not among an engine's arguments: give --acceptance (one value, or one per draft position, as the engine's spec-decode metrics report them)",
			oneLineTrunc(d.Spec.From), d.Spec.Method, d.Spec.DraftTokens)
	}
	if n := len(o.Acceptance); d.Spec.Method != "" && n != 1 && n != d.Spec.DraftTokens {
		return nil, fmt.Errorf("--acceptance: %d values for %d draft tokens (%s): give one value, or one per draft position", n, d.Spec.DraftTokens, oneLineTrunc(d.Spec.From))
	}
	if d.Spec.Method == "" && len(o.Acceptance) > 0 {
		out.Warnings = append(out.Warnings, "--acceptance ignored: the arguments configure no speculative decoding")
	}
	var b strings.Builder
	input := o.Input
	if input == "" {
		input = "its arguments"
	}
	fmt.Fprintf(&b, "# Written by `moecast scenario from-vllm-args` from a %s (%s).\n", d.Source, oneLineTrunc(input))
	b.WriteString("# Each key names the engine argument it came from; the hardware is not among\n")
	b.WriteString("# an engine's arguments and came from moecast's flags.\n")
	if len(d.Ignored) > 0 {
		fmt.Fprintf(&b, "# Not modelled: %s\n", oneLineTrunc(strings.Join(d.Ignored, ", ")))
	}
	name := o.Name
	if name == "" {
		name = d.defaultName(o.GPU)
	}
	fmt.Fprintf(&b, "name = %s\n", quoteTOML(name))
	line := func(key, value, from string) {
		short := key[strings.LastIndexByte(key, '.')+1:]
		if from == "" {
			fmt.Fprintf(&b, "%s = %s\n", short, value)
			return
		}
		fmt.Fprintf(&b, "%s = %s # %s\n", short, value, oneLineTrunc(from))
	}
	section := func(table string) {
		fmt.Fprintf(&b, "\n[%s]\n", table)
		for _, s := range d.Settings {
			if strings.HasPrefix(s.Key, table+".") {
				line(s.Key, s.Value, s.From)
			}
		}
	}
	b.WriteString("\n[model]\n")
	line(mkey, quoteTOML(mval), mfrom)
	for _, s := range d.Settings {
		if strings.HasPrefix(s.Key, "model.") {
			line(s.Key, s.Value, s.From)
		}
	}
	b.WriteString("\n[hardware]\n")
	line("hardware.gpu", quoteTOML(o.GPU), "--gpu")
	if o.Fabric != "" {
		line("hardware.fabric", quoteTOML(o.Fabric), "--fabric")
	}
	section("parallel")
	section("runtime")
	if d.Spec.Method != "" {
		b.WriteString("\n[speculative]\n")
		line("speculative.method", quoteTOML(d.Spec.Method), d.Spec.From)
		line("speculative.draft_tokens", strconv.Itoa(d.Spec.DraftTokens), d.Spec.From)
		acc := make([]string, len(o.Acceptance))
		for i, a := range o.Acceptance {
			acc[i] = formatFloat(a)
		}
		line("speculative.acceptance", "["+strings.Join(acc, ", ")+"]", "--acceptance")
	}
	b.WriteString("\n# [workload] (the load to simulate) is not among an engine's arguments: add\n")
	b.WriteString("# concurrency or request_rate, input_tokens and output_tokens here, or give\n")
	b.WriteString("# them to `moecast simulate` as flags.\n")
	out.TOML = []byte(b.String())
	file := o.Path
	if file == "" {
		file = StdinName
	}
	s, err := Parse(file, out.TOML)
	if err != nil {
		return nil, fmt.Errorf("the scenario written from the %s does not load: %w", d.Source, err)
	}
	out.Scenario = s
	out.Warnings = append(out.Warnings, s.Warnings...)
	return out, nil
}

// defaultName is "<model> on <gpu>, <engine> TP.. DP.. EP..".
func (d *Deployment) defaultName(gpu string) string {
	get := func(key, def string) string {
		if v, ok := d.Get(key); ok {
			return v
		}
		return def
	}
	n := fmt.Sprintf("%s on %s, %s TP%s", d.Model, gpu, d.Engine, get("parallel.tp", "1"))
	if dp := get("parallel.dp", "1"); dp != "1" {
		n += " DP" + dp
	}
	if get("parallel.dp_attention", "false") == "true" {
		n += " DP-attention"
	}
	if ep := get("parallel.ep", "1"); ep != "1" {
		n += " EP" + ep
	}
	if d.Spec.Method != "" {
		n += fmt.Sprintf(", %s K=%d", d.Spec.Method, d.Spec.DraftTokens)
	}
	return n
}

// resolveModel finds the model's config: --model-config; a preset whose
// repository is the model id; <org>--<name>_config.json in
// ModelConfigDir; config.json in the model's directory when it is a
// local path; a preset whose repository name is the path's base name. It
// returns the [model] key and value and the comment for it.
func (d *Deployment) resolveModel(o ImportOptions) (key, value, from, warn string, err error) {
	id := strings.TrimRight(d.Model, "/")
	base := filepath.Base(id)
	if o.ModelConfig != "" {
		if _, err := os.Stat(o.ModelConfig); err != nil {
			return "", "", "", "", fmt.Errorf("--model-config: %w", err)
		}
		return "model.config", relTo(o.Path, o.ModelConfig), "--model-config, for " + d.Model, "", nil
	}
	if p, ok := model.PresetForRepo(id); ok {
		return "model.preset", p, d.Model, "", nil
	}
	local := strings.HasPrefix(id, "/") || strings.HasPrefix(id, ".") || strings.HasPrefix(id, "~")
	if o.ModelConfigDir != "" {
		var cands []string
		if org, name, ok := strings.Cut(id, "/"); ok && !local && !strings.Contains(name, "/") {
			cands = []string{filepath.Join(o.ModelConfigDir, org+"--"+name+"_config.json")}
		} else {
			cands, _ = filepath.Glob(filepath.Join(o.ModelConfigDir, "*--"+globEscape(base)+"_config.json"))
		}
		var found []string
		for _, c := range cands {
			if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
				found = append(found, c)
			}
		}
		switch len(found) {
		case 1:
			return "model.config", relTo(o.Path, found[0]), d.Model, "", nil
		case 0:
		default:
			return "", "", "", "", fmt.Errorf("model %q: several configs in %s match its name (%s): give --model-config", d.Model, o.ModelConfigDir, strings.Join(found, ", "))
		}
	}
	if local {
		if cf := filepath.Join(id, "config.json"); fileExists(cf) {
			return "model.config", relTo(o.Path, cf), d.Model, "", nil
		}
	}
	for _, p := range model.PresetNames() {
		if repo := presetRepo(p); repo != "" && strings.EqualFold(filepath.Base(repo), base) && base != id {
			return "model.preset", p, d.Model,
				fmt.Sprintf("model %q: taken as preset %s (%s) by its base name; give --model-config if it is another checkpoint", d.Model, p, repo), nil
		}
	}
	if strings.Contains(d.Model, "$") {
		return "", "", "", "", fmt.Errorf("model %q: a shell variable the input does not set: give --model-config PATH/config.json", d.Model)
	}
	where := ""
	if o.ModelConfigDir != "" {
		where = " nor in " + o.ModelConfigDir
	}
	return "", "", "", "", fmt.Errorf("model %q: not a preset's repository (%s)%s: give --model-config PATH/config.json (or --model-configs DIR of <org>--<name>_config.json files)",
		d.Model, presetRepos(), where)
}

// presetRepo is the Hugging Face repository of preset p.
func presetRepo(p string) string { return presetRepoOf[p] }

// presetRepoOf maps each preset to its repository, found once.
var presetRepoOf = func() map[string]string {
	m := map[string]string{}
	for _, p := range model.PresetNames() {
		if f, ok := model.PresetFile(p); ok {
			m[p] = model.PresetRepo(f)
		}
	}
	return m
}()

func presetRepos() string {
	var rs []string
	for _, p := range model.PresetNames() {
		rs = append(rs, presetRepoOf[p])
	}
	return strings.Join(rs, ", ")
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// globEscape quotes the glob metacharacters of s.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`)
	return r.Replace(s)
}

// relTo writes target relative to the directory of the scenario file at
// scenarioPath ("" = the current directory), as the loader resolves it; an
// absolute path stays absolute when no relative one exists.
func relTo(scenarioPath, target string) string {
	dir := "."
	if scenarioPath != "" {
		dir = filepath.Dir(scenarioPath)
	}
	absT, err1 := filepath.Abs(target)
	absD, err2 := filepath.Abs(dir)
	if err := errors.Join(err1, err2); err != nil {
		return filepath.ToSlash(target)
	}
	if r, err := filepath.Rel(absD, absT); err == nil && !filepath.IsAbs(target) {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(absT)
}

// oneLineTrunc is s on one line, cut to 160 bytes.
func oneLineTrunc(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// formatFloat writes f as TOML with the fewest digits that read back as f.
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}
