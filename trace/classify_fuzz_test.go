package trace

import (
	"strings"
	"testing"
)

// FuzzParseRules: any input yields rules or a positioned error, never a panic.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(defaultRulesTOML[:2000]))
	f.Add([]byte("[[rule]]\nmatch = \"nccl\"\ncategory = \"allreduce\"\nop = \"x\"\n"))
	f.Add([]byte("[[rule]]\nmatch = \"(\"\ncategory = \"gemm\"\n"))
	f.Add([]byte("[[rule]]\nmatch = \"a\"\ncategory = \"gemm\"\nextra = 1\n"))
	f.Add([]byte("[rule]\nmatch = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ParseRules("f.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.toml") {
				t.Fatalf("error without file: %v", err)
			}
			return
		}
		c := NewClassifier(rs)
		c.Classify("ncclDevKernel_AllReduce_Sum_bf16_RING_LL")
	})
}

// FuzzParseStepName: annotation names never panic, and kinds are consistent.
func FuzzParseStepName(f *testing.F) {
	for _, s := range []string{
		"execute_context_0(0)_generation_32(32)",
		"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
		"step[DECODE bs=32]", "step[EXTEND bs=15 toks=15360]", "step[MIXED", "ProfilerStep#3",
		"execute_context_99999999999999999999(1)_generation_1(1)", "gpu_model_runner: sample",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		info := parseStepName(name)
		if info.family == famNone && (info.kind != KindUnknown || info.batch != 0) {
			t.Fatalf("%q: not a step but kind %v batch %d", name, info.kind, info.batch)
		}
		if info.batch < 0 {
			t.Fatalf("%q: negative batch %d", name, info.batch)
		}
	})
}

// FuzzAnalyzer feeds arbitrary event sequences: no panic, and the breakdown
// invariants hold (exposed <= kernel time, busy <= wall, idle >= 0).
func FuzzAnalyzer(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte("step[DECODE bs=4] graph kernel kernel"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a := newAnalyzer(Options{Gap: secondsFromMicros(5)})
		names := []string{"step[DECODE bs=2]", "ProfilerStep#1", "nvjet_x", "fused_moe_kernel", "ncclDevKernel_AllReduce_x", "cudaLaunchKernel", "cudaGraphLaunch"}
		for i := 0; i+3 < len(data); i += 4 {
			b := data[i : i+4]
			ev := Event{Index: int64(i / 4), Ph: PhaseComplete, TS: timeFromMicros(float64(b[1])), Dur: secondsFromMicros(float64(b[2] % 32)), Correlation: int64(b[3] % 8), ExternalID: int64(b[3] % 3), Pid: int64(b[0] % 2), Tid: int64(b[0] % 3)}
			switch b[0] % 4 {
			case 0:
				ev.Cat, ev.Name = CatUserAnnotation, names[b[1]%2]
			case 1:
				ev.Cat, ev.Name = CatRuntime, names[5+b[1]%2]
			case 2:
				ev.Cat, ev.Name = CatKernel, names[2+b[1]%3]
			case 3:
				ev.Cat, ev.Name = CatGPUUserAnnotation, names[b[1]%2]
			}
			a.Add(&ev)
		}
		res := a.Finish()
		for _, s := range res.Steps {
			if s.Busy > s.Wall+1e-9 || s.Idle < 0 {
				t.Fatalf("step %+v: busy %v > wall %v or idle < 0", s, s.Busy, s.Wall)
			}
		}
	})
}
