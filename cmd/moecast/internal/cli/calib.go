package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report/view"
)

// Defaults of `calib import perfdb`: a CSV snapshot of
// ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/ (parquet converted to CSV),
// kept beside the repository at ../shared/data/perfdb.
const (
	perfdbSource = "ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/ (parquet converted to CSV)"
	// perfdbTreeSource is the default source when DIR is the parquet tree
	perfdbTreeSource = "ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/ (parquet)"
	perfdbLicense    = "Apache-2.0"
	perfdbDate       = "2026-08-21"
)

func newCalibCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calib",
		Short: "Import, inspect and use op-level calibration files",
		Long: `Calibration files hold measured op costs (GEMM, MoE layer, MLA/GQA attention,
collectives) with their provenance; predict interpolates them before falling
back to the roofline (docs/calibration.md).`,
	}
	imp := &cobra.Command{Use: "import", Short: "Import measurements into a calibration file"}
	imp.AddCommand(newCalibImportNCCLCmd(s, nil), newCalibImportPerfDBCmd(s, nil))
	cmd.AddCommand(imp, newCalibShowCmd(s, nil), newCalibFromTraceCmd(s, nil), newCalibGPUCmd(s, nil))
	return cmd
}

type ncclImportOptions struct {
	Files       []string
	GPU, Fabric string
	Date        string
	Out         string
}

func newCalibImportNCCLCmd(s *streams, runF func(*ncclImportOptions) error) *cobra.Command {
	o := &ncclImportOptions{}
	cmd := &cobra.Command{
		Use:   "nccl-tests FILE... -o OUT",
		Short: "Import all_reduce_perf / all_gather_perf / reduce_scatter_perf / alltoall_perf output",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if runF != nil {
				return runF(o)
			}
			return runImportNCCL(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", "", "GPU preset name for the provenance (default: the device name in the output)")
	f.StringVar(&o.Fabric, "fabric", "", "fabric name for the provenance (pcie-gen5, nvlink4, ...)")
	f.StringVar(&o.Date, "date", "", "measurement date YYYY-MM-DD (default: today, UTC)")
	f.StringVarP(&o.Out, "output", "o", "", "calibration file to write (required; - for standard output)")
	return cmd
}

func runImportNCCL(s *streams, o *ncclImportOptions) error {
	if err := checkOut("calib import nccl-tests", o.Out, o.Files...); err != nil {
		return err
	}
	if o.Date == "" {
		o.Date = time.Now().UTC().Format("2006-01-02")
	}
	cmdline := []string{"moecast calib import nccl-tests"}
	for _, p := range o.Files {
		cmdline = append(cmdline, filepath.Base(p))
	}
	if o.GPU != "" {
		cmdline = append(cmdline, "--gpu", o.GPU)
	}
	if o.Fabric != "" {
		cmdline = append(cmdline, "--fabric", o.Fabric)
	}
	cmdline = append(cmdline, "-o", filepath.Base(o.Out))
	f, err := calib.ImportNCCLTests(o.Files, calib.NCCLTestsOptions{GPU: o.GPU, Fabric: o.Fabric, Date: o.Date, Command: strings.Join(cmdline, " ")})
	if err != nil {
		return err // *calib.InputError: exit 2 by its type
	}
	return writeImported(s, f, o.Out)
}

type perfdbImportOptions struct {
	Dir                   string
	GPU                   string
	L2                    string
	Source, License, Date string
	Out                   string
}

func newCalibImportPerfDBCmd(s *streams, runF func(*perfdbImportOptions) error) *cobra.Command {
	o := &perfdbImportOptions{}
	cmd := &cobra.Command{
		Use:   "perfdb DIR -o OUT",
		Short: "Import aiconfigurator's perf database for one GPU: its parquet tree (systems/data/<system>/<op>/<framework>/<version>/) or CSVs (comm/, moe/, mla/, systems/)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Dir = args[0]
			if runF != nil {
				return runF(o)
			}
			return runImportPerfDB(s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.GPU, "gpu", "", "GPU preset name (files <gpu with _>__*.csv); required when DIR holds several GPUs")
	f.StringVar(&o.L2, "l2", "", "L2 size for marking L2-resident rows, e.g. 60MiB (default: the GPU preset's)")
	f.StringVar(&o.Source, "source", perfdbSource, "upstream source for the provenance")
	f.StringVar(&o.License, "license", perfdbLicense, "license of the upstream data")
	f.StringVar(&o.Date, "date", perfdbDate, "date of the upstream snapshot")
	f.StringVarP(&o.Out, "output", "o", "", "calibration file to write (required; - for standard output)")
	return cmd
}

func runImportPerfDB(s *streams, o *perfdbImportOptions) error {
	if err := checkOut("calib import perfdb", o.Out, filesUnder(o.Dir, o.Out)...); err != nil {
		return err
	}
	switch st, err := os.Stat(o.Dir); {
	case errors.Is(err, fs.ErrNotExist):
		return inputErrf("perfdb %s: no such directory", o.Dir)
	case err != nil:
		return inputErrf("perfdb: %w", err)
	case !st.IsDir():
		return inputErrf("perfdb %s: not a directory (want aiconfigurator's systems/ directory, with data/<system>/ in it, or a CSV directory with comm/, moe/ or mla/ in it)", o.Dir)
	}
	var l2 float64
	if o.L2 != "" {
		b, err := unit.ParseBytes(o.L2)
		if err != nil || b <= 0 {
			return inputErrf("--l2 %q: want a size such as 60MiB", o.L2)
		}
		l2 = float64(b)
	}
	cmdline := []string{"moecast calib import perfdb", filepath.Base(filepath.Clean(o.Dir))}
	if o.GPU != "" {
		cmdline = append(cmdline, "--gpu", o.GPU)
	}
	if o.L2 != "" {
		cmdline = append(cmdline, "--l2", o.L2)
	}
	cmdline = append(cmdline, "-o", filepath.Base(o.Out))
	if o.Source == perfdbSource && calib.IsPerfDBTree(o.Dir) {
		o.Source = perfdbTreeSource
	}
	f, err := calib.ImportPerfDB(o.Dir, calib.PerfDBOptions{GPU: o.GPU, L2: l2, Source: o.Source, License: o.License,
		Date: o.Date, Command: strings.Join(cmdline, " ")})
	if err != nil {
		return err // *calib.InputError
	}
	return writeImported(s, f, o.Out)
}

// checkOut checks, before any work, that cmd was given -o and that it
// names a file that can be written: not a directory, in a directory that
// exists, not an existing non-regular file, none of inputs.
func checkOut(cmd, out string, inputs ...string) error {
	if out == "" {
		return inputErrf("%s: -o OUT is required (- for standard output)", cmd)
	}
	if out == "-" {
		return nil
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return inputErrf("-o %s: is a directory", out)
	}
	dir := filepath.Dir(out)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return inputErrf("-o %s: no such directory %s", out, dir)
	case err == nil && !st.IsDir():
		return inputErrf("-o %s: %s is not a directory", out, dir)
	}
	if err := atomicfile.CheckOutput(out, inputs...); err != nil {
		return fmt.Errorf("-o %w", err) // an *atomicfile.OutputError
	}
	return nil
}

// filesUnder lists the regular files under dir (the inputs of an import
// that reads a directory); nil when out does not exist (it cannot be one).
func filesUnder(dir, out string) []string {
	if _, err := os.Stat(out); err != nil {
		return nil
	}
	var files []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// writeImported writes an imported calibration to out and says so, with
// its table and row counts.
// "-" writes it to standard output, the summary going to standard error.
// The importer's warnings go to standard error.
func writeImported(s *streams, f *calib.File, out string) error {
	for _, w := range collapseWarnings(f.Warnings) {
		fmt.Fprintln(s.Err, "warning: "+w)
	}
	if out == "-" {
		if err := f.WriteStream(s.Out); err != nil {
			return err
		}
		fmt.Fprintf(s.Err, "wrote standard output: %d tables, %d rows\n", len(f.Tables), f.Rows())
		return nil
	}
	if err := f.Write(out); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "wrote %s: %d tables, %d rows\n", out, len(f.Tables), f.Rows())
	return nil
}

// calibShowOptions are the inputs of `moecast calib show`.
type calibShowOptions struct {
	Ref string // a file, embedded:NAME, or "-" for standard input
}

func newCalibShowCmd(s *streams, runF func(*calibShowOptions) error) *cobra.Command {
	o := &calibShowOptions{}
	return &cobra.Command{
		Use:   "show FILE|embedded:NAME|-",
		Short: "Print a calibration's provenance and coverage (shapes, sizes, rank counts, LOO error per table)",
		Long: `Print a calibration file's provenance and, per table, what it measures: the
series a lookup must match exactly, the range of the interpolated axes, the
row count and the leave-one-out interpolation error that gives its error bars.

Embedded calibrations: ` + strings.Join(calib.EmbeddedNames(), ", ") + ` (as embedded:NAME).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Ref = args[0]
			if runF != nil {
				return runF(o)
			}
			return runCalibShow(s, o)
		},
	}
}

func runCalibShow(s *streams, o *calibShowOptions) error {
	var (
		f   *calib.File
		err error
	)
	if o.Ref == "-" {
		var data []byte
		if data, err = infile.ReadFile(infile.Stdin, s.In, infile.MaxCalibration); err != nil {
			return inputErrf("calib show: %w", err)
		}
		f, err = calib.Parse("<stdin>", data)
	} else {
		f, err = calib.Open(o.Ref)
	}
	if err != nil {
		return err // *calib.InputError
	}
	return output{views: view.CalibShow(f)}.write(s, formatText)
}
