package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
)

// CheckFinite stands behind the reader: a non-finite number anywhere in a
// file's result is an error naming the file and the number.
func TestCheckFinite(t *testing.T) {
	good := func() trace.FileResult {
		st := trace.StepResult{Index: 3, Wall: 10, Busy: 8, Idle: 2}
		st.ByCategory[cost.GEMM] = 8
		res := &trace.Result{Steps: []trace.StepResult{st}, Kernels: []trace.KernelStat{{Name: "k", Count: 1, Total: 8}}}
		return trace.FileResult{File: "r0.json", Result: res, Summary: trace.Summarize(res.Steps)}
	}
	nan, inf := unit.Seconds(math.NaN()), unit.Seconds(math.Inf(1))
	tests := []struct {
		name  string
		spoil func(*trace.FileResult)
		msg   string // "" when fine
	}{
		{"finite", func(*trace.FileResult) {}, ""},
		{"no result", func(fr *trace.FileResult) { fr.Result = nil }, ""},
		{"step wall", func(fr *trace.FileResult) { fr.Result.Steps[0].Wall = inf }, "r0.json: step 3 wall time is +Inf"},
		{"step idle", func(fr *trace.FileResult) { fr.Result.Steps[0].Idle = nan }, "r0.json: step 3 idle time is NaN"},
		{"step category", func(fr *trace.FileResult) { fr.Result.Steps[0].ByCategory[cost.Idle] = nan }, "r0.json: step 3 idle time is NaN"},
		{"step exposed", func(fr *trace.FileResult) { fr.Result.Steps[0].Exposed[cost.GEMM] = -inf }, "step 3 gemm time is -Inf"},
		{"kernel", func(fr *trace.FileResult) { fr.Result.Kernels[0].Total = inf }, `total time of kernel "k" is +Inf`},
		{"median", func(fr *trace.FileResult) { fr.Summary.Median = nan }, "step time percentile is NaN"},
		{"p90", func(fr *trace.FileResult) { fr.Summary.P90 = inf }, "step time percentile is +Inf"},
		{"share", func(fr *trace.FileResult) { fr.Summary.Share[cost.GEMM] = math.NaN() }, "gemm summary is NaN"},
		{"summary exposed", func(fr *trace.FileResult) { fr.Summary.Exposed[cost.Idle] = inf }, "idle summary is +Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := good()
			tc.spoil(&fr)
			err := CheckFinite(fr)
			if tc.msg == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "not a finite number")
		})
	}
}

func TestShortKernelName(t *testing.T) {
	tests := map[string]string{
		"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*, c10::BFloat16 const*, int)":                           "vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<…>, true>",
		"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)": "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>",
		"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)":                                                                                          "ncclDevKernel_AllGather_RING_LL",
		"Memcpy DtoD (Device -> Device)":               "Memcpy DtoD (Device -> Device)",
		"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT": "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT",
	}
	for in, want := range tests {
		assert.Equal(t, want, shortKernelName(in), in)
	}
	long := shortKernelName("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0")
	assert.Len(t, []rune(long), maxKernelName)
}
