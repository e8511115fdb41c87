package serve_test

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/serve"
)

// flat prices a step at 10 ms plus 0.1 ms per decode and 25 us per prefill
// token, all as GEMM time.
type flat struct{}

func (flat) StepCost(seqs []serve.Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	t := 10e-3
	for _, s := range seqs {
		if s.Prefill {
			t += 25e-6 * float64(s.Query)
		} else {
			t += 1e-4 * float64(s.Query)
		}
	}
	var c [cost.NumCategories]unit.Seconds
	c[cost.GEMM] = unit.Seconds(t)
	return unit.Seconds(t), c
}

// A closed loop of 64 requests at concurrency 8 (vllm bench serve
// --max-concurrency 8 --request-rate inf --num-prompts 64 --ignore-eos) on
// vLLM's defaults for an H200. The eight prompts fill one 8192-token
// step, so the requests run in lockstep waves of 1 prefill step
// (TTFT = 10 + 8192 x 0.025 ms) and 127 decode steps (TPOT = 10 + 8 x 0.1
// ms); 8 waves of 128 steps. The API server's tokenisation is left out
// (FrontEnd zero, the default): with it the requests reach the engine one
// by one and the waves break up.
func ExampleRun() {
	cfg := serve.DefaultConfig(serve.VLLM, "NVIDIA H200", 141e9)
	cfg.Memory.KVBytesPerToken = 70e3
	cfg.Memory.KVCapacity = 40e9
	cfg.Workload = serve.Workload{Requests: 64, MaxConcurrency: 8, RequestRate: math.Inf(1), Burstiness: 1,
		InputTokens: 1024, OutputTokens: 128}
	r, err := serve.Run(cfg, flat{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("budget %d tokens, max %d seqs\n", cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs)
	fmt.Printf("duration %.2f s, %d completed, %.0f output tok/s\n", float64(r.Duration), r.Completed, r.OutputThroughput)
	fmt.Printf("TTFT mean %.1f ms, TPOT mean %.2f ms, ITL p99 %.2f ms\n", r.TTFT.Mean.Ms(), r.TPOT.Mean.Ms(), r.ITL.P99.Ms())
	fmt.Printf("mean batch %.2f, %d steps (%d mixed), %d preemptions\n", r.MeanBatch, r.Steps, r.MixedSteps, r.Preemptions)
	// Output:
	// budget 8192 tokens, max 1024 seqs
	// duration 12.69 s, 64 completed, 645 output tok/s
	// TTFT mean 214.8 ms, TPOT mean 10.80 ms, ITL p99 10.80 ms
	// mean batch 8.00, 1024 steps (0 mixed), 0 preemptions
}
