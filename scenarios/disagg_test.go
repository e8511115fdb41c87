package scenarios

import (
	"strings"
	"testing"

	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const disaggScenario = `name = "d"
[model]
preset = "deepseek-v3"
[hardware]
gpu = "h200-sxm"
gpus = 24
fabric = "nvlink4"
calibration = "none"
[disagg]
transfer = "ib-400"
router = "least-loaded"
[disagg.prefill]
workers = 2
tp = 8
[disagg.decode]
workers = 1
tp = 8
ep = 8
dp_attention = true
[runtime]
engine = "sglang"
[workload]
request_rate = [2]
`

func TestDisaggScenario(t *testing.T) {
	s, err := Parse("d.toml", []byte(disaggScenario))
	require.NoError(t, err)
	require.NotNil(t, s.Disagg)
	assert.Equal(t, 2, s.Disagg.Prefill.Workers)
	assert.Equal(t, 8, s.Disagg.Prefill.GPUs)
	assert.Equal(t, 8, s.Config.GPUs, "the scenario's instance is one decode instance")
	assert.True(t, s.Config.Layout.DPAttention)
	assert.Equal(t, serve.LeastLoaded, s.Disagg.Router)
	assert.Equal(t, "ib-400", s.Disagg.Transfer.Name)

	cfg := disaggServeConfig(t, s)
	require.NotNil(t, cfg.Disagg)
	assert.Equal(t, 2, cfg.Disagg.Prefill.Workers)
	assert.Equal(t, cfg.Disagg.Prefill.Memory.KVBytesPerToken, cfg.Disagg.KVBytesPerToken)
	assert.InDelta(t, 50e9, cfg.Disagg.TransferBandwidth, 1)
}

func TestDisaggErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"with parallel", "[runtime]", "[parallel]\ntp = 8\n[runtime]", "d.toml:20: parallel: [parallel] and [disagg] exclude each other"},
		{"gpus", "gpus = 24", "gpus = 16", "d.toml:6: hardware.gpus: 16 GPUs, but the pools hold 24 (prefill 2 x 8 + decode 1 x 8)"},
		{"transfer", `transfer = "ib-400"`, `transfer = "carrier-pigeon"`, `d.toml:10: disagg.transfer: unknown transfer fabric "carrier-pigeon"`},
		{"no transfer", `transfer = "ib-400"`, ``, `disagg.transfer: missing`},
		{"router", `router = "least-loaded"`, `router = "random"`, `d.toml:11: disagg.router: unknown router "random"`},
		{"workers", "workers = 2", "workers = 0", "d.toml:13: disagg.prefill.workers: 0 must be in [1, 65536]"},
		{"no decode", "[disagg.decode]\nworkers = 1\ntp = 8\nep = 8\ndp_attention = true\n", "", "disagg.decode: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(disaggScenario, tc.old, tc.new, 1)
			require.NotEqual(t, disaggScenario, src)
			_, err := Parse("d.toml", []byte(src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A layout the model cannot take is an error at the pool's key.
	src := strings.Replace(disaggScenario, "workers = 2\ntp = 8", "workers = 2\ntp = 6", 1)
	src = strings.Replace(src, "gpus = 24", "gpus = 20", 1)
	s, err := Parse("d.toml", []byte(src))
	require.NoError(t, err)
	_, _, err = s.DisaggSims()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "d.toml:14: disagg.prefill.tp:")
}

// TestMoEA2ABackend: runtime.moe_a2a_backend names the engine's EP
// exchange; a pool's own key overrides it for that pool's instances; an
// unknown name is an error at its key.
func TestMoEA2ABackend(t *testing.T) {
	text := strings.Replace(disaggScenario, "ep = 8\ndp_attention = true", "ep = 8\ndp = 8\ntp = 1\nmoe_a2a_backend = \"deepep\"\ndp_attention = true", 1)
	text = strings.Replace(text, "tp = 8\n[disagg.decode]", "tp = 8\n[disagg.decode]", 1)
	text = strings.Replace(text, "workers = 1\ntp = 8\nep = 8", "workers = 1\nep = 8", 1)
	s, err := Parse("d.toml", []byte(text))
	require.NoError(t, err)
	assert.Equal(t, sim.A2ADeepEP, s.Disagg.Decode.A2A)
	assert.Equal(t, sim.A2ANone, s.Disagg.Prefill.A2A)
	assert.Equal(t, sim.A2ADeepEP, s.Config.MoEA2A, "predict prices the decode instance")
	_, dsm, err := s.DisaggSims()
	require.NoError(t, err)
	ops, err := dsm.Explain(64, 1024)
	require.NoError(t, err)
	n := 0
	for _, o := range ops {
		if strings.Contains(o.Name, "alltoall") {
			n++
			assert.Contains(t, o.Estimate.Source.Note, "DeepEP low-latency", "decode steps: the low-latency kernels (no table here: the NCCL model)")
		}
	}
	assert.Equal(t, 2, n, "dispatch and combine")

	for _, tc := range []struct{ name, text, key string }{
		{"runtime", strings.Replace(disaggScenario, "engine = \"sglang\"", "engine = \"sglang\"\nmoe_a2a_backend = \"mooncake\"", 1), "runtime.moe_a2a_backend"},
		{"pool", strings.Replace(disaggScenario, "workers = 2\n", "workers = 2\nmoe_a2a_backend = \"dep\"\n", 1), "disagg.prefill.moe_a2a_backend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("d.toml", []byte(tc.text))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.key)
			assert.Contains(t, err.Error(), "unknown backend")
		})
	}
}

// TestMoEA2ABackendNoExchange: DeepEP on a layout without an EP exchange
// between DP ranks is a warning naming the key.
func TestMoEA2ABackendNoExchange(t *testing.T) {
	src := "[model]\npreset = \"deepseek-v3\"\n[hardware]\ngpu = \"h200-sxm\"\ngpus = 8\ncalibration = \"none\"\n[parallel]\ntp = 8\nep = 8\n[runtime]\nengine = \"sglang\"\nmoe_a2a_backend = \"deepep\"\n"
	s, err := Parse("a.toml", []byte(src))
	require.NoError(t, err)
	require.NotEmpty(t, s.Warnings)
	assert.Contains(t, strings.Join(s.Warnings, "\n"), "a.toml:12: runtime.moe_a2a_backend \"deepep\"")
	s, err = Parse("a.toml", []byte(strings.Replace(src, "tp = 8\nep = 8", "tp = 1\ndp = 8\nep = 8\ndp_attention = true", 1)))
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(s.Warnings, "\n"), "moe_a2a_backend")
}

// TestKVPullMechanism: a vLLM disaggregation pulls the KV from the decode
// side (serve.Disagg.Pull), SGLang's pushes it; --without kv-pull pushes
// for vLLM too.
func TestKVPullMechanism(t *testing.T) {
	for _, tc := range []struct {
		engine string
		on     bool
		want   bool
	}{{"vllm", true, true}, {"vllm", false, false}, {"sglang", true, false}} {
		t.Run(tc.engine, func(t *testing.T) {
			body := strings.Replace(disaggScenario, `engine = "sglang"`, `engine = "`+tc.engine+`"`, 1)
			s, err := Parse("d.toml", []byte(body))
			require.NoError(t, err)
			require.NoError(t, s.SetMechanism("kv-pull", tc.on))
			cfg := disaggServeConfig(t, s)
			assert.Equal(t, tc.want, cfg.Disagg.Pull)
		})
	}
}

// disaggServeConfig is the serve config of s's first point with its
// disaggregated pools.
func disaggServeConfig(t *testing.T, s *Scenario) serve.Config {
	t.Helper()
	psm, dsm, err := s.DisaggSims()
	require.NoError(t, err)
	sm, err := s.Sim()
	require.NoError(t, err)
	cfg, err := s.ServeConfig(sm, s.Serving.Points()[0])
	require.NoError(t, err)
	require.NoError(t, s.DisaggConfig(&cfg, psm, dsm))
	return cfg
}

// TestPoolMaxNumSeqs: a pool's max_num_seqs reaches its serve.Pool (the
// other pool keeps the scenario's, 0); the pool-max-seqs mechanism off
// drops it; out of range is an error at the pool's key.
func TestPoolMaxNumSeqs(t *testing.T) {
	src := strings.Replace(disaggScenario, "workers = 1\ntp = 8\nep = 8", "workers = 1\nmax_num_seqs = 16\ntp = 8\nep = 8", 1)
	s, err := Parse("d.toml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, 16, s.Disagg.Decode.MaxNumSeqs)
	cfg := disaggServeConfig(t, s)
	assert.Equal(t, 16, cfg.Disagg.Decode.MaxNumSeqs)
	assert.Zero(t, cfg.Disagg.Prefill.MaxNumSeqs)

	require.NoError(t, s.SetMechanism("pool-max-seqs", false))
	assert.Zero(t, disaggServeConfig(t, s).Disagg.Decode.MaxNumSeqs, "off: both pools under runtime.max_num_seqs")

	_, err = Parse("d.toml", []byte(strings.Replace(src, "max_num_seqs = 16", "max_num_seqs = 0", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "d.toml:17: disagg.decode.max_num_seqs: 0 must be in [1, ")
}

// TestPoolEngineKeys: a pool's scheduler_recv_interval, max_total_tokens
// and gpu_memory_utilization reach its serve.Pool (the other pool keeps
// the scenario's); each mechanism off drops its key; a bad value is one
// error at the pool's key.
func TestPoolEngineKeys(t *testing.T) {
	src := strings.Replace(disaggScenario, "workers = 2\ntp = 8", "workers = 2\ntp = 8\nscheduler_recv_interval = 10\nmax_total_tokens = 8192\ngpu_memory_utilization = 0.6\n"+
		"max_num_batched_tokens = 65536\nmax_prefill_tokens = 32768", 1)
	s, err := Parse("d.toml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, PoolSpec{Workers: 2, Layout: s.Disagg.Prefill.Layout, GPUs: 8, A2A: s.Disagg.Prefill.A2A, A2ASet: true,
		SchedulerRecvInterval: 10, MaxTotalTokens: 8192, MemFraction: 0.6, MaxNumBatchedTokens: 65536, MaxPrefillTokens: 32768}, s.Disagg.Prefill)
	base, err := Parse("d.toml", []byte(disaggScenario))
	require.NoError(t, err)
	b := disaggServeConfig(t, base)

	cfg := disaggServeConfig(t, s)
	pre := cfg.Disagg.Prefill
	assert.Equal(t, 10, pre.SchedulerRecvInterval)
	assert.Zero(t, cfg.Disagg.Decode.SchedulerRecvInterval)
	assert.Equal(t, [2]int{65536, 32768}, [2]int{pre.MaxNumBatchedTokens, pre.MaxPrefillTokens})
	assert.Zero(t, cfg.Disagg.Decode.MaxNumBatchedTokens)
	tokens := float64(pre.Memory.KVCapacity) / float64(pre.Memory.KVBytesPerToken)
	assert.InDelta(t, 8192, tokens, 1e-6, "KV tokens per attention rank capped at max_total_tokens")
	assert.Equal(t, b.Disagg.Decode.Memory, cfg.Disagg.Decode.Memory, "the decode pool keeps its own memory")

	require.NoError(t, s.SetMechanism("pool-prefill-budget", false))
	assert.Zero(t, disaggServeConfig(t, s).Disagg.Prefill.MaxNumBatchedTokens, "off: the scenario's budget")
	require.NoError(t, s.SetMechanism("pool-max-total-tokens", false))
	uncapped := disaggServeConfig(t, s).Disagg.Prefill.Memory
	assert.Greater(t, float64(uncapped.KVCapacity)/float64(uncapped.KVBytesPerToken), 4*8192.0, "off: the KV the memory holds")
	// at 0.6 of the GPU the prefill pool holds less KV than at the
	// engine's default fraction
	assert.Less(t, float64(uncapped.KVCapacity), float64(b.Disagg.Prefill.Memory.KVCapacity))
	require.NoError(t, s.SetMechanism("pool-mem-fraction", false))
	assert.Equal(t, b.Disagg.Prefill.Memory, disaggServeConfig(t, s).Disagg.Prefill.Memory, "off: the scenario's fraction")
	require.NoError(t, s.SetMechanism("pool-recv-interval", false))
	assert.Zero(t, disaggServeConfig(t, s).Disagg.Prefill.SchedulerRecvInterval, "off: the scenario's runtime.scheduler_recv_interval")

	for _, tc := range []struct{ old, new, want string }{
		{"scheduler_recv_interval = 10", "scheduler_recv_interval = 0", "d.toml:15: disagg.prefill.scheduler_recv_interval: 0 must be in [1, "},
		{"max_total_tokens = 8192", "max_total_tokens = -1", "d.toml:16: disagg.prefill.max_total_tokens: -1 must be in [1, "},
		{"gpu_memory_utilization = 0.6", "gpu_memory_utilization = 1.5", "d.toml:17: disagg.prefill.gpu_memory_utilization: 1.5 must be in (0, 1]"},
		{"[disagg.decode]\n", "[disagg.decode]\nscheduler_recv_interval = 10\n", "disagg.decode.scheduler_recv_interval: 10 needs dp_attention false"},
		{"max_num_batched_tokens = 65536", "max_num_batched_tokens = 0", "d.toml:18: disagg.prefill.max_num_batched_tokens: 0 must be in [1, "},
		{"max_prefill_tokens = 32768", "max_prefill_tokens = -5", "d.toml:19: disagg.prefill.max_prefill_tokens: -5 must be in [1, "},
	} {
		t.Run(tc.want, func(t *testing.T) {
			bad := strings.Replace(src, tc.old, tc.new, 1)
			require.NotEqual(t, src, bad)
			_, err := Parse("d.toml", []byte(bad))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// vLLM has neither SGLang key: a warning each.
	v, err := Parse("d.toml", []byte(strings.Replace(src, `engine = "sglang"`, `engine = "vllm"`, 1)))
	require.NoError(t, err)
	assert.Len(t, v.Warnings, 3)
	assert.Contains(t, strings.Join(v.Warnings, "\n"), "disagg.prefill.max_total_tokens is SGLang's")
}

// TestPoolBudgetDrafts: a pool's max_num_batched_tokens below one
// sequence's decode of 1 + K draft tokens is refused at the pool's key
// when the scenario loads (serve checks it; KeyError names the key), not
// run into a scheduler that cannot schedule a verify step.
func TestPoolBudgetDrafts(t *testing.T) {
	for _, pool := range []string{"prefill", "decode"} {
		src := strings.Replace(disaggScenario, "[disagg."+pool+"]\n", "[disagg."+pool+"]\nmax_num_batched_tokens = 3\n", 1) +
			"[speculative]\nmethod = \"mtp\"\ndraft_tokens = 3\nacceptance = [0.8]\n"
		_, err := Parse("d.toml", []byte(src)) // the scenario's load checks the pools' budgets (validateServe)
		require.Error(t, err)
		var pe *Error
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "disagg."+pool+".max_num_batched_tokens", pe.Key)
		assert.NotZero(t, pe.Line)
		assert.Contains(t, err.Error(), "3 tokens cannot hold one sequence's decode of 1 + 3 draft tokens")
	}
}

// TestPoolFractionInstance: the scenario's own sim config is the decode
// instance's (predict's box and memory), so it takes the decode pool's
// gpu_memory_utilization as simulate's decode pool does; with the
// pool-mem-fraction mechanism off, the scenario's.
func TestPoolFractionInstance(t *testing.T) {
	base, err := Parse("d.toml", []byte(disaggScenario))
	require.NoError(t, err)
	src := strings.Replace(disaggScenario, "[disagg.decode]\n", "[disagg.decode]\ngpu_memory_utilization = 0.6\n", 1)
	s, err := Parse("d.toml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, 0.6, s.Config.GPUMemoryUtilization)
	cfg := disaggServeConfig(t, s)
	sm, err := s.Sim()
	require.NoError(t, err)
	mem, err := serve.SimMemory(s.Config, sm, serve.SGLang)
	require.NoError(t, err)
	assert.Equal(t, cfg.Disagg.Decode.Memory.KVCapacity, mem.KVCapacity, "predict's KV cache is simulate's decode pool's")

	require.NoError(t, s.SetMechanism("pool-mem-fraction", false))
	assert.Equal(t, base.Config.GPUMemoryUtilization, s.Config.GPUMemoryUtilization)
	require.NoError(t, s.SetMechanism("pool-mem-fraction", true))
	assert.Equal(t, 0.6, s.Config.GPUMemoryUtilization)
}

// TestPoolCaptureBudget: vLLM's capture sizes are checked against each
// disaggregated pool's own max_num_batched_tokens (the instance runs with
// --max-num-batched-tokens of the pool), not the scenario's 8192: [9000]
// with pools of 16384 and 10240 tokens loads, prices the decode pool's
// steps up to 9000 tokens with a graph and simulates; a pool whose budget
// holds no size is refused in one line at the pool's key; with
// pool-prefill-budget off, the scenario's budget refuses it.
func TestPoolCaptureBudget(t *testing.T) {
	src := strings.Replace(disaggScenario, `engine = "sglang"`, "engine = \"vllm\"\ncudagraph_capture_sizes = [9000]", 1)
	src = strings.Replace(src, "[disagg.prefill]\n", "[disagg.prefill]\nmax_num_batched_tokens = 16384\n", 1)
	src = strings.Replace(src, "[disagg.decode]\n", "[disagg.decode]\nmax_num_batched_tokens = 10240\n", 1)
	s, err := Parse("d.toml", []byte(src))
	require.NoError(t, err)
	assert.Zero(t, s.Config.CaptureSize, "the scenario's own budget, 8192, holds no size")
	assert.Equal(t, 9000, s.poolConfig(s.Disagg.Decode).CaptureSize, "the decode pool's 10240 holds 9000")
	assert.Equal(t, []int{9000}, s.poolConfig(s.Disagg.Decode).CaptureBatches)
	require.NoError(t, s.SetMechanism("capture-size", false))
	assert.Zero(t, s.poolConfig(s.Disagg.Decode).CaptureSize, "capture-size off")
	require.NoError(t, s.SetMechanism("capture-size", true))
	require.NoError(t, s.SetMechanism("graph-padding", false))
	assert.Nil(t, s.poolConfig(s.Disagg.Decode).CaptureBatches, "graph-padding off")
	require.NoError(t, s.SetMechanism("graph-padding", true))
	cfg := disaggServeConfig(t, s)
	cfg.Workload.Requests = 4
	_, err = serve.Run(cfg, cfg.Disagg.Decode.Coster)
	require.NoError(t, err)

	bad := strings.Replace(src, "max_num_batched_tokens = 10240", "max_num_batched_tokens = 4096", 1)
	_, err = Parse("d.toml", []byte(bad))
	require.Error(t, err)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "disagg.decode.max_num_batched_tokens", pe.Key)
	assert.NotZero(t, pe.Line)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "no size within max_num_batched_tokens 4096, got [9000] (vLLM on the decode pool would capture no CUDA graph")

	s, err = Parse("d.toml", []byte(src))
	require.NoError(t, err)
	require.NoError(t, s.SetMechanism("pool-prefill-budget", false))
	sm, err := s.Sim()
	require.NoError(t, err)
	_, err = s.ServeConfig(sm, s.Serving.Points()[0])
	assert.ErrorContains(t, err, "runtime.cudagraph_capture_sizes: no size within max_num_batched_tokens 8192, got [9000] (vLLM on the prefill pool", "off: the scenario's budget")
}

// TestPoolCaptureSeqs: vLLM's default capture limit is min(2 x
// max_num_seqs x (1 + K), 512) tokens of the instance's own max_num_seqs
// (vllm/config/vllm.py @ 09f030e, _set_cudagraph_sizes), so a decode pool
// started with max_num_seqs 256 under a scenario-wide 64 captures up to
// 512 tokens, not 128, and prices a decode step of 200 sequences a rank with its
// graph; the prefill pool, without its own, keeps the scenario's 128; with
// pool-max-seqs off both pools take the scenario's.
func TestPoolCaptureSeqs(t *testing.T) {
	src := strings.Replace(disaggScenario, `engine = "sglang"`, "engine = \"vllm\"\nmax_num_seqs = 64", 1)
	src = strings.Replace(src, "[disagg.decode]\n", "[disagg.decode]\nmax_num_seqs = 256\n", 1)
	s, err := Parse("d.toml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, 128, s.Config.CaptureSize, "the scenario's 64 sequences")
	dec := s.poolConfig(s.Disagg.Decode)
	assert.Equal(t, 512, dec.CaptureSize, "the decode pool's 256 sequences")
	require.NotEmpty(t, dec.CaptureBatches)
	assert.Equal(t, 512, dec.CaptureBatches[len(dec.CaptureBatches)-1])
	assert.Equal(t, 128, s.poolConfig(s.Disagg.Prefill).CaptureSize, "the prefill pool has no max_num_seqs of its own")
	own, err := sim.New(dec)
	require.NoError(t, err)
	ownStep, err := own.Step(8*200, 2048) // 200 a DP attention rank
	require.NoError(t, err)

	require.NoError(t, s.SetMechanism("pool-max-seqs", false))
	shared := s.poolConfig(s.Disagg.Decode)
	assert.Equal(t, 128, shared.CaptureSize, "pool-max-seqs off: the scenario's")
	sm, err := sim.New(shared)
	require.NoError(t, err)
	sharedStep, err := sm.Step(8*200, 2048)
	require.NoError(t, err)
	assert.Less(t, float64(ownStep.Step.Time), float64(sharedStep.Step.Time), "200 sequences replay a graph on the pool's own limit, run eagerly above the scenario's 128")
	require.NoError(t, s.SetMechanism("pool-max-seqs", true))
	assert.Equal(t, 512, s.poolConfig(s.Disagg.Decode).CaptureSize)
}

// TestDisaggDecodeLayoutErrorsNameThePoolKey: the scenario's own instance
// of a disaggregated scenario is a decode instance, so an error in its
// layout (Sim, which predict, simulate and plan build first) names
// disagg.decode's key at its line. Before, both rows read "parallel.ep:
// (not set in the file, its default)", a key the file does not have.
func TestDisaggDecodeLayoutErrorsNameThePoolKey(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, gpus, want string
	}{
		{"ep beyond the pool's GPUs", "tp = 8\nep = 8\ndp_attention", "tp = 8\nep = 16\ndp_attention", "gpus = 24", "d.toml:18: disagg.decode.ep: ep = 16 exceeds the 8 GPUs"},
		{"an expert split the checkpoint's blocks do not divide", "tp = 8\nep = 8\ndp_attention", "tp = 6\nep = 2\ndp_attention", "gpus = 22", "d.toml:18: disagg.decode.ep: routed_experts gate_up_proj"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(disaggScenario, "workers = 1\n"+tc.old, "workers = 1\n"+tc.new, 1)
			src = strings.Replace(src, "gpus = 24", tc.gpus, 1)
			require.NotEqual(t, disaggScenario, src)
			s, err := Parse("d.toml", []byte(src))
			if err == nil {
				_, err = s.Sim()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "parallel")
		})
	}
}
