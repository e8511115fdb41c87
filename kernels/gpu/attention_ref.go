package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// KVCache is a host copy of a decode KV cache: Batch sequences with Lens[b]
// tokens, Row bf16 values a token (MLA: the 576-wide latent entry; GQA:
// kv_heads x head_dim of one of K or V). Contiguous caches hold sequence b's
// token t at row b*Stride + t; paged ones at row Table[b][t/pageSize] *
// pageSize + t%pageSize of Data.
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
		r = int(c.Table[b][t/pageSize])*pageSize + t%pageSize
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

// randomKVCache draws a cache of uniform bf16 values in [-1, 1): contiguous
// with Stride = the longest sequence, or paged over pages in a random order
// (so a sequence's pages are scattered as an allocator leaves them).
func randomKVCache(rng *rand.Rand, row int, lens []int, paged bool) *KVCache {
	c := &KVCache{Row: row, Lens: lens}
	longest := 0
	for _, l := range lens {
		longest = max(longest, l)
	}
	if !paged {
		c.Stride = longest
		c.Data = randomBF16(rng, len(lens)*longest*row)
		return c
	}
	pages := 0
	for _, l := range lens {
		pages += ceilDiv(l, pageSize)
	}
	perm := rng.Perm(pages)
	c.Table = make([][]int32, len(lens))
	next := 0
	for b, l := range lens {
		for range ceilDiv(l, pageSize) {
			c.Table[b] = append(c.Table[b], int32(perm[next]))
			next++
		}
	}
	c.Data = randomBF16(rng, pages*pageSize*row)
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

// referenceMLA is MLA decode attention in float64 over the bf16 inputs:
// for each sequence b and head h, softmax over the tokens of
// scale x q[b][h] . kv[t] (576 wide), weighting the tokens' first 512
// values. q is Batch x heads x 576; the result is Batch*heads rows of 512.
func referenceMLA(q []BF16, heads int, kv *KVCache, scale float64) ([][]float64, error) {
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
			o := make([]float64, mlaValueDim)
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

// referenceGQA is GQA decode attention in float64: query head h of sequence
// b attends with kv head h / (heads/kvHeads) over k and v (rows of kvHeads x
// headDim). q is Batch x heads x headDim; the result is Batch*heads rows of
// headDim.
func referenceGQA(q []BF16, heads, kvHeads, headDim int, k, v *KVCache, scale float64) ([][]float64, error) {
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

// referencePrefill is causal prefill attention in float64 over the bf16
// inputs: q is Batch x Chunk x Heads x QKDim; k and v are the caches (rows of
// KVHeads x QKDim and KVHeads x VDim, Prefix+Chunk tokens a sequence). Query
// token i of sequence b, head h, attends with KV head h/(Heads/KVHeads) to
// the keys j <= Prefix+i (and j > Prefix+i-Window with a window). The result
// is Batch*Chunk*Heads rows of VDim.
func referencePrefill(c PrefillCase, q []BF16, k, v *KVCache, scale float64) ([][]float64, error) {
	n := c.KVLen()
	if len(k.Lens) != c.Batch || k.Row != c.KVHeads*c.QKDim || v.Row != c.KVHeads*c.VDim ||
		len(q) != c.Batch*c.Chunk*c.Heads*c.QKDim || c.Heads%c.KVHeads != 0 {
		return nil, fmt.Errorf("prefill reference: shapes disagree (q %d, rows %d/%d, heads %d/%d)", len(q), k.Row, v.Row, c.Heads, c.KVHeads)
	}
	g := c.Heads / c.KVHeads
	out := make([][]float64, c.Batch*c.Chunk*c.Heads)
	for b := 0; b < c.Batch; b++ {
		if k.Lens[b] != n {
			return nil, fmt.Errorf("prefill reference: sequence %d holds %d tokens, want %d", b, k.Lens[b], n)
		}
		for kh := 0; kh < c.KVHeads; kh++ {
			keys := make([][]float64, n)
			vals := make([][]float64, n)
			for t := range keys {
				keys[t] = toF64(k.RowOf(b, t)[kh*c.QKDim : (kh+1)*c.QKDim])
				vals[t] = toF64(v.RowOf(b, t)[kh*c.VDim : (kh+1)*c.VDim])
			}
			for h := kh * g; h < (kh+1)*g; h++ {
				for i := 0; i < c.Chunk; i++ {
					row := (b*c.Chunk+i)*c.Heads + h
					qh := toF64(q[row*c.QKDim : (row+1)*c.QKDim])
					pos := c.Prefix + i
					lo := 0
					if c.Window > 0 {
						lo = max(0, pos-c.Window+1)
					}
					s := make([]float64, pos+1-lo)
					for j := range s {
						s[j] = scale * dot(qh, keys[lo+j])
					}
					softmaxRow(s)
					o := make([]float64, c.VDim)
					for j, w := range s {
						for d := range o {
							o[d] += w * vals[lo+j][d]
						}
					}
					out[row] = o
				}
			}
		}
	}
	return out, nil
}
