package gpu

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// emuAlign is a CPU model of glue.cu's moecast_moe_align, phase by phase
// as the block runs it (barriers between phases; warps and lanes in
// loops): the counts, the padded scan, then per chunk of 8192 pairs the
// warps' rounds of 32 (match.any and the warp's running count of each
// expert, with 16-bit chunk stamps), the column scan over the warps and the
// positions. It checks the kernel's index arithmetic against alignLocal
// where no GPU is at hand; TestAlignOnDevice checks the kernel.
func emuAlign(ids []int32, first, count, block int) (sorted, experts []int32, post [2]int32) {
	n := len(ids)
	stride := count | 1
	hist := make([]uint32, alignWarps*stride)
	cnt, off, cur, tot := make([]int, count), make([]int, count), make([]int, count), make([]int, count)
	rows, blocks := alignCapacity(n, count, block)
	sorted, experts = make([]int32, rows), make([]int32, blocks)
	for i := range sorted {
		sorted[i] = -1
	}
	for _, id := range ids {
		if e := int(id) - first; e >= 0 && e < count {
			cnt[e]++
		}
	}
	start := 0
	for e := 0; e < count; e++ {
		padded := (cnt[e] + block - 1) / block * block
		off[e] = start
		for b := start / block; b < (start+padded)/block; b++ {
			experts[b] = int32(e)
		}
		for p := start + cnt[e]; p < start+padded; p++ {
			sorted[p] = int32(n)
		}
		start += padded
	}
	post = [2]int32{int32(start), int32(start / block)}
	const rounds = alignChunk / alignThreads
	for base, chunk := 0, 1; base < n; base, chunk = base+alignChunk, chunk+1 {
		stamp := uint32(chunk) << 16
		es := make([][rounds][32]int, alignWarps) // each lane's registers
		rk := make([][rounds][32]int, alignWarps)
		for w := 0; w < alignWarps; w++ {
			wbase := base + w*32*rounds
			for r := 0; r < rounds; r++ {
				key := make([]int, 32)
				for lane := 0; lane < 32; lane++ {
					i := wbase + r*32 + lane
					e := -1
					if i < n {
						e = int(ids[i]) - first
					}
					if e >= count || e < 0 {
						e = -1
					}
					es[w][r][lane], rk[w][r][lane] = e, 0
					key[lane] = -1 - lane
					if e >= 0 {
						key[lane] = e
					}
				}
				if wbase+r*32 >= n {
					continue
				}
				var rank, before, pop [32]int
				for lane := 0; lane < 32; lane++ {
					var peers uint32
					for l := 0; l < 32; l++ {
						if key[l] == key[lane] {
							peers |= 1 << l
						}
					}
					rank[lane] = bits.OnesCount32(peers & (1<<lane - 1))
					pop[lane] = bits.OnesCount32(peers)
					if e := key[lane]; e >= 0 {
						if h := hist[w*stride+e]; h&0xffff0000 == stamp {
							before[lane] = int(h & 0xffff)
						}
					}
				}
				for lane := 0; lane < 32; lane++ { // after __syncwarp
					if e := key[lane]; e >= 0 && rank[lane] == 0 {
						hist[w*stride+e] = stamp | uint32(before[lane]+pop[lane])
					}
					rk[w][r][lane] = before[lane] + rank[lane]
				}
			}
		}
		// Column scan over the warps.
		for x := 0; x < count; x++ {
			if cnt[x] == 0 {
				continue
			}
			s := 0
			for lane := 0; lane < alignWarps; lane++ {
				h0 := hist[lane*stride+x]
				h := 0
				if h0&0xffff0000 == stamp {
					h = int(h0 & 0xffff)
				}
				hist[lane*stride+x] = stamp | uint32(s)
				s += h
			}
			tot[x] = s
		}
		// Positions.
		for w := 0; w < alignWarps; w++ {
			wbase := base + w*32*rounds
			for r := 0; r < rounds; r++ {
				for lane := 0; lane < 32; lane++ {
					if e := es[w][r][lane]; e >= 0 {
						sorted[off[e]+cur[e]+int(hist[w*stride+e]&0xffff)+rk[w][r][lane]] = int32(wbase + r*32 + lane)
					}
				}
			}
		}
		for x := 0; x < count; x++ {
			if cnt[x] > 0 {
				cur[x] += tot[x]
			}
		}
	}
	return sorted[:start], experts[:start/block], post
}

func TestAlignKernelModel(t *testing.T) {
	for _, c := range []struct {
		tokens, experts, k, block, first, count int
	}{{1, 384, 8, 16, 0, 384}, {3001, 384, 8, 32, 0, 384}, {8192, 384, 8, 64, 0, 384}, {6000, 384, 8, 64, 96, 48}, {2000, 16, 4, 64, 4, 8}, {1100, 512, 8, 16, 0, 512}} {
		r, err := routePowerLaw(uint64(c.tokens), c.tokens, c.experts, c.k, 0.7)
		require.NoError(t, err)
		want, err := alignLocal(r, c.block, c.first, c.count)
		require.NoError(t, err)
		var ids []int32
		for _, sel := range r.TopK {
			for _, e := range sel {
				ids = append(ids, int32(e))
			}
		}
		name := fmt.Sprintf("%+v", c)
		sorted, experts, post := emuAlign(ids, c.first, c.count, c.block)
		assert.Equal(t, [2]int32{int32(len(want.SortedIDs)), int32(want.Blocks())}, post, name)
		assert.Equal(t, want.SortedIDs, sorted, name)
		assert.Equal(t, want.ExpertIDs, experts, name)
	}
}
