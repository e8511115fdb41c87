package kernels

import "strings"

// deviceNames maps the device names that nvidia-smi and CUDA report (and
// that nccl-tests prints on its "# Rank" lines) to the GPU presets they
// are. Only exact names: "NVIDIA H100 PCIe" and "NVIDIA H100 NVL" are other
// parts (other clocks, memory and links) than the SXM5 preset, and map to
// nothing. Names as nvidia-smi prints them on those parts (NVIDIA's data
// center documentation; github.com/NVIDIA/nccl/issues/1264 for the H100).
var deviceNames = map[string]string{
	"NVIDIA H100 80GB HBM3": "h100-sxm",
	"NVIDIA H200":           "h200-sxm",
	"NVIDIA B200":           "b200-sxm",
	"NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000-server",
}

// DevicePreset is the GPU preset of a device name as the tools report it
// (the one device-name -> preset function: calib's nccl-tests importer
// uses it)
// ("NVIDIA H100 80GB HBM3" -> "h100-sxm"), or of a preset's own name or
// label; false when none fits.
func DevicePreset(device string) (string, bool) {
	d := strings.Join(strings.Fields(device), " ")
	if p, ok := deviceNames[d]; ok {
		return p, true
	}
	for _, g := range presets {
		if strings.EqualFold(d, g.Name) || strings.EqualFold(d, g.Label) {
			return g.Name, true
		}
	}
	return "", false
}
