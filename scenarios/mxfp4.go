package scenarios

import (
	"fmt"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
)

// MXFP4 routed experts (gpt-oss) on sm_100/sm_103 run FlashInfer's
// TRT-LLM-gen MoE in one of two precisions of the activations, which the
// engine picks:
//
//   - vLLM: bf16 activations (Mxfp4Backend.SM100_FI_MXFP4_BF16) unless
//     VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 selects
//     SM100_FI_MXFP4_MXFP8_TRTLLM, whose log line says "For faster
//     performance on SM100, consider setting
//     VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1"
//     (vllm/model_executor/layers/quantization/mxfp4.py get_mxfp4_backend
//     @ 007d500); InferenceX's gpt-oss B200 vLLM script sets it
//     (benchmarks/single_node/gptoss_fp4_b200.sh @ d2c2acb);
//   - SGLang: MXFP8 activations (server_args.py
//     flashinfer_mxfp4_moe_precision = "default"; "bf16" is the other
//     choice).
//
// Other GPUs run bf16 activations (Triton or Marlin kernels). The
// activations' precision picks the MoE table: aiconfigurator's
// w4a16_mxfp4 rows (moecast mxfp4) or w4a8_mxfp4_mxfp8 (mxfp4_mxfp8); on
// B200 the MXFP8 layer reads all 128 gpt-oss-120b experts in 273-287 us
// where the bf16 one takes 376-378 us (32 tokens, TP1:
// bench/RESULTS-tpotop.md).

// mxfp4Activations are runtime.mxfp4_activation's values.
var mxfp4Activations = map[string]bool{"bf16": true, "mxfp8": true}

// buildMXFP4Activation reads runtime.mxfp4_activation and sets the
// routed experts' format (setMXFP4Activation).
func (s *Scenario) buildMXFP4Activation() error {
	a := s.doc.raw.Runtime.MXFP4Activation
	if a != "" && !mxfp4Activations[a] {
		return s.doc.errorf("runtime.mxfp4_activation", "unknown precision %q (want bf16 or mxfp8)", a)
	}
	s.Serving.MXFP4Activation = a
	if err := s.buildMXFP4Backend(); err != nil {
		return err
	}
	if a != "" && s.Config.Model != nil && !isMXFP4(s.Config.Model) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.mxfp4_activation %q: the model's routed experts are %s, not MXFP4, so it is ignored",
			s.pos("runtime.mxfp4_activation"), a, s.Config.Model.Quant.RoutedExperts.Name))
	}
	if a == "mxfp8" && !mxfp8Arch(s.Config.GPU.Arch) && isMXFP4(s.Config.Model) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.mxfp4_activation \"mxfp8\": FlashInfer's MXFP4 x MXFP8 MoE runs on sm_100/sm_103 only; "+
			"on %s (%s) the experts take bf16 activations", s.pos("runtime.mxfp4_activation"), s.Config.GPU.Name, s.Config.GPU.Arch))
	}
	s.setMXFP4Activation()
	return nil
}

// mxfp8Arch reports whether FlashInfer's TRT-LLM-gen MXFP4 x MXFP8 MoE
// runs on arch (vLLM's is_device_capability_family(100)).
func mxfp8Arch(a kernels.Arch) bool { return a == kernels.SM100 || a == kernels.SM103 }

// isMXFP4 reports whether m's routed experts are MXFP4.
func isMXFP4(m *model.Config) bool {
	if m == nil {
		return false
	}
	f := m.Quant.RoutedExperts
	return f == dtype.MXFP4 || f == dtype.MXFP4A8 || f == dtype.MXFP4Marlin
}

// MXFP8Activations reports whether the scenario's MXFP4 experts take MXFP8
// activations: on sm_100/sm_103, as runtime.mxfp4_activation says, else
// the engine's default (SGLang mxfp8, vLLM bf16).
func (s *Scenario) MXFP8Activations() bool {
	v := &s.Serving
	if v.NoMXFP8 || !mxfp8Arch(s.Config.GPU.Arch) {
		return false
	}
	switch v.MXFP4Activation {
	case "mxfp8":
		return true
	case "bf16":
		return false
	}
	return v.Engine == serve.SGLang
}

// mxfp4Backends are runtime.mxfp4_moe_backend's values.
var mxfp4Backends = map[string]bool{"marlin": true}

// vLLM runs MXFP4 routed experts (gpt-oss) with its Marlin MoE
// (MarlinExperts, fused_marlin_moe: weights dequantised to bf16 in
// registers, bf16 mma.sync) instead of its default pick when the server's
// environment sets VLLM_MXFP4_USE_MARLIN=1: select_mxfp4_moe_backend
// returns MARLIN for it before walking its priority list (TRITON, the OAI
// triton_kernels matmul_ogs, on sm_90), vllm/model_executor/layers/
// fused_moe/oracle/mxfp4.py @ 001eda3; get_mxfp4_backend, the earlier
// form of that choice, does the same after its FlashInfer branches
// (vllm/model_executor/layers/quantization/mxfp4.py @ 007d500).
// InferenceX's gpt-oss H100 and H200 vLLM scripts export it from
// SemiAnalysisAI/InferenceX 4e52ed4 (2026-01-02, "Fix H100/H200 perf
// regression"; benchmarks/single_node/gptoss_fp4_h100.sh @ cec542a).
// The Marlin layer pads hidden to a multiple of 256 and the per-rank
// expert width to a multiple of 128 (mxfp4_round_up_hidden_size_and_
// intermediate_size, same file; sim prices the padded shape).
//
// The perf database's MXFP4 tables on sm_90 measured the OAI Triton
// experts (kernel_source vllm_gptossmxfp4moe_triton_oaitritonmxfp4experts
// monolithic) and hold no Marlin row of gpt-oss's shape, so on sm_90 the
// Marlin layer is priced by a fit to the perf database's H100 Marlin
// MXFP4 rows of another shape (kernels/moe_marlin.go, marlinMXFP4), and on
// other architectures by the W4A16 Marlin roofline (kernels.moeRoofline's
// weight-only branch). MXFP8 activations (mxfp4-mxfp8), where chosen, take precedence,
// as vLLM checks VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8 first.

// buildMXFP4Backend reads runtime.mxfp4_moe_backend.
func (s *Scenario) buildMXFP4Backend() error {
	b := s.doc.raw.Runtime.MXFP4MoEBackend
	if b != "" && !mxfp4Backends[b] {
		return s.doc.errorf("runtime.mxfp4_moe_backend", "unknown backend %q (want marlin)", b)
	}
	s.Serving.MXFP4Backend = b
	if b != "" && s.Config.Model != nil && !isMXFP4(s.Config.Model) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.mxfp4_moe_backend %q: the model's routed experts are %s, not MXFP4, so it is ignored",
			s.pos("runtime.mxfp4_moe_backend"), b, s.Config.Model.Quant.RoutedExperts.Name))
	}
	if b != "" && s.Serving.Engine != serve.VLLM {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.mxfp4_moe_backend %q: VLLM_MXFP4_USE_MARLIN is vLLM's; the engine is %s, so it is ignored",
			s.pos("runtime.mxfp4_moe_backend"), b, s.Serving.Engine))
	}
	return nil
}

// MXFP4Marlin reports whether the scenario's MXFP4 experts run vLLM's
// Marlin MoE (runtime.mxfp4_moe_backend = "marlin", the mxfp4-marlin
// mechanism on, engine vLLM).
func (s *Scenario) MXFP4Marlin() bool {
	v := &s.Serving
	return v.MXFP4Backend == "marlin" && !v.NoMXFP4Marlin && v.Engine == serve.VLLM
}

// setMXFP4Activation gives the model's MXFP4 routed experts the format of
// their activations' precision (dtype.MXFP4 or dtype.MXFP4A8), on a copy
// of the model config (the loaded one may be shared).
func (s *Scenario) setMXFP4Activation() {
	m := s.Config.Model
	if m == nil {
		return
	}
	f := m.Quant.RoutedExperts
	if !isMXFP4(m) {
		return
	}
	want := dtype.MXFP4
	switch {
	case s.MXFP8Activations():
		want = dtype.MXFP4A8
	case s.MXFP4Marlin():
		want = dtype.MXFP4Marlin
	}
	if f == want {
		return
	}
	mc := *m
	mc.Quant.RoutedExperts = want
	s.Config.Model = &mc
}

// setQKNormTP models the all-reduce of MiniMax-M2's layer-wide q/k norm
// (model.Attention.QKNormTP) as the checkpoint declares it, or not with
// the qk-norm-allreduce mechanism off, on a copy of the model config.
func (s *Scenario) setQKNormTP() {
	m := s.Config.Model
	if m == nil {
		return
	}
	want := s.Serving.QKNormTPDeclared && !s.Serving.NoQKNormTP
	if m.Attn.QKNormTP == want {
		return
	}
	mc := *m
	mc.Attn.QKNormTP = want
	if m.Kinds != nil {
		// the layer kinds carry their own copy of the attention
		mc.Kinds = append([]model.LayerKind(nil), m.Kinds...)
		for i := range mc.Kinds {
			if mc.Kinds[i].Attn.QKNorm {
				mc.Kinds[i].Attn.QKNormTP = want
			}
		}
	}
	s.Config.Model = &mc
}

// setMoERouting prices the routed experts under the skewed routing
// aiconfigurator's SDK assumes for the model's family (on: sim.Config.MoERouting
// from kernels.PerfDBRouting of the model's architecture), or under uniform
// random routing (off). It changes what a MoE table answers only where the
// table chosen has power-law rows beside its balanced ones (the perf
// database's tables do; calib gpu's uniform tables do not).
func (s *Scenario) setMoERouting(on bool) {
	s.Config.MoERouting = ""
	if on && s.Config.Model != nil {
		s.Config.MoERouting = kernels.PerfDBRouting(s.Config.Model.Architecture)
	}
}
