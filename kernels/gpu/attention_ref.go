package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// KVCache is a host copy of a decode KV cache: Batch sequences with Lens[b]
// tokens, Row bf16 values a token (MLA: the 576-wide latent entry; GQA:
// kv_heads x head_dim of one of K or V). Contiguous caches hold sequence b's
// token t at row b*Stride + t; paged ones at row Table[b][t/PageSize] *
// PageSize + t%PageSize of Data.
type KVCache struct {
	Row    int
	Lens   []int
	Stride int       // contiguous: rows a sequence
	Table  [][]int32 // paged: the block table (nil: contiguous)
	Data   []BF16
}

// RowOf is sequence b's token t.
func (c *KVCache) RowOf(b, t int) []BF16 {
	r := b*c.Stride + t
	if c.Table != nil {
		r = int(c.Table[b][t/PageSize])*PageSize + t%PageSize
	}
	return c.Data[r*c.Row : (r+1)*c.Row]
}

// FlatTable is the block table as the kernel reads it: Batch x maxPages
// int32 (unused entries 0).
func (c *KVCache) FlatTable(maxPages int) []int32 {
	out := make([]int32, len(c.Table)*maxPages)
	for b, row := range c.Table {
		copy(out[b*maxPages:], row)
	}
	return out
}

// RandomKVCache draws a cache of uniform bf16 values in [-1, 1): contiguous
// with Stride = the longest sequence, or paged over pages in a random order
// (so a sequence's pages are scattered as an allocator leaves them).
func RandomKVCache(rng *rand.Rand, row int, lens []int, paged bool) *KVCache {
	c := &KVCache{Row: row, Lens: lens}
	longest := 0
	for _, l := range lens {
		longest = max(longest, l)
	}
	if !paged {
		c.Stride = longest
		c.Data = RandomBF16(rng, len(lens)*longest*row)
		return c
	}
	pages := 0
	for _, l := range lens {
		pages += ceilDiv(l, PageSize)
	}
	perm := rng.Perm(pages)
	c.Table = make([][]int32, len(lens))
	next := 0
	for b, l := range lens {
		for range ceilDiv(l, PageSize) {
			c.Table[b] = append(c.Table[b], int32(perm[next]))
			next++
		}
	}
	c.Data = RandomBF16(rng, pages*PageSize*row)
	return c
}

// softmaxRows computes, for each of the rows of scores (already scaled),
// the softmax weights in place; float64 throughout.
func softmaxRow(s []float64) {
	m := math.Inf(-1)
	for _, v := range s {
		m = math.Max(m, v)
	}
	var l float64
	for i, v := range s {
		s[i] = math.Exp(v - m)
		l += s[i]
	}
	for i := range s {
		s[i] /= l
	}
}

// ReferenceMLA is MLA decode attention in float64 over the bf16 inputs:
// for each sequence b and head h, softmax over the tokens of
// scale x q[b][h] . kv[t] (576 wide), weighting the tokens' first 512
// values. q is Batch x heads x 576; the result is Batch*heads rows of 512.
func ReferenceMLA(q []BF16, heads int, kv *KVCache, scale float64) ([][]float64, error) {
	batch := len(kv.Lens)
	if kv.Row != MLADim || len(q) != batch*heads*MLADim {
		return nil, fmt.Errorf("mla reference: q %d values, cache row %d: want %d x %d x %d and rows of %d", len(q), kv.Row, batch, heads, MLADim, MLADim)
	}
	out := make([][]float64, batch*heads)
	for b := 0; b < batch; b++ {
		n := kv.Lens[b]
		rows := make([][]float64, n)
		for t := range rows {
			rows[t] = toF64(kv.RowOf(b, t))
		}
		for h := 0; h < heads; h++ {
			qh := toF64(q[(b*heads+h)*MLADim : (b*heads+h+1)*MLADim])
			s := make([]float64, n)
			for t, r := range rows {
				s[t] = scale * dot(qh, r)
			}
			softmaxRow(s)
			o := make([]float64, MLAValueDim)
			for t, r := range rows {
				for c := range o {
					o[c] += s[t] * r[c]
				}
			}
			out[b*heads+h] = o
		}
	}
	return out, nil
}

// ReferenceGQA is GQA decode attention in float64: query head h of sequence
// b attends with kv head h / (heads/kvHeads) over k and v (rows of kvHeads x
// headDim). q is Batch x heads x headDim; the result is Batch*heads rows of
// headDim.
func ReferenceGQA(q []BF16, heads, kvHeads, headDim int, k, v *KVCache, scale float64) ([][]float64, error) {
	batch := len(k.Lens)
	if k.Row != kvHeads*headDim || v.Row != k.Row || len(q) != batch*heads*headDim || heads%kvHeads != 0 {
		return nil, fmt.Errorf("gqa reference: shapes disagree (q %d, rows %d/%d, heads %d/%d x %d)", len(q), k.Row, v.Row, heads, kvHeads, headDim)
	}
	g := heads / kvHeads
	out := make([][]float64, batch*heads)
	for b := 0; b < batch; b++ {
		n := k.Lens[b]
		for h := 0; h < heads; h++ {
			kh := h / g
			qh := toF64(q[(b*heads+h)*headDim : (b*heads+h+1)*headDim])
			s := make([]float64, n)
			for t := range s {
				s[t] = scale * dot(qh, toF64(k.RowOf(b, t)[kh*headDim:(kh+1)*headDim]))
			}
			softmaxRow(s)
			o := make([]float64, headDim)
			for t := range s {
				vr := v.RowOf(b, t)[kh*headDim : (kh+1)*headDim]
				for c := range o {
					o[c] += s[t] * float64(vr[c].Float32())
				}
			}
			out[b*heads+h] = o
		}
	}
	return out, nil
}

func toF64(x []BF16) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v.Float32())
	}
	return out
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
