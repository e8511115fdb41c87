package scenarios

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/sim"
)

// TestShipped loads every shipped scenario, from the binary and from disk,
// and runs every batch point of it: the step must be positive and finite,
// its parts must add up to it, and the interval must hold it.
func TestShipped(t *testing.T) {
	names := Names()
	require.GreaterOrEqual(t, len(names), 6)
	assert.Contains(t, names, DefaultName)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			emb, err := Embedded(name)
			require.NoError(t, err)
			disk, err := Load(name + ".toml")
			require.NoError(t, err)
			assert.Equal(t, emb.Config.Layout, disk.Config.Layout)
			assert.Equal(t, emb.Batches, disk.Batches)
			assert.Equal(t, emb.Config.Model.Architecture, disk.Config.Model.Architecture)
			assert.NotEmpty(t, emb.Name)
			sm, err := emb.Sim()
			require.NoError(t, err)
			var prev sim.Point
			for i, b := range emb.Batches {
				p, err := sm.Step(b, emb.Context)
				require.NoError(t, err, "batch %d", b)
				step := float64(p.Step.Time)
				require.True(t, step > 0 && !math.IsInf(step, 0), "batch %d: step %v", b, p.Step.Time)
				var sum unit.Seconds
				for c := cost.Category(0); c < cost.NumCategories; c++ {
					sum += p.Breakdown[c].Time
				}
				assert.InEpsilon(t, step, float64(sum), 1e-9, "batch %d: breakdown sums to %v, step %v", b, sum, p.Step.Time)
				if p.Step.Lo != 0 || p.Step.Hi != 0 {
					assert.LessOrEqual(t, float64(p.Step.Lo), step*(1+1e-12), "batch %d", b)
					assert.GreaterOrEqual(t, float64(p.Step.Hi), step*(1-1e-12), "batch %d", b)
				}
				if i > 0 && b > prev.Batch {
					assert.GreaterOrEqual(t, step, float64(prev.Step.Time), "step time is monotone in batch (%d -> %d)", prev.Batch, b)
					assert.GreaterOrEqual(t, p.TokensPerSecond, prev.TokensPerSecond*(1-1e-9), "throughput does not fall with batch (%d -> %d)", prev.Batch, b)
				}
				prev = p
			}
		})
	}
}

func TestDefault(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	c := s.Config
	assert.Equal(t, "Kimi-K2.5 INT4 on 8x RTX PRO 6000 (PCIe), vLLM TP8 EP8", s.Name)
	assert.Equal(t, "embedded:kimi-k2.5-rtx-pro-6000-pcie-tp8.toml", s.File)
	assert.Equal(t, "kimi-k2.5", s.ModelRef)
	assert.Equal(t, "rtx-pro-6000-server", c.GPU.Name)
	assert.Equal(t, "pcie-gen5", c.Fabric.Name)
	assert.Equal(t, 8, c.GPUs)
	assert.Equal(t, 8, c.Layout.TP)
	assert.Equal(t, 8, c.Layout.EP)
	assert.Equal(t, 1, c.Layout.DP)
	assert.False(t, c.Layout.DPAttention)
	assert.True(t, c.Graphs)
	assert.Equal(t, comm.Auto, c.AllReduce)
	assert.InDelta(t, 0.90, c.GPUMemoryUtilization, 1e-12)
	assert.Equal(t, dtype.KVBF16, c.KVCache)
	assert.Equal(t, []int{1, 2, 4, 8, 16, 32, 64, 128}, s.Batches)
	assert.Equal(t, 2048, s.Context)
	assert.Equal(t, sim.SpecNone, c.Spec.Method)
	assert.Equal(t, 18, s.Line("parallel.tp"), "line of parallel.tp in the file")
	assert.Equal(t, 17, s.Line("parallel.dp"), "absent key: the line of its table")
	assert.True(t, s.Given("parallel.ep"))
	assert.False(t, s.Given("parallel.dp"))
}

// minimal is the smallest complete scenario; tests edit it.
const minimal = `name = "t"
[model]
preset = "kimi-k2.5"
[hardware]
gpu = "rtx-pro-6000-server"
gpus = 8
fabric = "pcie-gen5"
calibration = "none"
[parallel]
tp = 8
ep = 8
`

func TestDefaults(t *testing.T) {
	s, err := Parse("t.toml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, DefaultBatches, s.Batches)
	assert.Equal(t, DefaultContext, s.Context)
	assert.Equal(t, 1, s.Config.Layout.DP, "dp = gpus / tp")
	assert.True(t, s.Config.Graphs)
	assert.Equal(t, comm.Auto, s.Config.AllReduce)
	assert.InDelta(t, DefaultGPUMemoryUtilization, s.Config.GPUMemoryUtilization, 0)
	assert.Equal(t, []string{"none"}, s.Calibration)

	// tp defaults to gpus / dp.
	s, err = Parse("t.toml", []byte(strings.Replace(minimal, "tp = 8\nep = 8\n", "ep = 8\n", 1)))
	require.NoError(t, err)
	assert.Equal(t, 8, s.Config.Layout.TP)
}

// TestCustomGPUArch: a well-formed architecture moecast has no facts for
// (sm_89, an AMD gfx target) is taken with the defaults.
func TestCustomGPUArch(t *testing.T) {
	for _, a := range []string{"sm_89", "sm_90", "sm_120", "gfx942", "gfx90a"} {
		s, err := Parse("t.toml", []byte(minimal+"[hardware.custom_gpu]\narch = \""+a+"\"\n"))
		require.NoError(t, err, a)
		assert.Equal(t, kernels.Arch(a), s.Config.GPU.Arch)
	}
}

func TestCustomGPU(t *testing.T) {
	src := strings.Replace(minimal, `gpu = "rtx-pro-6000-server"`, "", 1) + `
[hardware.custom_gpu]
name = "my-gpu"
memory = "96GB"
bandwidth = "1.792TB/s"
bf16 = "500TFLOPS"
fp8 = "1PFLOPS"
l2 = "128MB"
sms = 188
`
	s, err := Parse("t.toml", []byte(src))
	require.NoError(t, err)
	g := s.Config.GPU
	assert.Equal(t, "my-gpu", g.Name)
	assert.InEpsilon(t, 96e9, float64(g.Memory), 1e-12)
	assert.InEpsilon(t, 1.792e12, float64(g.MemBW), 1e-12)
	assert.InEpsilon(t, 500e12, float64(g.Peak[dtype.BF16]), 1e-12)
	assert.InEpsilon(t, 1e15, float64(g.Peak[dtype.FP8]), 1e-12)
	assert.InEpsilon(t, 128e6, float64(g.L2), 1e-12)
	assert.Equal(t, 188, g.SMs)

	// Overrides of a preset keep the preset's other figures.
	src = minimal + "[hardware.custom_gpu]\nmemory = \"48GiB\"\n"
	s, err = Parse("t.toml", []byte(src))
	require.NoError(t, err)
	assert.InEpsilon(t, 48*float64(unit.GiB), float64(s.Config.GPU.Memory), 1e-12)
	assert.Positive(t, float64(s.Config.GPU.MemBW))
}

func TestFabric(t *testing.T) {
	// Without hardware.fabric, the GPU's usual fabric.
	s, err := Parse("t.toml", []byte(strings.Replace(minimal, `fabric = "pcie-gen5"`, "", 1)))
	require.NoError(t, err)
	assert.Equal(t, "pcie-gen5", s.Config.Fabric.Name)

	src := strings.Replace(minimal, `fabric = "pcie-gen5"`, "", 1) + `
[hardware.custom_fabric]
name = "pcie-gen6"
bandwidth = "128GB/s"
latency = "1.5us"
bus_bandwidth = "50GB/s"
alltoall_bandwidth = "36GB/s"
p2p_bandwidth = "100GB/s"
custom_allreduce_latency = "6us"
p2p = true
`
	s, err = Parse("t.toml", []byte(src))
	require.NoError(t, err)
	f := s.Config.Fabric
	assert.Equal(t, "pcie-gen6", f.Name)
	assert.InEpsilon(t, 128e9, float64(f.BW), 1e-12)
	assert.InEpsilon(t, 1.5e-6, float64(f.Latency), 1e-12)
	assert.InEpsilon(t, 50e9, float64(f.BusBW), 1e-12)
	assert.InEpsilon(t, 36e9, float64(f.AllToAllBW), 1e-12)
	assert.InEpsilon(t, 100e9, float64(f.P2PBW), 1e-12)
	assert.InEpsilon(t, 6e-6, float64(f.CustomARLatency), 1e-12)
	assert.True(t, f.P2P)
	assert.False(t, f.NVLink)

	// Overrides of a preset keep its other figures.
	s, err = Parse("t.toml", []byte(minimal+"[hardware.custom_fabric]\nlatency = \"3us\"\n"))
	require.NoError(t, err)
	assert.InEpsilon(t, 3e-6, float64(s.Config.Fabric.Latency), 1e-12)
	assert.Positive(t, float64(s.Config.Fabric.BusBW))
}

func TestRelativeConfig(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("configs/qwen3-235b-a22b-fp8.json")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "c.json"), data, 0o644))
	src := strings.Replace(minimal, `preset = "kimi-k2.5"`, `config = "sub/c.json"`, 1)
	src = strings.Replace(src, "tp = 8\nep = 8\n", "tp = 4\nep = 1\n", 1)
	src = strings.Replace(src, "gpus = 8", "gpus = 4", 1)
	p := filepath.Join(dir, "s.toml")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	s, err := Load(p)
	require.NoError(t, err)
	assert.Equal(t, "Qwen3MoeForCausalLM", s.Config.Model.Architecture)
	assert.Equal(t, filepath.Join(dir, "sub", "c.json"), s.ModelRef)
}

// TestErrors checks that each bad input names the file, the line and the
// key of the problem.
func TestErrors(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(minimal, old) {
			panic(old)
		}
		return strings.Replace(minimal, old, new, 1)
	}
	tests := []struct {
		name, src string
		want      string // prefix of the error: file:line: key
	}{
		{"unknown key", minimal + "tpp = 2\n", `t.toml:12: unknown key "parallel.tpp"`},
		{"unknown preset", edit(`"kimi-k2.5"`, `"kimi-k9"`), "t.toml:3: model.preset: "},
		{"no model", edit(`preset = "kimi-k2.5"`, ""), "t.toml:2: model: "},
		{"preset and config", edit(`preset = "kimi-k2.5"`, "preset = \"kimi-k2.5\"\nconfig = \"x.json\""), "t.toml:4: model.config: "},
		{"missing config", edit(`preset = "kimi-k2.5"`, `config = "nope/config.json"`), "t.toml:3: model.config: "},
		{"kv cache", edit(`[hardware]`, "kv_cache = \"int2\"\n[hardware]"), "t.toml:4: model.kv_cache: "},
		{"unknown gpu", edit(`"rtx-pro-6000-server"`, `"rtx-9090"`), "t.toml:5: hardware.gpu: "},
		{"unknown fabric", edit(`"pcie-gen5"`, `"pcie-gen9"`), "t.toml:7: hardware.fabric: "},
		{"unknown nic", edit(`fabric = "pcie-gen5"`, "fabric = \"pcie-gen5\"\nnic = \"ib-900\""), "t.toml:8: hardware.nic: unknown NIC \"ib-900\""},
		{"custom fabric missing", edit(`fabric = "pcie-gen5"`, "") + "[hardware.custom_fabric]\nbandwidth = \"64GB/s\"\n", "t.toml:12: hardware.custom_fabric.latency: "},
		{"custom fabric unit", minimal + "[hardware.custom_fabric]\nlatency = \"2\"\n", "t.toml:13: hardware.custom_fabric.latency: "},
		{"tp gpus", edit("tp = 8", "tp = 3"), "t.toml:10: parallel.tp: "},
		{"tp heads", strings.NewReplacer("tp = 8", "tp = 6", "gpus = 8", "gpus = 6", "ep = 8", "ep = 1").Replace(minimal), "t.toml:10: parallel.tp: "},
		{"ep experts", edit("ep = 8", "ep = 7"), "t.toml:11: parallel.ep: "},
		{"gpus tp dp", edit("ep = 8", "ep = 8\ndp = 2"), "t.toml:"},
		{"tp zero", edit("tp = 8", "tp = 0"), "t.toml:10: parallel.tp: "},
		{"batch zero", minimal + "[workload]\nbatch = [1, 0]\n", "t.toml:13: workload.batch: "},
		{"batch empty", minimal + "[workload]\nbatch = []\n", "t.toml:13: workload.batch: "},
		{"context", minimal + "[workload]\ncontext = -1\n", "t.toml:13: workload.context: "},
		{"batch huge", minimal + "[workload]\nbatch = [8, 9223372036854775807]\n", "t.toml:13: workload.batch: batch 9223372036854775807 (item 2) exceeds the limit"},
		{"batch above limit", minimal + "[workload]\nbatch = [16777217]\n", "t.toml:13: workload.batch: "},
		{"context huge", minimal + "[workload]\ncontext = 9223372036854775807\n", "t.toml:13: workload.context: context 9223372036854775807 exceeds the limit"},
		{"tp huge", edit("tp = 8", "tp = 9223372036854775807"), "t.toml:10: parallel.tp: 9223372036854775807 exceeds the limit of 65536"},
		{"gpus huge", edit("gpus = 8", "gpus = 65537"), "t.toml:6: hardware.gpus: 65537 exceeds the limit"},
		{"ep huge", edit("ep = 8", "ep = 4611686018427387904"), "t.toml:11: parallel.ep: "},
		{"tp x dp huge", strings.Replace(minimal, "gpus = 8\n", "", 1) + "dp = 65536\n", "t.toml:11: parallel.dp: tp x dp = 8 x 65536"},
		{"allreduce", minimal + "[runtime]\nallreduce = \"ring\"\n", "t.toml:13: runtime.allreduce: "},
		{"mem util", minimal + "[runtime]\ngpu_memory_utilization = 1.5\n", "t.toml:13: runtime.gpu_memory_utilization: "},
		{"tokenize negative", minimal + "[runtime]\ntokenize_us_per_token = -1\n", "t.toml:13: runtime.tokenize_us_per_token: "},
		{"conservativeness", minimal + "[runtime]\nengine = \"sglang\"\nschedule_conservativeness = -1\n", "t.toml:14: runtime.schedule_conservativeness: "},
		{"tokenize nan", minimal + "[runtime]\ntokenize_us_per_token = nan\n", "t.toml:13: runtime.tokenize_us_per_token: "},
		{"acceptance", minimal + "[speculative]\nmethod = \"eagle3\"\ndraft_tokens = 2\nacceptance = [0.8, 1.2]\n", "t.toml:15: speculative.acceptance: "},
		{"method", minimal + "[speculative]\nmethod = \"medusa\"\n", "t.toml:13: speculative.method: "},
		{"acceptance scalar out of range", minimal + "[speculative]\nmethod = \"ngram\"\ndraft_tokens = 2\nacceptance = 1.5\n", "t.toml:15: speculative.acceptance: "},
		{"acceptance string", minimal + "[speculative]\nmethod = \"ngram\"\ndraft_tokens = 2\nacceptance = \"high\"\n", "t.toml:15: speculative.acceptance: is a string: want a number in [0, 1] or an array"},
		{"acceptance element", minimal + "[speculative]\nmethod = \"ngram\"\ndraft_tokens = 2\nacceptance = [0.5, \"x\"]\n", "t.toml:15: speculative.acceptance: element 2 is a string, not a number"},
		{"draft missing", minimal + "[speculative]\nmethod = \"ngram\"\nacceptance = [0.5]\n", "t.toml:12: speculative.draft_tokens: "},
		{"custom gpu unit", minimal + "[hardware.custom_gpu]\nmemory = \"96\"\n", "t.toml:13: hardware.custom_gpu.memory: "},
		{"custom gpu bw", minimal + "[hardware.custom_gpu]\nbandwidth = \"4.8TB\"\n", "t.toml:13: hardware.custom_gpu.bandwidth: "},
		{"custom gpu arch", minimal + "[hardware.custom_gpu]\narch = \"sm90\"\n", `t.toml:13: hardware.custom_gpu.arch: "sm90": want a CUDA compute capability sm_NN`},
		{"custom gpu arch name", minimal + "[hardware.custom_gpu]\narch = \"hopper\"\n", `t.toml:13: hardware.custom_gpu.arch: "hopper": want`},
		{"custom gpu arch suffix", minimal + "[hardware.custom_gpu]\narch = \"sm_90a\"\n", `t.toml:13: hardware.custom_gpu.arch: "sm_90a": want`},
		{"custom gpu missing", edit(`gpu = "rtx-pro-6000-server"`, "") + "[hardware.custom_gpu]\nmemory = \"96GB\"\n", "t.toml:12: hardware.custom_gpu.bandwidth: "},
		{"type", edit("gpus = 8", `gpus = "8"`), "t.toml:6: hardware.gpus: "},
		{"syntax", minimal + "[workload\n", "t.toml:13: expected"},
		{"calibration", edit(`"none"`, `"/nonexistent/calib.toml"`), "t.toml:8: hardware.calibration: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.toml", []byte(tt.src))
			require.Error(t, err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, tt.want), "error %q does not start with %q", msg, tt.want)
			assert.NotContains(t, msg, "\n", "one line")
			var pe *Error
			assert.ErrorAs(t, err, &pe)
		})
	}
}

// TestAcceptanceScalar: README says acceptance may be one value for every
// draft position; a scalar is that value (it was refused as "destination
// has type slice").
func TestAcceptanceScalar(t *testing.T) {
	for _, v := range []string{"0.5", "[0.5]", "1"} {
		s, err := Parse("t.toml", []byte(minimal+"[speculative]\nmethod = \"ngram\"\ndraft_tokens = 3\nacceptance = "+v+"\n"))
		require.NoError(t, err, v)
		want := 0.5
		if v == "1" {
			want = 1
		}
		assert.Equal(t, []float64{want}, s.Config.Spec.Acceptance, v)
	}
}

func TestOpen(t *testing.T) {
	s, err := Open("qwen3-235b-h100-tp4")
	require.NoError(t, err)
	assert.Equal(t, "embedded:qwen3-235b-h100-tp4.toml", s.File)
	assert.Equal(t, "configs/qwen3-235b-a22b-fp8.json", s.ModelRef)
	_, err = Open("no-such-scenario")
	require.Error(t, err)
	assert.Contains(t, err.Error(), DefaultName)
}

func TestCalibration(t *testing.T) {
	// The default asks for the embedded tables of its GPU.
	s, err := Default()
	require.NoError(t, err)
	assert.Equal(t, []string{"embedded"}, s.Calibration)
	assert.NotNil(t, s.Config.KernelTables, s.CalibrationNote)
	assert.NotNil(t, s.Config.CommTables, s.CalibrationNote)
	assert.Contains(t, s.CalibrationNote, "rtx-pro-6000-server")

	// --calibration none drops the tables and any calibration warning.
	require.NoError(t, s.SetCalibration("none"))
	assert.Nil(t, s.Config.KernelTables)
	assert.Nil(t, s.Config.CommTables)
	for _, w := range s.Warnings {
		assert.NotContains(t, w, "calibration")
	}

	// A file, relative to the scenario: its all-reduce table prices the
	// all-reduces (the step's allreduce source names it).
	src := strings.Replace(minimal, `calibration = "none"`, `calibration = "testdata/allreduce-8gpu.toml"`, 1)
	s, err = Parse("t.toml", []byte(src))
	require.NoError(t, err)
	assert.Nil(t, s.Config.KernelTables)
	require.NotNil(t, s.Config.CommTables)
	sm, err := s.Sim()
	require.NoError(t, err)
	p, err := sm.Step(1, 2048)
	require.NoError(t, err)
	ar := p.Breakdown[cost.AllReduce].Source
	assert.Equal(t, cost.Table, ar.Kind, ar.Describe())
	assert.Contains(t, ar.Table, "allreduce-8gpu.toml")

	// The same file through SetCalibration, relative to the current directory.
	s, err = Default()
	require.NoError(t, err)
	require.NoError(t, s.SetCalibration("testdata/allreduce-8gpu.toml"))
	assert.NotNil(t, s.Config.CommTables)
	assert.Nil(t, s.Config.KernelTables)
	err = s.SetCalibration("testdata/nope.toml")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "--calibration: "), err.Error())

	// A custom GPU has no embedded tables: roofline, with a warning.
	src = strings.Replace(minimal, `gpu = "rtx-pro-6000-server"`, "", 1)
	src = strings.Replace(src, `calibration = "none"`, `calibration = "embedded"`, 1) +
		"[hardware.custom_gpu]\nname = \"x1\"\nmemory = \"96GB\"\nbandwidth = \"2TB/s\"\nbf16 = \"400TFLOPS\"\n"
	s, err = Parse("t.toml", []byte(src))
	require.NoError(t, err)
	assert.Nil(t, s.Config.KernelTables)
	require.Len(t, s.Warnings, 1)
	assert.Contains(t, s.Warnings[0], `"x1"`)
}

// TestValues checks that each key reaches its sim.Config field.
func TestValues(t *testing.T) {
	src := `[model]
preset = "kimi-k2.5"
kv_cache = "fp8"
[hardware]
gpu = "h200-sxm"
gpus = 8
calibration = "none"
[parallel]
tp = 1
ep = 8
dp = 8
dp_attention = true
[runtime]
cuda_graphs = false
allreduce = "twoshot"
gpu_memory_utilization = 0.8
[workload]
batch = [4, 2]
context = 8192
[speculative]
method = "eagle3"
draft_tokens = 2
acceptance = [0.7]
`
	s, err := Parse("dir/t.toml", []byte(src))
	require.NoError(t, err, src)
	c := s.Config
	assert.Equal(t, "t", s.Name, "the file's base name when name is absent")
	assert.Equal(t, dtype.KVFP8, c.KVCache)
	assert.Equal(t, 1, c.Layout.TP)
	assert.Equal(t, 8, c.Layout.DP)
	assert.Equal(t, 8, c.Layout.EP)
	assert.True(t, c.Layout.DPAttention)
	assert.False(t, c.Graphs)
	assert.Equal(t, comm.TwoShot, c.AllReduce)
	assert.InDelta(t, 0.8, c.GPUMemoryUtilization, 0)
	assert.Equal(t, []int{4, 2}, s.Batches)
	assert.Equal(t, 8192, s.Context)
	assert.Equal(t, sim.Spec{Method: sim.SpecEAGLE3, DraftTokens: 2, Acceptance: []float64{0.7}}, c.Spec)
	assert.Empty(t, s.Warnings)

	// Draft settings with method none are ignored, with a warning that
	// points at the table.
	s, err = Parse("t.toml", []byte(minimal+"[speculative]\ndraft_tokens = 3\n"))
	require.NoError(t, err)
	assert.Equal(t, sim.SpecNone, s.Config.Spec.Method)
	require.Len(t, s.Warnings, 1)
	assert.True(t, strings.HasPrefix(s.Warnings[0], "t.toml:12: speculative.method is none"), s.Warnings[0])
}

// TestModelConfigPath: a model.config that cannot be read is reported with
// the path it resolved to, directory included.
func TestModelConfigPath(t *testing.T) {
	dir := t.TempDir()
	src := func(cfg string) []byte {
		return []byte(strings.Replace(minimal, `preset = "kimi-k2.5"`, `config = "`+cfg+`"`, 1))
	}
	_, err := Parse("t.toml", src(dir))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t.toml:3: model.config: ")
	assert.Contains(t, err.Error(), "read model config: "+dir+": is a directory")

	// Relative to the scenario's directory.
	_, err = Parse(filepath.Join(dir, "s", "t.toml"), src("../cfg/config.json"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "cfg", "config.json")+": no such file")
}
