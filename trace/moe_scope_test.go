package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
)

func TestIsMoEScope(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"vllm::moe_forward", true},        // vLLM's FusedMoE custom op (cpu_op)
		{"vllm::moe_forward_shared", true}, // with a shared expert
		{"moe_forward", true},              // record_function in bench/moe-trace
		{"sglang::fused_moe", true},        //
		{"fused_experts", true},            //
		{"Qwen3MoeSparseMoeBlock", true},   // a module name
		{"aten::mm", false},                // the GEMM itself
		{"aten::index_add_", false},        //
		{"execute_context_0(0)_generation_8(8)", false},
		{"MoEGate", false}, // the router, outside the experts' scope
	} {
		assert.Equal(t, tc.want, isMoEScope(tc.name), tc.name)
	}
}

func cpuOp(name string, pid, tid int64, ts, dur float64) Event {
	return Event{Ph: PhaseComplete, Cat: CatCPUOp, Name: name, Pid: pid, Tid: tid, TS: timeFromMicros(ts), Dur: secondsFromMicros(dur)}
}

// A MoE layer run as a loop of plain GEMMs (one per expert) inside its
// scope: the GEMM, activation and copy kernels launched inside count as
// MoE with their rule's op label; the router GEMM before it and the
// attention and collective kernels inside stay what their rules say.
func TestMoEScopeReclassifies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope Event
	}{
		{"record_function (user_annotation)", ann("moe_forward", 1, 1, 20, 60, 0)},
		{"custom op (cpu_op)", cpuOp("vllm::moe_forward", 1, 1, 20, 60)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, Options{},
				ann("execute_context_1(64)_generation_0(0)", 1, 1, 0, 100, 1),
				tc.scope,
				launch("cudaLaunchKernel", 1, 1, 10, 1), // router gate, before the scope
				launch("cudaLaunchKernel", 1, 1, 25, 2), // expert 0 gate_up
				launch("cudaLaunchKernel", 1, 1, 30, 3), // its SiLU
				launch("cudaLaunchKernel", 1, 1, 35, 4), // expert 0 down
				launch("cudaLaunchKernel", 1, 1, 40, 5), // an all-reduce inside stays one
				launch("cudaLaunchKernel", 1, 1, 90, 6), // o_proj of the next layer
				kern("nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT", 7, 110, 5, 1),
				kern("nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT", 7, 120, 6, 2),
				kern("void at::native::elementwise_kernel<128, 4, silu_kernel>", 7, 130, 2, 3),
				kern("nvjet_sm90_tst_16x64_64x16_4x1_v_bz_TNN", 7, 140, 4, 4),
				kern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", 7, 150, 3, 5),
				kern("nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT", 7, 160, 5, 6),
			)
			require.Len(t, res.Steps, 1)
			s := res.Steps[0]
			assert.InDelta(t, 10, s.ByCategory[cost.GEMM].Us(), tol, "router gate and o_proj")
			assert.InDelta(t, 12, s.ByCategory[cost.MoE].Us(), tol, "the expert loop")
			assert.InDelta(t, 3, s.ByCategory[cost.AllReduce].Us(), tol)
			assert.Zero(t, s.ByCategory[cost.Elementwise])
			ops := map[string]string{}
			for _, k := range s.Kernels {
				if k.Category == cost.MoE {
					ops[k.Name] = k.Op
				}
			}
			assert.Equal(t, "cublas_nvjet", ops["nvjet_sm90_tst_16x64_64x16_4x1_v_bz_TNN"], "the rule's op label stays")
			assert.Equal(t, "activation", ops["void at::native::elementwise_kernel<128, 4, silu_kernel>"])
		})
	}
}

// The tinymoe prefill trace (bench/moe-trace): the per-expert loop's
// kernels are MoE, cuDNN SDPA is attention, and only the 3 projections of
// each of the 8 layers and lm_head are dense GEMMs.
func TestMoEScopeTinyMoETrace(t *testing.T) {
	fr := analyzeTestdata(t, "tinymoe_prefill_1024.json.gz", Options{})
	require.Len(t, fr.Result.Steps, 2)
	s := fr.Result.Steps[0]
	gemm, moeGEMM, att := 0, 0, 0
	for _, k := range s.Kernels {
		switch {
		case k.Category == cost.GEMM:
			gemm += k.Count
		case k.Category == cost.MoE && k.Op == "cublas_nvjet":
			moeGEMM += k.Count
		case k.Category == cost.Attention && k.Op == "cudnn_sdpa":
			att += k.Count
		}
	}
	assert.Equal(t, 3*8+1, gemm, "qkv_proj, o_proj, router gate per layer and lm_head")
	assert.Greater(t, moeGEMM, 8*2*16, "two GEMMs per active expert per layer")
	assert.Equal(t, 8, att, "one cuDNN SDPA kernel per layer")
}
