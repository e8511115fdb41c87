package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"

	"github.com/moecast/moecast/model"
)

// TestServeKeys: every serve.Config field that serve's FieldErrors name maps
// to a key (or table) the loader reads.
func TestServeKeys(t *testing.T) {
	keys := map[string]bool{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			key := prefix + strings.Split(f.Tag.Get("toml"), ",")[0]
			keys[key] = true
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(key+".", ft)
			}
		}
	}
	walk("", reflect.TypeOf(raw{}))
	for field, key := range serveKeys {
		assert.True(t, keys[key], "serve field %s maps to %q, which the loader does not read", field, key)
	}
	// Each field serve.Config.Validate can name, made invalid in turn.
	base := serve.DefaultConfig(serve.VLLM, "h200", 141e9)
	base.Memory = serve.Memory{KVBytesPerToken: 1, KVCapacity: 1e9, BlockSize: 16, Groups: 1}
	base.Workload.MaxConcurrency = 4
	for name, mut := range map[string]func(c *serve.Config){
		"MaxNumBatchedTokens":     func(c *serve.Config) { c.MaxNumBatchedTokens = 0 },
		"MaxNumSeqs":              func(c *serve.Config) { c.MaxNumSeqs = 0 },
		"Workload.Requests":       func(c *serve.Config) { c.Workload.Requests = 0 },
		"Workload.MaxConcurrency": func(c *serve.Config) { c.Workload.MaxConcurrency = -1 },
		"Workload.RequestRate":    func(c *serve.Config) { c.Workload.RequestRate = math.NaN() },
		"Workload.Burstiness":     func(c *serve.Config) { c.Workload.Burstiness = 0 },
		"Workload.InputTokens":    func(c *serve.Config) { c.Workload.InputTokens = 0 },
		"Workload.OutputTokens":   func(c *serve.Config) { c.Workload.OutputTokens = 0 },
		"Workload.RangeRatio":     func(c *serve.Config) { c.Workload.RangeRatio = 1 },
		"Memory.KVCapacity":       func(c *serve.Config) { c.Memory.KVCapacity = 0 },
		"Spec.DraftTokens":        func(c *serve.Config) { c.Spec.DraftTokens = -1 },
	} {
		c := base
		mut(&c)
		err := c.Validate()
		var fe *model.FieldError
		require.ErrorAs(t, err, &fe, name)
		assert.Equal(t, name, fe.Field)
		_, ok := serveKeys[fe.Field]
		assert.True(t, ok, "serveKeys lacks %s", fe.Field)
	}
}

// TestServingKeys: the keys land in Serving and in each point's
// serve.Config; absent keys take the engine's defaults.
func TestServingKeys(t *testing.T) {
	s, err := Parse("t.toml", []byte(minimal+`
[runtime]
engine = "sglang"
max_num_batched_tokens = 4096
max_num_seqs = 64
mixed_chunk = true
async_scheduling = false
tokenize_us_per_token = 2.5
schedule_conservativeness = 0.3

[workload]
request_rate = [2.0, 8]
burstiness = 0.5
requests = 300
input_tokens = 2000
output_tokens = 100
range_ratio = 0.2
seed = 9
`))
	require.NoError(t, err)
	sm, err := s.Sim()
	require.NoError(t, err)
	ps := s.Serving.Points()
	require.Len(t, ps, 2)
	c, err := s.ServeConfig(sm, ps[1])
	require.NoError(t, err)
	assert.Equal(t, serve.SGLang, c.Engine)
	assert.Equal(t, 4096, c.MaxNumBatchedTokens)
	assert.Equal(t, 64, c.MaxNumSeqs)
	assert.True(t, c.MixedChunk)
	assert.False(t, c.AsyncScheduling)
	assert.InDelta(t, 2.5e-6, float64(c.FrontEnd.PerInputToken), 1e-18)
	assert.Equal(t, 0.3, c.ScheduleConservativeness)
	assert.Equal(t, serve.Workload{Requests: 300, RequestRate: 8, Burstiness: 0.5, InputTokens: 2000, OutputTokens: 100, RangeRatio: 0.2}, c.Workload)
	assert.Equal(t, uint64(9), c.Seed)
	assert.Equal(t, 1, c.Memory.BlockSize, "SGLang page size")

	b, err := Parse("b.toml", []byte(minimal+"[workload]\nconcurrency = [4]\nrange_ratio = 0.8\nrange_style = \"below\"\n"))
	require.NoError(t, err)
	bm, err := b.Sim()
	require.NoError(t, err)
	bc, err := b.ServeConfig(bm, b.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, serve.RangeBelow, bc.Workload.RangeStyle)
	assert.Equal(t, 0.8, bc.Workload.RangeRatio)
	require.NoError(t, b.SetMechanism("client-lengths", false))
	bc, err = b.ServeConfig(bm, b.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, serve.RangeSymmetric, bc.Workload.RangeStyle, "client-lengths off: fixed lengths")
	assert.Zero(t, bc.Workload.RangeRatio)
	require.NoError(t, b.SetMechanism("client-lengths", true))
	bc, err = b.ServeConfig(bm, b.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, 0.8, bc.Workload.RangeRatio, "client-lengths back on")
	assert.False(t, bc.DecodeRecompute, "SGLang's prebuilt decode admission by default")
	require.NoError(t, b.SetMechanism("prebuilt-decode", false))
	bc, err = b.ServeConfig(bm, b.Serving.Points()[0])
	require.NoError(t, err)
	assert.True(t, bc.DecodeRecompute, "prebuilt-decode off")

	d, err := Parse("d.toml", []byte(minimal))
	require.NoError(t, err)
	assert.Equal(t, d.Batches, d.Serving.Concurrency, "concurrency defaults to workload.batch")
	dm, err := d.Sim()
	require.NoError(t, err)
	dc, err := d.ServeConfig(dm, d.Serving.Points()[0])
	require.NoError(t, err)
	def := serve.DefaultConfig(serve.VLLM, d.Config.GPU.Label, d.Config.GPU.Memory)
	assert.Equal(t, def.MaxNumBatchedTokens, dc.MaxNumBatchedTokens)
	assert.Equal(t, def.MaxNumSeqs, dc.MaxNumSeqs)
	assert.True(t, dc.AsyncScheduling)
	assert.Equal(t, serve.FrontEnd{PerInputToken: serve.TokenizeTime}, dc.FrontEnd, "the API server tokenises by default")
	assert.Equal(t, 100, dc.Workload.Requests, "10 x concurrency, at least 100")
	assert.True(t, math.IsInf(dc.Workload.RequestRate, 1))
}

// TestEngineVersion: runtime.engine_version picks the engine's
// version-dependent defaults (vLLM's async scheduling from v0.14.0), an
// explicit async_scheduling wins over it, and the host-overhead mechanism
// puts the engine's measured host work on the config or leaves it out.
func TestEngineVersion(t *testing.T) {
	cases := []struct {
		name, keys string
		async      bool
	}{
		{"vllm newest", "engine = \"vllm\"\n", true},
		{"vllm 0.12", "engine = \"vllm\"\nengine_version = \"0.12.0\"\n", false},
		{"vllm 0.14", "engine = \"vllm\"\nengine_version = \"0.14.0\"\n", true},
		{"vllm 0.12 forced on", "engine = \"vllm\"\nengine_version = \"0.12.0\"\nasync_scheduling = true\n", true},
		{"sglang old", "engine = \"sglang\"\nengine_version = \"0.5.1.post1\"\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("t.toml", []byte(minimal+"[runtime]\n"+tc.keys))
			require.NoError(t, err)
			sm, err := s.Sim()
			require.NoError(t, err)
			c, err := s.ServeConfig(sm, s.Serving.Points()[0])
			require.NoError(t, err)
			assert.Equal(t, tc.async, c.AsyncScheduling)
			assert.Equal(t, serve.EngineHost(s.Serving.Engine), c.Host)
			assert.Greater(t, float64(c.Host.PerStep), 0.0)
			require.NoError(t, s.SetMechanism("host-overhead", false))
			c, err = s.ServeConfig(sm, s.Serving.Points()[0])
			require.NoError(t, err)
			assert.Zero(t, c.Host)
		})
	}
}

// TestEngineMessages: the engine checks read serve's engine table and say
// which engines have a setting.
func TestEngineMessages(t *testing.T) {
	cases := []struct {
		name, runtime string
		err, warning  string
	}{
		{"unknown engine", `engine = "trt"`, `unknown engine "trt" (want vllm or sglang)`, ""},
		{"vllm seqs 0", `max_num_seqs = 0`, "runtime.max_num_seqs: 0 must be in [1, 16777216] (SGLang: 0 = no limit)", ""},
		{"sglang seqs 0", "engine = \"sglang\"\nmax_num_seqs = 0", "", ""},
		{"vllm mixed chunk", `mixed_chunk = true`, "",
			"runtime.mixed_chunk is SGLang's; vLLM always mixes prefill chunks into decode steps, so it is ignored"},
		{"sglang mixed chunk", "engine = \"sglang\"\nmixed_chunk = true", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("e.toml", []byte(minimal+"[runtime]\n"+tc.runtime+"\n"))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			if tc.warning == "" {
				assert.Empty(t, s.Warnings)
				return
			}
			require.Len(t, s.Warnings, 1)
			assert.Contains(t, s.Warnings[0], tc.warning)
		})
	}
}

// TestPartialPrefillKeys: vLLM's long_prefill_token_threshold and
// max_num_partial_prefills and SGLang's prefill_decode_interval reach
// serve.Config (vLLM's max_model_len from the model's
// max_position_embeddings); a key of the other engine is a warning and
// is not passed on; out-of-range values are errors naming the key.
func TestPartialPrefillKeys(t *testing.T) {
	s, err := Parse("t.toml", []byte(minimal+`
[runtime]
engine = "vllm"
long_prefill_token_threshold = 512
max_num_partial_prefills = 4
max_long_partial_prefills = 2
prefill_decode_interval = 3
`))
	require.NoError(t, err)
	require.Len(t, s.Warnings, 1)
	assert.Contains(t, s.Warnings[0], "runtime.prefill_decode_interval is SGLang's")
	sm, err := s.Sim()
	require.NoError(t, err)
	c, err := s.ServeConfig(sm, s.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, 512, c.LongPrefillTokenThreshold)
	assert.Equal(t, 4, c.MaxNumPartialPrefills)
	assert.Equal(t, 2, c.MaxLongPartialPrefills)
	assert.Equal(t, s.Config.Model.MaxPosition, c.MaxModelLen)
	assert.Zero(t, c.PrefillDecodeInterval)

	g, err := Parse("g.toml", []byte(minimal+"[runtime]\nengine = \"sglang\"\nprefill_decode_interval = 3\nscheduler_recv_interval = 30\n"))
	require.NoError(t, err)
	sm, err = g.Sim()
	require.NoError(t, err)
	c, err = g.ServeConfig(sm, g.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, 3, c.PrefillDecodeInterval)
	assert.Equal(t, 30, c.SchedulerRecvInterval)
	// --without sglang-recv-interval: received every iteration; --with
	// restores the scenario's interval.
	require.NoError(t, g.SetMechanism("sglang-recv-interval", false))
	c, err = g.ServeConfig(sm, g.Serving.Points()[0])
	require.NoError(t, err)
	assert.Zero(t, c.SchedulerRecvInterval)
	require.NoError(t, g.SetMechanism("sglang-recv-interval", true))
	c, err = g.ServeConfig(sm, g.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, 30, c.SchedulerRecvInterval)

	for _, tc := range []struct{ body, want string }{
		{"engine = \"vllm\"\nmax_num_partial_prefills = 0\n", "runtime.max_num_partial_prefills"},
		{"engine = \"vllm\"\nmax_num_partial_prefills = 2\nmax_long_partial_prefills = 3\n", "runtime.max_long_partial_prefills"},
		{"engine = \"vllm\"\nlong_prefill_token_threshold = -1\n", "runtime.long_prefill_token_threshold"},
		{"engine = \"sglang\"\nprefill_decode_interval = -2\n", "runtime.prefill_decode_interval"},
		{"engine = \"sglang\"\nscheduler_recv_interval = 0\n", "runtime.scheduler_recv_interval"},
	} {
		_, err := Parse("e.toml", []byte(minimal+"[runtime]\n"+tc.body))
		require.Error(t, err, tc.body)
		assert.Contains(t, err.Error(), tc.want, tc.body)
	}
}

// TestPrefillScheduleIntervalKey: vLLM's runtime.prefill_schedule_interval
// reaches serve.Config; with DP 1 (vLLM's base engine core never
// throttles), on SGLang and before v0.25.0 it is a warning; below 1 is
// an error naming the key.
func TestPrefillScheduleIntervalKey(t *testing.T) {
	dp := strings.Replace(minimal, "tp = 8\n", "tp = 1\ndp = 8\n", 1)
	s, err := Parse("t.toml", []byte(dp+"[runtime]\nengine = \"vllm\"\nprefill_schedule_interval = 4\n"))
	require.NoError(t, err)
	assert.Empty(t, s.Warnings)
	sm, err := s.Sim()
	require.NoError(t, err)
	c, err := s.ServeConfig(sm, s.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, 4, c.PrefillScheduleInterval)
	assert.Equal(t, 8, c.Memory.Groups)

	for _, tc := range []struct{ doc, body, want string }{
		{minimal, "engine = \"vllm\"\nprefill_schedule_interval = 4\n", "only with data parallelism"},
		{dp, "engine = \"vllm\"\nengine_version = \"0.22.0\"\nprefill_schedule_interval = 4\n", "PR #44558"},
		{minimal, "engine = \"sglang\"\nprefill_schedule_interval = 4\n", "runtime.prefill_schedule_interval is vLLM's"},
	} {
		w, err := Parse("w.toml", []byte(tc.doc+"[runtime]\n"+tc.body))
		require.NoError(t, err, tc.body)
		require.Len(t, w.Warnings, 1, tc.body)
		assert.Contains(t, w.Warnings[0], tc.want, tc.body)
	}
	quiet, err := Parse("q.toml", []byte(minimal+"[runtime]\nengine = \"vllm\"\nprefill_schedule_interval = 1\n"))
	require.NoError(t, err)
	assert.Empty(t, quiet.Warnings, "interval 1 is the default")

	for _, n := range []string{"0", "-3", "2000000"} {
		_, err := Parse("e.toml", []byte(minimal+"[runtime]\nengine = \"vllm\"\nprefill_schedule_interval = "+n+"\n"))
		require.Error(t, err, n)
		assert.Contains(t, err.Error(), "runtime.prefill_schedule_interval", n)
		assert.NotContains(t, err.Error(), "\n", "one line")
	}
}

// TestCUDAGraphMaxKeys: SGLang's runtime.cuda_graph_max_bs (requests per
// attention rank) and vLLM's runtime.max_cudagraph_capture_size (tokens)
// set the largest decode step run in a CUDA graph (a larger one is priced
// eagerly, sim.Config.CaptureSize) and SGLang's padding list; the other
// engine's key is a warning and changes nothing; below 1 is an error.
func TestCUDAGraphMaxKeys(t *testing.T) {
	parse := func(body string) *Scenario {
		s, err := Parse("t.toml", []byte(minimal+"[runtime]\n"+body))
		require.NoError(t, err)
		return s
	}
	v := parse("engine = \"vllm\"\n")
	assert.Equal(t, 512, v.Config.CaptureSize, "vLLM's default: min(2 x max_num_seqs, 512)")
	v = parse("engine = \"vllm\"\nmax_cudagraph_capture_size = 64\n")
	assert.Equal(t, 64, v.Config.CaptureSize)
	sm, err := v.Sim()
	require.NoError(t, err)
	c, err := v.ServeConfig(sm, v.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, 64, c.CUDAGraphMax)

	g := parse("engine = \"sglang\"\n")
	def := g.Config.CaptureSize
	g = parse("engine = \"sglang\"\ncuda_graph_max_bs = 24\n")
	assert.Equal(t, 24*(1+g.Config.Spec.DraftTokens), g.Config.CaptureSize)
	assert.NotEqual(t, def, g.Config.CaptureSize, "the default differs")
	if b := g.Config.CaptureBatches; len(b) > 0 {
		assert.Equal(t, 24, b[len(b)-1], "SGLang pads up to its largest captured batch")
	}

	w := parse("engine = \"vllm\"\ncuda_graph_max_bs = 24\n")
	require.Len(t, w.Warnings, 1)
	assert.Contains(t, w.Warnings[0], "runtime.cuda_graph_max_bs is SGLang's")
	assert.Equal(t, 512, w.Config.CaptureSize, "ignored on vLLM")

	for _, body := range []string{"engine = \"sglang\"\ncuda_graph_max_bs = 0\n", "engine = \"vllm\"\nmax_cudagraph_capture_size = -1\n"} {
		_, err := Parse("e.toml", []byte(minimal+"[runtime]\n"+body))
		require.Error(t, err, body)
	}
}

// TestCUDAGraphCaptureSizes: vLLM's runtime.cudagraph_capture_sizes (its
// --cudagraph-capture-sizes) is the padding list and the capture limit: a
// decode batch between two sizes is priced at the next size (vLLM pads
// the scheduled tokens to the next captured size), one above the largest
// eagerly, as with CUDA graphs off; the list is sorted and de-duplicated
// as vLLM does. max_cudagraph_capture_size must equal its largest size;
// an empty list, a size below 1 and a list on SGLang are refused or
// warned about.
func TestCUDAGraphCaptureSizes(t *testing.T) {
	parse := func(body string) *Scenario {
		t.Helper()
		s, err := Parse("t.toml", []byte(minimal+"[runtime]\nengine = \"vllm\"\n"+body))
		require.NoError(t, err)
		return s
	}
	// step prices a decode step of n sequences at context 2048 and pad
	// more at context 1 (vLLM's padding rows).
	step := func(s *Scenario, n int, pad ...int) float64 {
		t.Helper()
		sm, err := s.Sim()
		require.NoError(t, err)
		seqs := make([]sim.Seq, n)
		for i := range seqs {
			seqs[i] = sim.Seq{Query: 1, Context: 2048}
		}
		for _, p := range pad {
			for range p {
				seqs = append(seqs, sim.Seq{Query: 1, Context: 1})
			}
		}
		var r sim.BatchResult
		require.NoError(t, sm.StepBatch(seqs, &r))
		return float64(r.Step.Time)
	}
	s := parse("cudagraph_capture_sizes = [32, 8, 8]\n")
	assert.Equal(t, []int{8, 32}, s.Config.CaptureBatches, "sorted, de-duplicated")
	assert.Equal(t, 32, s.Config.CaptureSize, "the largest size is the limit")
	sm, err := s.Sim()
	require.NoError(t, err)
	c, err := s.ServeConfig(sm, s.Serving.Points()[0])
	require.NoError(t, err)
	assert.Equal(t, []int{32, 8, 8}, c.CUDAGraphSizes, "as given; serve sorts")

	at20 := step(s, 20)
	require.NoError(t, s.SetMechanism("graph-padding", false))
	want := step(s, 20, 12)
	assert.InDelta(t, want, at20, want*1e-9, "20 decodes run the graph of 32: 12 padding rows")
	assert.Less(t, step(s, 20), at20, "unpadded, 20 decodes cost less")

	eager := parse("cuda_graphs = false\n")
	s = parse("cudagraph_capture_sizes = [8, 32]\n")
	assert.InDelta(t, step(eager, 40), step(s, 40), step(s, 40)*1e-9, "above the largest size: eager")
	graph := parse("cudagraph_capture_sizes = [8, 64]\n")
	require.NoError(t, graph.SetMechanism("graph-padding", false))
	assert.Greater(t, step(s, 40), step(graph, 40), "eager costs more than the graph at the same size")

	s = parse("cudagraph_capture_sizes = [8, 64]\nmax_cudagraph_capture_size = 64\n")
	assert.Equal(t, 64, s.Config.CaptureSize)
	for _, tc := range []struct{ body, msg string }{
		{"cudagraph_capture_sizes = [8, 64]\nmax_cudagraph_capture_size = 32\n", "runtime.max_cudagraph_capture_size"},
		{"cudagraph_capture_sizes = []\n", "runtime.cudagraph_capture_sizes"},
		{"cudagraph_capture_sizes = [0, 8]\n", "runtime.cudagraph_capture_sizes"},
		{"max_num_batched_tokens = 16\nmax_num_seqs = 16\ncudagraph_capture_sizes = [32, 64]\n", "runtime.cudagraph_capture_sizes"},
	} {
		_, err := Parse("e.toml", []byte(minimal+"[runtime]\nengine = \"vllm\"\n"+tc.body))
		require.Error(t, err, tc.body)
		assert.Contains(t, err.Error(), tc.msg)
	}
	g, err := Parse("t.toml", []byte(minimal+"[runtime]\nengine = \"sglang\"\ncudagraph_capture_sizes = [8]\n"))
	require.NoError(t, err)
	require.Len(t, g.Warnings, 1)
	assert.Contains(t, g.Warnings[0], "runtime.cudagraph_capture_sizes is vLLM's")
}

// TestCUDAGraphModeKey: vLLM's runtime.cudagraph_mode (any case, as vLLM
// reads it) sets how steps launch their kernels: FULL_DECODE_ONLY runs
// steps with a prefill chunk eagerly, PIECEWISE splits decode steps' graphs
// at attention, NONE turns graphs off (and contradicts cuda_graphs =
// true), FULL and FULL_AND_PIECEWISE price as without the key; the
// cudagraph-mode mechanism turns it off and on; SGLang ignores it with a
// warning; an unknown mode is an error naming the key and the modes.
func TestCUDAGraphModeKey(t *testing.T) {
	parse := func(body string) *Scenario {
		s, err := Parse("t.toml", []byte(minimal+"[runtime]\n"+body))
		require.NoError(t, err)
		return s
	}
	flags := func(s *Scenario) [3]bool {
		return [3]bool{s.Config.Graphs, s.Config.EagerPrefill, s.Config.DecodePiecewise}
	}
	def := flags(parse("engine = \"vllm\"\n"))
	assert.Equal(t, [3]bool{true, false, false}, def)
	for _, tc := range []struct {
		mode string
		want [3]bool
	}{
		{"FULL_DECODE_ONLY", [3]bool{true, true, false}},
		{"full_decode_only", [3]bool{true, true, false}},
		{"PIECEWISE", [3]bool{true, false, true}},
		{"NONE", [3]bool{false, false, false}},
		{"FULL", def},
		{"FULL_AND_PIECEWISE", def},
	} {
		s := parse("engine = \"vllm\"\ncudagraph_mode = \"" + tc.mode + "\"\n")
		assert.Equal(t, tc.want, flags(s), tc.mode)
		assert.Empty(t, s.Warnings, tc.mode)
		require.NoError(t, s.SetMechanism("cudagraph-mode", false))
		assert.Equal(t, [3]bool{tc.want[0], false, false}, flags(s), "%s, mechanism off", tc.mode)
		require.NoError(t, s.SetMechanism("eager-prefill", true))
		require.NoError(t, s.SetMechanism("capture-size", true))
		assert.Equal(t, [3]bool{tc.want[0], false, false}, flags(s), "%s: the other graph mechanisms keep it off", tc.mode)
		require.NoError(t, s.SetMechanism("cudagraph-mode", true))
		assert.Equal(t, tc.want, flags(s), "%s, mechanism on", tc.mode)
	}

	// A FULL_DECODE_ONLY step with a prefill chunk within the capture size
	// costs more than under the default's piecewise graphs (each eager op
	// paying its launch: launch-ahead off, as this model's GPU time hides
	// the host's launches otherwise); a decode step the same.
	on := parse("engine = \"vllm\"\ncudagraph_mode = \"FULL_DECODE_ONLY\"\n")
	require.NoError(t, on.SetMechanism("launch-ahead", false))
	smOn, err := on.Sim()
	require.NoError(t, err)
	def0 := parse("engine = \"vllm\"\n")
	require.NoError(t, def0.SetMechanism("launch-ahead", false))
	smDef, err := def0.Sim()
	require.NoError(t, err)
	step := func(sm *sim.Sim, seqs []sim.Seq) unit.Seconds {
		var r sim.BatchResult
		require.NoError(t, sm.StepBatch(seqs, &r))
		return r.Step.Time
	}
	mixed := []sim.Seq{{Query: 100, Prefill: true}, {Query: 1, Context: 1000}}
	assert.Greater(t, step(smOn, mixed), step(smDef, mixed))
	dec := []sim.Seq{{Query: 1, Context: 1000}, {Query: 1, Context: 1000}}
	assert.Equal(t, step(smDef, dec), step(smOn, dec))

	g := parse("engine = \"sglang\"\ncudagraph_mode = \"PIECEWISE\"\n")
	require.Len(t, g.Warnings, 1)
	assert.Contains(t, g.Warnings[0], "runtime.cudagraph_mode is vLLM's")
	assert.False(t, g.Config.DecodePiecewise)
	assert.True(t, g.Config.EagerPrefill, "SGLang's own eager prefill")
	g = parse("engine = \"sglang\"\ncudagraph_mode = \"NONE\"\n")
	assert.True(t, g.Config.Graphs, "ignored on SGLang")
	// cuda_graphs = false with a capturing mode: eager, as vLLM's
	// --enforce-eager overrides cudagraph_mode, and said (session 13's
	// hostile pass: it ran eagerly without a word)
	g = parse("cuda_graphs = false\ncudagraph_mode = \"FULL\"\n")
	assert.False(t, g.Config.Graphs)
	require.Len(t, g.Warnings, 1)
	assert.Contains(t, g.Warnings[0], "runtime.cudagraph_mode FULL is ignored: runtime.cuda_graphs = false runs no CUDA graph")

	for _, tc := range []struct{ body, want string }{
		{"cudagraph_mode = \"FULLY\"\n", "unknown cudagraph_mode \"FULLY\" (want one of NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE)"},
		{"cuda_graphs = true\ncudagraph_mode = \"none\"\n", "runtime.cuda_graphs = true contradicts"},
	} {
		_, err := Parse("e.toml", []byte(minimal+"[runtime]\n"+tc.body))
		require.Error(t, err, tc.body)
		var pe *Error
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "runtime.cudagraph_mode", pe.Key)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestSGLangFractionTooSmall: on a GPU smaller than the memory SGLang's
// server keeps outside mem_fraction_static, its default fraction is 0 or
// less; the error names the key that gives the GPU's memory (the file did
// not set runtime.gpu_memory_utilization), at its line, and says what
// to change.
func TestSGLangFractionTooSmall(t *testing.T) {
	gpu := "[hardware.custom_gpu]\nmemory = \"1GB\"\n"
	src := strings.Replace(minimal, "calibration = \"none\"\n", "calibration = \"none\"\n"+gpu, 1) + "[runtime]\nengine = \"sglang\"\n"
	_, err := Parse("t.toml", []byte(src))
	require.Error(t, err)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "hardware.custom_gpu.memory", pe.Key, err.Error())
	assert.Equal(t, 10, pe.Line, err.Error())
	assert.Contains(t, err.Error(), "mem_fraction_static")
	assert.Contains(t, err.Error(), "runtime.gpu_memory_utilization")

	// given, the fraction is the file's: no error from the default
	s, err := Parse("t.toml", []byte(src+"gpu_memory_utilization = 0.9\n"))
	require.NoError(t, err)
	assert.InDelta(t, 0.9, s.Config.GPUMemoryUtilization, 1e-12)

	// the memory set by a flag (sweep --set): named as the flag's
	_, err = ParseWith("t.toml", []byte(noCustomGPU(src, gpu)), []Override{{"hardware.custom_gpu.memory", "2GB"}})
	require.Error(t, err)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "hardware.custom_gpu.memory", pe.Key, err.Error())
	assert.Contains(t, err.Error(), "set by a flag")
	assert.Contains(t, err.Error(), "on 8 GPUs")

	// a chunk whose activation reserve alone exceeds the GPU: the key is
	// runtime.max_num_batched_tokens (SGLang's chunked_prefill_size)
	chunk := noCustomGPU(src, gpu) + "max_num_batched_tokens = 1048576\n"
	_, err = Parse("t.toml", []byte(chunk))
	require.Error(t, err)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "runtime.max_num_batched_tokens", pe.Key, err.Error())
	assert.Equal(t, 14, pe.Line, err.Error())
	assert.Contains(t, err.Error(), "1048576")
	// before 0.5.3 SGLang's reserve does not follow the chunk
	_, err = Parse("t.toml", []byte(src+"engine_version = \"0.5.1\"\nmax_num_batched_tokens = 1048576\n"))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "hardware.custom_gpu.memory", pe.Key, err.Error())
	assert.NotContains(t, err.Error(), "chunked_prefill_size")

	// a preset GPU: the key is hardware.gpu
	s, err = Parse("t.toml", []byte(noCustomGPU(src, gpu)))
	require.NoError(t, err)
	assert.Greater(t, s.Config.GPUMemoryUtilization, 0.5)
}

// noCustomGPU is src without its custom GPU gpu: the preset's memory.
func noCustomGPU(src, gpu string) string { return strings.Replace(src, gpu, "", 1) }

// TestEngineVersionUnread: an engine_version that does not read as
// MAJOR.MINOR is taken as the newest, and a warning at its line says so;
// one that reads gives none.
func TestEngineVersionUnread(t *testing.T) {
	for _, tc := range []struct {
		version string
		warn    bool
	}{
		{"0.5.1.post1", false}, {"v0.5.3rc1", false}, {"0.5", false}, {"0.19.0", false},
		{"nightly", true}, {"0,5,1", true}, {"5", true}, {"latest", true}, {"-1.2", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s, err := Parse("t.toml", []byte(minimal+"[runtime]\nengine = \"sglang\"\nengine_version = \""+tc.version+"\"\n"))
			require.NoError(t, err)
			found := false
			for _, w := range s.Warnings {
				if strings.Contains(w, "runtime.engine_version") {
					found = true
					assert.Contains(t, w, "t.toml:14:")
					assert.Contains(t, w, "newest")
				}
			}
			assert.Equal(t, tc.warn, found, "%q", s.Warnings)
		})
	}
	// set by a flag: the warning names the file, at no line
	s, err := ParseWith("t.toml", []byte(minimal+"[runtime]\nengine = \"sglang\"\n"), []Override{{"runtime.engine_version", "nightly"}})
	require.NoError(t, err)
	require.NotEmpty(t, s.Warnings)
	assert.Contains(t, s.Warnings, `t.toml: runtime.engine_version "nightly" does not read as MAJOR.MINOR[.PATCH]: the defaults that follow the version (async scheduling, vLLM's full-ISL admission and speculative host bubble, SGLang's mem_fraction_static and speculative worker) are the newest's`)
}

func TestRangeStyleErrors(t *testing.T) {
	for _, tc := range []struct {
		name, keys, key, msg string
	}{
		{"unknown style", "range_ratio = 0.5\nrange_style = \"above\"", "workload.range_style", `unknown range style "above"`},
		{"below without a ratio", "range_style = \"below\"", "workload.range_style", "needs workload.range_ratio"},
		{"below ratio above 1", "range_ratio = 1.5\nrange_style = \"below\"", "workload.range_ratio", "[0, 1]"},
		{"symmetric ratio 1", "range_ratio = 1.0", "workload.range_ratio", "[0, 1)"},
		{"with a lengths file", "range_ratio = 0.5\nrange_style = \"below\"\nlengths = \"x.csv\"", "workload.lengths", "is not read with it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("r.toml", []byte(minimal+"[workload]\nconcurrency = [4]\n"+tc.keys+"\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.key)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	ok, err := Parse("r.toml", []byte(minimal+"[workload]\nconcurrency = [4]\nrange_ratio = 1.0\nrange_style = \"below\"\n"))
	require.NoError(t, err, "the one-sided range takes 1: fixed lengths")
	assert.Equal(t, 1.0, ok.Serving.RangeRatio)
}

// TestPlanMaxRunningAsSimulate: plan's serving configuration
// (serve.SimConfig) derives SGLang's max_running_requests from the KV pool
// as simulate's (ServeConfig) does, the same figure; vLLM keeps its
// max_num_seqs; with the sglang-max-running mechanism off simulate has no
// limit.
func TestPlanMaxRunningAsSimulate(t *testing.T) {
	s, err := Parse("t.toml", []byte(minimal+"[runtime]\nengine = \"sglang\"\ngpu_memory_utilization = 0.8\n"))
	require.NoError(t, err)
	sm, err := s.Sim()
	require.NoError(t, err)
	sim, err := s.ServeConfig(sm, s.Serving.Points()[0])
	require.NoError(t, err)
	plan, err := serve.SimConfig(s.Config, sm, serve.SGLang)
	require.NoError(t, err)
	require.Positive(t, plan.Memory.KVCapacity)
	assert.Equal(t, serve.DefaultMaxRunning(&plan, s.Config.Model.MaxPosition), plan.MaxNumSeqs)
	assert.Positive(t, plan.MaxNumSeqs)
	assert.Equal(t, sim.MaxNumSeqs, plan.MaxNumSeqs, "plan and simulate derive the same limit")

	v, err := serve.SimConfig(s.Config, sm, serve.VLLM)
	require.NoError(t, err)
	assert.Equal(t, serve.DefaultConfig(serve.VLLM, s.Config.GPU.Label, s.Config.GPU.Memory).MaxNumSeqs, v.MaxNumSeqs, "vLLM: its max_num_seqs")

	require.NoError(t, s.SetMechanism("sglang-max-running", false))
	off, err := s.ServeConfig(sm, s.Serving.Points()[0])
	require.NoError(t, err)
	assert.Zero(t, off.MaxNumSeqs, "off: no limit")
}

// TestNumGPUBlocksKey: vLLM's runtime.num_gpu_blocks sets the KV cache to
// that many blocks of the engine's block size per GPU (bigger or smaller
// than the profile's); the vllm-num-gpu-blocks mechanism turned off gives
// the profiled cache back; SGLang warns and keeps its own; below 1 is a
// one-line error naming the key.
func TestNumGPUBlocksKey(t *testing.T) {
	cfg := func(body string, on bool) serve.Config {
		t.Helper()
		s, err := Parse("t.toml", []byte(minimal+"[runtime]\n"+body))
		require.NoError(t, err)
		require.NoError(t, s.SetMechanism("vllm-num-gpu-blocks", on))
		sm, err := s.Sim()
		require.NoError(t, err)
		c, err := s.ServeConfig(sm, s.Serving.Points()[0])
		require.NoError(t, err)
		return c
	}
	profiled := cfg("engine = \"vllm\"\n", true).Memory
	require.Positive(t, float64(profiled.KVCapacity))
	for _, n := range []int{100, 1 << 19} {
		m := cfg(fmt.Sprintf("engine = \"vllm\"\nnum_gpu_blocks = %d\n", n), true).Memory
		assert.InEpsilon(t, float64(n)*float64(m.BlockSize)*float64(m.KVBytesPerToken), float64(m.KVCapacity), 1e-12, "%d blocks", n)
		assert.NotEqual(t, profiled.KVCapacity, m.KVCapacity)
		off := cfg(fmt.Sprintf("engine = \"vllm\"\nnum_gpu_blocks = %d\n", n), false).Memory
		assert.Equal(t, profiled.KVCapacity, off.KVCapacity, "--without vllm-num-gpu-blocks")
	}

	// Session 13: where the weights leave no room for a cache vLLM
	// refuses to start before the override; the override served them.
	small := cfg("engine = \"vllm\"\ngpu_memory_utilization = 0.1\n", true).Memory
	require.Negative(t, float64(small.KVCapacity))
	over := cfg("engine = \"vllm\"\ngpu_memory_utilization = 0.1\nnum_gpu_blocks = 100\n", true).Memory
	assert.Equal(t, small.KVCapacity, over.KVCapacity, "weights do not fit: no cache, override or not")

	w, err := Parse("w.toml", []byte(minimal+"[runtime]\nengine = \"sglang\"\nnum_gpu_blocks = 100\n"))
	require.NoError(t, err)
	require.Len(t, w.Warnings, 1)
	assert.Contains(t, w.Warnings[0], "runtime.num_gpu_blocks is vLLM's")
	sg := cfg("engine = \"sglang\"\nnum_gpu_blocks = 100\n", true).Memory
	assert.Equal(t, cfg("engine = \"sglang\"\n", true).Memory.KVCapacity, sg.KVCapacity, "SGLang keeps its pool")

	for _, n := range []string{"0", "-3"} {
		_, err := Parse("e.toml", []byte(minimal+"[runtime]\nengine = \"vllm\"\nnum_gpu_blocks = "+n+"\n"))
		require.Error(t, err, n)
		assert.Contains(t, err.Error(), "runtime.num_gpu_blocks", n)
		assert.NotContains(t, err.Error(), "\n", "one line")
	}
}
