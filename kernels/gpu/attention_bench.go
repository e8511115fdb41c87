package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/moecast/moecast/internal/cuda"
)

// attnGraphCalls is the calls a timing graph holds (fewer when a replay
// would pass 5 ms; never fewer than the rotated copies).
const attnGraphCalls = 100

// AttnCase is one decode attention call to time: Batch sequences of KVLen
// tokens each, Heads query heads on the GPU (GQA: KVHeads KV heads of
// HeadDim).
type AttnCase struct {
	Name                string
	MLA                 bool
	Batch, Heads, KVLen int
	KVHeads, HeadDim    int
	Opt                 AttnOptions
	Seed                uint64
}

// AttnResult is one timed attention call. Seconds are per call (the main
// kernel and, with several splits, the combine); KVBytes is the cache read
// once, BytesPerSec its rate.
type AttnResult struct {
	Name          string  `json:"name"`
	MLA           bool    `json:"mla"`
	Batch         int     `json:"batch"`
	Heads         int     `json:"heads"`
	KVHeads       int     `json:"kv_heads,omitempty"`
	HeadDim       int     `json:"head_dim,omitempty"`
	KVLen         int     `json:"kv_len"`
	Paged         bool    `json:"paged"`
	Kernel        string  `json:"kernel"`
	Stages        int     `json:"stages"`
	Splits        int     `json:"splits"`
	Blocks        int     `json:"blocks"`
	Kernels       int     `json:"kernels"`
	Copies        int     `json:"copies"`
	CallsPerGraph int     `json:"calls_per_graph"`
	GraphSeconds  float64 `json:"graph_s"`
	GraphMin      float64 `json:"graph_min_s"`
	GraphMax      float64 `json:"graph_max_s"`
	LaunchSeconds float64 `json:"launch_s"`
	KVBytes       float64 `json:"kv_bytes"`
	BytesPerSec   float64 `json:"kv_bytes_per_s"`
}

// Plan is the case's plan on m.
func (c AttnCase) Plan(m *AttentionModule) (attnPlan, error) {
	if c.MLA {
		return m.PlanMLA(c.Batch, c.Heads, c.KVLen, c.Opt)
	}
	return m.PlanGQA(c.Batch, c.Heads, c.KVHeads, c.HeadDim, c.KVLen, c.Opt)
}

// cacheRows is the rows one copy of a cache holds (paged: whole pages).
func (p attnPlan) cacheRows() int64 {
	if p.Paged {
		return int64(p.Batch) * int64(p.MaxPages) * pageSize
	}
	return int64(p.Batch) * int64(p.KVLen)
}

// MeasureAttention times one case with its KV cache(s) rotated over copies
// that total at least rotateBytes (filled on the device), so that each call
// reads HBM as a step over many layers does; the paged cache's block table
// scatters each sequence's pages in a random order. It fails, allocating
// nothing, when the copies do not fit the free memory.
func MeasureAttention(m *AttentionModule, c AttnCase, rotateBytes int64, s cuda.Stream) (AttnResult, error) {
	p, err := c.Plan(m)
	if err != nil {
		return AttnResult{}, err
	}
	caches := 1
	if !p.MLA {
		caches = 2
	}
	copyBytes := p.cacheRows() * int64(p.RowElems()) * 2 * int64(caches)
	copies := int(min(maxCopies, max(1, (rotateBytes+copyBytes-1)/copyBytes)))
	free, _, err := cuda.MemInfo()
	if err != nil {
		return AttnResult{}, err
	}
	if need := copyBytes*int64(copies) + p.PartialBytes() + 64<<20; need > free*9/10 {
		return AttnResult{}, fmt.Errorf("%s: %d MiB of KV cache do not fit the %d MiB free", c.Name, need>>20, free>>20)
	}
	var bufs deviceBuffers
	defer bufs.free()
	alloc := bufs.alloc
	q, err := alloc(int64(p.QElems()) * 2)
	if err != nil {
		return AttnResult{}, err
	}
	if err := m.Fill(q, int64(roundUp(p.QElems(), 8)), uint32(c.Seed), 1, s); err != nil {
		return AttnResult{}, err
	}
	out, err := alloc(int64(p.OutElems()) * 2)
	if err != nil {
		return AttnResult{}, err
	}
	part, err := alloc(p.PartialBytes())
	if err != nil {
		return AttnResult{}, err
	}
	lse, err := alloc(p.LSEBytes())
	if err != nil {
		return AttnResult{}, err
	}
	lensHost := make([]int32, p.Batch)
	for i := range lensHost {
		lensHost[i] = int32(p.KVLen)
	}
	lens, err := Upload(lensHost, 4)
	if err != nil {
		return AttnResult{}, err
	}
	bufs = append(bufs, lens)
	var table cuda.DevicePtr
	if p.Paged {
		perm := pagePerm(c.Seed, p.Batch*p.MaxPages)
		t := make([]int32, len(perm))
		for i, v := range perm {
			t[i] = int32(v)
		}
		if table, err = Upload(t, 4); err != nil {
			return AttnResult{}, err
		}
		bufs = append(bufs, table)
	}
	// One allocation a cache for all copies, filled at once.
	elems := p.cacheRows() * int64(p.RowElems())
	var kvs [2]cuda.DevicePtr
	for k := 0; k < caches; k++ {
		if kvs[k], err = alloc(elems * 2 * int64(copies)); err != nil {
			return AttnResult{}, err
		}
		if err := m.Fill(kvs[k], elems*int64(copies), uint32(c.Seed)+uint32(k+1)*0x9e3779b9, 1, s); err != nil {
			return AttnResult{}, err
		}
	}
	var launches []func() error
	for i := 0; i < copies; i++ {
		b := attnBuffers{Q: q, Out: out, Partial: part, LSE: lse, Lens: lens, Table: table}
		b.K = kvs[0] + cuda.DevicePtr(int64(i)*elems*2)
		if caches == 2 {
			b.V = kvs[1] + cuda.DevicePtr(int64(i)*elems*2)
		}
		args, err := p.Args(b)
		if err != nil {
			return AttnResult{}, err
		}
		launches = append(launches, func() error { return m.Launch(p, args, s) })
	}
	if err := s.Synchronize(); err != nil {
		return AttnResult{}, err
	}
	tm, err := Time(s, launches, attnGraphCalls)
	if err != nil {
		return AttnResult{}, fmt.Errorf("%s batch %d kv_len %d: %w", c.Name, c.Batch, c.KVLen, err)
	}
	kvb := float64(p.KVBytes())
	return AttnResult{Name: c.Name, MLA: p.MLA, Batch: p.Batch, Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim,
		KVLen: p.KVLen, Paged: p.Paged, Kernel: p.name, Stages: p.Stages, Splits: p.Splits, Blocks: p.Blocks(),
		Kernels: p.Kernels(), Copies: copies, CallsPerGraph: tm.Calls, GraphSeconds: float64(tm.Median), GraphMin: float64(tm.Min),
		GraphMax: float64(tm.Max), LaunchSeconds: float64(tm.Eager), KVBytes: kvb, BytesPerSec: kvb / float64(tm.Median)}, nil
}

// pagePerm is the page order of a measured paged cache: a permutation of n
// pages drawn from seed.
func pagePerm(seed uint64, n int) []int {
	return rand.New(rand.NewPCG(seed, 11)).Perm(n)
}

// CompareMLA runs MLA decode with options a and b on the same device-filled
// query and paged cache (batch sequences of kvLen tokens, heads heads) and
// returns the relative (Frobenius) difference of the outputs: a kernel
// variant checked against one the device tests checked against the host
// reference, on the GPU that will time it.
func CompareMLA(m *AttentionModule, heads, batch, kvLen int, a, b AttnOptions, s cuda.Stream) (float64, error) {
	a.Paged, b.Paged = true, true
	pa, err := m.PlanMLA(batch, heads, kvLen, a)
	if err != nil {
		return 0, err
	}
	pb, err := m.PlanMLA(batch, heads, kvLen, b)
	if err != nil {
		return 0, err
	}
	var bufs deviceBuffers
	defer bufs.free()
	q, err := bufs.alloc(int64(pa.QElems()) * 2)
	if err != nil {
		return 0, err
	}
	if err := m.Fill(q, int64(pa.QElems()), 7, 1, s); err != nil {
		return 0, err
	}
	rows := pa.cacheRows()
	kv, err := bufs.alloc(rows * MLADim * 2)
	if err != nil {
		return 0, err
	}
	if err := m.Fill(kv, rows*MLADim, 11, 1, s); err != nil {
		return 0, err
	}
	lens := make([]int32, batch)
	for i := range lens {
		lens[i] = int32(kvLen - i%3) // ragged
	}
	dl, err := uploadInt32(&bufs, lens)
	if err != nil {
		return 0, err
	}
	tab := make([]int32, batch*pa.MaxPages)
	for i := range tab {
		tab[i] = int32((i * 7) % len(tab))
	}
	if len(tab)%7 == 0 { // keep it a permutation
		for i := range tab {
			tab[i] = int32(len(tab) - 1 - i)
		}
	}
	dt, err := uploadInt32(&bufs, tab)
	if err != nil {
		return 0, err
	}
	var outs [2][]BF16
	for i, p := range []attnPlan{pa, pb} {
		o, err := bufs.alloc(int64(p.OutElems()) * 2)
		if err != nil {
			return 0, err
		}
		part, err := bufs.alloc(max(16, p.PartialBytes()))
		if err != nil {
			return 0, err
		}
		lse, err := bufs.alloc(max(16, p.LSEBytes()))
		if err != nil {
			return 0, err
		}
		args, err := p.Args(attnBuffers{Q: q, K: kv, Table: dt, Lens: dl, Out: o, Partial: part, LSE: lse})
		if err != nil {
			return 0, err
		}
		if err := m.Launch(p, args, s); err != nil {
			return 0, err
		}
		if err := s.Synchronize(); err != nil {
			return 0, err
		}
		outs[i] = make([]BF16, p.OutElems())
		if err := cuda.CopyFromDevice(outs[i], o); err != nil {
			return 0, err
		}
	}
	var num, den float64
	for i := range outs[0] {
		x, y := float64(outs[0][i].Float32()), float64(outs[1][i].Float32())
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return math.Inf(1), nil
		}
		num += (x - y) * (x - y)
		den += x * x
	}
	if den == 0 {
		return math.Inf(1), nil
	}
	return math.Sqrt(num / den), nil
}
