package scenarios

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
)

// TestGraphMechanisms: an SGLang scenario gets SGLang's CUDA-graph capture
// list and eager prefill steps, each of which --without turns off and
// --with back on; a vLLM scenario gets its capture list (graph-padding)
// and no eager prefill.
func TestGraphMechanisms(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	engine := regexp.MustCompile(`(?m)^engine = "vllm"`)
	for _, tc := range []struct {
		engine string
		on     bool
	}{{"sglang", true}, {"vllm", false}} {
		t.Run(tc.engine, func(t *testing.T) {
			body := data
			if tc.engine == "sglang" {
				require.True(t, engine.Match(data), "the scenario names its engine")
				body = engine.ReplaceAll(data, []byte(`engine = "sglang"`))
			}
			s, err := Parse("x.toml", body)
			require.NoError(t, err)
			assert.NotEmpty(t, s.Config.CaptureBatches, "capture list")
			assert.Equal(t, tc.on, s.Config.EagerPrefill, "eager prefill")
			if !tc.on {
				require.NoError(t, s.SetMechanism("graph-padding", false))
				assert.Empty(t, s.Config.CaptureBatches)
				require.NoError(t, s.SetMechanism("graph-padding", true))
				assert.Equal(t, []int{1, 2, 4, 8}, s.Config.CaptureBatches[:4], "vLLM's default list")
				return
			}
			assert.Equal(t, 1, s.Config.CaptureBatches[0])
			require.NoError(t, s.SetMechanism("graph-padding", false))
			require.NoError(t, s.SetMechanism("eager-prefill", false))
			assert.Empty(t, s.Config.CaptureBatches)
			assert.False(t, s.Config.EagerPrefill)
			require.NoError(t, s.SetMechanism("capture-size", true))
			assert.Empty(t, s.Config.CaptureBatches, "capture-size leaves the other two alone")
			assert.False(t, s.Config.EagerPrefill)
			require.NoError(t, s.SetMechanism("graph-padding", true))
			require.NoError(t, s.SetMechanism("eager-prefill", true))
			assert.NotEmpty(t, s.Config.CaptureBatches)
			assert.True(t, s.Config.EagerPrefill)
		})
	}
}

// TestMemoryProfileMechanism: a vLLM scenario profiles its memory at its
// token budget and sequence limit (the engine's defaults unless given);
// --without memory-profile restores aiconfigurator's fixed reserve, and
// SGLang keeps its own KV pool (sglang-kv-pool).
func TestMemoryProfileMechanism(t *testing.T) {
	s, data := vllmScenario(t)
	engine := vllmEngine
	var err error
	assert.Equal(t, 8192, s.Config.Profile.Tokens, "vLLM's max_num_batched_tokens on an H200")
	assert.Equal(t, 1024, s.Config.Profile.Seqs, "vLLM's max_num_seqs on an H200")
	require.NoError(t, s.SetMechanism("memory-profile", false))
	assert.Zero(t, s.Config.Profile)
	require.NoError(t, s.SetMechanism("memory-profile", true))
	assert.Equal(t, 8192, s.Config.Profile.Tokens)

	body := engine.ReplaceAll(data, []byte("engine = \"vllm\"\nmax_num_batched_tokens = 2048"))
	s, err = Parse("x.toml", body)
	require.NoError(t, err)
	assert.Equal(t, 2048, s.Config.Profile.Tokens, "runtime.max_num_batched_tokens")

	s, err = Parse("x.toml", engine.ReplaceAll(data, []byte(`engine = "sglang"`)))
	require.NoError(t, err)
	assert.Equal(t, sim.MemoryProfile{WeightsAndKV: true}, s.Config.Profile, "SGLang: its KV pool of mem_fraction_static")
	require.NoError(t, s.SetMechanism("memory-profile", false))
	assert.True(t, s.Config.Profile.WeightsAndKV, "memory-profile is vLLM's")
}

// TestSGLangMemoryMechanisms: an SGLang scenario that does not give
// runtime.gpu_memory_utilization takes SGLang's mem_fraction_static for
// its GPU, TP and engine version, its KV pool is that share less the
// weights alone, and its running requests are bounded by what the pool
// holds; a value in the file overrides the fraction, and each mechanism
// turns off on its own.
func TestSGLangMemoryMechanisms(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	engine := regexp.MustCompile(`(?m)^engine = "vllm"`)
	gmu := regexp.MustCompile(`(?m)^gpu_memory_utilization = 0.90\n`)
	require.True(t, engine.Match(data) && gmu.Match(data), "the scenario names its engine and share")
	sglang := engine.ReplaceAll(gmu.ReplaceAll(data, nil), []byte(`engine = "sglang"`))
	// H200 (143771 MiB) at TP8: 512 + 1.5 x 8192 + 2 x 512 + 1024 = 14848 MiB reserved
	const h200, newest, v051 = 143771.0, 0.897, 0.886 // 0.5.1: (12 + 8/2) GiB reserved
	require.InDelta(t, newest, math.Round((h200-14848)/h200*1000)/1000, 1e-12)
	require.InDelta(t, v051, math.Round((h200-16384)/h200*1000)/1000, 1e-12)

	s, err := Parse("x.toml", sglang)
	require.NoError(t, err)
	assert.Equal(t, newest, s.Config.GPUMemoryUtilization, "SGLang's default share")
	assert.True(t, s.Config.Profile.WeightsAndKV, "SGLang's KV pool")
	kv := func(s *Scenario) (serve.Config, unit.Bytes) {
		sm, err := s.Sim()
		require.NoError(t, err)
		c, err := s.ServeConfig(sm, ServePoint{Concurrency: 64})
		require.NoError(t, err)
		p, err := sm.Step(1, 1)
		require.NoError(t, err)
		return c, p.Memory.Weights
	}
	c, w := kv(s)
	mem := float64(s.Config.GPU.EngineMemory())
	assert.InDelta(t, newest*mem-float64(w), float64(c.Memory.KVCapacity), 1, "share x memory - weights, no reserve")
	perRank := serve.DefaultMaxRunning(&c, s.Config.Model.MaxPosition)
	assert.Equal(t, perRank, c.MaxNumSeqs, "max_running_requests from the pool")
	assert.Positive(t, c.MaxNumSeqs)

	s.Serving.EngineVersion = "0.5.1.post1" // as validate sets a row's version
	c, _ = kv(s)
	assert.InDelta(t, v051*mem-float64(w), float64(c.Memory.KVCapacity), 1, "the 0.5.1 heuristic at this point")
	s.Serving.EngineVersion = ""

	require.NoError(t, s.SetMechanism("sglang-mem-fraction", false))
	assert.Equal(t, 0.90, s.Config.GPUMemoryUtilization, "off: vLLM's share")
	c, _ = kv(s)
	assert.InDelta(t, 0.90*mem-float64(w), float64(c.Memory.KVCapacity), 1)
	require.NoError(t, s.SetMechanism("sglang-kv-pool", false))
	assert.Zero(t, s.Config.Profile, "off: the fixed reserve")
	c, _ = kv(s)
	assert.InDelta(t, 0.90*mem-float64(w)-float64(sim.FixedReserve(8)), float64(c.Memory.KVCapacity), 1)
	require.NoError(t, s.SetMechanism("sglang-max-running", false))
	c, _ = kv(s)
	assert.Zero(t, c.MaxNumSeqs, "off: no limit")
	require.NoError(t, s.SetMechanism("memory-profile", true))
	assert.Zero(t, s.Config.Profile, "memory-profile is vLLM's: SGLang keeps its own setting")
	require.NoError(t, s.SetMechanism("sglang-mem-fraction", true))
	require.NoError(t, s.SetMechanism("sglang-kv-pool", true))
	assert.Equal(t, newest, s.Config.GPUMemoryUtilization)
	assert.True(t, s.Config.Profile.WeightsAndKV)

	// Given in the file (SGLang's --mem-fraction-static imports to it):
	// the file's share, and its max_num_seqs.
	given := engine.ReplaceAll(data, []byte("engine = \"sglang\"\nmax_num_seqs = 48"))
	s, err = Parse("x.toml", given)
	require.NoError(t, err)
	assert.Equal(t, 0.90, s.Config.GPUMemoryUtilization, "runtime.gpu_memory_utilization")
	s.Serving.EngineVersion = "0.5.1"
	c, _ = kv(s)
	assert.InDelta(t, 0.90*mem-float64(w), float64(c.Memory.KVCapacity), 1)
	assert.Equal(t, 48, c.MaxNumSeqs)

	// vLLM: its 0.90 and profile run, no derived limit.
	s, err = Parse("x.toml", gmu.ReplaceAll(data, nil))
	require.NoError(t, err)
	assert.Equal(t, 0.90, s.Config.GPUMemoryUtilization)
	assert.False(t, s.Config.Profile.WeightsAndKV)
	c, _ = kv(s)
	assert.Equal(t, 1024, c.MaxNumSeqs, "vLLM's max_num_seqs on an H200")
}

// TestQuantGEMMMechanism: a scenario on a B200 prices its quantized GEMMs
// with sm_100's fitted streaming figures; --without quant-gemm gives the
// bf16 GEMM's and --with restores them, leaving the other efficiencies
// alone; --with quant-gemm-compute (off by default) sets the measured
// compute fractions and --without clears them; an H200 takes sm_90's.
func TestQuantGEMMMechanism(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	gpu := regexp.MustCompile(`(?m)^gpu = "h200-sxm"`)
	require.True(t, gpu.Match(data), "the scenario names its GPU")
	def := kernels.DefaultQuantGEMM()
	for _, tc := range []struct {
		gpu     string
		want    kernels.QuantGEMMCosts
		compute kernels.QuantGEMMCompute
	}{
		{"b200-sxm", kernels.QuantGEMMSM100, kernels.QuantGEMMComputeSM100},
		{"b300-sxm", kernels.QuantGEMMSM103, kernels.QuantGEMMComputeSM103},
		{"h200-sxm", kernels.QuantGEMMSM90, kernels.QuantGEMMComputeSM90},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			s, err := Parse("x.toml", gpu.ReplaceAll(data, []byte(`gpu = "`+tc.gpu+`"`)))
			require.NoError(t, err)
			arch := kernels.EfficiencyFor(s.Config.GPU)
			require.Equal(t, tc.want.WithCompute(tc.compute), arch.QuantGEMM, "both sides on by default")

			require.NoError(t, s.SetMechanism("quant-gemm-compute", false))
			require.NoError(t, s.SetMechanism("quant-gemm", false))
			assert.Equal(t, def, s.Config.Efficiency.QuantGEMM)
			assert.Equal(t, arch.Mem, s.Config.Efficiency.Mem, "the other efficiencies stay the architecture's")
			assert.Equal(t, arch.MemMarlin, s.Config.Efficiency.MemMarlin)

			require.NoError(t, s.SetMechanism("quant-gemm-compute", true))
			q := s.Config.Efficiency.QuantGEMM
			assert.Equal(t, tc.compute.FP8, q.FP8.Compute)
			assert.Equal(t, tc.compute.FP8Block, q.FP8Block.Compute)
			assert.Equal(t, tc.compute.FP4, q.FP4.Compute)
			assert.Equal(t, def.FP8.Mem, q.FP8.Mem, "the streaming side stays off")

			require.NoError(t, s.SetMechanism("quant-gemm", true))
			assert.Equal(t, arch, s.Config.Efficiency, "both back on: the architecture's default")
			require.NoError(t, s.SetMechanism("quant-gemm-compute", false))
			assert.Equal(t, tc.want, s.Config.Efficiency.QuantGEMM, "compute off: the bf16 fraction")
		})
	}
}

// TestMLACollectorMechanism: on a GPU whose perf-database MLA module rows
// are the legacy collector's (gb200), the decode step takes the
// collector's excess off the MLA module (the attention op's source says
// so); --without mla-collector prices the rows as measured; b200-sxm's
// re-collected rows are used as measured either way.
func TestMLACollectorMechanism(t *testing.T) {
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	gpu := regexp.MustCompile(`(?m)^gpu = "h200-sxm"\ngpus = 8\nfabric = "nvlink4"`)
	require.True(t, gpu.Match(data))
	step := func(t *testing.T, preset string, on bool) (float64, string) {
		body := gpu.ReplaceAll(data, []byte("gpu = \""+preset+"\"\ngpus = 8\nfabric = \"nvlink5\""))
		body = regexp.MustCompile(`(?m)^preset = "deepseek-v3"`).ReplaceAll(body, []byte(`config = "../validate/corpus/configs/nvidia--DeepSeek-V3.1-NVFP4_config.json"`))
		s, err := Parse("x.toml", body)
		require.NoError(t, err)
		require.NoError(t, s.SetMechanism("mla-collector", on))
		sm, err := s.Sim()
		require.NoError(t, err)
		p, err := sm.Step(2, 1536)
		require.NoError(t, err)
		ops, err := sm.Explain(2, 1536)
		require.NoError(t, err)
		note := ""
		for _, o := range ops {
			if o.Name == "mla decode attention" {
				note = o.Estimate.Source.Note
			}
		}
		require.NotEmpty(t, note, "the MLA module is priced from a table")
		return float64(p.Step.Time), note
	}
	on, noteOn := step(t, "gb200", true)
	off, noteOff := step(t, "gb200", false)
	assert.Contains(t, noteOn, "legacy collector")
	assert.NotContains(t, noteOff, "legacy collector")
	// 61 layers at batch 2, 16 heads per GPU (128 / TP8), a bf16 KV
	// cache: LegacyMLAOverhead's 47.3 us each.
	assert.InDelta(t, 61*47.3e-6, off-on, 1e-9, "on %g s, off %g s", on, off)
	b200on, note := step(t, "b200-sxm", true)
	b200off, _ := step(t, "b200-sxm", false)
	assert.NotContains(t, note, "legacy collector")
	assert.Equal(t, b200off, b200on)
}

// TestAdmissionMechanisms: a vLLM scenario admits by the whole sequence
// (scheduler_reserve_full_isl, from v0.19.0) and recovers a preempted
// request's cached blocks; --without turns each off alone, an older
// engine_version leaves full-ISL admission out, and SGLang has neither.
func TestAdmissionMechanisms(t *testing.T) {
	s, data := vllmScenario(t)
	engine := vllmEngine
	var err error
	p := ServePoint{Concurrency: 4}
	c := s.serveBase(p)
	assert.True(t, c.ReserveFullISL)
	assert.True(t, c.RecoverPreempted)
	require.NoError(t, s.SetMechanism("full-isl-admission", false))
	c = s.serveBase(p)
	assert.False(t, c.ReserveFullISL)
	assert.True(t, c.RecoverPreempted)
	require.NoError(t, s.SetMechanism("preempt-recovery", false))
	require.NoError(t, s.SetMechanism("full-isl-admission", true))
	c = s.serveBase(p)
	assert.True(t, c.ReserveFullISL)
	assert.False(t, c.RecoverPreempted)

	s, err = Parse("x.toml", engine.ReplaceAll(data, []byte("engine = \"vllm\"\nengine_version = \"0.18.1\"")))
	require.NoError(t, err)
	assert.False(t, s.serveBase(p).ReserveFullISL, "vLLM 0.18.1")

	s, err = Parse("x.toml", engine.ReplaceAll(data, []byte(`engine = "sglang"`)))
	require.NoError(t, err)
	assert.False(t, s.serveBase(p).ReserveFullISL, "SGLang")
}

// TestGEMMBatchMechanism: --without gemm-batch-efficiency prices every
// bf16 GEMM at EffMem (the sm_120 figure is 0.71), --with restores it.
func TestGEMMBatchMechanism(t *testing.T) {
	s, err := Parse("x.toml", []byte("name = \"x\"\n[model]\npreset = \"kimi-k2.5\"\n[hardware]\ngpu = \"rtx-pro-6000-server\"\ngpus = 8\n[parallel]\ntp = 8\nep = 8\n"))
	require.NoError(t, err)
	require.NoError(t, s.SetMechanism("gemm-batch-efficiency", false))
	assert.Zero(t, s.Config.Efficiency.MemGEMMBatch)
	assert.Equal(t, kernels.EffMem, s.Config.Efficiency.Mem)
	require.NoError(t, s.SetMechanism("gemm-batch-efficiency", true))
	assert.Equal(t, kernels.EffMemGEMMBatchSM120, s.Config.Efficiency.MemGEMMBatch)
}

// vllmEngine is the vLLM scenario's engine line.
var vllmEngine = regexp.MustCompile(`(?m)^engine = "vllm"`)

// vllmScenario parses the vLLM DeepSeek-V3 scenario beside the tests and
// returns it with its text (which names its engine).
func vllmScenario(t *testing.T) (*Scenario, []byte) {
	t.Helper()
	data, err := os.ReadFile("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	require.True(t, vllmEngine.Match(data), "the scenario names its engine")
	s, err := Parse("x.toml", data)
	require.NoError(t, err)
	return s, data
}

// TestSpeculativeMechanism: --without speculative runs the scenario's
// deployment with plain decoding (one token per step, no draft), --with
// brings its [speculative] back; a scenario without one stays plain.
func TestSpeculativeMechanism(t *testing.T) {
	s, err := Load("deepseek-v3-fp8-h200-tp8-mtp.toml")
	require.NoError(t, err)
	want := s.Config.Spec
	require.Equal(t, sim.SpecMTP, want.Method)
	require.Greater(t, want.TokensPerStep(), 1.5)
	on, err := s.Sim()
	require.NoError(t, err)

	require.NoError(t, s.SetMechanism("speculative", false))
	assert.False(t, s.Config.Spec.Active())
	assert.Equal(t, 1.0, s.Config.Spec.TokensPerStep())
	off, err := s.Sim()
	require.NoError(t, err)
	p1, err := on.Step(8, 2048)
	require.NoError(t, err)
	p2, err := off.Step(8, 2048)
	require.NoError(t, err)
	assert.Greater(t, p1.Memory.Weights, p2.Memory.Weights, "the MTP layer's weights are loaded only with MTP drafting")
	assert.Equal(t, 1.0, p2.TokensPerStep)
	assert.Less(t, float64(p1.TPOT), float64(p2.TPOT))

	require.NoError(t, s.SetMechanism("speculative", false)) // twice: still restorable
	require.NoError(t, s.SetMechanism("speculative", true))
	assert.Equal(t, want, s.Config.Spec)

	p, err := Load("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	require.NoError(t, p.SetMechanism("speculative", true))
	assert.False(t, p.Config.Spec.Active())
}

// TestSGLangSpecV1Mechanism: SGLang's EAGLE/MTP up to v0.5.10 runs the
// synchronous V1 worker (serve.Spec.Sync, overlap off); --without
// sglang-spec-v1 and a newer version give the overlapped V2 worker,
// runtime.async_scheduling picks the worker, and vLLM or plain decoding
// never have it.
func TestSGLangSpecV1Mechanism(t *testing.T) {
	_, data := vllmScenario(t)
	require.Contains(t, string(data), "method = \"none\"")
	spec := "method = \"mtp\"\ndraft_tokens = 2\nacceptance = [0.85]"
	parse := func(engine, method string) *Scenario {
		t.Helper()
		d := vllmEngine.ReplaceAll(data, []byte(engine))
		d = []byte(strings.Replace(string(d), "method = \"none\"", method, 1))
		s, err := Parse("x.toml", d)
		require.NoError(t, err)
		return s
	}
	p := ServePoint{Concurrency: 4}
	s := parse("engine = \"sglang\"\nengine_version = \"0.5.9\"", spec)
	c := s.serveBase(p)
	assert.True(t, c.Spec.Sync)
	assert.False(t, c.AsyncScheduling)
	require.NoError(t, s.SetMechanism("sglang-spec-v1", false))
	c = s.serveBase(p)
	assert.False(t, c.Spec.Sync)
	assert.True(t, c.AsyncScheduling)
	require.NoError(t, s.SetMechanism("sglang-spec-v1", true))
	assert.True(t, s.serveBase(p).Spec.Sync)
	require.NoError(t, s.SetMechanism("speculative", false))
	c = s.serveBase(p)
	assert.False(t, c.Spec.Sync, "plain decoding")
	assert.True(t, c.AsyncScheduling)

	for _, tc := range []struct {
		name, engine string
		want         bool
	}{
		{"newer SGLang", "engine = \"sglang\"\nengine_version = \"0.5.11\"", false},
		{"SGLang, version unknown", "engine = \"sglang\"", false},
		{"SGLANG_ENABLE_SPEC_V2", "engine = \"sglang\"\nengine_version = \"0.5.9\"\nasync_scheduling = true", false},
		{"newer, overlap off", "engine = \"sglang\"\nengine_version = \"0.5.11\"\nasync_scheduling = false", true},
		{"vLLM", "engine = \"vllm\"\nengine_version = \"0.5.9\"", false},
	} {
		c := parse(tc.engine, spec).serveBase(p)
		assert.Equal(t, tc.want, c.Spec.Sync, tc.name)
		if tc.want {
			assert.False(t, c.AsyncScheduling, tc.name)
		}
	}
}

// TestMoERoutingMechanism: a DeepSeek-V3 scenario prices its routed
// experts under aiconfigurator's power_law_1.01 routing, a Qwen3 MoE one
// under power_law_1.2; --without moe-routing prices uniform routing and
// moves the MoE op of a step whose table has power-law rows.
func TestMoERoutingMechanism(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"deepseek-v3-fp8-h200-tp8.toml", "power_law_1.01"},
		{"qwen3-235b-h100-tp4.toml", "power_law_1.2"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s, err := Load(tc.file)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Config.MoERouting, "on by default")
			moe := func() cost.Estimate {
				sm, err := s.Sim()
				require.NoError(t, err)
				p, err := sm.Step(64, 2048)
				require.NoError(t, err)
				return p.Breakdown[cost.MoE]
			}
			on := moe()
			require.NoError(t, s.SetMechanism("moe-routing", false))
			assert.Equal(t, "", s.Config.MoERouting)
			off := moe()
			assert.NotEqual(t, on.Time, off.Time, "the MoE op reads other rows")
			require.NoError(t, s.SetMechanism("moe-routing", true))
			assert.Equal(t, tc.want, s.Config.MoERouting)
		})
	}
}

// TestLaunchAndScheduleAheadMechanisms: engine-launch, launch-ahead and
// schedule-ahead are on by default and each turns its own setting off
// and on again; engine-launch makes a host-bound eager vLLM step cost the
// engine's measured host time per kernel.
func TestLaunchAndScheduleAheadMechanisms(t *testing.T) {
	_, data := vllmScenario(t)
	s, err := Parse("x.toml", data)
	require.NoError(t, err)
	p := ServePoint{Concurrency: 4}
	assert.True(t, s.Config.EngineLaunch)
	assert.True(t, s.Config.LaunchAhead)
	assert.True(t, s.serveBase(p).ScheduleAhead)
	require.NoError(t, s.SetMechanism("schedule-ahead", false))
	assert.False(t, s.serveBase(p).ScheduleAhead)
	require.NoError(t, s.SetMechanism("schedule-ahead", true))
	assert.True(t, s.serveBase(p).ScheduleAhead)

	// one decode without graphs is host-bound: its step is its kernels x
	// the host time per kernel
	s.Config.Graphs = false
	one := []sim.Seq{{Query: 1, Context: 16}}
	step := func() (unit.Seconds, float64) {
		sm, err := s.Sim()
		require.NoError(t, err)
		var r sim.BatchResult
		require.NoError(t, sm.StepBatch(one, &r))
		return r.Step.Time, r.Step.Kernels
	}
	on, nk := step()
	assert.InDelta(t, 44.3e-6*nk, float64(on), 1e-9)
	require.NoError(t, s.SetMechanism("engine-launch", false))
	assert.False(t, s.Config.EngineLaunch)
	off, _ := step()
	assert.InDelta(t, 10e-6*nk, float64(off), 1e-9)
	require.NoError(t, s.SetMechanism("launch-ahead", false))
	assert.False(t, s.Config.LaunchAhead)
	perOp, _ := step()
	assert.GreaterOrEqual(t, float64(perOp), float64(off))
	require.NoError(t, s.SetMechanism("launch-ahead", true))
	require.NoError(t, s.SetMechanism("engine-launch", true))
	back, _ := step()
	assert.Equal(t, on, back)
}

// TestCustomGPUGEMM: [hardware.custom_gpu] gemm_mem_efficiency and
// gemm_compute_efficiency carry the GPU's own measured bf16 GEMM fractions
// into its efficiency set; custom-gpu-gemm off gives the architecture's
// back and on restores them, in either order with gemm-batch-efficiency;
// out of (0, 1.25] is a one-line error naming the key.
func TestCustomGPUGEMM(t *testing.T) {
	const gpu = "name = \"x\"\n[model]\npreset = \"kimi-k2.5\"\n[hardware]\ngpus = 8\nfabric = \"pcie-gen4\"\n[hardware.custom_gpu]\narch = \"sm_89\"\nmemory = \"96GB\"\nbandwidth = \"1TB/s\"\nbf16 = \"200TFLOPS\"\n"
	const layout = "[parallel]\ntp = 8\nep = 8\n"
	s, err := Parse("x.toml", []byte(gpu+"gemm_mem_efficiency = 0.83\ngemm_compute_efficiency = 0.96\n"+layout))
	require.NoError(t, err)
	assert.Equal(t, 0.83, s.Config.GPU.GEMMMem)
	assert.Equal(t, 0.96, s.Config.GPU.GEMMCompute)
	eff := func() kernels.Efficiency { return s.efficiency() }
	assert.Equal(t, 0.83, eff().MemGEMMBatch)
	assert.Equal(t, 0.96, eff().ComputeGEMMBF16)

	require.NoError(t, s.SetMechanism("custom-gpu-gemm", false))
	assert.Zero(t, eff().MemGEMMBatch, "sm_89: no architecture figure")
	assert.Zero(t, eff().ComputeGEMMBF16)
	require.NoError(t, s.SetMechanism("gemm-batch-efficiency", false))
	require.NoError(t, s.SetMechanism("custom-gpu-gemm", true))
	assert.Zero(t, eff().MemGEMMBatch, "gemm-batch-efficiency stays off")
	assert.Equal(t, 0.96, eff().ComputeGEMMBF16)
	require.NoError(t, s.SetMechanism("gemm-batch-efficiency", true))
	assert.Equal(t, 0.83, eff().MemGEMMBatch)

	plain, err := Parse("p.toml", []byte(gpu+layout))
	require.NoError(t, err)
	assert.Zero(t, plain.Config.GPU.GEMMMem)
	assert.Equal(t, kernels.DefaultEfficiency(), plain.efficiency())

	for _, bad := range []string{"gemm_mem_efficiency = 0\n", "gemm_compute_efficiency = 1.5\n", "gemm_mem_efficiency = -0.2\n",
		// session 13: accepted before, priced a GEMM at 1e297 s
		"gemm_mem_efficiency = 1e-300\n", "gemm_compute_efficiency = 0.0499\n"} {
		_, err := Parse("e.toml", []byte(gpu+bad+layout))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "hardware.custom_gpu."+strings.Fields(bad)[0], bad)
		assert.NotContains(t, err.Error(), "\n", "one line")
	}
}

// TestFA2MixedMechanism: on the RTX PRO 6000 preset a vLLM step that mixes
// a prefill chunk with decodes prices its GQA decodes ungrouped
// (kernels.GQADecodeMixedFA2), which SGLang, a decode-only step and
// fa2-mixed-gqa off do not; a custom GPU gives the rate by
// fa2_mixed_read_bandwidth, out of range is a one-line error.
func TestFA2MixedMechanism(t *testing.T) {
	const doc = "name = \"x\"\n[model]\npreset = \"qwen3-235b-a22b\"\n[hardware]\ngpu = \"rtx-pro-6000-server\"\ngpus = 8\n[parallel]\ntp = 8\nep = 8\n[runtime]\nengine = \"%s\"\n"
	mixed := []sim.Seq{{Query: 1024, Prefill: true}}
	for i := 0; i < 64; i++ {
		mixed = append(mixed, sim.Seq{Query: 1, Context: 2048})
	}
	step := func(engine string, on bool, seqs []sim.Seq) float64 {
		t.Helper()
		s, err := Parse("x.toml", []byte(fmt.Sprintf(doc, engine)))
		require.NoError(t, err)
		require.NoError(t, s.SetMechanism("fa2-mixed-gqa", on))
		sm, err := s.Sim()
		require.NoError(t, err)
		var r sim.BatchResult
		require.NoError(t, sm.StepBatch(seqs, &r))
		return float64(r.Breakdown[cost.Attention].Time)
	}
	on, off := step("vllm", true, mixed), step("vllm", false, mixed)
	assert.Greater(t, on, 1.5*off, "vLLM mixed step: decodes ungrouped")
	assert.Equal(t, step("sglang", true, mixed), step("sglang", false, mixed), "SGLang: unchanged")
	dec := mixed[1:]
	assert.Equal(t, step("vllm", true, dec), step("vllm", false, dec), "decode-only step: unchanged")

	s, err := Parse("x.toml", []byte(fmt.Sprintf(doc, "vllm")))
	require.NoError(t, err)
	r := s.Config.GPU.FA2MixedRead
	require.Positive(t, float64(r))
	require.NoError(t, s.SetMechanism("fa2-mixed-gqa", false))
	assert.Zero(t, s.Config.GPU.FA2MixedRead)
	require.NoError(t, s.SetMechanism("fa2-mixed-gqa", true))
	assert.Equal(t, r, s.Config.GPU.FA2MixedRead)

	custom := strings.Replace(fmt.Sprintf(doc, "vllm"), "gpus = 8\n", "gpus = 8\n[hardware.custom_gpu]\nfa2_mixed_read_bandwidth = \"1.45TB/s\"\n", 1)
	c, err := Parse("c.toml", []byte(custom))
	require.NoError(t, err)
	assert.InEpsilon(t, 1.45e12, float64(c.Config.GPU.FA2MixedRead), 1e-9)
	_, err = Parse("e.toml", []byte(strings.Replace(custom, "1.45TB/s", "1.45GB/s", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hardware.custom_gpu.fa2_mixed_read_bandwidth")
	assert.NotContains(t, err.Error(), "\n")
}

// TestCUDAMemoryMechanism: on an H200 the engine takes its share of the
// total cudaMemGetInfo reports, 150,109,880,320 B, not nvidia-smi's
// 143,771 MiB; off, nvidia-smi's; on again, the measured total. Every
// other preset with a sourced total (bench/RESULTS-gpumem.md) takes its
// share of that total, and nvidia-smi's with the mechanism off; a100-sxm
// and rtx-pro-6000-server, with no two sources agreeing, keep
// nvidia-smi's either way.
func TestCUDAMemoryMechanism(t *testing.T) {
	usable := func(s *Scenario) unit.Bytes {
		sm, err := s.Sim()
		require.NoError(t, err)
		p, err := sm.Step(1, 1)
		require.NoError(t, err)
		return p.Memory.Usable + p.Memory.Weights + p.Memory.Reserve
	}
	s, err := Load("deepseek-v3-fp8-h200-tp8.toml")
	require.NoError(t, err)
	share := s.Config.GPUMemoryUtilization
	assert.InDelta(t, 150109880320*share, float64(usable(s)), 1)
	require.NoError(t, s.SetMechanism("cuda-memory", false))
	assert.InDelta(t, 143771*float64(unit.MiB)*share, float64(usable(s)), 1)
	assert.Equal(t, s.Config.GPU.Memory, s.Config.GPU.EngineMemory())
	require.NoError(t, s.SetMechanism("cuda-memory", true))
	assert.InDelta(t, 150109880320*share, float64(usable(s)), 1)

	for _, tc := range []struct {
		gpu       string
		cuda, smi unit.Bytes
	}{
		{"h100-sxm", 85017755648, 81559 * unit.MiB},
		{"b200-sxm", 182630 * unit.MiB, 183359 * unit.MiB},
		{"b300-sxm", 287428771840, 275040 * unit.MiB},
		{"gb200", 188733 * unit.MiB, 189471 * unit.MiB},
		{"gb300", 283136 * unit.MiB, 284208 * unit.MiB},
		{"a100-sxm", 81920 * unit.MiB, 81920 * unit.MiB},
		{"rtx-pro-6000-server", 97887 * unit.MiB, 97887 * unit.MiB},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			g, err := OpenWith("gpt-oss-120b-h200-tp1.toml", []Override{{Key: "hardware.gpu", Value: fmt.Sprintf("%q", tc.gpu)}})
			require.NoError(t, err)
			share := g.Config.GPUMemoryUtilization
			assert.InDelta(t, float64(tc.cuda)*share, float64(usable(g)), 1, "on")
			require.NoError(t, g.SetMechanism("cuda-memory", false))
			assert.InDelta(t, float64(tc.smi)*share, float64(usable(g)), 1, "off")
		})
	}
}

// TestCUDAMemoryHelpFigures: the cuda-memory help text quotes the h200-sxm
// preset's own figures: its cudaMemGetInfo total in bytes and nvidia-smi's
// total in MiB and in GB (143,771 MiB = 150,754,820,096 B = 150.75 GB).
func TestCUDAMemoryHelpFigures(t *testing.T) {
	g, ok := kernels.LookupGPU("h200-sxm")
	require.True(t, ok)
	help := mechanisms["cuda-memory"].doc
	require.Equal(t, 143771*unit.MiB, g.Memory)
	assert.Contains(t, help, fmt.Sprintf("143,771 MiB (%.2f GB)", float64(g.Memory)/1e9))
	require.Equal(t, unit.Bytes(150109880320), g.CUDAMemory)
	assert.Contains(t, help, "150,109,880,320 B")
}

// TestCUDAMemoryCustomOverride: a preset whose memory [hardware.custom_gpu]
// overrides takes its share of the memory given, not of the preset's
// measured cudaMemGetInfo total (an H200 given 100 GB kept 150.11 GB);
// a custom field other than memory keeps the measurement.
func TestCUDAMemoryCustomOverride(t *testing.T) {
	const h200 = "name = \"x\"\n[model]\npreset = \"gpt-oss-120b\"\n[hardware]\ngpu = \"h200-sxm\"\ngpus = 1\ncalibration = \"none\"\n[hardware.custom_gpu]\n"
	s, err := Parse("t.toml", []byte(h200+"memory = \"100GB\"\n"))
	require.NoError(t, err)
	assert.Equal(t, unit.Bytes(100e9), s.Config.GPU.EngineMemory())
	sm, err := s.Sim()
	require.NoError(t, err)
	p, err := sm.Step(1, 1)
	require.NoError(t, err)
	assert.InDelta(t, 100e9*s.Config.GPUMemoryUtilization, float64(p.Memory.Usable+p.Memory.Weights+p.Memory.Reserve), 1)
	b, err := Parse("t.toml", []byte(h200+"bandwidth = \"5TB/s\"\n"))
	require.NoError(t, err)
	assert.Equal(t, unit.Bytes(150109880320), b.Config.GPU.EngineMemory())
}
