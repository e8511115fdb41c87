package trace_test

import (
	"fmt"

	"github.com/moecast/moecast/trace"
)

// Classify kernel names with the embedded rules; the decision is cached per
// name.
func ExampleClassifier() {
	c := trace.NewClassifier(trace.DefaultRules())
	for _, name := range []string{
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
		"_fwd_grouped_kernel_stage1",
		"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
		"my_kernel",
	} {
		cl := c.Classify(name)
		fmt.Println(cl.Category, cl.Op)
	}
	// Output:
	// allreduce nccl
	// allreduce custom_ar
	// attention triton_mla_decode
	// elementwise norm
	// other unclassified
}
