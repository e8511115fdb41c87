package scenarios

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// gptOSS is gpt-oss-120b on one GPU of the given preset under engine,
// with the extra [runtime] lines.
func gptOSS(t *testing.T, gpu, engine, extra string) *Scenario {
	t.Helper()
	s, err := Parse("t.toml", []byte("name = \"t\"\n[model]\npreset = \"gpt-oss-120b\"\n[hardware]\ngpu = \""+gpu+
		"\"\ngpus = 1\ncalibration = \"embedded\"\n[runtime]\nengine = \""+engine+"\"\n"+extra))
	require.NoError(t, err)
	return s
}

// TestMXFP4Activation: MXFP4 experts take MXFP8 activations on sm_100
// where the engine does (SGLang by default, vLLM when asked), bf16
// elsewhere; the mechanism turns it off and on again; the choice reads
// the perf database's w4a8_mxfp4_mxfp8 rows, which on B200 price the
// layer below the bf16-activation rows.
func TestMXFP4Activation(t *testing.T) {
	for _, tc := range []struct {
		gpu, engine, extra string
		want               dtype.Format
		warn               bool
	}{
		{"b200-sxm", "vllm", "", dtype.MXFP4, false},
		{"b200-sxm", "vllm", "mxfp4_activation = \"mxfp8\"\n", dtype.MXFP4A8, false},
		{"b200-sxm", "sglang", "", dtype.MXFP4A8, false},
		{"b200-sxm", "sglang", "mxfp4_activation = \"bf16\"\n", dtype.MXFP4, false},
		{"b300-sxm", "vllm", "mxfp4_activation = \"mxfp8\"\n", dtype.MXFP4A8, false},
		{"h200-sxm", "sglang", "", dtype.MXFP4, false},
		{"h200-sxm", "vllm", "mxfp4_activation = \"mxfp8\"\n", dtype.MXFP4, true},
	} {
		s := gptOSS(t, tc.gpu, tc.engine, tc.extra)
		name := tc.gpu + " " + tc.engine + " " + tc.extra
		assert.Equal(t, tc.want, s.Config.Model.Quant.RoutedExperts, name)
		assert.Equal(t, tc.warn, len(s.Warnings) > 0, "%s: %v", name, s.Warnings)
		require.NoError(t, s.SetMechanism("mxfp4-mxfp8", false))
		assert.Equal(t, dtype.MXFP4, s.Config.Model.Quant.RoutedExperts, "%s, mechanism off", name)
		require.NoError(t, s.SetMechanism("mxfp4-mxfp8", true))
		assert.Equal(t, tc.want, s.Config.Model.Quant.RoutedExperts, "%s, mechanism on", name)
	}

	// a model that is not MXFP4 keeps its experts' format
	s, err := Parse("t.toml", []byte(minimal+"[runtime]\nmxfp4_activation = \"mxfp8\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "int4-g32", s.Config.Model.Quant.RoutedExperts.Name)

	_, err = Parse("t.toml", []byte(minimal+"[runtime]\nmxfp4_activation = \"fp8\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "runtime.mxfp4_activation")

	// the MXFP8 layer is priced from its own table and below the bf16 one
	moe := func(s *Scenario) (float64, string) {
		sm, err := s.Sim()
		require.NoError(t, err)
		ops, err := sm.Explain(32, 1024)
		require.NoError(t, err)
		for _, o := range ops {
			if o.Name == "fused_moe (routed experts)" {
				return float64(o.Estimate.Time), o.Estimate.Source.Table
			}
		}
		t.Fatal("no fused_moe op")
		return 0, ""
	}
	a8, tab8 := moe(gptOSS(t, "b200-sxm", "vllm", "mxfp4_activation = \"mxfp8\"\n"))
	a16, tab16 := moe(gptOSS(t, "b200-sxm", "vllm", ""))
	assert.Contains(t, tab8, "mxfp4_mxfp8.e128.k4.h2880.i2880")
	assert.Contains(t, tab16, "mxfp4.e128.k4.h2880.i2880")
	assert.Less(t, a8, a16)
}

// TestMXFP4ActivationNotMXFP4: runtime.mxfp4_activation on a model whose
// routed experts are not MXFP4 changes nothing and says so in a warning.
func TestMXFP4ActivationNotMXFP4(t *testing.T) {
	for _, a := range []string{"bf16", "mxfp8"} {
		s, err := Parse("t.toml", []byte("name = \"t\"\n[model]\npreset = \"deepseek-v3\"\n[hardware]\ngpu = \"b200-sxm\"\ngpus = 8\n"+
			"calibration = \"none\"\n[parallel]\ntp = 8\n[runtime]\nmxfp4_activation = \""+a+"\"\n"))
		require.NoError(t, err)
		assert.Equal(t, dtype.FP8Block128, s.Config.Model.Quant.RoutedExperts)
		require.Len(t, s.Warnings, 1, a)
		assert.Contains(t, s.Warnings[0], "t.toml:11: runtime.mxfp4_activation \""+a+"\": the model's routed experts are fp8-b128, not MXFP4, so it is ignored")
	}
}

// TestQKNormAllReduce: MiniMax-M2's layer-wide q/k norm adds an all-reduce
// of two fp32 per token at attention TP > 1 (none at TP 1, none with the
// qk-norm-allreduce mechanism off), and a model with per-head q/k norms
// (Qwen3) has none.
func TestQKNormAllReduce(t *testing.T) {
	ops := func(model string, tp int, off bool) map[string]float64 {
		s, err := Parse("t.toml", []byte(fmt.Sprintf("name = \"t\"\n[model]\n%s\n[hardware]\ngpu = \"b200-sxm\"\ngpus = %d\ncalibration = \"none\"\n[parallel]\ntp = %d\n", model, tp, tp)))
		require.NoError(t, err)
		if off {
			require.NoError(t, s.SetMechanism("qk-norm-allreduce", false))
		}
		sm, err := s.Sim()
		require.NoError(t, err)
		ex, err := sm.Explain(8, 2048)
		require.NoError(t, err)
		out := map[string]float64{}
		for _, o := range ex {
			out[o.Name] = float64(o.Estimate.Bytes)
		}
		return out
	}
	minimax := "config = \"../validate/corpus/configs/MiniMaxAI--MiniMax-M2.5_config.json\""
	on := ops(minimax, 4, false)
	require.Contains(t, on, "q/k norm variance allreduce")
	// two fp32 per token against o_proj's all-reduce of the bf16 hidden
	// state (3072), over the same ranks
	assert.InDelta(t, 2*4/(3072*2.0), on["q/k norm variance allreduce"]/on["o_proj allreduce"], 1e-12)
	assert.Contains(t, on, "q/k norm variance")
	assert.NotContains(t, ops(minimax, 1, false), "q/k norm variance allreduce")
	off := ops(minimax, 4, true)
	assert.NotContains(t, off, "q/k norm variance allreduce")
	assert.Contains(t, off, "q_norm/k_norm")
	assert.NotContains(t, ops("preset = \"qwen3-235b-a22b\"", 4, false), "q/k norm variance allreduce")
}

// TestMXFP4Marlin: runtime.mxfp4_moe_backend = "marlin" runs vLLM's
// MXFP4 experts on its Marlin MoE (dtype.MXFP4Marlin), not under SGLang
// (a warning) nor where MXFP8 activations are chosen; the mechanism turns
// it off and on again; a bad value names the key. On H100 the layer is
// priced by the Marlin fit over the padded shape (hidden 3072, width 1536
// at TP2 here: TP1 pads 2880 to 2944), not by the perf database's OAI
// Triton rows, and at 8192 tokens it costs more than those rows say.
func TestMXFP4Marlin(t *testing.T) {
	const m = "mxfp4_moe_backend = \"marlin\"\n"
	for _, tc := range []struct {
		gpu, engine, extra string
		want               dtype.Format
		warn               bool
	}{
		{"h100-sxm", "vllm", m, dtype.MXFP4Marlin, false},
		{"h200-sxm", "vllm", m, dtype.MXFP4Marlin, false},
		{"h100-sxm", "vllm", "", dtype.MXFP4, false},
		{"h100-sxm", "sglang", m, dtype.MXFP4, true},
		{"b200-sxm", "vllm", m + "mxfp4_activation = \"mxfp8\"\n", dtype.MXFP4A8, false},
	} {
		s := gptOSS(t, tc.gpu, tc.engine, tc.extra)
		name := tc.gpu + " " + tc.engine + " " + tc.extra
		assert.Equal(t, tc.want, s.Config.Model.Quant.RoutedExperts, name)
		assert.Equal(t, tc.warn, len(s.Warnings) > 0, "%s: %v", name, s.Warnings)
		require.NoError(t, s.SetMechanism("mxfp4-marlin", false))
		if tc.want == dtype.MXFP4Marlin {
			assert.Equal(t, dtype.MXFP4, s.Config.Model.Quant.RoutedExperts, "%s, mechanism off", name)
		}
		require.NoError(t, s.SetMechanism("mxfp4-marlin", true))
		assert.Equal(t, tc.want, s.Config.Model.Quant.RoutedExperts, "%s, mechanism on", name)
	}

	_, err := Parse("t.toml", []byte(minimal+"[runtime]\nmxfp4_moe_backend = \"triton\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "runtime.mxfp4_moe_backend")
	s, err := Parse("t.toml", []byte(minimal+"[runtime]\n"+m))
	require.NoError(t, err)
	assert.Equal(t, "int4-g32", s.Config.Model.Quant.RoutedExperts.Name)
	assert.NotEmpty(t, s.Warnings)

	moe := func(s *Scenario, tokens int) (float64, float64, string) {
		sm, err := s.Sim()
		require.NoError(t, err)
		ops, err := sm.ExplainBatch([]sim.Seq{{Query: tokens, Prefill: true}})
		require.NoError(t, err)
		for _, o := range ops {
			if o.Name == "fused_moe (routed experts)" {
				return float64(o.Estimate.Time), float64(o.Estimate.FLOPs), o.Estimate.Source.Table + o.Estimate.Source.Formula
			}
		}
		t.Fatal("no fused_moe op")
		return 0, 0, ""
	}
	tm, fm, srcM := moe(gptOSS(t, "h100-sxm", "vllm", m), 8192)
	tt, ft, srcT := moe(gptOSS(t, "h100-sxm", "vllm", ""), 8192)
	assert.Contains(t, srcM, "Marlin MXFP4")
	assert.Contains(t, srcT, "mxfp4.e128.k4.h2880.i2880")
	assert.Greater(t, tm, tt)
	// padded: hidden 2880 -> 3072, width 2880 -> 2944 at TP1
	assert.InDelta(t, 3072.0*2944/(2880*2880), fm/ft, 1e-9)
}

// TestNVFP4SGLangArch: SGLang refuses an NVFP4 checkpoint below compute
// capability 10.0 (modelopt_fp4's minimum), naming runtime.engine and
// its line; vLLM takes it on Hopper (Marlin FP4), and SGLang on Blackwell
// (B200, RTX PRO 6000) and on an fp8 checkpoint on Hopper.
func TestNVFP4SGLangArch(t *testing.T) {
	parse := func(config, gpu, engine string) error {
		_, err := Parse("t.toml", []byte("name = \"t\"\n[model]\nconfig = \"../validate/corpus/configs/"+config+"\"\n[hardware]\ngpu = \""+gpu+
			"\"\ngpus = 4\ncalibration = \"none\"\n[parallel]\ntp = 4\n[runtime]\nengine = \""+engine+"\"\n"))
		return err
	}
	const fp4, fp8 = "nvidia--MiniMax-M2.5-NVFP4_config.json", "MiniMaxAI--MiniMax-M2.5_config.json"
	err := parse(fp4, "h200-sxm", "sglang")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t.toml:11: runtime.engine: SGLang loads an NVFP4 checkpoint (modelopt_fp4) only on compute capability 10.0 and later")
	assert.Contains(t, err.Error(), "sm_90")
	require.Error(t, parse(fp4, "a100-sxm", "sglang"))
	// A custom GPU of compute capability 8.9 (an RTX 4090) is below 10.0
	// as well; a custom sm_120 is not.
	custom := func(arch string) error {
		_, err := Parse("t.toml", []byte("name = \"t\"\n[model]\nconfig = \"../validate/corpus/configs/"+fp4+
			"\"\n[hardware]\ngpus = 4\nfabric = \"pcie-gen4\"\ncalibration = \"none\"\n[hardware.custom_gpu]\nname = \"c\"\narch = \""+arch+
			"\"\nsms = 128\nmemory = \"96GB\"\nbandwidth = \"1TB/s\"\nbf16 = \"200TFLOPS\"\n[parallel]\ntp = 4\n[runtime]\nengine = \"sglang\"\n"))
		return err
	}
	err = custom("sm_89")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only on compute capability 10.0 and later")
	assert.NoError(t, custom("sm_120"))
	for _, tc := range [][3]string{{fp4, "h200-sxm", "vllm"}, {fp4, "b200-sxm", "sglang"}, {fp4, "rtx-pro-6000-server", "sglang"}, {fp8, "h200-sxm", "sglang"}} {
		assert.NoError(t, parse(tc[0], tc[1], tc[2]), "%v", tc)
	}
}

// TestNVFP4SGLangPlanGPUs: plan leaves out the GPUs where SGLang cannot
// load the scenario's NVFP4 checkpoint, saying so.
func TestNVFP4SGLangPlanGPUs(t *testing.T) {
	s, err := Parse("t.toml", []byte("name = \"t\"\n[model]\nconfig = \"../validate/corpus/configs/nvidia--MiniMax-M2.5-NVFP4_config.json\"\n"+
		"[hardware]\ngpu = \"b200-sxm\"\ngpus = 4\ncalibration = \"none\"\n[parallel]\ntp = 4\n[runtime]\nengine = \"sglang\"\n"))
	require.NoError(t, err)
	p := Plan{GPUs: []string{"b200-sxm", "h200-sxm"}, MaxGPUs: 8, InputTokens: 1024, OutputTokens: 1024}
	sp, warns, err := s.PlanSpace(p)
	require.NoError(t, err)
	require.Len(t, sp.GPUs, 1)
	assert.Equal(t, "b200-sxm", sp.GPUs[0].GPU.Name)
	assert.Contains(t, fmt.Sprint(warns), "GPU h200-sxm: left out: SGLang loads an NVFP4 checkpoint only on compute capability 10.0 and later (h200-sxm is sm_90)")
}

// TestNVFP4SGLangPlanNoGPU: a plan whose every GPU is left out is an
// input error naming them.
func TestNVFP4SGLangPlanNoGPU(t *testing.T) {
	s, err := Parse("t.toml", []byte("name = \"t\"\n[model]\nconfig = \"../validate/corpus/configs/nvidia--MiniMax-M2.5-NVFP4_config.json\"\n"+
		"[hardware]\ngpu = \"b200-sxm\"\ngpus = 4\ncalibration = \"none\"\n[parallel]\ntp = 4\n[runtime]\nengine = \"sglang\"\n"))
	require.NoError(t, err)
	_, _, err = s.PlanSpace(Plan{GPUs: []string{"h200-sxm", "h100-sxm"}, MaxGPUs: 8, InputTokens: 1024, OutputTokens: 1024})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "none of h200-sxm, h100-sxm can serve the scenario")
}

// TestPlanProfileTerms: a plan's candidates take the memory-profile terms
// that follow the engine's version as the scenario's own profile does
// (the H100 MiniMax-M2.5 corpus scenario, vLLM 0.18.0: the Triton
// sampler, and the all-reduce fusion workspace, which sim sizes at TP 2,
// 4 or 8); at
// v0.12.0 the sort, no workspace; SGLang's candidates none.
func TestPlanProfileTerms(t *testing.T) {
	const sc = "../validate/corpus/aiconfigurator/h100-sxm-vllm-minimax-m2.5-fp8-tp4-dp1-ep4.toml"
	for _, tc := range []struct {
		version             string
		sort, triton, arTP4 bool
	}{{"0.18.0", false, true, true}, {"0.12.0", true, false, false}} {
		s, err := OpenWith(sc, []Override{{Key: "runtime.engine_version", Value: tc.version}})
		require.NoError(t, err)
		own := s.Config.Profile
		require.Equal(t, tc.triton, own.SamplerTriton)
		require.Equal(t, tc.arTP4, own.ARFusion)
		sp, _, err := s.PlanSpace(Plan{MaxGPUs: 8, InputTokens: 1024, OutputTokens: 1024})
		require.NoError(t, err)
		cands, _, err := plan.Enumerate(sp)
		require.NoError(t, err)
		n := 0
		for _, c := range cands {
			p := c.Config.Profile
			if c.Engine.Pick(serve.VLLM) != serve.VLLM || p.WeightsAndKV {
				continue
			}
			n++
			assert.Equal(t, tc.sort, p.SamplerSort, "%s %s", tc.version, c.Label())
			assert.Equal(t, tc.triton, p.SamplerTriton, "%s %s", tc.version, c.Label())
			assert.Equal(t, tc.arTP4, p.ARFusion, "%s %s", tc.version, c.Label())
		}
		assert.Positive(t, n, tc.version)
	}
}
