package campaign

import (
	"errors"
	"fmt"
	"github.com/moecast/moecast/internal/unit"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/report"
)

// opGEMM is the dense GEMMs through cuBLASLt.
const opGEMM = "gemm"

// gemmModels are the presets whose dense projections the gemm op measures
// (Kimi-K2.5/K2 and DeepSeek-V3/R1 share their MLA and MLP dimensions;
// the duplicates add no shape).
var gemmModels = []string{"kimi-k2.5", "kimi-k2", "deepseek-v3", "deepseek-r1", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b"}

// GEMMTPs are the tensor-parallel degrees measured (where they divide the
// split dimension: attention heads, the MLP width); quickGEMMTPs under
// --quick (the shipped H200 scenarios' TP8 and TP1/DP-attention layouts).
var (
	GEMMTPs      = []int{1, 2, 4, 8}
	quickGEMMTPs = []int{1, 8}
)

// gemmTPs is the TPs measured under o.
func (o Options) gemmTPs() []int {
	if o.Quick {
		return quickGEMMTPs
	}
	return GEMMTPs
}

// gemmKinds maps the weight-format names the cost model asks for
// (dtype.Format.Name) to the cuBLASLt matmul that runs them: bf16 as bf16,
// DeepSeek-V3's fp8 128x128-block weights with 1x128 per-token-group
// activation scales (what vLLM's block-fp8 linear computes).
var gemmKinds = map[string]cuda.MatmulKind{"bf16": cuda.MatmulBF16, "fp8-b128": cuda.MatmulFP8Block128}

// GEMMShape is one weight matrix of one GPU: Y[m, N] = X[m, K] x W^T,
// stored in Dtype, and the projections of the models that have it.
type GEMMShape struct {
	Dtype string
	N, K  int
	Uses  []string // "kimi-k2.5 tp8 o_proj"
}

// gemmShapes lists the per-GPU dense GEMMs of gemmModels at tps, as
// sim prices them (sim/ops.go): the attention projections (MLA's q_a and
// kv_a fused as vLLM runs them, and unfused; q_b, kv_b for prefill,
// o_proj; GQA's qkv and o), the dense MLP and shared expert (gate_up,
// down), the router, lm_head (vocab-parallel) and the MTP eh_proj; MLA's
// absorbed per-head W_UK/W_UV (batched, a table keyed by n and k cannot
// hold them) and the DSA indexer are left out, and so are formats without
// a cuBLASLt matmul here (gemmKinds). Sorted by dtype, n, k.
func gemmShapes(tps []int) ([]GEMMShape, error) {
	idx := map[[3]string]int{}
	var out []GEMMShape
	add := func(modelName string, l model.Linear, tp int) {
		if _, ok := gemmKinds[l.Format.Name]; !ok {
			return
		}
		in, o := l.ShardDims(tp)
		use := fmt.Sprintf("%s tp%d %s", modelName, tp, l.Name)
		key := [3]string{l.Format.Name, fmt.Sprint(o), fmt.Sprint(in)}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, GEMMShape{Dtype: l.Format.Name, N: o, K: in})
		}
		if !slices.Contains(out[i].Uses, use) {
			out[i].Uses = append(out[i].Uses, use)
		}
	}
	for _, name := range gemmModels {
		m, err := model.Preset(name)
		if err != nil {
			return nil, err
		}
		for _, tp := range tps {
			if !splits(m, tp) {
				continue
			}
			for _, l := range gemmLinears(m) {
				t := tp
				if l.Split == model.Replicated {
					t = 1
				}
				add(name, l, t)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Dtype != b.Dtype {
			return a.Dtype < b.Dtype
		}
		if a.N != b.N {
			return a.N < b.N
		}
		return a.K < b.K
	})
	for i := range out {
		sort.Strings(out[i].Uses)
	}
	return out, nil
}

// splits says whether tp divides m's attention heads and MLP widths.
func splits(m *model.Config, tp int) bool {
	if m.Attn.Heads%tp != 0 {
		return false
	}
	for _, l := range gemmLinears(m) {
		switch l.Split {
		case model.Column:
			if l.Out%tp != 0 {
				return false
			}
		case model.Row:
			if l.In%tp != 0 {
				return false
			}
		}
	}
	return true
}

// gemmLinears are the dense GEMMs of one layer of each kind of m, as sim
// builds them (its fused MLA q_a + kv_a included).
func gemmLinears(m *model.Config) []model.Linear {
	var out []model.Linear
	if f, ok := m.FusedQKVA(); ok {
		out = append(out, f)
	}
	ls := m.AttentionLinears()
	for _, l := range ls {
		if !strings.HasPrefix(l.Name, "indexer.") {
			out = append(out, l)
		}
	}
	out = append(out, m.DenseMLPLinears()...)
	for _, l := range m.SharedExpertLinears() {
		l.Name = "shared_expert." + l.Name
		out = append(out, l)
	}
	if m.MoE.Experts > 0 {
		out = append(out, m.RouterLinear())
	}
	out = append(out, m.LMHeadLinear())
	return append(out, m.MTPLinears()...)
}

// gemmPoints are the (shape, m) the gemm op measures under o.
func gemmPoints(o Options) ([]GEMMShape, []int, error) {
	sh, err := gemmShapes(o.gemmTPs())
	return sh, o.Tokens(), err
}

// gemmResult is one measured GEMM.
type gemmResult struct {
	Shape GEMMShape
	M     int
	// RunM is the m it ran at: M, or for fp8-b128 M rounded up where
	// cuBLASLt has no block-scaled algorithm at M (gpu.MatmulResult.RunM).
	RunM          int
	Timing        unit.Timing
	Algo          cuda.Algo
	Copies        int
	CallsPerGraph int
	BytesPerSec   float64
	FLOPsPerSec   float64
}

// gemmRun is what the gemm op measured, with the library and checks.
type gemmRun struct {
	Results []gemmResult
	Library string   // "cuBLASLt 13.1.0 (cudart 13000) from PATH"
	Checks  []string // host-reference checks, one line each
	Skipped []string // dtypes not measured, with why
	TPs     []int    // the TPs whose shapes were measured
}

// gemmOp measures the dense projections through cuBLASLt.
type gemmOp struct{}

func (gemmOp) Name() string { return opGEMM }
func (gemmOp) Steps(o Options) (int, error) {
	sh, _, err := gemmPoints(o)
	return len(sh), err
}
func (gemmOp) Tables() bool { return true }

// gemmRotateBytes is how much weight data each GEMM rotates over (over 4x
// the H200's 60 MiB L2), so that every call reads its weights from HBM.
const gemmRotateBytes = 256 << 20

func (gemmOp) Run(e *Env) (*Output, error) {
	if err := cuda.InitCUBLASLt(); err != nil {
		err = fmt.Errorf("%w (set MOECAST_CUBLASLT to a libcublasLt.so.12 or .13)", err)
		if errors.Is(err, cuda.ErrNoCUBLASLt) && !slices.Contains(e.Options.Ops, opGEMM) {
			// a campaign of every op goes on without the gemm tables
			return &Output{Op: opGEMM, Method: []string{"gemm not measured: " + err.Error()},
				Lines: []string{"gemm      not measured: " + err.Error()}}, nil
		}
		return nil, err
	}
	v, rt, err := cuda.CUBLASLtVersion()
	if err != nil {
		return nil, err
	}
	run := &gemmRun{TPs: e.Options.gemmTPs(), Library: fmt.Sprintf("cuBLASLt %s (cudart %d) from %s", cuda.FormatCUBLASLtVersion(v), rt, cuda.CUBLASLtPath())}
	h, err := cuda.NewBLASLt()
	if err != nil {
		return nil, err
	}
	defer h.Destroy()
	ws, err := cuda.Alloc(gpu.BLASWorkspace)
	if err != nil {
		return nil, err
	}
	defer cuda.Free(ws)
	shapes, ms, err := gemmPoints(e.Options)
	if err != nil {
		return nil, err
	}
	skip := map[string]string{} // dtype -> why it has no table
	for _, dt := range []string{"bf16", "fp8-b128"} {
		line, err := checkKind(h, gemmKinds[dt], e.Stream)
		if errors.Is(err, cuda.ErrNoAlgorithm) || errors.Is(err, errCheck) {
			// no such matmul here, or a wrong result: no table for dt
			skip[dt] = err.Error()
			run.Skipped = append(run.Skipped, fmt.Sprintf("%s: %v", dt, err))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s check: %w", dt, err)
		}
		run.Checks = append(run.Checks, line)
	}
	for _, sh := range shapes {
		start := time.Now()
		if why, ok := skip[sh.Dtype]; ok {
			e.Say("gemm %s n=%d k=%d: skipped (%s)", sh.Dtype, sh.N, sh.K, why)
			continue
		}
		rs, err := gpu.MeasureMatmuls(h, gpu.MatmulCase{Name: sh.Uses[0], Kind: gemmKinds[sh.Dtype], N: sh.N, K: sh.K}, ms,
			gemmRotateBytes, ws, gpu.BLASWorkspace, e.Stream)
		if err != nil {
			return nil, fmt.Errorf("%s n=%d k=%d: %w", sh.Dtype, sh.N, sh.K, err)
		}
		var parts []string
		for _, r := range rs {
			run.Results = append(run.Results, gemmResult{Shape: sh, M: r.Case.M, RunM: r.RunM, Algo: r.Algo, Copies: r.Copies, CallsPerGraph: r.CallsPerGraph,
				Timing:      resultTiming(r.GraphSeconds, r.GraphMin, r.GraphMax, r.LaunchSeconds, r.CallsPerGraph),
				BytesPerSec: r.BytesPerSec, FLOPsPerSec: r.FLOPsPerSec})
			parts = append(parts, fmt.Sprintf("m%d %.1f", r.Case.M, r.GraphSeconds*1e6))
		}
		e.Say("gemm %s n=%d k=%d (%s): %s us (%.2f s)", sh.Dtype, sh.N, sh.K, sh.Uses[0], strings.Join(parts, ", "), time.Since(start).Seconds())
	}
	return gemmOutput(run), nil
}

// errCheck marks a matmul whose result is not the host reference's.
var errCheck = errors.New("result differs from the host reference")

// checkKind compares one small matmul of kind with the host reference
// (fp8-b128: with uniform block scales, which any order of the scale
// tensors reads alike, then per-block scales, whose order is cuBLASLt's).
func checkKind(h *cuda.BLASLt, kind cuda.MatmulKind, s cuda.Stream) (string, error) {
	spec := cuda.MatmulSpec{Kind: kind, M: 32, N: 384, K: 512}
	c, err := gpu.CheckMatmul(h, spec, 7, true, s)
	if err != nil {
		return "", err
	}
	if !c.Pass() {
		return "", fmt.Errorf("%w: %s", errCheck, c)
	}
	line := fmt.Sprintf("%s: within tolerance of a float64 host reference (worst |err|/tol %.2f)", spec, c.Worst)
	if kind == cuda.MatmulFP8Block128 {
		b, err := gpu.CheckMatmul(h, spec, 8, false, s)
		if err != nil {
			return "", err
		}
		if b.Pass() {
			line += fmt.Sprintf("; per-block scales read as %s (worst %.2f)", b.Layout, b.Worst)
		} else {
			line += "; per-block scale order not identified (timing unaffected)"
		}
	}
	return line, nil
}

// gemmOutput makes one gemm table per dtype (rows by n, k, m) and the report.
func gemmOutput(run *gemmRun) *Output {
	out := &Output{Op: opGEMM, Data: run}
	byDtype := map[string][]gemmResult{}
	var dtypes []string
	for _, r := range run.Results {
		if _, ok := byDtype[r.Shape.Dtype]; !ok {
			dtypes = append(dtypes, r.Shape.Dtype)
		}
		byDtype[r.Shape.Dtype] = append(byDtype[r.Shape.Dtype], r)
	}
	sort.Strings(dtypes)
	checks := strings.Join(run.Checks, "; ")
	for _, dt := range dtypes {
		rows := byDtype[dt]
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			if a.Shape.N != b.Shape.N {
				return a.Shape.N < b.Shape.N
			}
			if a.Shape.K != b.Shape.K {
				return a.Shape.K < b.Shape.K
			}
			return a.M < b.M
		})
		what := "bf16 x bf16 -> bf16, fp32 accumulate"
		if dt == "fp8-b128" {
			what = "fp8 e4m3 x e4m3 -> bf16, fp32 accumulate, W with one fp32 scale per 128x128 block and X one per 1x128 " +
				"(BLK128x128_32F x VEC128_32F, DeepSeek-V3's block fp8 with per-token-group activation scales); the activation's " +
				"quantization kernel (vLLM's per_token_group_quant_fp8 before the GEMM) is not included"
		}
		t := calib.Table{
			Name:    "gemm.cublaslt." + dt,
			Op:      "gemm",
			Keys:    calib.Keys{Dtype: dt},
			Columns: []string{"n", "k", "m", "latency_us"},
			Provenance: calib.Provenance{Kernel: run.Library + ", the heuristic's first algorithm (32 MiB workspace)",
				Launch: "cuda-graph", Cache: "flushed",
				Method: fmt.Sprintf("cuBLASLt matmul Y[m,n] = X[m,k] x W[n,k]^T (nn.Linear layout), %s; the dense projections of %s at TP %s "+
					"(per-GPU shapes as sim prices them); weights rotated over copies totalling %d MiB so every call reads HBM; "+
					"latency = median of "+gpu.ReplayRule+" of a captured graph of about %.1f ms (up to %d calls, cycling enough copies that %d MiB of other weights pass between two reads of one); checked: %s",
					what, strings.Join(gemmModels, ", "), joinInts(run.TPs), gemmRotateBytes>>20, gpu.BLASReplaySeconds*1e3, gpu.BLASMaxCalls,
					gpu.BLASDistinctBytes>>20, checks)},
		}
		padded := map[[2]int]bool{}
		for _, r := range rows {
			t.Rows = append(t.Rows, []float64{float64(r.Shape.N), float64(r.Shape.K), float64(r.M), roundPS(float64(r.Timing.Median) * 1e6)})
			if r.RunM > r.M {
				padded[[2]int{r.M, r.RunM}] = true
			}
		}
		if len(padded) > 0 {
			var ps []string
			for _, p := range slices.SortedFunc(maps.Keys(padded), func(a, b [2]int) int { return a[0] - b[0] }) {
				ps = append(ps, fmt.Sprintf("m=%d ran as m=%d", p[0], p[1]))
			}
			t.Provenance.Method += "; rows at an m cuBLASLt has no algorithm for hold the time at m rounded up: " + strings.Join(ps, ", ")
		}
		out.Tables = append(out.Tables, t)
	}
	out.Method = append(out.Method, fmt.Sprintf("dense GEMMs through %s (%d points)", run.Library, len(run.Results)))
	for _, s := range run.Skipped {
		out.Method = append(out.Method, "gemm not measured: "+s)
		out.Lines = append(out.Lines, "gemm      not measured: "+s)
	}
	for _, c := range run.Checks {
		out.Lines = append(out.Lines, "gemm      "+c)
	}
	rt := &report.Table{Columns: []report.Column{{Name: "dtype", Left: true}, {Name: "n"}, {Name: "k"}, {Name: "m"}, {Name: "run_m"},
		{Name: "latency_us", Text: "%.2f"}, {Name: "spread_pct", Text: "%.1f"}, {Name: "eager_us", Text: "%.2f"},
		{Name: "tb_per_s", Text: "%.2f"}, {Name: "tflop_per_s", Text: "%.1f"}, {Name: "algo", Left: true}, {Name: "uses", Left: true}}}
	for _, r := range run.Results {
		spread := 0.0
		if r.Timing.Min > 0 {
			spread = 100 * float64(r.Timing.Max/r.Timing.Min-1)
		}
		rt.Add(r.Shape.Dtype, r.Shape.N, r.Shape.K, r.M, max(r.RunM, r.M), float64(r.Timing.Median)*1e6, spread, float64(r.Timing.Eager)*1e6,
			r.BytesPerSec/1e12, r.FLOPsPerSec/1e12, r.Algo.String(), usesText(r.Shape.Uses))
	}
	out.Report = rt
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// usesText is the first two uses and how many more.
func usesText(u []string) string {
	if len(u) <= 2 {
		return strings.Join(u, "; ")
	}
	return fmt.Sprintf("%s; %s; +%d", u[0], u[1], len(u)-2)
}
