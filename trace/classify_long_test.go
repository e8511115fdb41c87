package trace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
)

// longNames returns n distinct kernel names of about size bytes each, that
// no rule matches (the worst case: every rule scans the whole name).
func longNames(n, size int) []string {
	base := strings.Repeat("q", size)
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i) + base
	}
	return out
}

func BenchmarkClassifyLongNames(b *testing.B) {
	names := longNames(64, 64<<10)
	b.SetBytes(int64(len(names) * len(names[0])))
	for b.Loop() {
		c := NewClassifier(nil)
		for _, n := range names {
			c.Classify(n)
		}
	}
}

// Rules see at most MaxRuleName bytes of a name: a name longer than that is
// classified by its head, and what follows cannot change the class.
func TestClassifyLongNameCut(t *testing.T) {
	c := NewClassifier(nil)
	head := "void flash::flash_fwd_kernel<" // attention by its head
	got := c.Classify(head + strings.Repeat("x", 2*MaxRuleName) + "nccl_AllReduce")
	if got.Category.String() != "attention" {
		t.Errorf("long flash name: got %v, want attention", got.Category)
	}
	tail := strings.Repeat("x", MaxRuleName) + "fused_moe_kernel" // beyond the cut
	if got := c.Classify(tail); got.Matched {
		t.Errorf("a rule matched past MaxRuleName: %+v", got)
	}
	if got := c.Classify("fused_moe_kernel"); !got.Matched {
		t.Error("fused_moe_kernel unmatched")
	}
}

func TestRequiredLiterals(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string // nil: no filter
	}{
		{"act_and_mul|silu|gelu", []string{"act_and_mul", "silu", "gelu"}},
		{"^nccl(Dev)?Kernel_AllReduce", []string{"Kernel_AllReduce"}},
		{"^fmhaSm\\d+|fmhaKernel|^fmha_", []string{"fmhaSm", "fmhaKernel", "fmha_"}},
		{"(?i)gemm", nil},
		{"a*", nil},
		{"x|.*", nil},
		{"[ab]c", []string{"c"}},
	}
	for _, tt := range tests {
		got := requiredLiterals(tt.pattern)
		if len(tt.want) == 0 {
			if got != nil {
				t.Errorf("%q: got %q, want no filter", tt.pattern, got)
			}
			continue
		}
		gotSet := map[string]bool{}
		for _, g := range got {
			gotSet[g] = true
		}
		for _, w := range tt.want {
			if !gotSet[w] {
				t.Errorf("%q: got %q, want %q among them", tt.pattern, got, w)
			}
		}
	}
}

// The prefilter never drops a match: every rule's literals are in every
// name of the fixtures that its expression matches.
func TestPrefilterKeepsMatches(t *testing.T) {
	rs := DefaultRules()
	names := []string{"void flash::flash_fwd_kernel<x>", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "nvjet_tst_a", "Memcpy DtoD (Device -> Device)",
		"_w8a8_block_fp8_matmul", "fused_moe_kernel", "reduce_segments", "Cijk_Alik_Bljk", "triton_poi_fused_0"}
	for i := range rs.list {
		r := &rs.list[i]
		for _, n := range names {
			if r.re.MatchString(n) && r.lits != nil && !containsAny(n, r.lits) {
				t.Errorf("rule %q matches %q but its literals %q are not in it", r.Match, n, r.lits)
			}
		}
	}
	filtered := 0
	for i := range rs.list {
		if rs.list[i].lits != nil {
			filtered++
		}
	}
	if filtered < len(rs.list)/2 {
		t.Errorf("only %d of %d rules have a literal prefilter", filtered, len(rs.list))
	}
}

// Over the kernel names of the testdata traces, the classifier (cut names,
// literal prefilter) decides as the plain rule walk over full names does.
func TestClassifyMatchesPlainRuleWalk(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json.gz")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	names := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		r, err := NewReader(fh)
		require.NoError(t, err)
		var ev Event
		for r.Next(&ev) == nil {
			if ev.Cat == CatKernel || ev.Cat == CatMemcpy || ev.Cat == CatMemset {
				names[ev.Name] = true
			}
		}
		r.Close()
		fh.Close()
	}
	rs := DefaultRules()
	c := NewClassifier(rs)
	for n := range names {
		want := Class{Category: cost.Other, Op: "unclassified", Rule: -1}
		for i := range rs.list {
			if r := &rs.list[i]; r.re.MatchString(n) {
				want = Class{Category: r.Category, Op: r.Op, Rule: i, Matched: true}
				break
			}
		}
		assert.Equal(t, want, c.Classify(n), n)
	}
}
