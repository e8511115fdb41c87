// CONTRACT SKETCH (to be replaced by the real implementation): what the
// scenarios loader and the CLI call.
package sim

import (
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// SpecMethod is the speculative-decoding method: TOML speculative.method.
type SpecMethod uint8

const (
	SpecNone SpecMethod = iota
	SpecMTP
	SpecEAGLE3
	SpecNgram
)

// Spec configures speculative decoding.
type Spec struct {
	Method      SpecMethod
	DraftTokens int       // K
	Acceptance  []float64 // per-position conditional acceptance, len K (or 1 = same for all)
}

// Config is everything one decode-step evaluation depends on.
type Config struct {
	Model     *model.Config
	KVCache   dtype.KVCache
	GPU       kernels.GPU
	GPUs      int
	Fabric    comm.Fabric
	Layout    model.Layout
	Graphs    bool      // runtime.cuda_graphs
	AllReduce comm.Impl // runtime.allreduce
	// GPUMemoryUtilization is the fraction of GPU memory the engine may use
	// (vLLM gpu_memory_utilization).
	GPUMemoryUtilization float64
	Spec                 Spec
}

// FieldError is a configuration error tied to a scenario key such as
// "parallel.tp", so the loader can print the key's line.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Memory is the per-GPU memory picture at one point.
type Memory struct {
	Weights  unit.Bytes // per GPU
	KV       unit.Bytes // per GPU for this batch and context
	Free     unit.Bytes // usable memory left after weights and KV (negative: does not fit)
	MaxBatch int        // largest batch that fits at this context
}

// Point is the prediction for one (batch, context).
type Point struct {
	Batch, Context  int
	Step            cost.Estimate // the decode step (verify step with spec decode)
	TPOT            unit.Seconds  // Step / TokensPerStep
	TokensPerStep   float64       // expected tokens per sequence per step (1 without spec decode)
	TokensPerSecond float64       // batch x TokensPerStep / Step
	PerUser         float64       // TokensPerStep / Step
	Breakdown       [cost.NumCategories]cost.Estimate
	Memory          Memory
	Fits            bool
}

// Sim evaluates decode steps for one validated Config.
type Sim struct{}

func New(cfg Config) (*Sim, error)                    { panic("unimplemented") }
func (s *Sim) Step(batch, context int) (Point, error) { panic("unimplemented") }
