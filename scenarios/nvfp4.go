package scenarios

import (
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
)

// SGLang loads an NVFP4 checkpoint (ModelOpt's modelopt_fp4) only on
// compute capability 10.0 and later: ModelOptFp4Config.get_min_capability
// returns 100 (python/sglang/srt/layers/quantization/modelopt_quant.py
// @ faeb968), and the model loader refuses a GPU below a quantization's
// minimum. On Ampere, Ada and Hopper such a deployment does not start, so the
// scenario is refused instead of priced. vLLM does run NVFP4 there,
// through its Marlin FP4 kernels (fp4 weights dequantized into bf16
// MMA), which the roofline prices as fp4 bytes at the bf16 peak
// (kernels.GPU.PeakFor: no fp4 peak on sm_80/sm_90).

// checkNVFP4Arch refuses SGLang on an NVFP4 checkpoint below sm_100.
func (s *Scenario) checkNVFP4Arch() error {
	if sglangLoadsNVFP4(s.Serving.Engine, s.Config.Model, s.Config.GPU.Arch) {
		return nil
	}
	return s.doc.errorf("runtime.engine", "SGLang loads an NVFP4 checkpoint (modelopt_fp4) only on compute capability 10.0 and later "+
		"(ModelOptFp4Config.get_min_capability = 100); %s is %s: serve it with vLLM (Marlin FP4) or on a Blackwell GPU",
		s.Config.GPU.Name, s.Config.GPU.Arch)
}

// sglangLoadsNVFP4 reports whether engine e can load m on a GPU of arch a:
// false only for SGLang, an NVFP4 checkpoint and a compute capability
// below 10.0: sm_80 and sm_90, and a custom GPU's sm_NN below sm_100
// (an RTX 4090's sm_89). An arch that is not sm_NN (an AMD gfx target)
// is not refused.
func sglangLoadsNVFP4(e serve.Engine, m *model.Config, a kernels.Arch) bool {
	return e != serve.SGLang || !usesNVFP4(m) || !belowSM100(a)
}

// belowSM100 reports an arch sm_NN with NN below 100 (compute capability
// below 10.0).
func belowSM100(a kernels.Arch) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(string(a), "sm_"))
	return strings.HasPrefix(string(a), "sm_") && err == nil && n < 100
}

// usesNVFP4 reports whether any of m's weight classes is NVFP4 with fp4
// activations (the ModelOpt NVFP4 format SGLang's modelopt_fp4 loads).
func usesNVFP4(m *model.Config) bool {
	if m == nil {
		return false
	}
	q := m.Quant
	for _, f := range []dtype.Format{q.RoutedExperts, q.SharedExpert, q.Attention, q.DenseMLP} {
		if f == dtype.NVFP4 {
			return true
		}
	}
	return false
}
