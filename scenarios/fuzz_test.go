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
			for _, gos := range []string{"destination has type", "scenarios.raw", "type mismatch for"} {
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
		if _, err := s.ServeConfig(sm, s.Serving.Points()[0]); err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ServeConfig error is not a *scenarios.Error: %T %v", err, err)
			}
		}

	})
}
