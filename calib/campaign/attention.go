package campaign

import (
	"fmt"
	"github.com/moecast/moecast/internal/unit"
	"slices"
	"sort"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// opAttention is the decode attention op.
const opAttention = "attention"

// gqaModel is a shipped GQA model's attention (config.json's
// num_attention_heads, num_key_value_heads, head_dim).
type gqaModel struct {
	Name                    string
	Heads, KVHeads, HeadDim int
}

// gqaModels are the shipped GQA models (model/presets).
var gqaModels = []gqaModel{
	{Name: "qwen3-235b-a22b", Heads: 64, KVHeads: 4, HeadDim: 128},
	{Name: "qwen3-30b-a3b", Heads: 32, KVHeads: 4, HeadDim: 128},
	{Name: "gpt-oss-120b", Heads: 64, KVHeads: 8, HeadDim: 64},
	{Name: "mixtral-8x7b", Heads: 32, KVHeads: 8, HeadDim: 128},
	{Name: "llama-4-maverick", Heads: 40, KVHeads: 8, HeadDim: 128},
}

// mlaModel is a shipped MLA model's attention: the query heads and, for
// the module, its projections' dims (DeepSeek-V3's layout).
type mlaModel struct {
	Name                                                    string
	Heads, Hidden, QLoRARank, KVLoRARank, QKNope, QKRope, V int
}

// mlaModels are the shipped MLA models whose latent width the kernel
// serves (kv_lora_rank 512, qk_rope 64): Kimi-K2.5 (and Kimi-K2, same
// attention) and DeepSeek-V3/R1. GLM-5's attention reads a DSA-selected
// subset of the cache and is left out.
var mlaModels = []mlaModel{
	{Name: "kimi-k2.5", Heads: 64, Hidden: 7168, QLoRARank: 1536, KVLoRARank: 512, QKNope: 128, QKRope: 64, V: 128},
	{Name: "deepseek-v3", Heads: 128, Hidden: 7168, QLoRARank: 1536, KVLoRARank: 512, QKNope: 128, QKRope: 64, V: 128},
}

// attentionTPs are the attention tensor-parallel sizes whose per-GPU head
// splits are measured (DP attention runs every head on one GPU: TP 1).
var attentionTPs = []int{1, 2, 4, 8}

// gqaSplit is one GPU's share of a GQA layer: heads = heads/tp and
// kv_heads = max(1, kv_heads/tp), as sim splits them (KV heads replicated
// where tp exceeds them).
type gqaSplit struct{ Heads, KVHeads, HeadDim int }

// gqaSplits are the distinct per-GPU splits of gqaModels at attentionTPs,
// by head dim, heads, kv heads.
func gqaSplits() []gqaSplit {
	var out []gqaSplit
	for _, m := range gqaModels {
		for _, tp := range attentionTPs {
			if m.Heads%tp != 0 {
				continue
			}
			s := gqaSplit{Heads: m.Heads / tp, KVHeads: max(1, m.KVHeads/tp), HeadDim: m.HeadDim}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.HeadDim != b.HeadDim {
			return a.HeadDim < b.HeadDim
		}
		if a.Heads != b.Heads {
			return a.Heads < b.Heads
		}
		return a.KVHeads < b.KVHeads
	})
	return out
}

// MLAHeads are the distinct per-GPU query head counts of mlaModels at
// attentionTPs, ascending.
func MLAHeads() []int {
	var out []int
	for _, m := range mlaModels {
		for _, tp := range attentionTPs {
			if h := m.Heads / tp; m.Heads%tp == 0 && !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Decode batches (sequences) and KV lengths (tokens a sequence) of the
// attention op (the lookups interpolate between them in log-log; the
// calib gpu budget, issue 13, leaves the op about 60 s, --quick 12 s).
var (
	fullAttnBatches   = []int{1, 8, 64, 256}
	fullAttnContexts  = []int{1024, 8192, 32768, 131072}
	quickAttnBatches  = []int{1, 64}
	quickAttnContexts = []int{4096, 32768}
)

// quickMLAHeads are the MLA module's head counts under --quick: Kimi-K2.5
// TP8 (8), DeepSeek-V3 TP8 (16), and each on one GPU (64, 128: DP
// attention).
var quickMLAHeads = []int{8, 16, 64, 128}

// maxAttnKVBytes bounds one point's KV cache (one layer, K and V): larger
// batch x context points are skipped (the lookups clamp to the longest
// context measured at that batch, and the cost model floors them at the
// DRAM streaming time).
const maxAttnKVBytes = 32 << 30

// attnRotateBytes is how much KV cache (and, for the MLA module, weights)
// the calls rotate over: 4x the H200's 60 MiB L2 and more, so each call
// reads HBM.
const attnRotateBytes = 256 << 20

// attnPoint is one measured decode attention: GQA at a per-GPU split, or
// MLA at a per-GPU head count, over Batch sequences of KVLen tokens.
type attnPoint struct {
	MLA      bool
	GQA      gqaSplit // GQA
	MLAHeads int      // MLA
	Batch    int
	KVLen    int
}

// KVBytes is the bf16 KV cache the point reads.
func (p attnPoint) KVBytes() int64 {
	row := int64(gpu.MLADim)
	if !p.MLA {
		row = 2 * int64(p.GQA.KVHeads*p.GQA.HeadDim)
	}
	return int64(p.Batch) * int64(p.KVLen) * row * 2
}

// AttentionPoints are the points the attention op measures under o: every
// GQA split and (not under --quick) every MLA head count over the batches
// and contexts whose cache fits maxAttnKVBytes.
func AttentionPoints(o Options) []attnPoint {
	return attentionPoints(o, !o.Quick)
}

func attentionPoints(o Options, mla bool) []attnPoint {
	batches, contexts := fullAttnBatches, fullAttnContexts
	if o.Quick {
		batches, contexts = quickAttnBatches, quickAttnContexts
	}
	var out []attnPoint
	add := func(p attnPoint) {
		for _, b := range batches {
			for _, l := range contexts {
				p.Batch, p.KVLen = b, l
				if p.KVBytes() <= maxAttnKVBytes {
					out = append(out, p)
				}
			}
		}
	}
	for _, s := range gqaSplits() {
		add(attnPoint{GQA: s})
	}
	if mla {
		for _, h := range MLAHeads() {
			add(attnPoint{MLA: true, MLAHeads: h})
		}
	}
	return out
}

// AttnResult is one measured attention point.
type AttnResult struct {
	Point       attnPoint
	Timing      unit.Timing
	BytesPerSec float64 // KV read rate
	Kernel      string
	Splits      int
	Copies      int
}

// attentionOp measures moecast's decode attention kernels (kernels/gpu
// attention.cu) over paged KV caches.
type attentionOp struct{}

func (attentionOp) Name() string { return opAttention }
func (attentionOp) Steps(o Options) (int, error) {
	return len(AttentionPoints(o)) + len(MLAModulePoints(o)), nil
}
func (attentionOp) Tables() bool { return true }

func (attentionOp) Run(e *Env) (*Output, error) {
	m, err := gpu.LoadAttention(e.Dev)
	if err != nil {
		return nil, err
	}
	tiles, choice := chooseHeadTiles(e, m)
	var res []AttnResult
	for i, p := range AttentionPoints(e.Options) {
		c := gpu.AttnCase{Name: "gqa", Batch: p.Batch, KVLen: p.KVLen, Heads: p.GQA.Heads, KVHeads: p.GQA.KVHeads,
			HeadDim: p.GQA.HeadDim, Opt: gpu.AttnOptions{Paged: true}, Seed: uint64(i + 1)}
		if p.MLA {
			c = gpu.AttnCase{Name: "mla", MLA: true, Batch: p.Batch, KVLen: p.KVLen, Heads: p.MLAHeads,
				Opt: gpu.AttnOptions{Paged: true, HeadTiles: tiles[p.MLAHeads]}, Seed: uint64(i + 1)}
		}
		r, err := gpu.MeasureAttention(m, c, attnRotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		a := AttnResult{Point: p, Timing: resultTiming(r.GraphSeconds, r.GraphMin, r.GraphMax, r.LaunchSeconds, r.CallsPerGraph),
			BytesPerSec: r.BytesPerSec, Kernel: r.Kernel, Splits: r.Splits, Copies: r.Copies}
		res = append(res, a)
		e.Say("%s batch %d kv_len %d: %.1f us, %.2f TB/s KV read (%d splits)", p.label(), p.Batch, p.KVLen,
			r.GraphSeconds*1e6, r.BytesPerSec/1e12, r.Splits)
	}
	mod, why, err := measureMLAModules(e, m, tiles)
	if err != nil {
		return nil, err
	}
	out := AttentionOutput(res)
	out.Method = append(out.Method, "attention kernels "+m.Image)
	out.Method = append(out.Method, choice...)
	out.Lines = append(out.Lines, choice...)
	if len(mod) > 0 {
		mo := MLAModuleOutput(mod)
		out.Tables = append(out.Tables, mo.Tables...)
		out.Lines = append(out.Lines, mo.Lines...)
	} else {
		out.Method = append(out.Method, "no mla module table: "+why)
		out.Lines = append(out.Lines, "mla module: not measured ("+why+")")
	}
	return out, nil
}

// newGEMMer makes the GEMMer the MLA module's projections run on: cuBLASLt
// (kernels/gpu BLASGEMMer with a BLASWorkspace) by default. It returns a
// close function, or an error saying why there is none (then the op
// writes no mla table and says so).
var newGEMMer = func() (gpu.GEMMer, func(), error) {
	if err := cuda.InitCUBLASLt(); err != nil {
		return nil, nil, err
	}
	h, err := cuda.NewBLASLt()
	if err != nil {
		return nil, nil, err
	}
	ws, err := cuda.Alloc(gpu.BLASWorkspace)
	if err != nil {
		h.Destroy()
		return nil, nil, err
	}
	g := &gpu.BLASGEMMer{H: h, Workspace: ws, WorkspaceBytes: gpu.BLASWorkspace}
	return g, func() { g.Close(); cuda.Free(ws); h.Destroy() }, nil
}

// measureMLAModules times the MLA module points, or says why it cannot
// (no GEMMer).
func measureMLAModules(e *Env, m *gpu.AttentionModule, tiles map[int]int) ([]MLAModuleResult, string, error) {
	pts := MLAModulePoints(e.Options)
	if len(pts) == 0 {
		return nil, "no points", nil
	}
	g, done, err := newGEMMer()
	if err != nil {
		if cuda.NoCUBLASLt(err) {
			e.Say("mla module: skipped, no GEMM library: %v", err)
			return nil, err.Error(), nil
		}
		return nil, "", err
	}
	defer done()
	var res []MLAModuleResult
	for i, p := range pts {
		c := gpu.MLAModuleCase{Name: "mla module", Dims: p.Model.dims(), Batch: p.Batch, Heads: p.Heads, KVLen: p.KVLen, Seed: uint64(i + 7),
			Attn: gpu.AttnOptions{HeadTiles: tiles[p.Heads]}}
		r, err := gpu.MeasureMLAModule(m, g, c, attnRotateBytes, e.Stream)
		if err != nil {
			// The gqa tables stand without the module: say why it is missing.
			e.Say("mla module %d heads batch %d kv_len %d: %v", p.Heads, p.Batch, p.KVLen, err)
			return nil, fmt.Sprintf("the module at %d heads batch %d kv_len %d failed: %v", p.Heads, p.Batch, p.KVLen, err), nil
		}
		res = append(res, MLAModuleResult{Point: p, Timing: resultTiming(r.GraphSeconds, r.GraphMin, r.GraphMax, r.LaunchSeconds, r.CallsPerGraph),
			WorkingSet: r.WorkingSetBytes, Kernels: r.Kernels, Layers: r.Layers, GEMMs: r.GEMMs})
		e.Say("mla module %d heads batch %d kv_len %d: %.1f us, %d kernels", p.Heads, p.Batch, p.KVLen, r.GraphSeconds*1e6, r.Kernels)
	}
	return res, "", nil
}

// headTilesProbe is the shape at which the MLA kernel with two head tiles
// a block is compared with the one-tile kernel for each head count of 32
// and more: batch sequences of kv_len tokens.
var headTilesProbe = [2]int{32, 4096}

// chooseHeadTiles picks, for each MLA head count of 32 and more, the MLA
// kernel with one or two 16-head tiles a block: the two-tile kernel when
// its output matches the one-tile kernel's on this GPU (relative
// difference below 1e-2; the one-tile kernel is the one the device tests
// hold against the host reference) and it is faster at headTilesProbe.
// It returns the choice and sentences for the method.
func chooseHeadTiles(e *Env, m *gpu.AttentionModule) (map[int]int, []string) {
	tiles := map[int]int{}
	var notes []string
	for _, h := range MLAHeads() {
		if h < 32 {
			continue
		}
		one, two := gpu.AttnOptions{Paged: true, HeadTiles: 1}, gpu.AttnOptions{Paged: true, HeadTiles: 2}
		diff, err := gpu.CompareMLA(m, h, 3, 1000, one, two, e.Stream)
		if err != nil || diff > 1e-2 {
			notes = append(notes, fmt.Sprintf("mla %d heads: one head tile a block (two-tile kernel: difference %.2g, %v)", h, diff, err))
			continue
		}
		var t [2]float64
		for i, o := range []gpu.AttnOptions{one, two} {
			r, err := gpu.MeasureAttention(m, gpu.AttnCase{Name: "mla probe", MLA: true, Batch: headTilesProbe[0], KVLen: headTilesProbe[1],
				Heads: h, Opt: o, Seed: 99}, attnRotateBytes, e.Stream)
			if err != nil {
				t[i] = -1
				break
			}
			t[i] = r.GraphSeconds
		}
		if t[0] > 0 && t[1] > 0 && t[1] < t[0] {
			tiles[h] = 2
		}
		notes = append(notes, fmt.Sprintf("mla %d heads: %d head tile(s) a block (batch %d x %d tokens: one %.1f us, two %.1f us; outputs differ by %.1e)",
			h, max(1, tiles[h]), headTilesProbe[0], headTilesProbe[1], t[0]*1e6, t[1]*1e6, diff))
	}
	return tiles, notes
}

func (m mlaModel) dims() gpu.MLADims {
	return gpu.MLADims{Hidden: m.Hidden, QLoRARank: m.QLoRARank, KVLoRARank: m.KVLoRARank, QKNope: m.QKNope, QKRope: m.QKRope, V: m.V}
}

// mlaModulePoint is one measured MLA decode module: a model's dims, heads
// on the GPU, Batch sequences of KVLen tokens.
type mlaModulePoint struct {
	Model               mlaModel
	Heads, Batch, KVLen int
}

// MLAModulePoints are the module points under o: every per-GPU head count
// of mlaModels (quickMLAHeads under --quick) with the first model's dims
// (DeepSeek-V3's: Kimi-K2.5 and DeepSeek-V3 have the same), over the
// attention op's batches and contexts.
func MLAModulePoints(o Options) []mlaModulePoint {
	var out []mlaModulePoint
	base := mlaModels[0]
	for _, p := range attentionPoints(o, true) {
		if p.MLA && (!o.Quick || slices.Contains(quickMLAHeads, p.MLAHeads)) {
			out = append(out, mlaModulePoint{Model: base, Heads: p.MLAHeads, Batch: p.Batch, KVLen: p.KVLen})
		}
	}
	return out
}

// MLAModuleResult is one measured MLA module.
type MLAModuleResult struct {
	Point      mlaModulePoint
	Timing     unit.Timing
	WorkingSet float64 // one layer's weights + KV cache bytes
	Kernels    int
	Layers     int
	GEMMs      string
}

// mlaModuleMethod is the mla table's provenance method.
const mlaModuleMethod = "the whole MLA decode module on one GPU, one query token a sequence, as vLLM's MLA backends run it " +
	"after absorption: fused_qkv_a_proj, q_a/kv_a RMSNorm, q_b_proj, W_UK (strided-batched over heads), rotary (q_pe into the " +
	"absorbed query, k_pe), the cache write, moecast's MLA decode attention kernel (split-KV + combine) over a paged bf16 latent " +
	"cache (64-token pages in a random order), W_UV (strided-batched), o_proj; bf16 GEMMs through %s; one layer's weights and " +
	"cache rotated over layers totalling at least %d MiB so each call reads HBM; latency = median of " + gpu.ReplayRule + " of the " +
	"module's kernels; input_layernorm and the all-reduce after o_proj are not included"

// The kernels the attention tables name (the file's provenance names the
// W4A16 image).
const (
	gqaKernel = "moecast GQA decode attention (kernels/gpu attention.cu)"
	mlaKernel = "moecast MLA decode attention and module kernels (kernels/gpu attention.cu) + bf16 GEMMs through "
)

// MLAModuleOutput makes the mla table (bf16 projections and KV cache, the
// model's dims as keys).
func MLAModuleOutput(res []MLAModuleResult) *Output {
	out := &Output{Op: opAttention, Data: res}
	if len(res) == 0 {
		return out
	}
	mm := res[0].Point.Model
	t := calib.Table{
		Name: "mla.moecast.bf16.kv-bf16",
		Op:   "mla",
		Keys: calib.Keys{Dtype: "bf16", KVDtype: "bf16", KVLoRARank: mm.KVLoRARank, QKRopeDim: mm.QKRope, Hidden: mm.Hidden,
			QLoRARank: mm.QLoRARank, QKNopeDim: mm.QKNope, VHeadDim: mm.V},
		Columns: []string{"heads", "batch", "kv_len", "latency_us", "working_set_bytes", "l2_resident"},
		Provenance: calib.Provenance{Method: fmt.Sprintf(mlaModuleMethod, res[0].GEMMs, attnRotateBytes>>20),
			Kernel: mlaKernel + res[0].GEMMs},
	}
	for _, r := range res {
		p := r.Point
		t.Rows = append(t.Rows, []float64{float64(p.Heads), float64(p.Batch), float64(p.KVLen), roundPS(float64(r.Timing.Median) * 1e6),
			float64(int64(r.WorkingSet)), 0})
	}
	out.Tables = []calib.Table{t}
	out.Lines = []string{fmt.Sprintf("mla module %d points (%d kernels a layer at one split)", len(res), res[0].Kernels)}
	return out
}

func (p attnPoint) label() string {
	if p.MLA {
		return fmt.Sprintf("mla %d heads", p.MLAHeads)
	}
	return fmt.Sprintf("gqa %d/%d d%d", p.GQA.Heads, p.GQA.KVHeads, p.GQA.HeadDim)
}

// gqaMethod is the GQA tables' provenance method.
const gqaMethod = "moecast's GQA decode attention kernel (kernels/gpu attention.cu: mma.sync bf16, split-KV with a " +
	"log-sum-exp combine kernel when the batch and heads do not fill the GPU) over a paged bf16 KV cache " +
	"(64-token pages in a random order, vLLM's [pages, 64, kv_heads, head_dim] K and V), one query per sequence, " +
	"every sequence kv_len tokens; caches rotated over copies totalling at least %d MiB so each call reads HBM; " +
	"latency = median of " + gpu.ReplayRule + " of the attention kernel(s) alone (q/k norms, rotary, the cache write " +
	"and the projections are other ops); per-GPU heads/kv_heads of the shipped GQA models at attention TP 1, 2, 4, 8"

// AttentionOutput makes one gqa table per head dim and the report; the MLA
// points (attention alone: the cost model's mla table is the whole module)
// go into the method and the report.
func AttentionOutput(res []AttnResult) *Output {
	out := &Output{Op: opAttention, Data: res}
	byDim := map[int][]AttnResult{}
	var dims []int
	var mla []AttnResult
	for _, r := range res {
		if r.Point.MLA {
			mla = append(mla, r)
			continue
		}
		d := r.Point.GQA.HeadDim
		if _, ok := byDim[d]; !ok {
			dims = append(dims, d)
		}
		byDim[d] = append(byDim[d], r)
	}
	slices.Sort(dims)
	for _, d := range dims {
		rows := byDim[d]
		t := calib.Table{
			Name:       fmt.Sprintf("gqa.moecast.d%d.kv-bf16", d),
			Op:         "gqa",
			Keys:       calib.Keys{KVDtype: "bf16", HeadDim: d},
			Columns:    []string{"heads", "kv_heads", "batch", "kv_len", "latency_us"},
			Provenance: calib.Provenance{Method: fmt.Sprintf(gqaMethod, attnRotateBytes>>20), Kernel: gqaKernel},
		}
		for _, r := range rows {
			p := r.Point
			t.Rows = append(t.Rows, []float64{float64(p.GQA.Heads), float64(p.GQA.KVHeads), float64(p.Batch), float64(p.KVLen),
				roundPS(float64(r.Timing.Median) * 1e6)})
		}
		out.Tables = append(out.Tables, t)
	}
	if len(mla) > 0 {
		out.Method = append(out.Method, mlaCoreMethod(mla))
	}
	rt := &report.Table{Columns: []report.Column{{Name: "attention", Left: true}, {Name: "batch"}, {Name: "kv_len"},
		{Name: "latency_us", Text: "%.1f"}, {Name: "kv_TB_per_s", Text: "%.2f"}, {Name: "spread_pct", Text: "%.1f"},
		{Name: "splits"}, {Name: "kernel", Left: true}}}
	for _, r := range res {
		spread := 0.0
		if r.Timing.Min > 0 {
			spread = 100 * float64(r.Timing.Max/r.Timing.Min-1)
		}
		rt.Add(r.Point.label(), r.Point.Batch, r.Point.KVLen, float64(r.Timing.Median)*1e6, r.BytesPerSec/1e12, spread, r.Splits, r.Kernel)
	}
	out.Report = rt
	out.Lines = append(out.Lines, attnSummary(res)...)
	return out
}

// mlaCoreMethod states the MLA core-attention figures: the cost model has
// no table for attention alone (its mla table is the whole module), so
// they go into the file's method.
func mlaCoreMethod(mla []AttnResult) string {
	s := fmt.Sprintf("MLA decode attention alone (moecast kernel, absorbed: q 576 = kv_lora 512 + rope 64 a head, paged bf16 " +
		"latent cache of 576 a token, output 512 a head; not a table: the cost model's mla table is the whole module, " +
		"which needs the projections' GEMMs), us at heads/batch/kv_len [KV TB/s]:")
	for i, r := range mla {
		sep := ","
		if i == 0 {
			sep = ""
		}
		s += fmt.Sprintf("%s %d/%d/%d %.1f [%.2f]", sep, r.Point.MLAHeads, r.Point.Batch, r.Point.KVLen,
			float64(r.Timing.Median)*1e6, r.BytesPerSec/1e12)
	}
	return s
}

// attnSummary is one line per kind: the best KV read rate and where.
func attnSummary(res []AttnResult) []string {
	var lines []string
	for _, mla := range []bool{false, true} {
		var best *AttnResult
		n := 0
		for i := range res {
			if res[i].Point.MLA != mla {
				continue
			}
			n++
			if best == nil || res[i].BytesPerSec > best.BytesPerSec {
				best = &res[i]
			}
		}
		if best == nil {
			continue
		}
		kind := "gqa"
		if mla {
			kind = "mla"
		}
		lines = append(lines, fmt.Sprintf("%-9s %d points; best KV read %.2f TB/s (%s batch %d kv_len %d)", kind, n,
			best.BytesPerSec/1e12, best.Point.label(), best.Point.Batch, best.Point.KVLen))
	}
	return lines
}
