package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/moecast/moecast/internal/cuda"
	gpukern "github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report/view"
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
		// Issue 12: a GPU command without a usable GPU exits 2 (a
		// *cuda.InitError).
		return fmt.Errorf("gpu info: %w", err)
	}
	version, err := cuda.DriverVersion()
	if err != nil {
		return err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	gi := &view.GPUInfo{DriverVersion: int(version), DriverPath: cuda.LibraryPath()}
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
		gi.Devices = append(gi.Devices, view.GPUDevice{Ordinal: i, Name: name, Major: int(major), Minor: int(minor), SMs: int(sms),
			MemoryBytes: float64(mem), L2Bytes: int(l2), SmemPerBlock: int(smem), W4A16Image: image})
	}
	if opts.Format == formatText {
		if err := cuda.InitNCCL(); err != nil {
			gi.NCCL = fmt.Sprintf("not loaded: %v", err)
		} else if v, err := cuda.NCCLVersion(); err != nil {
			gi.NCCL = fmt.Sprint(err)
		} else {
			gi.NCCL = fmt.Sprintf("%d.%d.%d (%s)", v/10000, v/100%100, v%100, cuda.NCCLPath())
		}
	}
	return output{views: gi.Views()}.write(s, opts.Format)
}
