package campaign

import (
	"fmt"
	"github.com/moecast/moecast/internal/unit"
	"sort"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// opElementwise names the elementwise op.
const opElementwise = "elementwise"

// Elementwise kernel widths: Kimi-K2.5's hidden size for RMSNorm and the
// residual add, its expert width whole (2048) and at TP8 (256, the shared
// expert's slice) for silu_and_mul (one row a token): the TP8 width takes
// the table down to 1.5 KB, below the decode step's smallest kernels (a
// 1-token layernorm of the 1536 q_a rank moves 6 KB).
const (
	elementwiseHidden   = 7168
	elementwiseInter    = 2048
	elementwiseInterTP8 = 256
)

// Elementwise token counts: decode batches up to 512 tokens (RMSNorm's
// 28.7 KB to 14.7 MB, the add's 43 KB to 22 MB: from launch-bound to
// bandwidth-bound, all within the H200's L2).
var (
	elementwiseTokens      = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	quickElementwiseTokens = []int{1, 8, 64, 512}
)

// ElementwiseCases is what the elementwise op times under o: RMSNorm and
// the add at width 7168 and silu_and_mul at width 2048 at every token
// count, silu_and_mul at width 256 up to 4 tokens (1.5 to 6 KB; from 8 tokens on it would repeat
// the 2048-wide sizes).
func ElementwiseCases(o Options) []gpu.ElementwiseCase {
	tokens := elementwiseTokens
	if o.Quick {
		tokens = quickElementwiseTokens
	}
	var out []gpu.ElementwiseCase
	for _, k := range []struct {
		name     string
		width    int
		maxToken int
	}{{gpu.KernelRMSNorm, elementwiseHidden, 1 << 30}, {gpu.KernelAdd, elementwiseHidden, 1 << 30},
		{gpu.KernelSiluAndMul, elementwiseInter, 1 << 30}, {gpu.KernelSiluAndMul, elementwiseInterTP8, 4}} {
		for _, t := range tokens {
			if t <= k.maxToken {
				out = append(out, gpu.ElementwiseCase{Kernel: k.name, Tokens: t, Width: k.width})
			}
		}
	}
	return out
}

// ElementwiseResult is one timed small kernel.
type ElementwiseResult struct {
	Case  gpu.ElementwiseCase
	Bytes float64 // read + written once
	unit.Timing
}

// elementwiseOp times moecast's RMSNorm, residual add and silu_and_mul
// (kernels/gpu glue.cu) at decode sizes: the elementwise table.
type elementwiseOp struct{}

func (elementwiseOp) Name() string                 { return opElementwise }
func (elementwiseOp) Steps(o Options) (int, error) { return len(ElementwiseCases(o)), nil }
func (elementwiseOp) Tables() bool                 { return true }

func (elementwiseOp) Run(e *Env) (*Output, error) {
	g, err := gpu.LoadGlue(e.Dev)
	if err != nil {
		return nil, err
	}
	var res []ElementwiseResult
	for _, c := range ElementwiseCases(e.Options) {
		tm, err := gpu.MeasureElementwise(g, c, e.Stream)
		if err != nil {
			return nil, err
		}
		r := ElementwiseResult{Case: c, Bytes: float64(c.Bytes()), Timing: tm}
		res = append(res, r)
		e.Say("elementwise %s %d x %d: %.0f B, %.2f us (%.0f GB/s)", c.Kernel, c.Tokens, c.Width, r.Bytes, float64(r.Median)*1e6, r.Bytes/float64(r.Median)/1e9)
	}
	return ElementwiseOutput(res, g.Image), nil
}

// ElementwiseOutput makes the elementwise table (one row per distinct byte
// count, sorted; kernels of the same size are averaged) and the report.
func ElementwiseOutput(res []ElementwiseResult, image string) *Output {
	out := &Output{Op: opElementwise, Data: res}
	type acc struct {
		sum float64
		n   int
	}
	by := map[float64]*acc{}
	for _, r := range res {
		if by[r.Bytes] == nil {
			by[r.Bytes] = &acc{}
		}
		by[r.Bytes].sum += float64(r.Median)
		by[r.Bytes].n++
	}
	var sizes []float64
	for b := range by {
		sizes = append(sizes, b)
	}
	sort.Float64s(sizes)
	t := calib.Table{
		Name:    "elementwise.moecast_glue.bf16",
		Op:      "elementwise",
		Columns: []string{"bytes", "latency_us"},
		Provenance: calib.Provenance{Launch: "cuda-graph", Cache: "warm",
			Kernel: "moecast glue (kernels/gpu glue.cu, " + image + ")",
			Method: fmt.Sprintf("small bf16 kernels of a decode step, one kernel per row: moecast_rmsnorm (hidden %d, eps 1e-6, one block a token), "+
				"moecast_add (residual add, hidden %d) and moecast_silu_and_mul (width %d; width %d below 8 tokens; one row a token) at %v tokens; "+
				"bytes = read + written once (2 (2 T H + H), 6 T H, 6 T W: kernels/elementwise.go's counts); "+
				"the same buffers every call, so each replay finds them in L2 (cache warm; every size is below the L2, as a step's small tensors are); "+
				"latency = the median of "+gpu.ReplayRule+" of a graph of up to 200 calls; kernels of the same byte count averaged",
				elementwiseHidden, elementwiseHidden, elementwiseInter, elementwiseInterTP8, tokensOf(res))},
	}
	for _, b := range sizes {
		t.Rows = append(t.Rows, []float64{b, roundPS(by[b].sum / float64(by[b].n) * 1e6)})
	}
	out.Tables = []calib.Table{t}
	rt := &report.Table{Columns: []report.Column{{Name: "kernel", Left: true}, {Name: "tokens"}, {Name: "width"}, {Name: "bytes"},
		{Name: "latency_us", Text: "%.2f"}, {Name: "spread_pct", Text: "%.1f"}, {Name: "eager_us", Text: "%.2f"}, {Name: "GB/s", Text: "%.0f"}}}
	for _, r := range res {
		spread := 0.0
		if r.Min > 0 {
			spread = 100 * float64(r.Max/r.Min-1)
		}
		rt.Add(r.Case.Kernel, r.Case.Tokens, r.Case.Width, int64(r.Bytes), float64(r.Median)*1e6, spread, float64(r.Eager)*1e6, r.Bytes/float64(r.Median)/1e9)
	}
	out.Report = rt
	return out
}

// tokensOf lists the distinct token counts of res, in order.
func tokensOf(res []ElementwiseResult) []int {
	var out []int
	seen := map[int]bool{}
	for _, r := range res {
		if !seen[r.Case.Tokens] {
			seen[r.Case.Tokens] = true
			out = append(out, r.Case.Tokens)
		}
	}
	sort.Ints(out)
	return out
}
