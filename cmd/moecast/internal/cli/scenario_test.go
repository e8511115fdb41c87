package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engineArgs is the scenarios package's engine-argument fixtures, seen from
// this package.
const engineArgs = "../../../../scenarios/testdata/engineargs"

// TestScenarioFromArgs runs the command end to end: a file, standard
// input, a command line after --, and -o; the written scenario must load
// in `moecast predict`.
func TestScenarioFromArgs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "dsv3.toml")
	code, stdout, stderr := runCLI(t, "scenario", "from-vllm-args", engineArgs+"/vllm_serve_dsv3_mtp.sh", "--gpu", "h200-sxm",
		"--acceptance", "0.85", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "warning: not modelled, so not in the scenario: --enable-dbo, --quantization fp8")
	assert.Contains(t, stderr, "wrote "+out)
	text, err := os.ReadFile(out)
	require.NoError(t, err)
	golden(t, "scenario_from_vllm_args_dsv3.toml.golden", strings.ReplaceAll(string(text), out, "OUT"))

	code, stdout, stderr = runCLI(t, "predict", out, "--batch", "8")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "mtp")

	// The same deployment as words after --.
	code, stdout, stderr = runCLI(t, "scenario", "from-vllm-args", "--gpu", "h200-sxm", "--acceptance", "0.85", "--",
		"vllm", "serve", "deepseek-ai/DeepSeek-V3", "-tp", "8", "--enable-expert-parallel", "--kv-cache-dtype", "fp8",
		"--speculative-config", `{"method":"mtp","num_speculative_tokens":1}`)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, `preset = "deepseek-v3"`)
	assert.Contains(t, stdout, "ep = 8 # --enable-expert-parallel")
	assert.Contains(t, stdout, `method = "mtp"`)

	// A server log on standard input.
	log, err := os.ReadFile(engineArgs + "/sglang_serverargs_qwen3.log")
	require.NoError(t, err)
	var o, e bytes.Buffer
	code = RunIO([]string{"scenario", "from-vllm-args", "-", "--gpu", "h100-sxm"}, bytes.NewReader(log), &o, &e)
	require.Equal(t, ExitOK, code, e.String())
	assert.Contains(t, o.String(), `engine = "sglang"`)
	assert.Contains(t, o.String(), "tp = 2 # tp_size=2")
	assert.Contains(t, e.String(), "enable_torch_compile=True")
}

// TestScenarioFromArgsModelConfigsEnv checks that $MOECAST_MODEL_CONFIGS
// is where a model's config is looked for when --model-configs is absent.
func TestScenarioFromArgsModelConfigsEnv(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../../../model/presets/Qwen--Qwen3-30B-A3B_config.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acme--Tiny-MoE_config.json"), src, 0o644))
	t.Setenv(modelConfigsEnv, dir)
	code, stdout, stderr := runCLI(t, "scenario", "from-vllm-args", "--gpu", "h200-sxm", "--", "vllm", "serve", "acme/Tiny-MoE", "-tp", "2")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, `config = "`+filepath.ToSlash(filepath.Join(dir, "acme--Tiny-MoE_config.json"))+`" # acme/Tiny-MoE`)
}

// TestScenarioFromArgsBad checks that bad input is one line on stderr and
// exit code 2.
func TestScenarioFromArgsBad(t *testing.T) {
	t.Setenv(modelConfigsEnv, "")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.log")
	require.NoError(t, os.WriteFile(bad, []byte("INFO hello\nINFO non-default args: {'model': 'x', 'tensor_parallel_size': 'eight'}\n"), 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no input", []string{"--gpu", "h200-sxm"}, "give FILE"},
		{"two files", []string{"a", "b", "--gpu", "h200-sxm"}, "one FILE at most"},
		{"file and argv", []string{bad, "--gpu", "h200-sxm", "--", "vllm", "serve", "x"}, "not both"},
		{"missing file", []string{filepath.Join(dir, "none.sh"), "--gpu", "h200-sxm"}, "no such file"},
		{"directory", []string{dir, "--gpu", "h200-sxm"}, "is a directory"},
		{"bad value in a log", []string{bad, "--gpu", "h200-sxm"}, bad + `:2: tensor_parallel_size: "eight" is not an integer`},
		{"no gpu", []string{"--", "vllm", "serve", "deepseek-ai/DeepSeek-V3"}, "give --gpu"},
		{"acceptance out of range", []string{"--gpu", "h200-sxm", "--acceptance", "1.5", "--", "vllm", "serve", "x"}, "--acceptance 1.5"},
		{"unknown model", []string{"--gpu", "h200-sxm", "--", "vllm", "serve", "acme/Unknown-MoE"}, "give --model-config"},
		{"not an engine command", []string{"--gpu", "h200-sxm", "--", "python", "train.py"}, "found none of"},
		{"output is a directory", []string{"-o", dir, "--gpu", "h200-sxm", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3"}, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"scenario", "from-vllm-args"}, tt.args...)...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

// TestScenarioFromArgsOptions checks that cobra only fills the options.
func TestScenarioFromArgsOptions(t *testing.T) {
	var got *scenarioFromArgsOptions
	cmd := newScenarioFromArgsCmd(&streams{}, func(o *scenarioFromArgsOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--gpu", "b200-sxm", "--fabric", "nvlink5", "--acceptance", "0.8,0.6", "--model-configs", "cfgs",
		"--", "vllm", "serve", "m", "--tp", "2"})
	cmd.SetOut(new(bytes.Buffer))
	require.NoError(t, cmd.Execute())
	require.NotNil(t, got)
	assert.Equal(t, &scenarioFromArgsOptions{Argv: []string{"vllm", "serve", "m", "--tp", "2"}, GPU: "b200-sxm", Fabric: "nvlink5",
		ModelConfigs: "cfgs", Acceptance: []float64{0.8, 0.6}}, got)
}
