package kernels

import (
	"slices"
	"strings"
)

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
// (the one device-name -> preset function: calib's nccl-tests importer,
// validate's trace metadata and calib gpu use it): an exact name of
// deviceNames ("NVIDIA H100 80GB HBM3" -> "h100-sxm"), a preset's own
// name or label, else the preset whose label holds the device's model word
// (its first word with a digit: B300, GB200) and no other form factor
// (labelWords); false when none fits.
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
	if p := labelWords(d); p != "" {
		return p, true
	}
	return "", false
}

// labelWords names the GPU preset whose label matches the device name the
// driver reports ("NVIDIA H200" -> "h200-sxm"): the label must hold the
// device's model word (its first word with a digit: H200, 6000) and every
// form-factor word it has (PCIe, NVL); among those, the label sharing the
// most words wins. "" when none matches (then --gpu names it).
func labelWords(device string) string {
	words := strings.Fields(strings.ToUpper(device))
	model := ""
	for _, w := range words {
		if strings.ContainsAny(w, "0123456789") {
			model = w
			break
		}
	}
	if model == "" {
		return ""
	}
	best, bestScore := "", 0
	for _, name := range GPUNames() {
		g, _ := LookupGPU(name)
		label := strings.Fields(strings.ToUpper(g.Label))
		if !slices.Contains(label, model) {
			continue
		}
		score := 0
		for _, w := range words {
			switch {
			case slices.Contains(label, w):
				score++
			case w == "PCIE" || w == "NVL":
				score = -1000 // another form factor: other bandwidth and clocks
			}
		}
		if score > bestScore {
			best, bestScore = name, score
		}
	}
	return best
}
