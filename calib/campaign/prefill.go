package campaign

import (
	"fmt"
	"github.com/moecast/moecast/internal/unit"
	"slices"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels/gpu"
	"github.com/moecast/moecast/report"
)

// opPrefill is the prefill attention op.
const opPrefill = "prefill"

// Chunks (new tokens) and prefixes (cached tokens before them) of the
// prefill op. The lookups interpolate between chunks and kv_len (prefix +
// chunk) in log-log and extend each chunk's last kv_len segment linearly
// above it (at least at the series' best measured FLOP rate); points past
// maxPrefillFLOPs are left out but for each chunk's first prefix, so the
// full campaign stays within its budget (issue 24: 4 minutes in all, 60 s
// --quick). The grids keep the coverage ends (chunk 256 and 16384, prefix 0
// and 128k) and leave out the middle prefix 8192: at a fixed chunk the time
// grows about linearly in kv_len, which the log-log segment from prefix 0
// to 32k follows within about 7% (the 2026-12-02 H200 run's chunk-1024 rows
// of bench/RESULTS-gpu-prefill.md), and it cost a third of the op's time.
// --quick ends at chunk 2048: chunk 4096 at prefix 0 alone took 9 of its
// 23 s.
var (
	fullPrefillChunks     = []int{256, 1024, 4096, 16384}
	fullPrefillPrefixes   = []int{0, 32768, 131072}
	quickPrefillChunks    = []int{512, 2048}
	quickPrefillPrefixes  = []int{0, 16384}
	prefillWindows        = map[string]int{"gpt-oss-120b": 128} // sliding window of the shipped models' windowed layers
	maxPrefillFLOPs       = 1.5e12                              // one call's causal FLOPs (about 9 ms on an H200; --quick: a third)
	prefillRotateBytes    = int64(attnRotateBytes)
	prefillKernelName     = "moecast prefill attention (kernels/gpu attention.cu moecast_prefill_*)"
	prefillMethodTemplate = "moecast's prefill attention kernel (kernels/gpu attention.cu: FA2-style, 64 query rows of one head a block, " +
		"mma.sync bf16 with fp32 accumulation, online softmax, 64-key K/V tiles through a cp.async pipeline) for one chunk of " +
		"`chunk` new tokens after `prefix` cached ones, causal (query i at position prefix+i sees keys <= prefix+i%s), the chunk's " +
		"K and V already in a paged bf16 cache (64-token pages in a random order); caches rotated over copies totalling at least " +
		"%d MiB (at most " + fmt.Sprint(gpu.PrefillMaxCopies) + " copies); latency = median of " + gpu.ReplayRule + " of the kernel alone (the q/k/v projections, rotary and the cache write are " +
		"other ops); heads/kv_heads per GPU of the shipped %s models at attention TP 1, 2, 4, 8"
)

// PrefillPoint is one measured prefill attention call.
type PrefillPoint struct {
	QKDim, VDim, Window int
	Heads, KVHeads      int
	Chunk, Prefix       int
	MLA                 bool
}

func (p PrefillPoint) gpuCase(seed uint64) gpu.PrefillCase {
	return gpu.PrefillCase{Name: p.label(), Batch: 1, Chunk: p.Chunk, Prefix: p.Prefix, Heads: p.Heads, KVHeads: p.KVHeads,
		QKDim: p.QKDim, VDim: p.VDim, Window: p.Window, Paged: true, Seed: seed}
}

func (p PrefillPoint) label() string {
	if p.MLA {
		return fmt.Sprintf("mla prefill %d heads", p.Heads)
	}
	s := fmt.Sprintf("gqa prefill %d/%d d%d", p.Heads, p.KVHeads, p.QKDim)
	if p.Window > 0 {
		s += fmt.Sprintf(" w%d", p.Window)
	}
	return s
}

// prefillPoints are the points the prefill op measures under o: every GQA
// split (and gpt-oss's splits again with its window) and every MLA head
// count (q/k 192, v 128), over the chunks and prefixes, within
// maxPrefillFLOPs.
func prefillPoints(o Options) []PrefillPoint {
	chunks, prefixes, maxFLOPs := fullPrefillChunks, fullPrefillPrefixes, maxPrefillFLOPs
	if o.Quick {
		chunks, prefixes, maxFLOPs = quickPrefillChunks, quickPrefillPrefixes, maxPrefillFLOPs/3
	}
	var out []PrefillPoint
	add := func(p PrefillPoint) {
		for _, c := range chunks {
			for _, pre := range prefixes {
				p.Chunk, p.Prefix = c, pre
				if p.gpuCase(0).FLOPs() <= maxFLOPs || pre == prefixes[0] {
					out = append(out, p)
				}
			}
		}
	}
	for _, s := range gqaSplits() {
		add(PrefillPoint{QKDim: s.HeadDim, VDim: s.HeadDim, Heads: s.Heads, KVHeads: s.KVHeads})
	}
	for _, m := range gqaModels {
		w := prefillWindows[m.Name]
		for _, tp := range attentionTPs {
			if w > 0 && m.Heads%tp == 0 {
				add(PrefillPoint{QKDim: m.HeadDim, VDim: m.HeadDim, Heads: m.Heads / tp, KVHeads: max(1, m.KVHeads/tp), Window: w})
			}
		}
	}
	m := mlaModels[0]
	for _, h := range MLAHeads() {
		add(PrefillPoint{QKDim: m.QKNope + m.QKRope, VDim: m.V, Heads: h, KVHeads: h, MLA: true})
	}
	return out
}

// prefillResult is one measured prefill point.
type prefillResult struct {
	Point       PrefillPoint
	Timing      unit.Timing
	FLOPsPerSec float64
	Kernel      string
}

// prefillOp measures moecast's prefill attention kernel (kernels/gpu
// attention.cu moecast_prefill_*) over paged caches.
type prefillOp struct{}

func (prefillOp) Name() string                 { return opPrefill }
func (prefillOp) Steps(o Options) (int, error) { return len(prefillPoints(o)), nil }
func (prefillOp) Tables() bool                 { return true }

func (prefillOp) Run(e *Env) (*Output, error) {
	m, err := gpu.LoadAttention(e.Dev)
	if err != nil {
		return nil, err
	}
	var res []prefillResult
	for i, p := range prefillPoints(e.Options) {
		r, err := gpu.MeasurePrefill(m, p.gpuCase(uint64(i+1)), prefillRotateBytes, e.Stream)
		if err != nil {
			return nil, err
		}
		res = append(res, prefillResult{Point: p, Timing: resultTiming(r.GraphSeconds, r.GraphMin, r.GraphMax, r.LaunchSeconds, r.CallsPerGraph),
			FLOPsPerSec: r.FLOPsPerSec, Kernel: r.Kernel})
		e.Say("%s chunk %d prefix %d: %.1f us, %.0f TFLOP/s", p.label(), p.Chunk, p.Prefix, r.GraphSeconds*1e6, r.FLOPsPerSec/1e12)
	}
	out := prefillOutput(res)
	out.Method = append(out.Method, "prefill attention kernels "+m.Image)
	return out, nil
}

// prefillTableKey groups points into tables.
type prefillTableKey struct{ qk, v, window int }

// prefillOutput makes one prefill table per (q/k dim, v dim, window) and
// the report.
func prefillOutput(res []prefillResult) *Output {
	out := &Output{Op: opPrefill, Data: res}
	groups := map[prefillTableKey][]prefillResult{}
	var keys []prefillTableKey
	for _, r := range res {
		k := prefillTableKey{r.Point.QKDim, r.Point.VDim, r.Point.Window}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	slices.SortFunc(keys, func(a, b prefillTableKey) int {
		if a.qk != b.qk {
			return a.qk - b.qk
		}
		return a.window - b.window
	})
	for _, k := range keys {
		name := fmt.Sprintf("prefill.moecast.d%d", k.qk)
		models, win := "GQA", ""
		if k.v != k.qk {
			name = fmt.Sprintf("prefill.moecast.q%d-v%d", k.qk, k.v)
			models = "MLA (un-absorbed, as vLLM's MLA prefill: q/k = qk_nope + qk_rope, v = v_head_dim; kv_heads = heads)"
		}
		if k.window > 0 {
			name += fmt.Sprintf(".w%d", k.window)
			win = fmt.Sprintf(" and > prefix+i-%d: a sliding window", k.window)
		}
		t := calib.Table{
			Name:    name + ".kv-bf16",
			Op:      "prefill",
			Keys:    calib.Keys{KVDtype: "bf16", HeadDim: k.qk, VHeadDim: k.v, Window: k.window},
			Columns: []string{"heads", "kv_heads", "chunk", "prefix", "latency_us"},
			Provenance: calib.Provenance{Method: fmt.Sprintf(prefillMethodTemplate, win, prefillRotateBytes>>20, models),
				Kernel: prefillKernelName},
		}
		for _, r := range groups[k] {
			p := r.Point
			t.Rows = append(t.Rows, []float64{float64(p.Heads), float64(p.KVHeads), float64(p.Chunk), float64(p.Prefix),
				roundPS(float64(r.Timing.Median) * 1e6)})
		}
		out.Tables = append(out.Tables, t)
	}
	rt := &report.Table{Columns: []report.Column{{Name: "prefill", Left: true}, {Name: "chunk"}, {Name: "prefix"},
		{Name: "latency_us", Text: "%.1f"}, {Name: "TFLOP_per_s", Text: "%.0f"}, {Name: "spread_pct", Text: "%.1f"}}}
	var best *prefillResult
	for i, r := range res {
		spread := 0.0
		if r.Timing.Min > 0 {
			spread = 100 * float64(r.Timing.Max/r.Timing.Min-1)
		}
		rt.Add(r.Point.label(), r.Point.Chunk, r.Point.Prefix, float64(r.Timing.Median)*1e6, r.FLOPsPerSec/1e12, spread)
		if best == nil || r.FLOPsPerSec > best.FLOPsPerSec {
			best = &res[i]
		}
	}
	out.Report = rt
	if best != nil {
		out.Lines = append(out.Lines, fmt.Sprintf("prefill   %d points; best %.0f TFLOP/s (%s chunk %d prefix %d)", len(res),
			best.FLOPsPerSec/1e12, best.Point.label(), best.Point.Chunk, best.Point.Prefix))
	}
	return out
}
