package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/scenarios"
)

// newScenarioCmd is the `scenario` command group: scenario files made
// from what an engine was started with.
func newScenarioCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenario",
		Short: "Write scenario files from an engine's own arguments",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return c.Help() },
	}
	cmd.AddCommand(newScenarioFromArgsCmd(s, nil))
	return cmd
}

// scenarioFromArgsOptions are the inputs of `moecast scenario from-vllm-args`.
type scenarioFromArgsOptions struct {
	Input        string   // a file, "-" for standard input; "" with Argv
	Argv         []string // the command line after `--`
	GPU          string
	Fabric       string
	ModelConfig  string
	ModelConfigs string
	Acceptance   []float64
	Name         string
	Out          string // -o; "" or "-" = standard output
}

// newScenarioFromArgsCmd builds `scenario from-vllm-args`; runF, when not
// nil, replaces the run function (tests capture the options).
func newScenarioFromArgsCmd(s *streams, runF func(*scenarioFromArgsOptions) error) *cobra.Command {
	o := &scenarioFromArgsOptions{}
	cmd := &cobra.Command{
		Use:   "from-vllm-args [FILE|-] --gpu GPU [-- vllm serve MODEL ...]",
		Short: "A scenario from a vllm serve / sglang.launch_server command line or their start-up log line",
		Long: `Turn what an engine was started with into a scenario file: a vllm serve
command line, the vLLM server's "non-default args: {...}" log line, a
python -m sglang.launch_server (or sglang serve) command line, or SGLang's
"server_args=ServerArgs(...)" log line. FILE (or - for standard input) may be
a whole server log: the last such line in it is read. A command line may also
follow --, as the shell split it:

  moecast scenario from-vllm-args --gpu h200-sxm -- vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --enable-expert-parallel

Read: the model, tensor/data/expert parallelism, DP attention, max_num_seqs
(SGLang: max_running_requests), max_num_batched_tokens (SGLang:
chunked_prefill_size), the KV-cache dtype, gpu_memory_utilization (SGLang:
mem_fraction_static), CUDA graphs, their mode and capture sizes (vLLM:
--cudagraph-capture-sizes, --max-cudagraph-capture-size, --compilation-config's
cudagraph_mode and capture sizes; SGLang: --cuda-graph-max-bs), the custom
all-reduce, async scheduling (SGLang: the overlap scheduler), mixed chunks,
speculative decoding. Each key
of the scenario names the argument it came from; every argument read but not
modelled is listed in a warning.

The GPU is not among an engine's arguments: --gpu names it (--fabric, else
the GPU's usual one). The model is a preset when its Hugging Face id is a
preset's; else its config from --model-configs DIR (<org>--<name>_config.json
files, aiconfigurator's naming; default $MOECAST_MODEL_CONFIGS), its own
directory when the model is a local path, or --model-config. Speculative decoding needs --acceptance, which no
engine argument holds.`,
		Args: cobra.ArbitraryArgs, // FILE, or the words after --
		RunE: func(c *cobra.Command, args []string) error {
			if dash := c.ArgsLenAtDash(); dash >= 0 {
				o.Argv = args[dash:]
				args = args[:dash]
			}
			switch {
			case len(args) > 1:
				return inputErrf("scenario from-vllm-args: one FILE at most, got %d arguments (a command line goes after --: usage: %s)", len(args), c.UseLine())
			case len(args) > 0 && len(o.Argv) > 0:
				return inputErrf("scenario from-vllm-args: give FILE or a command line after --, not both")
			case len(args) > 0:
				o.Input = args[0]
			case len(o.Argv) == 0:
				return inputErrf("scenario from-vllm-args: give FILE (- for standard input) or a command line after -- (usage: %s)", c.UseLine())
			}
			if runF != nil {
				return runF(o)
			}
			return runScenarioFromArgs(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", "", "GPU preset the engine ran on (required; see moecast gpus)")
	f.StringVar(&o.Fabric, "fabric", "", "fabric preset between the GPUs (default: the GPU's usual one)")
	f.StringVar(&o.ModelConfig, "model-config", "", "the model's config.json, when its id is no preset")
	f.StringVar(&o.ModelConfigs, "model-configs", "", "directory of <org>--<name>_config.json files to find the model's config in (default: $"+modelConfigsEnv+")")
	f.Float64SliceVar(&o.Acceptance, "acceptance", nil, "speculative decoding's acceptance: one value, or one per draft position (0.8,0.6,0.45)")
	f.StringVar(&o.Name, "name", "", "the scenario's name (default: from the model and layout)")
	f.StringVarP(&o.Out, "output", "o", "", "scenario file to write (default: standard output)")
	return cmd
}

// modelConfigsEnv names the environment variable that gives
// --model-configs its default (a shared collection of config files).
const modelConfigsEnv = "MOECAST_MODEL_CONFIGS"

func runScenarioFromArgs(s *streams, o *scenarioFromArgsOptions) error {
	if o.ModelConfigs == "" {
		o.ModelConfigs = os.Getenv(modelConfigsEnv)
	}
	out := o.Out
	if out == "-" {
		out = ""
	}
	if out != "" {
		var inputs []string
		if o.Input != "" && o.Input != "-" {
			inputs = append(inputs, o.Input)
		}
		if err := checkOut("scenario from-vllm-args", out, inputs...); err != nil {
			return err
		}
	}
	for _, a := range o.Acceptance {
		if !(a > 0 && a <= 1) {
			return inputErrf("--acceptance %g: each value must be in (0, 1]", a)
		}
	}
	var (
		d     *scenarios.Deployment
		err   error
		input string
	)
	switch {
	case len(o.Argv) > 0:
		input = "the command line after --"
		d, err = scenarios.EngineArgv(o.Argv)
	case o.Input == "-":
		input = "standard input"
		var data []byte
		data, err = infile.ReadFile(infile.Stdin, s.In, infile.MaxText)
		if err == nil {
			d, err = scenarios.ReadEngineArgs(scenarios.StdinName, data)
		}
	default:
		input = filepath.Base(o.Input)
		var data []byte
		data, err = readInputFile(o.Input)
		if err == nil {
			d, err = scenarios.ReadEngineArgs(o.Input, data)
		}
	}
	if err != nil {
		return err // *infile.Error, *scenarios.InputError or readInputFile's InputError
	}
	imp, err := d.Scenario(scenarios.ImportOptions{GPU: o.GPU, Fabric: o.Fabric, ModelConfig: o.ModelConfig,
		ModelConfigDir: o.ModelConfigs, Acceptance: o.Acceptance, Name: o.Name, Path: out, Input: input})
	if err != nil {
		return err // *scenarios.InputError
	}
	for _, w := range imp.Warnings {
		fmt.Fprintln(s.Err, "warning: "+w)
	}
	if out == "" {
		_, err := s.Out.Write(imp.TOML)
		return err
	}
	if err := atomicfile.WriteFile(out, imp.TOML, 0o644); err != nil {
		return fmt.Errorf("scenario from-vllm-args: %w", err)
	}
	fmt.Fprintf(s.Err, "wrote %s (%s)\n", out, imp.Scenario.Name)
	return nil
}

// readInputFile reads an input file, refusing a directory in words.
func readInputFile(p string) ([]byte, error) {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return nil, inputErrf("%s: is a directory, not a command line or server log", p)
	}
	data, err := infile.ReadFile(p, nil, infile.MaxText)
	if err != nil {
		return nil, fmt.Errorf("read %w", err)
	}
	if strings.ContainsRune(string(data[:min(len(data), 8192)]), 0) {
		return nil, inputErrf("%s: binary data, not a command line or server log", p)
	}
	return data, nil
}
