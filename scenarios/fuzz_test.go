package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the scenario parser: it must return a
// scenario or an *Error, never panic. The seed corpus is every shipped
// scenario plus broken variants of them (go test runs the seeds; run
// `go test ./scenarios -fuzz FuzzParse -fuzztime 30s` to explore).
func FuzzParse(f *testing.F) {
	for _, name := range Names() {
		src, err := EmbeddedSource(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
		s := string(src)
		f.Add(strings.Replace(s, "tp = 8", "tp = 3", 1))
		f.Add(strings.Replace(s, "[parallel]", "[parallel", 1))
		f.Add(strings.Replace(s, "batch = [", "batch = [0, ", 1))
		f.Add(s[:len(s)/2])
	}
	f.Add(minimal + "[hardware.custom_gpu]\nmemory = \"1e400GB\"\nbf16 = \"-5TFLOPS\"\n")
	f.Add(minimal + "[speculative]\nmethod = \"eagle3\"\ndraft_tokens = 100000000\nacceptance = [1]\n")
	f.Add(minimal + "[workload]\nbatch = [9223372036854775807]\ncontext = 9223372036854775807\n")
	f.Add(minimal + "[workload]\nconcurrency = [4, 0]\n")
	f.Add(minimal + "[workload]\nconcurrency = [4]\nrequest_rate = [2.0]\n")
	f.Add(minimal + "[workload]\nrequest_rate = [inf, nan, -1, 1e308]\nburstiness = 0.0\n")
	f.Add(minimal + "[workload]\nrequest_rate = [2]\nrequests = -1\ninput_tokens = 0\noutput_tokens = 9223372036854775807\nrange_ratio = 1.0\nseed = -5\n")
	f.Add(minimal + "[runtime]\nengine = \"sglang\"\nmax_num_batched_tokens = 1\nmax_num_seqs = 0\nmixed_chunk = true\nasync_scheduling = false\n[workload]\nconcurrency = [9223372036854775807]\n")
	f.Add(minimal + "[runtime]\nengine = \"vllm\"\nmax_num_batched_tokens = 16\nmax_num_seqs = 32\n")
	f.Add(minimal + "[hardware.custom_gpu]\nbandwidth = \"1e30TB/s\"\n")
	f.Add(minimal + "[hardware.custom_fabric]\nlatency = \"1e300s\"\nbandwidth = \"1e-300B/s\"\noverride_calibration = true\nnode_gpus = 2\n")
	f.Add(minimal + "[speculative]\nmethod = \"ngram\"\ndraft_tokens = 3\nacceptance = 0.5\n")
	f.Add(minimal + "[speculative]\nmethod = \"ngram\"\ndraft_tokens = 3\nacceptance = [0.5, \"x\"]\n")
	f.Add(minimal + "[runtime]\nallreduce = \"oneshot\"\n")
	// [disagg] pools with their own engine settings, and the runtime keys
	// added since (capture sizes, MXFP4 activations, version-dependent
	// defaults), in range and out of it.
	for _, pool := range []string{
		"max_num_seqs = 30000\nmax_total_tokens = 524288\ngpu_memory_utilization = 0.75\nmax_num_batched_tokens = 131072\nmax_prefill_tokens = 32768\n",
		"scheduler_recv_interval = 10\n",
		"max_total_tokens = 0\ngpu_memory_utilization = nan\n",
		"gpu_memory_utilization = 1.5\nmax_prefill_tokens = 0\n",
		"max_num_batched_tokens = 9223372036854775807\nmax_total_tokens = -1\n",
		"gpu_memory_utilization = 1e-300\nmax_total_tokens = 1\n",
	} {
		for _, engine := range []string{"sglang", "vllm"} {
			f.Add(disaggSeed(engine, pool))
		}
	}
	for _, rt := range []string{
		"cudagraph_capture_sizes = [512, 1, 1, 3]\nmax_cudagraph_capture_size = 512\n",
		"cudagraph_capture_sizes = []\n",
		"cudagraph_capture_sizes = [0, -1, 9223372036854775807]\n",
		"cudagraph_capture_sizes = [100000]\nmax_num_batched_tokens = 8192\n",
		"mxfp4_activation = \"mxfp8\"\n",
		"mxfp4_activation = \"\"\nengine = \"sglang\"\nengine_version = \"0.5.10.post1\"\n",
		"engine = \"sglang\"\nengine_version = \"0.5.99999999999999999999\"\nasync_scheduling = true\n",
		"engine_version = \"v-1.-2.-3\"\n",
	} {
		f.Add(minimal + "[runtime]\n" + rt)
		f.Add(minimal + "[runtime]\n" + rt + "[speculative]\nmethod = \"mtp\"\ndraft_tokens = 3\nacceptance = [0.8]\n")
	}
	f.Add(minimal + "[runtime]\ngpu_memory_utilization = 1e999\nmax_num_seqs = 9223372036854775808\n")
	f.Add(minimal + "[runtime]\ngpu_memory_utilization = 9223372036854775807\n")
	f.Add("[hardware]\ncustom_gpu = 3\n")
	f.Add("[[model]]\npreset = 1\n")
	f.Add("a.b.c = 1\n\"x\" = { y = [1, {z = 2}] }\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("fuzz.toml", []byte(src))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *scenarios.Error: %T %v", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			for _, gos := range []string{"destination has type", "scenarios.raw", "type mismatch for", "float64", "int64"} {
				if strings.Contains(err.Error(), gos) {
					t.Fatalf("error speaks Go (%q): %v", gos, err)
				}
			}
			return
		}
		if len(s.Batches) == 0 || s.Context <= 0 {
			t.Fatalf("accepted scenario without a workload: %+v", s)
		}
		sm, err := s.Sim()
		if err != nil {
			t.Fatalf("Parse accepted a scenario that Sim refuses: %v", err)
		}
		p, err := sm.Step(s.Batches[0], s.Context) // an error is fine; a panic is not
		if err == nil && !(p.Step.Time >= 0 && p.Step.Time < 1e12) {
			t.Fatalf("accepted scenario predicts a step of %v s", float64(p.Step.Time))
		}
		if len(s.Serving.Points()) == 0 {
			t.Fatalf("accepted scenario without serving points: %+v", s.Serving)
		}
		c, err := s.ServeConfig(sm, s.Serving.Points()[0])
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ServeConfig error is not a *scenarios.Error: %T %v", err, err)
			}
			return
		}
		if s.Disagg != nil {
			psm, dsm, err := s.DisaggSims()
			if err == nil {
				err = s.DisaggConfig(&c, psm, dsm)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("disagg error spans lines: %q", err)
			}
		}

	})
}

// disaggSeed is a [disagg] scenario of engine with pool settings added to
// both pools.
func disaggSeed(engine, pool string) string {
	return `name = "d"
[model]
preset = "deepseek-v3"
kv_cache = "fp8"
[hardware]
gpu = "h200-sxm"
gpus = 24
calibration = "none"
[disagg]
transfer = "nvlink4"
[disagg.prefill]
workers = 1
tp = 8
` + pool + `[disagg.decode]
workers = 2
tp = 1
dp = 8
ep = 8
dp_attention = true
` + pool + `[runtime]
engine = "` + engine + `"
[workload]
concurrency = [8]
input_tokens = 1024
output_tokens = 64
`
}
