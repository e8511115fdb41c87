package main

import (
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	in := strings.Join([]string{
		`name = "x"`, `# gpu = "b200-sxm" in a comment`, `[hardware]`, `gpu = "gb200"`, `gpus = 16`,
		`[disagg]`, `transfer = "nvlink5-nvl72"`, `[runtime]`, `mxfp4_activation = "mxfp8"`, `nsa_prefill_backend = "trtllm"`,
	}, "\n")
	for _, tc := range []struct {
		v             variant
		want, notWant []string
		dropped       int
	}{
		{v: h200, want: []string{`gpu = "h200-sxm"`, `transfer = "nvlink4"`, `gpus = 16`, `# gpu = "b200-sxm" in a comment`},
			notWant: []string{"mxfp4_activation", "nsa_prefill_backend", `"gb200"`}, dropped: 2},
		{v: b200, want: []string{`gpu = "b200-sxm"`, `transfer = "nvlink5"`, `mxfp4_activation = "mxfp8"`, `nsa_prefill_backend = "trtllm"`},
			notWant: []string{"nvl72", `"gb200"`}},
	} {
		got, dropped := rewrite(in, tc.v)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: rewrite lacks %q:\n%s", tc.v.name, w, got)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%s: rewrite keeps %q:\n%s", tc.v.name, w, got)
			}
		}
		if len(dropped) != tc.dropped {
			t.Errorf("%s: dropped %v, want %d settings", tc.v.name, dropped, tc.dropped)
		}
	}
}
