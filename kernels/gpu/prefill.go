package gpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/moecast/moecast/internal/cuda"
)

// Prefill attention (attention.cu moecast_prefill_*): causal attention of a
// chunk of new tokens against its cached prefix, FA2-style (64 query rows of
// one head a block, 64-key tiles of K and V through a cp.async pipeline,
// online softmax in registers). Query token i of a chunk sits at position
// Prefix+i and sees the keys at positions <= Prefix+i (and, with a sliding
// Window, > Prefix+i-Window); the chunk's own K and V are in the cache at
// positions Prefix.. as the engines write them before attention.
const (
	prefillRows = 64 // query rows a block
	prefillKeys = 64 // keys a tile (one page of a paged cache)
)

// prefillDims are the (QK dim, V dim) pairs attention.cu compiles: GQA at
// head_dim 64 and 128, and MLA's un-absorbed prefill (q/k 192 = qk_nope 128
// + qk_rope 64, v 128, as vLLM's MLA prefill runs it).
var prefillDims = [][2]int{{64, 64}, {128, 128}, {192, 128}}

// prefillStages are the pipeline depths of the prefill kernels.
var prefillStages = []int{2, 3}

// defaultPrefillStages is the pipeline depth plans use unless told
// otherwise: three stages were up to 6% faster than two only at chunks of
// 1024 and less, slower above (MLA 1.3-1.6x: one block a multiprocessor),
// on the H200 (bench/RESULTS-gpu-prefill.md).
const defaultPrefillStages = 2

func prefillName(dqk, dv, stages int) string {
	return fmt.Sprintf("moecast_prefill_q%d_v%d_s%d", dqk, dv, stages)
}
func prefillSmem(dqk, dv, stages int) int { return stages * prefillKeys * (dqk + dv + 16) * 2 }

// PrefillCase is one prefill attention call: Batch chunks of Chunk new
// tokens, each after Prefix cached tokens; Heads query heads and KVHeads KV
// heads on the GPU (MLA: KVHeads = Heads), QKDim and VDim wide; Window > 0
// is a sliding window of that many keys.
type PrefillCase struct {
	Name                 string
	Batch, Chunk, Prefix int
	Heads, KVHeads       int
	QKDim, VDim          int
	Window               int
	Stages               int  // 0: defaultPrefillStages
	Paged                bool // the cache is paged (pageSize tokens a page, a block table)
	Seed                 uint64
}

// prefillPlan is a planned prefill call.
type prefillPlan struct {
	PrefillCase
	Scale    float64
	MaxPages int // paged: block table row length
	Smem     int
	name     string
}

// KVLen is the keys in a sequence's cache: Prefix + Chunk.
func (c PrefillCase) KVLen() int { return c.Prefix + c.Chunk }

// Pairs is the (query, key) pairs a call attends: Batch x the causal,
// window-capped pairs of one chunk.
func (c PrefillCase) Pairs() float64 {
	var n float64
	for i := 1; i <= c.Chunk; i++ {
		k := c.Prefix + i
		if c.Window > 0 {
			k = min(k, c.Window)
		}
		n += float64(k)
	}
	return n * float64(c.Batch)
}

// FLOPs is 2 x Pairs x Heads x (QKDim + VDim), as FlashAttention counts
// causal attention.
func (c PrefillCase) FLOPs() float64 {
	return 2 * c.Pairs() * float64(c.Heads) * float64(c.QKDim+c.VDim)
}

// Kernel is the plan's kernel name.
func (p prefillPlan) Kernel() string { return p.name }

// Blocks is the grid size.
func (p prefillPlan) Blocks() int { return ceilDiv(p.Chunk, prefillRows) * p.Heads * p.Batch }

// QElems and OutElems are the bf16 elements of the queries and the output.
func (p prefillPlan) QElems() int   { return p.Batch * p.Chunk * p.Heads * p.QKDim }
func (p prefillPlan) OutElems() int { return p.Batch * p.Chunk * p.Heads * p.VDim }

// cacheRows is the token rows one copy of a cache holds (paged: whole
// pages).
func (p prefillPlan) cacheRows() int64 {
	if p.Paged {
		return int64(p.Batch) * int64(p.MaxPages) * pageSize
	}
	return int64(p.Batch) * int64(p.KVLen())
}

// KVBytes is the K and V cache bytes a call reads once.
func (p prefillPlan) KVBytes() int64 {
	return int64(p.Batch) * int64(p.KVLen()) * int64(p.KVHeads) * int64(p.QKDim+p.VDim) * 2
}

// PlanPrefill checks a case against the loaded kernels; the softmax scale is
// 1/sqrt(QKDim).
func (m *AttentionModule) PlanPrefill(c PrefillCase) (prefillPlan, error) {
	if c.Batch <= 0 || c.Chunk <= 0 || c.Prefix < 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.Window < 0 {
		return prefillPlan{}, fmt.Errorf("prefill: batch %d chunk %d prefix %d heads %d/%d window %d: want positive sizes, prefix and window >= 0",
			c.Batch, c.Chunk, c.Prefix, c.Heads, c.KVHeads, c.Window)
	}
	if c.Heads%c.KVHeads != 0 {
		return prefillPlan{}, fmt.Errorf("prefill: %d heads over %d kv heads: want a multiple", c.Heads, c.KVHeads)
	}
	if !slices.Contains(prefillDims, [2]int{c.QKDim, c.VDim}) {
		return prefillPlan{}, fmt.Errorf("prefill: q/k dim %d, v dim %d: want one of %v", c.QKDim, c.VDim, prefillDims)
	}
	if c.Stages == 0 {
		c.Stages = defaultPrefillStages
	}
	p := prefillPlan{PrefillCase: c, Scale: 1 / math.Sqrt(float64(c.QKDim))}
	p.name, p.Smem = prefillName(c.QKDim, c.VDim, c.Stages), prefillSmem(c.QKDim, c.VDim, c.Stages)
	if _, ok := m.prefill[[3]int{c.QKDim, c.VDim, c.Stages}]; !ok {
		return prefillPlan{}, fmt.Errorf("prefill: no kernel %s for this GPU", p.name)
	}
	if c.Paged {
		p.MaxPages = ceilDiv(c.KVLen(), pageSize)
	}
	if c.Batch > 65535 || c.Heads > 65535 {
		return p, fmt.Errorf("prefill: grid %d x %d x %d too large", ceilDiv(c.Chunk, prefillRows), c.Heads, c.Batch)
	}
	return p, nil
}

// prefillBuffers are one call's device buffers: Q (Batch x Chunk x Heads x
// QKDim), the K and V caches (token rows of KVHeads x QKDim and KVHeads x
// VDim; contiguous: sequence b's token t at row b*KVStride + t; paged:
// through Table, Batch x MaxPages int32), Out (Batch x Chunk x Heads x
// VDim).
type prefillBuffers struct {
	Q, K, V, Table, Out cuda.DevicePtr
	KVStride            int64 // contiguous: rows between sequences (0: KVLen)
}

// Args marshals the kernel's parameters (kept for repeated launches).
func (p prefillPlan) Args(b prefillBuffers) (*cuda.Params, error) {
	if b.Q == 0 || b.K == 0 || b.V == 0 || b.Out == 0 {
		return nil, fmt.Errorf("prefill: a call needs q, k, v and out")
	}
	if p.Paged != (b.Table != 0) {
		return nil, fmt.Errorf("prefill: paged plans need a block table, contiguous ones none")
	}
	stride := b.KVStride
	if stride == 0 {
		stride = int64(p.KVLen())
	}
	return cuda.MarshalParams(b.Q, b.K, b.V, b.Table, b.Out, int32(p.Heads), int32(p.KVHeads), int32(p.Chunk),
		int32(p.Prefix), int32(p.Window), int32(p.MaxPages), stride, attnLog2Scale(p.Scale))
}

// LaunchPrefill runs one call on the stream.
func (m *AttentionModule) LaunchPrefill(p prefillPlan, a *cuda.Params, s cuda.Stream) error {
	f, ok := m.prefill[[3]int{p.QKDim, p.VDim, p.Stages}]
	if !ok {
		return fmt.Errorf("prefill: no kernel %s loaded", p.name)
	}
	return f.LaunchParams(cuda.Dim3{X: ceilDiv(p.Chunk, prefillRows), Y: p.Heads, Z: p.Batch},
		cuda.Dim3{X: attnThreads, Y: 1, Z: 1}, p.Smem, s, a)
}

// prefillResult is one timed prefill call: seconds per call, the FLOPs it
// does (causal, FlashAttention's count) and their rate.
type prefillResult struct {
	Name          string  `json:"name"`
	Batch         int     `json:"batch"`
	Chunk         int     `json:"chunk"`
	Prefix        int     `json:"prefix"`
	Heads         int     `json:"heads"`
	KVHeads       int     `json:"kv_heads"`
	QKDim         int     `json:"qk_dim"`
	VDim          int     `json:"v_dim"`
	Window        int     `json:"window,omitempty"`
	Paged         bool    `json:"paged"`
	Kernel        string  `json:"kernel"`
	Blocks        int     `json:"blocks"`
	Copies        int     `json:"copies"`
	CallsPerGraph int     `json:"calls_per_graph"`
	GraphSeconds  float64 `json:"graph_s"`
	GraphMin      float64 `json:"graph_min_s"`
	GraphMax      float64 `json:"graph_max_s"`
	LaunchSeconds float64 `json:"launch_s"`
	FLOPs         float64 `json:"flops"`
	FLOPsPerSec   float64 `json:"flops_per_s"`
	KVBytes       float64 `json:"kv_bytes"`
}

// PrefillMaxCopies bounds the cache copies a prefill timing rotates over:
// small chunks are compute-bound (their K/V read is under a tenth of their
// time), and more copies only lengthen the timing graph.
const PrefillMaxCopies = 64

// prefillGraphCalls is the calls a prefill timing graph holds at most
// (Time takes fewer when a replay would pass 5 ms).
const prefillGraphCalls = 20

// MeasurePrefill times one case with its K and V caches rotated over copies
// that total at least rotateBytes (at most PrefillMaxCopies copies; filled
// on the device), so each call reads its prefix from HBM as a step over many
// layers does; a paged cache's
// block table scatters each sequence's pages in a random order. It fails,
// allocating nothing, when the copies do not fit the free memory.
func MeasurePrefill(m *AttentionModule, c PrefillCase, rotateBytes int64, s cuda.Stream) (prefillResult, error) {
	p, err := m.PlanPrefill(c)
	if err != nil {
		return prefillResult{}, err
	}
	kElems := p.cacheRows() * int64(p.KVHeads*p.QKDim)
	vElems := p.cacheRows() * int64(p.KVHeads*p.VDim)
	copyBytes := (kElems + vElems) * 2
	copies := int(min(PrefillMaxCopies, max(1, (rotateBytes+copyBytes-1)/copyBytes)))
	free, _, err := cuda.MemInfo()
	if err != nil {
		return prefillResult{}, err
	}
	if need := copyBytes*int64(copies) + int64(p.QElems()+p.OutElems())*2 + 64<<20; need > free*9/10 {
		return prefillResult{}, fmt.Errorf("%s: %d MiB do not fit the %d MiB free", c.Name, need>>20, free>>20)
	}
	var bufs deviceBuffers
	defer bufs.free()
	q, err := bufs.alloc(int64(roundUp(p.QElems(), 8)) * 2)
	if err != nil {
		return prefillResult{}, err
	}
	if err := m.Fill(q, int64(roundUp(p.QElems(), 8)), uint32(c.Seed), 1, s); err != nil {
		return prefillResult{}, err
	}
	out, err := bufs.alloc(int64(p.OutElems()) * 2)
	if err != nil {
		return prefillResult{}, err
	}
	var table cuda.DevicePtr
	if p.Paged {
		t := make([]int32, p.Batch*p.MaxPages)
		for i, v := range pagePerm(c.Seed, len(t)) {
			t[i] = int32(v)
		}
		if table, err = uploadInt32(&bufs, t); err != nil {
			return prefillResult{}, err
		}
	}
	kc, err := bufs.alloc(kElems * 2 * int64(copies))
	if err != nil {
		return prefillResult{}, err
	}
	vc, err := bufs.alloc(vElems * 2 * int64(copies))
	if err != nil {
		return prefillResult{}, err
	}
	if err := m.Fill(kc, kElems*int64(copies), uint32(c.Seed)+0x9e3779b9, 1, s); err != nil {
		return prefillResult{}, err
	}
	if err := m.Fill(vc, vElems*int64(copies), uint32(c.Seed)+0x3c6ef372, 1, s); err != nil {
		return prefillResult{}, err
	}
	var launches []func() error
	for i := 0; i < copies; i++ {
		args, err := p.Args(prefillBuffers{Q: q, Out: out, Table: table,
			K: kc + cuda.DevicePtr(int64(i)*kElems*2), V: vc + cuda.DevicePtr(int64(i)*vElems*2)})
		if err != nil {
			return prefillResult{}, err
		}
		launches = append(launches, func() error { return m.LaunchPrefill(p, args, s) })
	}
	if err := s.Synchronize(); err != nil {
		return prefillResult{}, err
	}
	tm, err := Time(s, launches, prefillGraphCalls)
	if err != nil {
		return prefillResult{}, fmt.Errorf("%s chunk %d prefix %d: %w", c.Name, c.Chunk, c.Prefix, err)
	}
	fl := c.FLOPs()
	return prefillResult{Name: c.Name, Batch: c.Batch, Chunk: c.Chunk, Prefix: c.Prefix, Heads: c.Heads, KVHeads: c.KVHeads,
		QKDim: c.QKDim, VDim: c.VDim, Window: c.Window, Paged: c.Paged, Kernel: p.name, Blocks: p.Blocks(), Copies: copies,
		CallsPerGraph: tm.Calls, GraphSeconds: float64(tm.Median), GraphMin: float64(tm.Min), GraphMax: float64(tm.Max), LaunchSeconds: float64(tm.Eager),
		FLOPs: fl, FLOPsPerSec: fl / float64(tm.Median), KVBytes: float64(p.KVBytes())}, nil
}
