package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/moecast/moecast/calib/campaign"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/report/view"
)

// calibGPUOptions are the flags of `moecast calib gpu`.
type calibGPUOptions struct {
	Quick bool
	Ops   []string
	GPUs  int
	GPU   string
	Date  string
	Out   string
	// Fabric and CommTimeout configure the comm op.
	Fabric      string
	CommTimeout time.Duration
	// Getenv reads the launcher's environment (os.Getenv; tests replace it).
	Getenv func(string) string
}

func newCalibGPUCmd(s *streams, runF func(*calibGPUOptions) error) *cobra.Command {
	o := &calibGPUOptions{}
	cmd := &cobra.Command{
		Use:   "gpu --out FILE",
		Short: "Measure this machine's GPU and write a calibration file",
		Long: `Measure on the visible GPU (device 0), inside captured CUDA graphs, and
write a calibration file (docs/calibration.md) with provenance (GPU name
and UUIDs, driver, CUDA and NCCL versions, moecast version and commit,
date, method), atomically. Ops (--ops, default all): copy (device copy
bandwidth), overhead (a kernel launch eager and in a graph), moe (the
routed-expert layer as vLLM's fused_marlin_moe runs it, with moecast's
W4A16 kernels, at Kimi-K2.5's expert shapes, expert TP8 and EP8, decode
and prefill token counts, weights streamed beyond L2), moe_fp8 (the
block-fp8 layer on moecast's fp8 grouped GEMM at DeepSeek-V3/R1, Qwen3-235B
and GLM-5 shapes), moe_mxfp4 (gpt-oss's MXFP4 layer with its clamped
SwiGLU), elementwise (RMSNorm,
residual add, silu_and_mul at decode sizes), attention (GQA decode kernels
and the whole MLA decode module), gemm (the shipped models' dense
projections through cuBLASLt, bf16 and fp8-b128) and comm (NCCL all-reduce,
all-gather, reduce-scatter and all-to-all, eager and in graphs, each result
checked: on --gpus N GPUs of one process, or one GPU per process under
torchrun, srun or mpirun, rank 0 writing the file; with one GPU a check
that writes no table). Use the file with predict --calibration
embedded,FILE. The embedded h200-sxm calibration is such a file (H200,
2026-12-01). Without a GPU it fails with one line, exit 2, and writes
nothing.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return runCalibGPU(s, o, o.command())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Quick, "quick", false, "fewer token counts (about a minute)")
	f.StringSliceVar(&o.Ops, "ops", nil, "measurements: "+strings.Join(campaign.Ops, ",")+" (default all)")
	f.IntVar(&o.GPUs, "gpus", 1, "GPUs to use (the comm op; the other ops measure device 0)")
	f.StringVar(&o.GPU, "gpu", "", "GPU preset the file is for (default: from the device name)")
	f.StringVar(&o.Date, "date", "", "measurement date YYYY-MM-DD (default today, UTC)")
	f.StringVarP(&o.Out, "out", "o", "", "calibration file to write (required; --output, as the other commands name it, is the same flag)")
	// --output is the output file's flag name everywhere else: accept it.
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "output" {
			name = "out"
		}
		return pflag.NormalizedName(name)
	})
	f.StringVar(&o.Fabric, "fabric", "", "comm fabric preset of the collective tables (default: the GPU preset's)")
	f.DurationVar(&o.CommTimeout, "comm-timeout", time.Minute, "comm: abort a collective (and fail a rendezvous) not done after this")
	return cmd
}

// command is the command line for the provenance (the file's base name).
func (o *calibGPUOptions) command() string {
	c := []string{"moecast calib gpu"}
	if o.Quick {
		c = append(c, "--quick")
	}
	if len(o.Ops) > 0 {
		c = append(c, "--ops "+strings.Join(o.Ops, ","))
	}
	if o.GPU != "" {
		c = append(c, "--gpu "+o.GPU)
	}
	if o.Date != "" {
		c = append(c, "--date "+o.Date)
	}
	if o.GPUs > 1 {
		c = append(c, fmt.Sprintf("--gpus %d", o.GPUs))
	}
	if o.Fabric != "" {
		c = append(c, "--fabric "+o.Fabric)
	}
	return strings.Join(append(c, "--out "+filepath.Base(o.Out)), " ")
}

func runCalibGPU(s *streams, o *calibGPUOptions, cmdline string) error {
	if o.Out == "" {
		return inputErrf("calib gpu: --out FILE is required")
	}
	if err := checkOut("calib gpu", o.Out); err != nil {
		return err
	}
	if o.GPUs < 1 {
		return inputErrf("calib gpu: --gpus %d: want 1 or more", o.GPUs)
	}
	if o.CommTimeout <= 0 {
		return inputErrf("calib gpu: --comm-timeout %s: want a positive duration", o.CommTimeout)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ranks, err := rendezvous.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("calib gpu: %w", err) // a *rendezvous.EnvError
	}
	if ranks.Multi() {
		cmdline += fmt.Sprintf(" (%s, %d ranks)", ranks.Launcher, ranks.World)
	}
	copts := campaign.Options{Quick: o.Quick, Ops: o.Ops, GPUs: o.GPUs, GPU: o.GPU, Date: o.Date,
		Command: cmdline, Version: version(), Progress: progressOn(s.Err, nil),
		Comm: campaign.CommOptions{Fabric: o.Fabric, Ranks: ranks, Timeout: o.CommTimeout}}
	plan, err := campaign.NewPlan(copts)
	if err != nil {
		return fmt.Errorf("calib gpu: %w", err) // a *campaign.InputError
	}
	if err := cuda.Init(); err != nil {
		return fmt.Errorf("calib gpu: %w", err) // a *cuda.InitError: exit 2, nothing written
	}
	if n, err := cuda.DeviceCount(); err == nil && !ranks.Multi() && o.GPUs > n {
		return inputErrf("calib gpu: --gpus %d: %d GPU(s) visible", o.GPUs, n)
	}
	res, err := campaign.Run(plan, copts)
	if err != nil {
		// exitCodeOf gives no GPU, an unusable GPU stack and a device of
		// no preset exit 2, a failed measurement 1.
		return fmt.Errorf("calib gpu: %w", err)
	}
	// Ranks other than 0 of a job, and a run whose only table-writing op
	// was a one-rank comm check, print what they measured and write nothing.
	if ranks.Multi() && ranks.Rank != 0 || res.TableCount() == 0 {
		if err := printCalibGPU(s, res); err != nil {
			return err
		}
		if ranks.Multi() && ranks.Rank != 0 {
			fmt.Fprintf(s.Out, "calib gpu: %s: rank 0 writes %s\n", ranks, o.Out)
		} else {
			fmt.Fprintf(s.Out, "calib gpu: no calibration table measured (comm on one rank is a check only): nothing written to %s\n", o.Out)
		}
		return nil
	}
	f, err := res.File(copts, time.Now())
	if err != nil {
		return fmt.Errorf("calib gpu: %w", err) // a *campaign.InputError
	}
	if err := f.Write(o.Out); err != nil {
		return err
	}
	if err := printCalibGPU(s, res); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "wrote %s: %d tables, %d rows\n", o.Out, len(f.Tables), f.Rows())
	return nil
}

// printCalibGPU prints the measurement report (view.CalibGPU).
func printCalibGPU(s *streams, res *campaign.Result) error {
	return report.Generate(s.Out, s.Err, calibGPUReport(res).Views(), report.Text)
}

// calibGPUReport is the view of a campaign's result.
func calibGPUReport(res *campaign.Result) *view.CalibGPU {
	v := &view.CalibGPU{Device: res.Device.Name, UUID: res.Device.UUID, Driver: res.Versions.Driver,
		CUDA: res.Versions.CUDA, NCCL: res.Versions.NCCL, Elapsed: unit.Seconds(res.Elapsed.Seconds()),
		NotMeasured: campaign.NotMeasuredList()}
	for _, out := range res.Outputs {
		v.Ops = append(v.Ops, view.CalibGPUOp{Lines: out.Lines, Report: out.Report})
	}
	return v
}
