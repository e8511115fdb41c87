package tracegen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wire is the part of an event the tests check, decoded with encoding/json
// (independent of trace's scanner).
type wire struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	TS   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	ID   int64          `json:"id"`
	Args map[string]any `json:"args"`
}

type file struct {
	DistributedInfo struct {
		Rank      int `json:"rank"`
		WorldSize int `json:"world_size"`
	} `json:"distributedInfo"`
	DeviceProperties []map[string]any `json:"deviceProperties"`
	TraceEvents      []wire           `json:"traceEvents"`
	VLLMVersion      string           `json:"vllm_version"`
}

func generate(t *testing.T, cfg Config) ([]byte, Stats, file) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Write(&buf, cfg)
	require.NoError(t, err)
	var f file
	require.NoError(t, json.Unmarshal(buf.Bytes(), &f), "generated trace is not valid JSON")
	return buf.Bytes(), st, f
}

func TestWriteStructure(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rank, cfg.Steps, cfg.PythonEvents = 3, 2, 50
	raw, st, f := generate(t, cfg)

	assert.EqualValues(t, len(raw), st.Bytes)
	assert.EqualValues(t, len(f.TraceEvents), st.Events)
	assert.Equal(t, 3, f.DistributedInfo.Rank)
	assert.Equal(t, 8, f.DistributedInfo.WorldSize)
	assert.Len(t, f.DeviceProperties, 8)
	assert.Equal(t, "0.11.0", f.VLLMVersion)

	// Per step: 61 layers × 2 all-reduces; one cudaGraphLaunch whose
	// correlation every kernel of the step carries; one step annotation on
	// the CPU and one on the GPU.
	var launches []int64
	steps, gpuSteps, kernels, allReduces := 0, 0, 0, 0
	for _, e := range f.TraceEvents {
		switch {
		case e.Cat == "cuda_runtime" && e.Name == "cudaGraphLaunch":
			launches = append(launches, int64(e.Args["correlation"].(float64)))
		case e.Cat == "user_annotation" && e.Name == "execute_context_0(0)_generation_32(32)":
			steps++
		case e.Cat == "gpu_user_annotation":
			gpuSteps++
		case e.Cat == "kernel":
			kernels++
			require.NotEmpty(t, launches)
			assert.EqualValues(t, launches[len(launches)-1], e.Args["correlation"], "kernel %q", e.Name)
			assert.EqualValues(t, 3, e.Pid, "GPU events carry the device index")
			assert.EqualValues(t, 7, e.Tid)
			if strings.HasPrefix(e.Name, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL") {
				allReduces++
			}
		}
	}
	assert.Equal(t, 2, steps)
	assert.Equal(t, 2, gpuSteps)
	assert.Len(t, launches, 2)
	assert.Equal(t, 2*122, allReduces)
	assert.EqualValues(t, allReduces, st.AllReduces)
	assert.EqualValues(t, kernels, st.Kernels)
	assert.EqualValues(t, 2, st.Steps)
	// 1 dense layer (18 kernels), 60 MoE layers (25 each), 4 at the end.
	assert.Equal(t, 2*(18+60*25+4), kernels)
}

func TestWriteTimeline(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Steps, cfg.PythonEvents = 3, 0
	_, _, f := generate(t, cfg)
	// Kernels of a stream never overlap, and each lies inside its step's
	// gpu_user_annotation.
	var stepStart, stepEnd, lastEnd float64
	for _, e := range f.TraceEvents {
		switch e.Cat {
		case "gpu_user_annotation":
			require.GreaterOrEqual(t, e.TS, lastEnd)
			stepStart, stepEnd = e.TS, e.TS+e.Dur
		case "kernel":
			assert.GreaterOrEqual(t, e.TS, lastEnd, "%s overlaps the previous kernel", e.Name)
			assert.GreaterOrEqual(t, e.TS, stepStart)
			assert.LessOrEqual(t, e.TS+e.Dur, stepEnd+1e-6)
			assert.Greater(t, e.Dur, 0.0)
			lastEnd = e.TS + e.Dur
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Steps, cfg.PythonEvents = 1, 20
	a, _, _ := generate(t, cfg)
	b, _, _ := generate(t, cfg)
	assert.True(t, bytes.Equal(a, b), "same config, different output")
	cfg.Seed = 2
	c, _, _ := generate(t, cfg)
	assert.False(t, bytes.Equal(a, c), "the seed changes nothing")
}

func TestWriteTargetBytes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Steps, cfg.TargetBytes = 0, 3<<20
	raw, st, _ := generate(t, cfg)
	assert.GreaterOrEqual(t, len(raw), 3<<20)
	// It stops at the first step past the target: one step is ~1.5 MB.
	assert.Less(t, len(raw), 3<<20+3<<20)
	assert.Greater(t, st.Steps, int64(1))
}

func TestWriteRejectsBadConfig(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"rank outside world": func(c *Config) { c.Rank = 8 },
		"no steps nor size":  func(c *Config) { c.Steps = 0 },
		"zero batch":         func(c *Config) { c.Batch = 0 },
		"dense > layers":     func(c *Config) { c.DenseLayers = 62 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			mod(&cfg)
			_, err := Write(&bytes.Buffer{}, cfg)
			assert.Error(t, err)
		})
	}
}
