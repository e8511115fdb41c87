package scenarios_test

import (
	"fmt"

	"github.com/moecast/moecast/scenarios"
)

// A scenario names a model, a box, a layout and a workload; Parse fills
// the defaults and validates it against the model.
func ExampleParse() {
	s, err := scenarios.Parse("mine.toml", []byte(`
name = "Qwen3-30B-A3B on 2x H100"
[model]
preset = "qwen3-30b-a3b"
[hardware]
gpu = "h100-sxm"
gpus = 2
calibration = "none"
[workload]
batch = [1, 32]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c := s.Config
	fmt.Println(s.Name)
	fmt.Printf("TP%d EP%d DP%d on %d GPUs, fabric %s (the GPU's usual one)\n", c.Layout.TP, c.Layout.EP, c.Layout.DP, c.GPUs, c.Fabric.Name)
	fmt.Println("batches", s.Batches, "context", s.Context, "cuda graphs", c.Graphs, "allreduce", c.AllReduce)
	// Output:
	// Qwen3-30B-A3B on 2x H100
	// TP2 EP1 DP1 on 2 GPUs, fabric nvlink4 (the GPU's usual one)
	// batches [1 32] context 2048 cuda graphs true allreduce auto
}

// Every error names the file, the line and the key.
func ExampleParse_error() {
	_, err := scenarios.Parse("mine.toml", []byte(`
[model]
preset = "kimi-k2.5"
[parallel]
tp = 8
pt = 8
`))
	fmt.Println(err)
	// Output:
	// mine.toml:6: unknown key "parallel.pt"
}
