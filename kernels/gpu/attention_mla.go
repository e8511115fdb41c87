package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/moecast/moecast/internal/cuda"
)

// The MLA decode module on one GPU, as vLLM's MLA backends run it after
// absorption (DeepseekV2MLAAttention with MLACommonImpl's decode path), one
// query token per sequence:
//
//	fused_qkv_a_proj  X[B, hidden] -> [B, q_lora + kv_lora + rope]     (GEMM, replicated)
//	q_a_layernorm, kv_a_layernorm                                      (RMSNorm x 2)
//	q_b_proj          q_c[B, q_lora] -> q[B, heads, nope + rope]       (GEMM)
//	W_UK absorb       q_nope[h][B, nope] x W_UK[h][nope, kv_lora]      (strided-batched GEMM over heads)
//	rotary            q_pe -> the absorbed query's rope part; k_pe in place
//	cache write       [kv_c, k_pe] of the token into the paged cache   (concat_and_cache_mla)
//	attention         MLA decode (+ combine)
//	W_UV unabsorb     o[h][B, kv_lora] x W_UV[h][kv_lora, v]           (strided-batched GEMM over heads)
//	o_proj            [B, heads x v] -> [B, hidden]                    (GEMM)
//
// The GEMMs go through a GEMMer (cuBLASLt: BLASGEMMer), the rest through
// attention.cu.

// GEMM is one bf16 GEMM (or a strided batch) row-major: Y[M, N] = X[M, K]
// x W^T with W stored [N, K] (nn.Linear), or Y = X x W with W [K, N]
// (WeightKN: torch.bmm's second operand). Leading dims and batch strides
// are in elements; 0 means packed.
type GEMM struct {
	Name                      string
	M, N, K                   int
	WeightKN                  bool
	LDX, LDW, LDY             int
	Batch                     int
	StrideX, StrideW, StrideY int64
}

// WeightElems is the elements of W (all members of a batch).
func (g GEMM) WeightElems() int64 { return int64(g.N) * int64(g.K) * int64(max(1, g.Batch)) }

// Enqueue runs one planned GEMM on s (also while s is captured).
type Enqueue func(x, w, y cuda.DevicePtr, s cuda.Stream) error

// GEMMer plans bf16 GEMMs that can be enqueued inside a graph capture.
type GEMMer interface {
	// Prepare plans g once, outside any capture.
	Prepare(g GEMM) (Enqueue, error)
	// Name says what runs the GEMMs, for the provenance.
	Name() string
}

// MLADims are an MLA model's attention dims (DeepSeek-V3 and Kimi-K2.5:
// hidden 7168, q_lora 1536, kv_lora 512, nope 128, rope 64, v 128).
type MLADims struct{ Hidden, QLoRARank, KVLoRARank, QKNope, QKRope, V int }

// deepSeekV3MLA is DeepSeek-V3's (and Kimi-K2.5's) MLA.
var deepSeekV3MLA = MLADims{Hidden: 7168, QLoRARank: 1536, KVLoRARank: 512, QKNope: 128, QKRope: 64, V: 128}

// mlaModuleGEMMs are the module's GEMMs for batch tokens and heads per GPU,
// in order: fused_qkv_a, q_b, W_UK (batched), W_UV (batched), o_proj.
func mlaModuleGEMMs(d MLADims, batch, heads int) []GEMM {
	qkv := d.QLoRARank + d.KVLoRARank + d.QKRope
	qh := d.QKNope + d.QKRope
	return []GEMM{
		{Name: "fused_qkv_a_proj", M: batch, N: qkv, K: d.Hidden},
		{Name: "q_b_proj", M: batch, N: heads * qh, K: d.QLoRARank, LDX: qkv},
		{Name: "W_UK (q absorb)", M: batch, N: d.KVLoRARank, K: d.QKNope, WeightKN: true, LDX: heads * qh, LDY: heads * MLADim,
			Batch: heads, StrideX: int64(qh), StrideW: int64(d.QKNope * d.KVLoRARank), StrideY: MLADim},
		{Name: "W_UV (v unabsorb)", M: batch, N: d.V, K: d.KVLoRARank, WeightKN: true, LDX: heads * mlaValueDim, LDY: heads * d.V,
			Batch: heads, StrideX: mlaValueDim, StrideW: int64(d.KVLoRARank * d.V), StrideY: int64(d.V)},
		{Name: "o_proj", M: batch, N: d.Hidden, K: heads * d.V},
	}
}

// MLAModuleCase is one MLA decode module to time: Batch sequences, one
// query token each, KVLen tokens cached (the new one included), Heads on
// this GPU.
type MLAModuleCase struct {
	Name                string
	Dims                MLADims
	Batch, Heads, KVLen int
	Seed                uint64
	Attn                AttnOptions // the attention kernel's (the cache is paged whatever it says)
}

// MLAModuleResult is one timed module: seconds per layer (every kernel of
// the module), the weight and KV bytes one layer reads.
type MLAModuleResult struct {
	Case                   MLAModuleCase
	Kernels                int // launches a layer
	Layers                 int // layers rotated over
	CallsPerGraph          int
	GraphSeconds           float64
	GraphMin, GraphMax     float64
	LaunchSeconds          float64
	WeightBytes, KVBytes   float64
	AttentionSplits        int
	WorkingSetBytes        float64 // WeightBytes + KVBytes
	AttentionKernel, GEMMs string
}

// Module kernels of attention.cu.
type mlaModuleKernels struct{ rmsnorm, rope, cacheWrite cuda.Function }

func (m *AttentionModule) moduleKernels() (k mlaModuleKernels, err error) {
	if m.mod == 0 {
		return k, fmt.Errorf("attention: module not loaded")
	}
	if k.rmsnorm, err = m.mod.Function("moecast_rmsnorm"); err != nil {
		return
	}
	if k.rope, err = m.mod.Function("moecast_mla_rope"); err != nil {
		return
	}
	k.cacheWrite, err = m.mod.Function("moecast_mla_cache_write")
	return
}

// MeasureMLAModule times the whole MLA decode module (the list above) with
// one layer's weights and paged KV cache rotated over layers totalling at
// least rotateBytes, so each call reads HBM as a 61-layer step does.
func MeasureMLAModule(m *AttentionModule, g GEMMer, c MLAModuleCase, rotateBytes int64, s cuda.Stream) (MLAModuleResult, error) {
	d := c.Dims
	if d.KVLoRARank+d.QKRope != MLADim || d.KVLoRARank != mlaValueDim {
		return MLAModuleResult{}, fmt.Errorf("mla module: kv_lora_rank %d + qk_rope %d: the kernel serves 512 + 64", d.KVLoRARank, d.QKRope)
	}
	kern, err := m.moduleKernels()
	if err != nil {
		return MLAModuleResult{}, err
	}
	ao := c.Attn
	ao.Paged = true
	ap, err := m.PlanMLA(c.Batch, c.Heads, c.KVLen, ao)
	if err != nil {
		return MLAModuleResult{}, err
	}
	gemms := mlaModuleGEMMs(d, c.Batch, c.Heads)
	enq := make([]Enqueue, len(gemms))
	var wElems int64
	for i, gm := range gemms {
		if enq[i], err = g.Prepare(gm); err != nil {
			return MLAModuleResult{}, fmt.Errorf("mla module %s: %w", gm.Name, err)
		}
		wElems += gm.WeightElems()
	}
	normElems := int64(d.QLoRARank + d.KVLoRARank)
	layerW := (wElems + normElems) * 2
	cacheElems := ap.cacheRows() * MLADim
	layerBytes := layerW + cacheElems*2
	layers := int(min(maxCopies, max(2, (rotateBytes+layerBytes-1)/layerBytes)))
	free, _, err := cuda.MemInfo()
	if err != nil {
		return MLAModuleResult{}, err
	}
	if need := layerBytes*int64(layers) + ap.PartialBytes() + 256<<20; need > free*9/10 {
		return MLAModuleResult{}, fmt.Errorf("mla module: %d MiB of weights and cache do not fit the %d MiB free", need>>20, free>>20)
	}
	var bufs deviceBuffers
	defer bufs.free()
	seed := uint32(c.Seed)
	fill := func(n int64, amp float32) (cuda.DevicePtr, error) {
		p, err := bufs.alloc(max(16, roundUp64(n, 8)*2))
		if err != nil {
			return 0, err
		}
		seed += 0x9e3779b9
		return p, m.Fill(p, roundUp64(n, 8), seed, amp, s)
	}
	qkv := d.QLoRARank + d.KVLoRARank + d.QKRope
	B, H := c.Batch, c.Heads
	x, err := fill(int64(B*d.Hidden), 1)
	if err != nil {
		return MLAModuleResult{}, err
	}
	y1, err := bufs.alloc(int64(B*qkv) * 2)
	if err != nil {
		return MLAModuleResult{}, err
	}
	qb, err := bufs.alloc(int64(B*H*(d.QKNope+d.QKRope)) * 2)
	if err != nil {
		return MLAModuleResult{}, err
	}
	qa, err := bufs.alloc(int64(ap.QElems()) * 2)
	if err != nil {
		return MLAModuleResult{}, err
	}
	o, err := bufs.alloc(int64(ap.OutElems()) * 2)
	if err != nil {
		return MLAModuleResult{}, err
	}
	vo, err := bufs.alloc(int64(B*H*d.V) * 2)
	if err != nil {
		return MLAModuleResult{}, err
	}
	out, err := bufs.alloc(int64(B*d.Hidden) * 2)
	if err != nil {
		return MLAModuleResult{}, err
	}
	part, err := bufs.alloc(max(16, ap.PartialBytes()))
	if err != nil {
		return MLAModuleResult{}, err
	}
	lse, err := bufs.alloc(max(16, ap.LSEBytes()))
	if err != nil {
		return MLAModuleResult{}, err
	}
	lensHost := make([]int32, B)
	for i := range lensHost {
		lensHost[i] = int32(c.KVLen)
	}
	lens, err := uploadInt32(&bufs, lensHost)
	if err != nil {
		return MLAModuleResult{}, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 13))
	perm := rng.Perm(B * ap.MaxPages)
	tab := make([]int32, len(perm))
	for i, v := range perm {
		tab[i] = int32(v)
	}
	table, err := uploadInt32(&bufs, tab)
	if err != nil {
		return MLAModuleResult{}, err
	}
	// Weights scaled so activations stay O(1): 1/sqrt(K) uniform.
	amp := func(k int) float32 { return float32(1.7 / math.Sqrt(float64(k))) }
	normArgs := func(ptr cuda.DevicePtr, width int, w cuda.DevicePtr) (*cuda.Params, error) {
		return cuda.MarshalParams(ptr, int32(qkv), int32(width), w, float32(1e-6))
	}
	ropeArgs, err := cuda.MarshalParams(qb, qa, y1, int32(qkv), int32(H), lens)
	if err != nil {
		return MLAModuleResult{}, err
	}
	row := cuda.Dim3{X: B, Y: 1, Z: 1}
	blk := cuda.Dim3{X: attnThreads, Y: 1, Z: 1}
	var launches []func() error
	kernels := 0
	for l := 0; l < layers; l++ {
		var w [5]cuda.DevicePtr
		for i, gm := range gemms {
			if w[i], err = fill(gm.WeightElems(), amp(gm.K)); err != nil {
				return MLAModuleResult{}, err
			}
		}
		gq, err := fill(int64(d.QLoRARank), 1)
		if err != nil {
			return MLAModuleResult{}, err
		}
		gkv, err := fill(int64(d.KVLoRARank), 1)
		if err != nil {
			return MLAModuleResult{}, err
		}
		cache, err := fill(cacheElems, 1)
		if err != nil {
			return MLAModuleResult{}, err
		}
		nq, err := normArgs(y1, d.QLoRARank, gq)
		if err != nil {
			return MLAModuleResult{}, err
		}
		nkv, err := normArgs(y1+cuda.DevicePtr(2*d.QLoRARank), d.KVLoRARank, gkv)
		if err != nil {
			return MLAModuleResult{}, err
		}
		cw, err := cuda.MarshalParams(y1, int32(qkv), cache, table, lens, int32(ap.MaxPages), int64(0))
		if err != nil {
			return MLAModuleResult{}, err
		}
		at, err := ap.Args(attnBuffers{Q: qa, K: cache, Table: table, Lens: lens, Out: o, Partial: part, LSE: lse})
		if err != nil {
			return MLAModuleResult{}, err
		}
		launches = append(launches, func() error {
			steps := []func() error{
				func() error { return enq[0](x, w[0], y1, s) },
				func() error { return kern.rmsnorm.LaunchParams(row, blk, 0, s, nq) },
				func() error { return kern.rmsnorm.LaunchParams(row, blk, 0, s, nkv) },
				func() error { return enq[1](y1, w[1], qb, s) },
				func() error { return enq[2](qb, w[2], qa, s) },
				func() error { return kern.rope.LaunchParams(row, blk, 0, s, ropeArgs) },
				func() error { return kern.cacheWrite.LaunchParams(row, cuda.Dim3{X: 96, Y: 1, Z: 1}, 0, s, cw) },
				func() error { return m.Launch(ap, at, s) },
				func() error { return enq[3](o, w[3], vo, s) },
				func() error { return enq[4](vo, w[4], out, s) },
			}
			for _, st := range steps {
				if err := st(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	kernels = 9 + ap.Kernels()
	if err := s.Synchronize(); err != nil {
		return MLAModuleResult{}, err
	}
	tm, err := Time(s, launches, 100)
	if err != nil {
		return MLAModuleResult{}, fmt.Errorf("mla module batch %d heads %d kv_len %d: %w", B, H, c.KVLen, err)
	}
	kvb := float64(ap.KVBytes())
	return MLAModuleResult{Case: c, Kernels: kernels, Layers: layers, CallsPerGraph: tm.Calls, GraphSeconds: float64(tm.Median),
		GraphMin: float64(tm.Min), GraphMax: float64(tm.Max), LaunchSeconds: float64(tm.Eager), WeightBytes: float64(layerW), KVBytes: kvb,
		AttentionSplits: ap.Splits, WorkingSetBytes: float64(layerW) + kvb, AttentionKernel: ap.name, GEMMs: g.Name()}, nil
}

func roundUp64(a, b int64) int64 { return (a + b - 1) / b * b }

// uploadInt32 copies host to a new device buffer kept in bufs.
func uploadInt32(bufs *deviceBuffers, host []int32) (cuda.DevicePtr, error) {
	p, err := bufs.alloc(int64(len(host)) * 4)
	if err != nil {
		return 0, err
	}
	return p, cuda.CopyToDevice(p, host)
}

// BLASGEMMer runs the module's GEMMs through cuBLASLt (bf16, fp32
// accumulation, the heuristic's first algorithm, a shared workspace).
type BLASGEMMer struct {
	H              *cuda.BLASLt
	Workspace      cuda.DevicePtr
	WorkspaceBytes int64
	plans          []*cuda.Matmul
}

// Prepare implements GEMMer.
func (b *BLASGEMMer) Prepare(g GEMM) (Enqueue, error) {
	mm, err := b.H.NewMatmul(cuda.MatmulSpec{Kind: cuda.MatmulBF16, M: g.M, N: g.N, K: g.K, WeightKN: g.WeightKN,
		LDX: g.LDX, LDW: g.LDW, LDY: g.LDY, Batch: g.Batch, StrideX: g.StrideX, StrideW: g.StrideW, StrideY: g.StrideY,
		Workspace: b.Workspace, WorkspaceBytes: b.WorkspaceBytes})
	if err != nil {
		return nil, err
	}
	b.plans = append(b.plans, mm)
	return mm.Enqueue, nil
}

// Name implements GEMMer.
func (b *BLASGEMMer) Name() string {
	v, _, err := cuda.CUBLASLtVersion()
	if err != nil {
		return "cuBLASLt"
	}
	return "cuBLASLt " + cuda.FormatCUBLASLtVersion(v)
}

// Close destroys the planned GEMMs.
func (b *BLASGEMMer) Close() {
	for _, p := range b.plans {
		p.Destroy()
	}
	b.plans = nil
}
