package gpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/moecast/moecast/internal/cuda"
)

// Decode attention (attention.cu): MLA over a latent KV cache in the absorbed
// form and GQA over per-head K/V caches, split along the KV sequence
// (flash-decoding) with a combine kernel, over contiguous or paged caches
// (pageSize tokens a page, a block table per sequence).
const (
	MLADim      = 576 // absorbed query and cache entry: kv_lora_rank 512 + qk_rope_dim 64
	mlaValueDim = 512 // output per head: kv_lora_rank
	pageSize    = 64  // tokens a KV page (paged caches)
	// maxSplits is the most KV splits a launch may have (the combine
	// kernel's limit).
	maxSplits = 256

	combineCols = 64 // output columns a combine block
	gqaTile     = 64 // tokens a pipeline stage (GQA)
	attnThreads = 128
	headTile    = 16 // query heads a block (one m16 tile)
)

// mlaVariants are the MLA kernels attention.cu compiles: tokens a pipeline
// stage and stages.
var mlaVariants = [][2]int{{32, 2}, {32, 3}, {16, 4}, {16, 6}}

// defaultMLAVariant is the MLA kernel plans use unless told otherwise: 32
// tokens a stage, 2 stages (2 blocks a multiprocessor) was the fastest of
// the four at every shape timed on the H200 but one (attn req-2: batch 256
// x 16384 tokens, 8 heads 1329 us = 3.63 TB/s; t32 s3 1858, t16 s4 1597,
// t16 s6 2415 us).
var defaultMLAVariant = [2]int{32, 2}

// gqaStages are the pipeline depths of the GQA kernels.
var gqaStages = []int{2, 3}

// defaultGQAStages is the GQA pipeline depth plans use unless told
// otherwise: 3 stages (2 blocks a multiprocessor at head_dim 128) were as
// fast or faster than 2 at most shapes timed on the H200 (attn req-2: batch
// 128 x 4096 tokens 64/4 heads 307.6 vs 337.0 us, batch 256 x 2048 320 vs
// 393 us; batch 1 x 128k 93.5 vs 88.3 us the exception).
var defaultGQAStages = 3

// gqaHeadDims are the head dims attention.cu compiles for GQA.
var gqaHeadDims = []int{64, 128}

// AttentionModule is the decode attention kernels loaded into the current
// context.
type AttentionModule struct {
	mod     cuda.Module
	mla     map[[2]int]cuda.Function // by (tile, stages)
	mla2    map[[2]int]cuda.Function // the two-head-tile (_h2, 256 threads) kernels
	gqa     map[[2]int]cuda.Function // by (head dim, stages)
	prefill map[[3]int]cuda.Function // by (qk dim, v dim, stages)
	combine cuda.Function
	fill    cuda.Function
	Image   string // the image's name or path
	SMs     int
	// PerSM is the blocks of each kernel (by name) resident on one
	// multiprocessor; a kernel whose shared memory does not fit the device
	// is absent.
	PerSM map[string]int
}

func mlaName(tile, stages, headTiles int) string {
	n := fmt.Sprintf("moecast_mla_decode_t%d_s%d", tile, stages)
	if headTiles == 2 {
		n += "_h2"
	}
	return n
}
func gqaName(d, stages int) string { return fmt.Sprintf("moecast_gqa_decode_d%d_s%d", d, stages) }
func mlaSmem(tile, stages, headTiles int) int {
	return stages*tile*(MLADim+8)*2 + headTiles*4*(tile/8)*32*16
}
func gqaSmem(d, stages int) int       { return max(stages*2*gqaTile*(d+8)*2, 4*headTile*d*4) }
func ceilDiv(a, b int) int            { return (a + b - 1) / b }
func roundUp(a, b int) int            { return ceilDiv(a, b) * b }
func attnLog2Scale(s float64) float32 { return float32(s * math.Log2E) }

// LoadAttention loads attention.cu's kernels for dev into the current
// context (loadImage "attention": MOECAST_ATTENTION_MODULE overrides).
func LoadAttention(dev cuda.Device) (*AttentionModule, error) {
	sms, err := dev.Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	smemMax, err := dev.Attribute(cuda.AttrMaxSharedMemoryPerBlockOp)
	if err != nil {
		return nil, err
	}
	mod, name, err := loadImage(dev, "attention")
	if err != nil {
		return nil, err
	}
	m := &AttentionModule{mod: mod, mla: map[[2]int]cuda.Function{}, mla2: map[[2]int]cuda.Function{}, gqa: map[[2]int]cuda.Function{}, prefill: map[[3]int]cuda.Function{}, Image: name, SMs: sms, PerSM: map[string]int{}}
	prep := func(name string, smem, threads int) (cuda.Function, bool, error) {
		f, err := mod.Function(name)
		if err != nil {
			return 0, false, err
		}
		if smem > smemMax {
			return f, false, nil // does not fit this GPU
		}
		if err := f.SetAttribute(cuda.FuncMaxDynamicSharedMemory, smem); err != nil {
			return 0, false, fmt.Errorf("attention: %s: %d B of shared memory: %w", name, smem, err)
		}
		n, err := f.ActiveBlocksPerSM(threads, smem)
		if err != nil {
			return 0, false, err
		}
		if n < 1 {
			return f, false, nil
		}
		m.PerSM[name] = n
		return f, true, nil
	}
	for _, v := range mlaVariants {
		f, ok, err := prep(mlaName(v[0], v[1], 1), mlaSmem(v[0], v[1], 1), attnThreads)
		if err != nil {
			return nil, err
		}
		if ok {
			m.mla[v] = f
		}
		if f, ok, err = prep(mlaName(v[0], v[1], 2), mlaSmem(v[0], v[1], 2), 2*attnThreads); err != nil {
			return nil, err
		}
		if ok {
			m.mla2[v] = f
		}
	}
	for _, st := range gqaStages {
		for _, d := range gqaHeadDims {
			f, ok, err := prep(gqaName(d, st), gqaSmem(d, st), attnThreads)
			if err != nil {
				return nil, err
			}
			if ok {
				m.gqa[[2]int{d, st}] = f
			}
		}
	}
	for _, st := range prefillStages {
		for _, d := range prefillDims {
			f, ok, err := prep(prefillName(d[0], d[1], st), prefillSmem(d[0], d[1], st), attnThreads)
			if err != nil {
				return nil, err
			}
			if ok {
				m.prefill[[3]int{d[0], d[1], st}] = f
			}
		}
	}
	if len(m.mla) == 0 {
		return nil, fmt.Errorf("attention: no MLA kernel fits this GPU's %d B of shared memory a block", smemMax)
	}
	if m.combine, err = mod.Function("moecast_attn_combine"); err != nil {
		return nil, err
	}
	if m.fill, err = mod.Function("moecast_fill_bf16"); err != nil {
		return nil, err
	}
	return m, nil
}

// AttnOptions tune an attention plan; zero values choose.
type AttnOptions struct {
	Tile   int // MLA: tokens a pipeline stage (32 or 16); 0: defaultMLAVariant's
	Stages int // pipeline stages; 0: the default (defaultMLAVariant, defaultGQAStages)
	// HeadTiles (MLA): 16-head tiles a block, sharing each KV tile: 1 (128
	// threads) or 2 (the _h2 kernels, 256 threads: half the KV reads for
	// 32 heads and more per GPU); 0: 1.
	HeadTiles int
	Splits    int  // KV splits a sequence; 0: enough to fill the GPU
	Paged     bool // the cache is paged (pageSize tokens a page, a block table)
}

// attnPlan is one decode attention launch: every sequence has KVLen tokens
// at most (Lens gives each its own), Heads query heads (and KVHeads KV
// heads of HeadDim for GQA). The main kernel runs Blocks() blocks; with
// Splits > 1 a combine kernel merges the splits.
type attnPlan struct {
	MLA                    bool
	Batch, Heads, KVLen    int
	KVHeads, HeadDim       int // GQA
	Tile, Stages           int // MLA: tokens a pipeline stage; stages
	HeadTiles              int // MLA: 16-head tiles a block (1 or 2)
	Splits, Chunk          int // Chunk: tokens a split
	Groups                 int // blocks along heads (MLA: head tiles; GQA: kv_heads x query tiles)
	Smem                   int
	Paged                  bool
	MaxPages               int // block table row length (paged)
	Scale                  float64
	name                   string
	perSM                  int
	qDim, outDim, tileToks int
}

// Blocks is the main kernel's grid size.
func (p attnPlan) Blocks() int { return p.Groups * p.Splits * p.Batch }

// Kernels is the launches of one call (the main kernel, plus the combine).
func (p attnPlan) Kernels() int {
	if p.Splits > 1 {
		return 2
	}
	return 1
}

// Kernel is the main kernel's name.
func (p attnPlan) Kernel() string { return p.name }

// QElems and OutElems are the bf16 elements of the query and output.
func (p attnPlan) QElems() int   { return p.Batch * p.Heads * p.qDim }
func (p attnPlan) OutElems() int { return p.Batch * p.Heads * p.outDim }

// RowElems is the bf16 elements of one token's row in each cache (MLA: the
// latent entry; GQA: kv_heads x head_dim, in each of K and V).
func (p attnPlan) RowElems() int {
	if p.MLA {
		return MLADim
	}
	return p.KVHeads * p.HeadDim
}

// KVBytes is the cache bytes a call reads: every token of every sequence
// once (K and V for GQA).
func (p attnPlan) KVBytes() int64 {
	n := int64(p.Batch) * int64(p.KVLen) * int64(p.RowElems()) * 2
	if !p.MLA {
		n *= 2
	}
	return n
}

// PartialBytes and LSEBytes are the fp32 split buffers (0 with one split).
func (p attnPlan) PartialBytes() int64 {
	if p.Splits == 1 {
		return 0
	}
	return int64(p.Batch) * int64(p.Splits) * int64(p.Heads) * int64(p.outDim) * 4
}
func (p attnPlan) LSEBytes() int64 {
	if p.Splits == 1 {
		return 0
	}
	return int64(p.Batch) * int64(p.Splits) * int64(p.Heads) * 4
}

// PlanMLA plans MLA decode over batch sequences of at most kvLen tokens,
// heads query heads on this GPU; the softmax scale is 1/sqrt(192)
// (DeepSeek-V3's qk_nope 128 + qk_rope 64) unless scale is set.
func (m *AttentionModule) PlanMLA(batch, heads, kvLen int, o AttnOptions) (attnPlan, error) {
	if batch <= 0 || heads <= 0 || kvLen <= 0 {
		return attnPlan{}, fmt.Errorf("attention: mla batch %d heads %d kv_len %d: want positive", batch, heads, kvLen)
	}
	v := defaultMLAVariant
	if o.Tile != 0 || o.Stages != 0 {
		v = [2]int{o.Tile, o.Stages}
		if v[0] == 0 {
			v[0] = defaultMLAVariant[0]
		}
		if v[1] == 0 {
			for _, w := range mlaVariants {
				if w[0] == v[0] {
					v[1] = w[1]
					break
				}
			}
		}
	}
	ht := max(1, o.HeadTiles)
	kern := m.mla
	if ht == 2 {
		kern = m.mla2
	}
	if _, ok := kern[v]; !ok || ht > 2 {
		return attnPlan{}, fmt.Errorf("attention: no MLA kernel of %d tokens, %d stages and %d head tiles for this GPU", v[0], v[1], ht)
	}
	p := attnPlan{MLA: true, Batch: batch, Heads: heads, KVLen: kvLen, Groups: ceilDiv(heads, ht*headTile), Paged: o.Paged,
		Scale: 1 / math.Sqrt(192), qDim: MLADim, outDim: mlaValueDim, tileToks: v[0], Stages: v[1], Tile: v[0], HeadTiles: ht}
	p.name, p.Smem = mlaName(v[0], v[1], ht), mlaSmem(v[0], v[1], ht)
	return m.split(p, o)
}

// PlanGQA plans GQA decode: heads query heads and kvHeads KV heads of
// headDim (64 or 128) on this GPU, heads a multiple of kvHeads; the
// softmax scale is 1/sqrt(headDim).
func (m *AttentionModule) PlanGQA(batch, heads, kvHeads, headDim, kvLen int, o AttnOptions) (attnPlan, error) {
	if batch <= 0 || heads <= 0 || kvHeads <= 0 || kvLen <= 0 {
		return attnPlan{}, fmt.Errorf("attention: gqa batch %d heads %d kv_heads %d kv_len %d: want positive", batch, heads, kvHeads, kvLen)
	}
	if heads%kvHeads != 0 {
		return attnPlan{}, fmt.Errorf("attention: gqa %d heads over %d kv heads: want a multiple", heads, kvHeads)
	}
	if !slices.Contains(gqaHeadDims, headDim) {
		return attnPlan{}, fmt.Errorf("attention: gqa head_dim %d: want one of %v", headDim, gqaHeadDims)
	}
	p := attnPlan{Batch: batch, Heads: heads, KVHeads: kvHeads, HeadDim: headDim, KVLen: kvLen,
		Groups: kvHeads * ceilDiv(heads/kvHeads, headTile), Paged: o.Paged, Scale: 1 / math.Sqrt(float64(headDim)),
		qDim: headDim, outDim: headDim, tileToks: gqaTile, Stages: o.Stages}
	if p.Stages == 0 {
		p.Stages = defaultGQAStages
	}
	if _, ok := m.gqa[[2]int{headDim, p.Stages}]; !ok {
		return attnPlan{}, fmt.Errorf("attention: no %d-stage GQA kernel of head_dim %d for this GPU", p.Stages, headDim)
	}
	p.name, p.Smem = gqaName(headDim, p.Stages), gqaSmem(headDim, p.Stages)
	return m.split(p, o)
}

// minSplitTiles is the least pipeline tiles a split gets from the default
// plan (a split's fixed cost: the prologue, the partial write and its share
// of the combine).
const minSplitTiles = 2

// waveEfficiency is the share of the block slots the default plan's
// waves must keep busy (see split).
const waveEfficiency = 0.9

// split picks the KV splits. By default: the fewest splits s (each at least
// minSplitTiles tiles) whose blocks, groups x batch x s, fill their waves of
// the GPU's resident block slots (the driver's occupancy x SMs) to
// waveEfficiency; when none does, the s that fills them best. A batch that
// fills the GPU is not split; one sequence is split across every slot.
func (m *AttentionModule) split(p attnPlan, o AttnOptions) (attnPlan, error) {
	p.perSM = max(1, m.PerSM[p.name])
	tiles := ceilDiv(p.KVLen, p.tileToks)
	switch {
	case o.Splits > 0:
		p.Splits = min(o.Splits, tiles)
	default:
		slots := max(1, m.SMs) * p.perSM
		blocks := p.Groups * p.Batch
		most := min(maxSplits, max(1, tiles/minSplitTiles))
		if blocks >= 2*slots {
			most = 1 // two waves or more: the tail is small, the combine's traffic is not
		}
		best, bestEff := 1, 0.0
		for s := 1; s <= most; s++ {
			n := blocks * s
			eff := float64(n) / float64(ceilDiv(n, slots)*slots)
			if eff >= waveEfficiency {
				best = s
				break
			}
			if eff > bestEff+1e-9 {
				best, bestEff = s, eff
			}
		}
		p.Splits = best
	}
	if p.Splits > maxSplits {
		p.Splits = maxSplits
	}
	p.Chunk = roundUp(ceilDiv(p.KVLen, p.Splits), p.tileToks)
	p.Splits = ceilDiv(p.KVLen, p.Chunk)
	if p.Paged {
		p.MaxPages = ceilDiv(p.KVLen, pageSize)
	}
	if p.Batch > 65535 || p.Splits > 65535 {
		return p, fmt.Errorf("attention: grid %d x %d x %d too large", p.Groups, p.Splits, p.Batch)
	}
	return p, nil
}

// attnBuffers are the device buffers of one call. MLA reads K (the latent
// cache); GQA reads K and V. Table is the block table (paged: Batch x
// MaxPages int32 page indices), else 0 with rows Batch x KVStride tokens.
type attnBuffers struct {
	Q, K, V, Table, Lens, Out cuda.DevicePtr
	Partial, LSE              cuda.DevicePtr // splits > 1
	KVStride                  int64          // contiguous: tokens between sequences (0: KVLen)
}

// attnArgs is one call's marshalled parameters.
type attnArgs struct{ main, combine *cuda.Params }

// Args marshals the kernels' parameters (kept for repeated launches).
func (p attnPlan) Args(b attnBuffers) (*attnArgs, error) {
	if b.Q == 0 || b.K == 0 || b.Lens == 0 || b.Out == 0 || (!p.MLA && b.V == 0) {
		return nil, fmt.Errorf("attention: a call needs q, the cache(s), lens and out")
	}
	if p.Paged != (b.Table != 0) {
		return nil, fmt.Errorf("attention: paged plans need a block table, contiguous ones none")
	}
	if p.Splits > 1 && (b.Partial == 0 || b.LSE == 0) {
		return nil, fmt.Errorf("attention: %d splits need the partial and lse buffers", p.Splits)
	}
	stride := b.KVStride
	if stride == 0 {
		stride = int64(p.KVLen)
	}
	scale := attnLog2Scale(p.Scale)
	var a attnArgs
	var err error
	if p.MLA {
		a.main, err = cuda.MarshalParams(b.Q, b.K, b.Table, b.Lens, b.Out, b.Partial, b.LSE, int32(p.Heads),
			int32(p.MaxPages), stride, int32(p.Chunk), scale)
	} else {
		a.main, err = cuda.MarshalParams(b.Q, b.K, b.V, b.Table, b.Lens, b.Out, b.Partial, b.LSE, int32(p.Heads),
			int32(p.KVHeads), int32(p.MaxPages), stride, int32(p.Chunk), scale)
	}
	if err != nil {
		return nil, err
	}
	if p.Splits > 1 {
		if a.combine, err = cuda.MarshalParams(b.Partial, b.LSE, b.Out, int32(p.Heads), int32(p.Splits), int32(p.outDim)); err != nil {
			return nil, err
		}
	}
	return &a, nil
}

// Launch runs one call (the main kernel, then the combine with several
// splits) on the stream.
func (m *AttentionModule) Launch(p attnPlan, a *attnArgs, s cuda.Stream) error {
	var f cuda.Function
	var ok bool
	threads := attnThreads
	switch {
	case p.MLA && p.HeadTiles == 2:
		f, ok = m.mla2[[2]int{p.Tile, p.Stages}]
		threads *= 2
	case p.MLA:
		f, ok = m.mla[[2]int{p.Tile, p.Stages}]
	default:
		f, ok = m.gqa[[2]int{p.HeadDim, p.Stages}]
	}
	if !ok {
		return fmt.Errorf("attention: no kernel %s loaded", p.name)
	}
	block := cuda.Dim3{X: threads, Y: 1, Z: 1}
	if err := f.LaunchParams(cuda.Dim3{X: p.Groups, Y: p.Splits, Z: p.Batch}, block, p.Smem, s, a.main); err != nil {
		return err
	}
	if p.Splits > 1 {
		return m.combine.LaunchParams(cuda.Dim3{X: p.Batch * p.Heads, Y: p.outDim / combineCols, Z: 1},
			cuda.Dim3{X: 256, Y: 1, Z: 1}, 0, s, a.combine)
	}
	return nil
}

// Fill writes n bf16 values (a multiple of 8) at ptr, amp x a hash of
// (index, seed) in [-1, 1), on the stream.
func (m *AttentionModule) Fill(ptr cuda.DevicePtr, n int64, seed uint32, amp float32, s cuda.Stream) error {
	if n <= 0 || n%8 != 0 {
		return fmt.Errorf("attention: fill of %d values: want a positive multiple of 8", n)
	}
	blocks := int(min(int64(m.SMs)*16, (n/8+255)/256))
	return m.fill.Launch(cuda.Dim3{X: max(1, blocks), Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}, 0, s, ptr, n/8, seed, amp)
}
