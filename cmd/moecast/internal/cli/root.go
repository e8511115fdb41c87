// Package cli holds moecast's cobra commands, one file per command. Each
// command's constructor fills an options value from the flags and calls a
// run function (newPredictCmd(s, runF): a test injects runF and checks the
// options, as gh's newCmdDelete(f, runF)); the run function loads the
// command's input struct (predictInput, simulateInput, planInput,
// sweepInput, validateTraceInput, validateBenchInput, corpusInput), calls
// the computation and hands its result's views (report/view) to
// report.Generate, which owns every output format.
// Formulas live in the library packages and views in report, never here.
// Errors are classified into exit codes once, by type (exitCodeOf).
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/calib/campaign"
	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/trace"
	"github.com/moecast/moecast/validate"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command could not do its job (I/O, no GPU driver)
	ExitInput   = 2 // bad input: flags, scenario, config.json, trace, calibration file
)

// InputError marks an error caused by the user's input (exit code 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputErr wraps err as an InputError; nil stays nil.
func inputErr(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{Err: err}
}

// inputErrf formats a new InputError.
func inputErrf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// streams are where a command reads ("-" as an input file) and writes.
type streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run executes moecast with args (without the program name) and returns the
// process exit code. It never panics on bad input: errors are printed on one
// line to stderr.
func Run(args []string, stdout, stderr io.Writer) int {
	return RunIO(args, os.Stdin, stdout, stderr)
}

// RunIO is Run with standard input: what "-" reads where a file is read.
func RunIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, errw := &safeWriter{w: stdout}, &safeWriter{w: stderr}
	defer out.flush()
	defer errw.flush()
	s := &streams{In: stdin, Out: out, Err: errw}
	root := newRootCmd(s)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	c, err := root.ExecuteC()
	if err != nil && c != nil && c.HasParent() && isCobraUsage(err) && !errors.As(err, new(*InputError)) {
		// cobra's argument errors name no command: "calib show: accepts 1
		// arg(s), received 0 (usage: moecast calib show FILE|...)".
		err = inputErr(fmt.Errorf("%s: %w (usage: %s)", commandName(c), err, c.UseLine()))
	}
	return exitCode(err, errw)
}

// Main runs moecast as a program: Run on the process's arguments and
// streams, with SIGINT and SIGTERM removing the temporary files of outputs
// being written before the process exits 130 or 143.
func Main() int {
	stop := atomicfile.HandleSignals(nil)
	defer stop()
	return Run(os.Args[1:], os.Stdout, os.Stderr)
}

// version is moecast's version and VCS commit from the build information
// ("devel" for either when the build does not record it, as with go run).
func version() string {
	v, commit, modified := "devel", "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	return fmt.Sprintf("%s (commit %s%s)", v, commit, modified)
}

func newRootCmd(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "moecast",
		Short: "Predict, plan and verify the decode performance of Mixture-of-Experts LLMs",
		Long: `moecast predicts, plans and verifies the serving performance of MoE LLMs
(Kimi-K2.5, DeepSeek-V3, Qwen3-MoE, gpt-oss, ...) on a GPU box, from a TOML
scenario:

  predict    the decode-step time per batch size (TP/EP layout, speculative decoding)
  simulate   the vLLM V1 or SGLang scheduler over a benchmark load: TTFT, TPOT, throughput
  plan       the cheapest deployments (GPU type, count, layout) that meet latency objectives
  sweep      predict or simulate over the product of scenario keys' values
  validate   the prediction against a torch.profiler trace (trace) or a benchmark's results (bench)
  trace      break down torch.profiler traces from vLLM and SGLang by the same categories
  calib      measure (gpu), import, derive (from-trace) and show calibration tables`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		Version:           version(),
		PersistentPreRunE: checkPaths,
	}
	root.SetVersionTemplate("moecast {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// "calib show: unknown flag: --format", not "moecast: moecast calib
		// show: ..." (exitCode adds the program's name); a value of the
		// wrong type in words, not strconv's.
		if m := badFlagValue.FindStringSubmatch(err.Error()); m != nil {
			err = fmt.Errorf("%s: %q is not %s", m[2], m[1], flagTypeWords(m[3]))
		}
		if !c.HasParent() {
			return inputErr(err)
		}
		return inputErr(fmt.Errorf("%s: %w", commandName(c), err))
	})
	root.AddCommand(
		newPredictCmd(s, nil),
		newSimulateCmd(s, nil),
		newPlanCmd(s, nil),
		newSweepCmd(s, nil),
		newModelsCmd(s, nil),
		newModelCmd(s),
		newGPUsCmd(s, nil),
		newTraceCmd(s),
		newCalibCmd(s),
		newGPUCmd(s),
		newValidateCmd(s),
		newScenarioCmd(s),
	)
	return root
}

// exitCode prints err (if any) as one line and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "moecast: "+err.Error())
	return exitCodeOf(err)
}

// exitCodeOf classifies err into an exit code, once, by its type (gh's
// internal/ghcmd): the library's typed errors of bad input (a positioned
// scenario, config.json, trace, rules, calibration or bench error, a model
// that does not resolve, an unreadable or special input file, an output
// path refused or onto an input, calib gpu's options or its launcher's
// environment) and a GPU stack that cannot be used here (cuda.Unusable,
// which covers every failure of cuda.Init) exit 2 wherever they were
// returned from,
// without each call site wrapping them; anything else (I/O, a failed
// measurement) exits 1.
func exitCodeOf(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, new(*InputError)), isCobraUsage(err),
		errors.As(err, new(*infile.Error)), errors.As(err, new(*atomicfile.OutputError)),
		errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrIsInput),
		errors.As(err, new(*scenarios.Error)), errors.As(err, new(*scenarios.PlanError)), errors.As(err, new(*scenarios.InputError)),
		errors.As(err, new(*calib.InputError)), errors.As(err, new(*plan.InputError)), errors.As(err, new(*report.NonFiniteError)),
		errors.As(err, new(*model.ConfigError)), errors.As(err, new(*model.FieldError)), errors.As(err, new(*model.LayoutError)),
		errors.As(err, new(*model.ResolveError)),
		errors.As(err, new(*trace.Error)), errors.As(err, new(*trace.RuleError)), errors.Is(err, trace.ErrInput),
		errors.As(err, new(*validate.BenchError)), errors.As(err, new(*validate.InputError)), errors.As(err, new(*validate.ReadError)),
		errors.As(err, new(*campaign.PresetError)), errors.As(err, new(*campaign.InputError)),
		errors.As(err, new(*rendezvous.EnvError)),
		cuda.Unusable(err):
		return ExitInput
	}
	return ExitFailure
}

// commandName is c's path without the program name: "calib show".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// badFlagValue matches pflag's error for a value that does not parse:
// `invalid argument "abc" for "--context" flag: strconv.ParseInt: ...`.
var badFlagValue = regexp.MustCompile(`^invalid argument "((?:[^"\\]|\\.)*)" for "(?:-\w, )?(--[\w-]+)" flag: (?:strconv\.(\w+)|(.*))`)

// flagTypeWords names what a flag's parser wanted, from strconv's function.
func flagTypeWords(fn string) string {
	switch fn {
	case "ParseInt", "ParseUint", "Atoi":
		return "an integer"
	case "ParseFloat":
		return "a number"
	case "ParseBool":
		return "true or false"
	}
	return "a valid value"
}

// isCobraUsage recognises cobra's own argument errors (unknown command,
// wrong number of args), which are usage errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
