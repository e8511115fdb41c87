package trace

import (
	"regexp"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/cost"
)

// MoE scopes. An engine that runs a MoE layer's experts as a loop of plain
// GEMMs (one per expert: plain PyTorch, HF transformers' eager experts, a
// framework's fallback path) launches kernels that the name rules call
// dense GEMMs, activations, sorts and copies. The layer's structure tells
// them apart: the engine runs the layer inside one CPU scope (vLLM's FusedMoE
// custom op `vllm::moe_forward`, a record_function("moe_forward")), and
// every kernel launched inside it is part of the MoE layer. The analyzer
// reads these scopes like step annotations (user_annotation and cpu_op
// events, per thread) and moves the GEMM, elementwise, sampling and other
// kernels launched inside one to the moe category, keeping their rule's op
// label (a top-k stays "torch_topk", which validate maps to the router
// top-k). Attention and collective kernels keep their category.
var reMoEScope = regexp.MustCompile(`(?i)moe_forward|fused_moe|fused_experts|sparse_?moe_?block|moe_?block`)

// isMoEScope reports whether a CPU scope name is a MoE layer's; a cheap
// substring test first, since every aten op is a cpu_op.
func isMoEScope(name string) bool {
	if !strings.Contains(name, "moe") && !strings.Contains(name, "MoE") && !strings.Contains(name, "Moe") && !strings.Contains(name, "xperts") {
		return false
	}
	return reMoEScope.MatchString(name)
}

// moeScopes holds the MoE scopes per thread, sorted by start.
type moeScopes struct {
	byThread map[threadKey][]span
	dirty    map[threadKey]bool
}

type span struct{ ts, end Time }

func (m *moeScopes) add(pid, tid int64, ts, end Time) {
	if m.byThread == nil {
		m.byThread, m.dirty = map[threadKey][]span{}, map[threadKey]bool{}
	}
	k := threadKey{pid, tid}
	m.byThread[k] = append(m.byThread[k], span{ts, end})
	m.dirty[k] = true
}

// holds reports whether a launch at ts on (pid, tid) is inside a MoE scope.
func (m *moeScopes) holds(pid, tid int64, ts Time) bool {
	k := threadKey{pid, tid}
	w := m.byThread[k]
	if len(w) == 0 {
		return false
	}
	if m.dirty[k] {
		sort.Slice(w, func(i, j int) bool { return w[i].ts < w[j].ts })
		// merge nested and overlapping scopes
		n := 0
		for _, s := range w {
			if n > 0 && s.ts <= w[n-1].end {
				w[n-1].end = max(w[n-1].end, s.end)
				continue
			}
			w[n] = s
			n++
		}
		w = w[:n]
		m.byThread[k] = w
		delete(m.dirty, k)
	}
	i := sort.Search(len(w), func(i int) bool { return w[i].ts > ts }) - 1
	return i >= 0 && ts <= w[i].end
}

// inMoE is the category of a kernel launched inside a MoE scope.
func inMoE(c cost.Category) cost.Category {
	switch c {
	case cost.GEMM, cost.Elementwise, cost.Sampling, cost.Other:
		return cost.MoE
	}
	return c
}
