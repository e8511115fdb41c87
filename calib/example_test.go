package calib_test

import (
	"fmt"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
)

// The embedded H200 calibration answers a Kimi-K2.5 MoE layer (INT4 W4A16
// routed experts, EP8) at one token of a vLLM run from vLLM's own measured
// row and of an SGLang run from SGLang's (the source policy: the
// scenario's engine's table outranks another engine's, and both outrank
// calib gpu's proxy table), and a decode all-reduce of one token (7168 x
// bf16) from vLLM's CUDA-graph table.
func ExampleEmbedded() {
	f, err := calib.Embedded("h200-sxm")
	if err != nil || f == nil {
		fmt.Println("no calibration:", err)
		return
	}
	moe := kernels.MoEShape{Tokens: 1, GlobalTokens: 1, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048,
		MoETP: 1, EP: 8, Weight: dtype.INT4G32}
	for _, engine := range []string{"vllm", "sglang"} {
		moe.Engine = engine
		e, ok := f.KernelTables().MoE(moe)
		fmt.Println(ok, e.Time, e.Source.Table)
		fmt.Println("  chosen:", e.Source.Policy)
	}
	ar, ok := f.CommTables().AllReduce(comm.OneShot, 8, 14336)
	fmt.Println(ok, ar.Time, ar.Source.Table)
	// Output:
	// true 56.2us embedded:h200-sxm#moe.vllm-0.24.0.int4_wo.e384.k8.h7168.i2048.balanced
	//   chosen: perfdb vllm 0.24.0 moe rows (measured on the scenario's engine: outranks the proxy kernels)
	// true 32.3us embedded:h200-sxm#moe.sglang-0.5.14.int4_wo.e384.k8.h7168.i2048.balanced
	//   chosen: perfdb sglang 0.5.14 moe rows (measured on the scenario's engine: outranks the proxy kernels)
	// true 5.2us embedded:h200-sxm#allreduce.vllm.graph
}
