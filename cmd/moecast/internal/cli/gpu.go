package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cuda"
	gpukern "github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// gpuInfoOptions are the flags of `moecast gpu info`.
type gpuInfoOptions struct {
	Format string
}

func newGPUCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gpu",
		Short: "Commands that run on this machine's GPUs (CUDA driver, NCCL)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newGPUInfoCmd(s, nil))
	return cmd
}

func newGPUInfoCmd(s *streams, runF func(*gpuInfoOptions) error) *cobra.Command {
	opts := &gpuInfoOptions{}
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show the CUDA driver, NCCL and the GPUs that moecast can use here",
		Long: `Load the CUDA driver (libcuda.so.1; MOECAST_CUDA overrides the search) and
NCCL (libnccl.so.2; MOECAST_NCCL overrides, else the loader path and the
NVIDIA Python wheels), and list each GPU with the W4A16 kernel image moecast
would load on it. Without a driver or a GPU it fails with one line, exit 2.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runGPUInfo(s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", formatText, "output format: text, json or csv")
	return cmd
}

func runGPUInfo(s *streams, opts *gpuInfoOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := cuda.Init(); err != nil {
		// Issue 12: a GPU command without a usable GPU exits 2.
		return inputErr(fmt.Errorf("gpu info: %w", err))
	}
	version, err := cuda.DriverVersion()
	if err != nil {
		return err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	t := &report.Table{Columns: []report.Column{
		{Name: "device"}, {Name: "name", Left: true}, {Name: "sm"}, {Name: "sms"},
		{Name: "memory_gib", Text: "%.1f"}, {Name: "l2_mib", Text: "%.0f"}, {Name: "smem_per_block_kib"},
		{Name: "w4a16_image", Left: true},
	}}
	for i := 0; i < n; i++ {
		dev, err := cuda.GetDevice(i)
		if err != nil {
			return err
		}
		name, err := dev.Name()
		if err != nil {
			return err
		}
		major, minor, err := dev.ComputeCapability()
		if err != nil {
			return err
		}
		sms, err := dev.Attribute(cuda.AttrMultiprocessorCount)
		if err != nil {
			return err
		}
		l2, err := dev.Attribute(cuda.AttrL2CacheSize)
		if err != nil {
			return err
		}
		smem, err := dev.Attribute(cuda.AttrMaxSharedMemoryPerBlockOp)
		if err != nil {
			return err
		}
		mem, err := dev.TotalMem()
		if err != nil {
			return err
		}
		image, _, err := gpukern.Image(major, minor)
		if err != nil {
			image = "none: " + err.Error()
		}
		t.Add(i, name, fmt.Sprintf("sm_%d%d", major, minor), sms, float64(mem)/(1<<30), float64(l2)/(1<<20),
			smem/1024, image)
	}
	if opts.Format == formatText {
		fmt.Fprintf(s.Out, "driver  CUDA %d.%d (%s)\n", version/1000, version%1000/10, cuda.LibraryPath())
		if err := cuda.InitNCCL(); err != nil {
			fmt.Fprintf(s.Out, "nccl    not loaded: %v\n", err)
		} else if v, err := cuda.NCCLVersion(); err != nil {
			fmt.Fprintf(s.Out, "nccl    %v\n", err)
		} else {
			fmt.Fprintf(s.Out, "nccl    %d.%d.%d (%s)\n", v/10000, v/100%100, v%100, cuda.NCCLPath())
		}
		fmt.Fprintln(s.Out)
	}
	return t.Render(s.Out, report.Format(opts.Format))
}
