package trace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
)

// Kernel names as they appear in traces: from the traces in testdata
// (AMD-AGI/TraceLens @ 171dd74 and facebookresearch/HolisticTraceAnalysis
// @ f4d0062, see testdata/ATTRIBUTION), deepseek-ai/profile-data @ 4496024
// train.json, and the kernel names of the vLLM, SGLang, FlashInfer,
// TRT-LLM and FlashMLA sources. Each row states the expected
// category and op of the default rules.
func TestClassifyDefaultRules(t *testing.T) {
	tests := []struct {
		name string // row name
		kern string // kernel name
		cat  cost.Category
		op   string
	}{
		// collectives
		{"nccl new allreduce", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)", cost.AllReduce, "nccl"},
		{"nccl new allgather (B200 trace)", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", cost.AllGather, "nccl"},
		{"nccl new reducescatter", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", cost.ReduceScatter, "nccl"},
		{"nccl old allreduce (HTA trace)", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", cost.AllReduce, "nccl"},
		{"nccl old sendrecv", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", cost.AllToAll, "nccl"},
		{"nccl broadcast has no category", "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", cost.Other, "nccl"},
		{"nccl generic", "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", cost.Other, "nccl"},
		{"vllm custom AR 1stage", "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", cost.AllReduce, "custom_ar"},
		{"vllm custom AR 2stage", "void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", cost.AllReduce, "custom_ar"},
		{"symm-mem multimem (B200 trace)", "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)", cost.AllReduce, "symm_mem"},
		{"trtllm AR fusion", "void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8>(...)", cost.AllReduce, "trtllm_ar_fusion"},
		{"trtllm AR two shot", "void all_reduce_two_shot_kernel<__nv_bfloat16, 8>(...)", cost.AllReduce, "trtllm_ar"},
		{"quickreduce", "void quickreduce::allreduce_prototype_twoshot<AllReduceTwoshot<__half, CodecQ4<__half,4>, true>, __half>(...)", cost.AllReduce, "quickreduce"},
		{"deepep dispatch", "void dpsk::ep::internode::dispatch<false, 8, false, 8>(int4*, float*)", cost.AllToAll, "deepep"},
		{"deepep ll combine", "void deep_ep::internode_ll::combine<8, 7168>(void*)", cost.AllToAll, "deepep"},
		// MoE
		{"marlin moe", "void marlin_moe_wna16::Marlin<1125899906909960l, 562949953487106l, 1125899906909960l, 2814749767106568l, 128, 4, 8, 4, false, 4, 2, false>(int4 const*)", cost.MoE, "marlin_moe"},
		{"triton fused moe", "fused_moe_kernel", cost.MoE, "triton_fused_moe"},
		{"triton fused moe gptq", "fused_moe_kernel_gptq_awq", cost.MoE, "triton_fused_moe"},
		{"moe align", "void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*)", cost.MoE, "routing"},
		{"moe align old", "void vllm::moe_align_block_size_kernel<int>(int const*)", cost.MoE, "routing"},
		{"count and sort", "void vllm::moe::count_and_sort_expert_tokens_kernel<int>(int const*)", cost.MoE, "routing"},
		{"moe sum", "void vllm::moe::moe_sum_kernel<c10::BFloat16, 4>(c10::BFloat16*)", cost.MoE, "routing"},
		{"topk softmax", "void vllm::moe::topkGatingSoftmax<float, 8, 128>(float const*)", cost.MoE, "routing"},
		{"sglang moe sum reduce", "void moe_sum_reduce_warp_per_token_vec_kernel<8>(...)", cost.MoE, "routing"},
		{"triton_kernels matmul_ogs (gpt-oss)", "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", cost.MoE, "matmul_ogs"},
		{"triton_kernels routing", "_combined_routing_compute", cost.MoE, "routing"},
		{"triton_kernels topk", "_topk_forward", cost.MoE, "routing"},
		{"inductor moe glue", "triton_poi_fused_constant_pad_nd_moe_forward_0", cost.MoE, "glue"},
		{"trtllm-gen moe routing", "void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(...)", cost.MoE, "trtllm_moe"},
		{"trtllm-gen moe bmm", "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f", cost.MoE, "trtllm_gen_bmm"},
		{"cutlass grouped moe gemm (vLLM fp8 on Hopper)", "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, ...>>(...)", cost.MoE, "grouped_gemm"},
		{"vllm shuffle rows", "void vllm::moe::shuffle_rows_kernel<__nv_bfloat16>(...)", cost.MoE, "routing"},
		// attention
		{"triton MLA stage1", "_fwd_grouped_kernel_stage1", cost.Attention, "triton_mla_decode"},
		{"triton MLA stage2", "_fwd_kernel_stage2", cost.Attention, "triton_mla_decode"},
		{"flashmla", "void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>>(...)", cost.Attention, "flashmla"},
		{"flashmla combine", "void flash::flash_fwd_splitkv_mla_combine_kernel<cutlass::bfloat16_t, float, 512, 32>(...)", cost.Attention, "flashmla"},
		{"flashmla metadata", "get_mla_metadata_kernel(...)", cost.Attention, "flashmla"},
		{"flashinfer mla", "void flashinfer::mla::BatchMLAPagedAttentionKernel<flashinfer::mla::KernelTraits<true, 2, 64>>(...)", cost.Attention, "flashinfer_mla"},
		{"cutlass mla sm100", "void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaMlaKernelTmaWarpspecialized<...>>(...)", cost.Attention, "mla"},
		{"trtllm-gen mla", "fmhaSm100fKernel_QkvBfloat16OBfloat16HQk576HV512PagedKvDenseP64MultiCtasKvCgaVarSeqQ8Kv128StaticSwapsAbForGen", cost.Attention, "mla"},
		{"trtllm fmha (B200 trace)", "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", cost.Attention, "trtllm_fmha"},
		{"flash attn 3", "void flash::compute_attn_ws<Flash_fwd_kernel_traits<192, 128, 128, 12, 2, false, 1, cutlass::bfloat16_t, 128>, true>(...)", cost.Attention, "flash_attn"},
		{"flashinfer decode", "void flashinfer::BatchDecodeWithPagedKVCacheKernel<...>(...)", cost.Attention, "flashinfer"},
		{"ROCm paged attention (SGLang trace)", "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >(...)", cost.Attention, "paged"},
		{"triton unified attention (vLLM ROCm trace)", "kernel_unified_attention_3d", cost.Attention, "triton_unified"},
		{"triton unified attention reduce", "reduce_segments", cost.Attention, "triton_unified"},
		{"ck fmha prefill", "_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmhaBatchPrefillPipelineQRKSVSAsync", cost.Attention, "ck_fmha"},
		{"cudnn sdpa (PyTorch 2.11 SDPA on H200, tinymoe traces)", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0", cost.Attention, "cudnn_sdpa"},
		{"cudnn sdpa backward", "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x128x128_4x1x1_cga1x1x1_kernel0_0", cost.Attention, "cudnn_sdpa"},
		{"flash attn 2 (pytorch build)", "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", cost.Attention, "flash_attn"},
		{"flash attn 2 splitkv (vllm-flash-attn)", "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, true, false, false>(flash::Flash_fwd_params)", cost.Attention, "flash_attn"},
		{"flash attn 3 sm90", "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, false, false, true, true, false, true, false, false>>>>(...)", cost.Attention, "flash_attn"},
		{"flashinfer prefill", "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 1u, 4u, 8u, 8u, 1u, 4u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::BatchPrefillPagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(...)", cost.Attention, "flashinfer"},
		{"flashinfer sm90 prefill", "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::AttentionKernelTraits<false, 128, 128, 128, 2, __nv_bfloat16, __nv_bfloat16, int, flashinfer::StandardAttention>, true, (flashinfer::MaskMode)1, flashinfer::DefaultVariant>(...)", cost.Attention, "flashinfer"},
		{"trtllm fmha v2 context", "fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled", cost.Attention, "trtllm_fmha"},
		{"trtllm xqa decode", "void kernel_mha<__nv_bfloat16, 8u>(unsigned int, float, ...)", cost.Attention, "trtllm_xqa"},
		{"trtllm mmha", "void tensorrt_llm::kernels::mmha::masked_multihead_attention_kernel<__nv_bfloat16, 128, 4, 128, false>(...)", cost.Attention, "trtllm_xqa"},
		{"triton prefix prefill (vLLM)", "_fwd_kernel", cost.Attention, "triton_attention"},
		{"triton attention (tutorial/aiter)", "_attn_fwd", cost.Attention, "triton_attention"},
		{"pytorch mem-efficient", "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", cost.Attention, "mem_efficient"},
		// dense GEMM
		{"marlin dense", "void marlin::Marlin<256, 1, 8, 8, 4, 8>(int4 const*)", cost.GEMM, "marlin"},
		{"marlin repack", "void marlin::gptq_marlin_repack_kernel<256, 4, false, false>(...)", cost.Other, "repack"},
		{"nvjet", "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", cost.GEMM, "cublas_nvjet"},
		{"sm90 xmma", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", cost.GEMM, "cublas"},
		{"ampere gemm", "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", cost.GEMM, "cublas"},
		{"cutlass 80 on sm120", "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_s16816gemm_bf16_64x64_64x6_tn_align8::Params)", cost.GEMM, "cublas"},
		{"hipblaslt Cijk", "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1", cost.GEMM, "hipblaslt"},
		{"w8a8 block fp8", "_w8a8_block_fp8_matmul", cost.GEMM, "gemm"},
		// elementwise
		{"rms norm", "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*)", cost.Elementwise, "norm"},
		{"fused add rms norm with enable_if prefix", "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", cost.Elementwise, "norm"},
		{"flashinfer rmsnorm", "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(...)", cost.Elementwise, "norm"},
		{"aiter add rmsnorm quant", "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib", cost.Elementwise, "norm"},
		{"rotary", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", cost.Elementwise, "rotary"},
		{"silu and mul", "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(...)", cost.Elementwise, "activation"},
		{"kv write", "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(...)", cost.Elementwise, "kv_cache_write"},
		{"mla kv write", "void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(...)", cost.Elementwise, "kv_cache_write"},
		{"sglang kv write", "void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)", cost.Elementwise, "kv_cache_write"},
		{"sglang group quant", "void sglang::per_token_group_quant_flat_kernel<__nv_bfloat16>(...)", cost.Elementwise, "quant"},
		{"torch copy", "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)>>(...)", cost.Elementwise, "torch"},
		{"inductor pointwise", "triton_poi_fused__to_copy_1", cost.Elementwise, "inductor"},
		// sampling
		{"argmax", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(...)", cost.Sampling, "argmax"},
		{"vllm top-p mask", "void vllm::mask_top_p_kernel(...)", cost.Sampling, "sampler"},
		{"flashinfer sampling", "void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)2>(...)", cost.Sampling, "sampler"},
		// copies
		{"memcpy", "Memcpy DtoD (Device -> Device)", cost.Other, "memcpy"},
		{"memset", "Memset (Device)", cost.Other, "memset"},
		{"unknown", "my_custom_kernel_xyz", cost.Other, "unclassified"},
	}
	c := NewClassifier(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Classify(tt.kern)
			assert.Equal(t, tt.cat.String(), got.Category.String(), "kernel %q", tt.kern)
			assert.Equal(t, tt.op, got.Op, "kernel %q", tt.kern)
			assert.Equal(t, tt.op != "unclassified", got.Matched)
		})
	}
}

func TestClassifierCachesPerName(t *testing.T) {
	c := NewClassifier(nil)
	first := c.Classify("nvjet_tst_64x64")
	require.Len(t, c.cache, 1)
	// A second call hits the cache: same result, no new entry.
	assert.Equal(t, first, c.Classify("nvjet_tst_64x64"))
	assert.Len(t, c.cache, 1)
}

func TestRulesOverrideTakesPrecedence(t *testing.T) {
	user, err := ParseRules("mine.toml", []byte(`
# route NCCL all-reduce to "other" and teach a new kernel
[[rule]]
match = "^ncclDevKernel_AllReduce"
category = "other"
op = "mine"

[[rule]]
match = "my_custom_kernel"
category = "moe"
op = "custom"
`))
	require.NoError(t, err)
	require.Equal(t, 2, user.Len())
	assert.Equal(t, 3, user.List()[0].Line)
	assert.Equal(t, 8, user.List()[1].Line)
	c := NewClassifier(DefaultRules().WithOverrides(user))
	got := c.Classify("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)")
	assert.Equal(t, cost.Other, got.Category)
	assert.Equal(t, "mine", got.Op)
	assert.Equal(t, cost.MoE, c.Classify("my_custom_kernel<1>").Category)
	// defaults still apply to the rest
	assert.Equal(t, cost.AllGather, c.Classify("ncclDevKernel_AllGather_RING_LL(x)").Category)
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // substring of the error, with file:line
	}{
		{"bad regex", "[[rule]]\nmatch = \"(\"\ncategory = \"gemm\"\n", "r.toml:1: rule 1: match: error parsing regexp"},
		{"unknown category", "\n[[rule]]\nmatch = \"x\"\ncategory = \"conv\"\n", "r.toml:2: rule 1: unknown category \"conv\""},
		{"idle is not a rule category", "[[rule]]\nmatch = \"x\"\ncategory = \"idle\"\n", "r.toml:1: rule 1: unknown category \"idle\""},
		{"missing match", "[[rule]]\nmatch = \"a\"\ncategory = \"gemm\"\n\n[[rule]]\ncategory = \"gemm\"\n", "r.toml:5: rule 2: missing match"},
		{"missing category", "[[rule]]\nmatch = \"a\"\n", "r.toml:1: rule 1: missing category"},
		{"unknown key", "[[rule]]\nmatch = \"a\"\ncategory = \"gemm\"\npriority = 3\n", "r.toml:4: unknown key \"rule.priority\""},
		{"syntax", "[[rule]]\nmatch = \"a\ncategory = \"gemm\"\n", "r.toml:2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules("r.toml", []byte(tt.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDefaultRulesParse(t *testing.T) {
	rs, err := ParseRules("rules.toml", []byte(defaultRulesTOML))
	require.NoError(t, err)
	assert.Greater(t, rs.Len(), 40)
	for _, r := range rs.List() {
		assert.NotEmpty(t, r.Op, "rule at rules.toml:%d has no op", r.Line)
		assert.Positive(t, r.Line)
	}
}

func TestCollectiveCategory(t *testing.T) {
	for in, want := range map[string]cost.Category{
		"allreduce": cost.AllReduce, "_allgather_base": cost.AllGather, "all_gather_into_tensor": cost.AllGather,
		"reduce_scatter_tensor": cost.ReduceScatter, "all_to_all": cost.AllToAll, "alltoall_base": cost.AllToAll,
	} {
		got, ok := collectiveCategory(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := collectiveCategory("broadcast")
	assert.False(t, ok)
}

func BenchmarkClassifyCached(b *testing.B) {
	c := NewClassifier(nil)
	names := []string{
		"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
		"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT",
		strings.Repeat("x", 300),
	}
	for _, n := range names {
		c.Classify(n)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Classify(names[i%len(names)])
	}
}
