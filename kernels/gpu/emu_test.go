package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file is a CPU model of w4a16.cu: the kernel's index arithmetic line
// for line (stage loads, swizzle, fragment reads, warp reduction, stream-K,
// MoE rows), with ldmatrix and mma.sync m16n8k16 as the PTX ISA defines
// their fragments. It checks the layout logic that the repack feeds, where
// no GPU is at hand; the device tests check the kernel itself.

type emuLaunch struct {
	A                   []BF16
	Q                   []uint32 // Weights.Q, expert after expert
	S                   []BF16
	C                   []BF16
	ws                  []float32
	counters            []int32
	sorted, experts     []int32
	M, N, K, group      int
	aDiv, units         int
	MT, mblocks, blocks int
	stages, wn, bn      int
	swap                bool // Mode 3: the weights as mma's A operand, the tokens as its n8
}

func emuBF16(f float64) BF16 { return toBF16(float32(f)) }

// emuDQ is dq(): (bf16(0x4300|q) * 1 - 136) * s, rounded as fma.rn.bf16x2.
func emuDQ(x uint32, s BF16) [2]BF16 {
	lo, hi := BF16(0x4300|(x&0xf)), BF16(0x4300|(x>>16&0xf))
	f := func(v BF16) BF16 {
		d := emuBF16(float64(v.Float32()) - 136)
		return emuBF16(float64(d.Float32()) * float64(s.Float32()))
	}
	return [2]BF16{f(lo), f(hi)}
}

// run is w4a16_body: each block's run of units, segment by segment.
func (L *emuLaunch) run() {
	kiters, nn := L.K/tileK, L.N/L.bn
	total := L.mblocks * nn * kiters
	for b := 0; b < L.blocks; b++ {
		u := b * L.units
		end := min(total, u+L.units)
		for u < end {
			tile := u / kiters
			kb := u % kiters
			ke := min(kiters, kb+(end-u))
			t0 := tile * kiters
			first := t0 / L.units
			last := (t0 + kiters - 1) / L.units
			L.segment(b, tile/nn, tile%nn, kb, ke, first, last-first+1, t0)
			u += ke - kb
		}
	}
}

// segment is w4a16_segment for block b.
func (L *emuLaunch) segment(b, mblock, nblock, it0, it1, first, parts, t0 int) {
	MT, stages := L.MT, L.stages
	wk := 8 / L.wn        // warps along K
	ks := 8 / wk          // k16 steps per warp and stage
	tn := L.bn / 8 / L.wn // n8 tiles per warp
	BM := 16 * MT
	aStage := BM * tileK * 2
	bn, ch := L.bn, L.bn/64
	bStage, sStage := tileK*bn/2, ch*512
	redStride := bn + 8
	cpt := bn / 8             // epilogue: 8-column groups of a row
	rpt := BM * cpt / threads // epilogue: rows a thread writes
	rstep := threads / cpt
	stage := bStage + sStage + aStage
	smem := make([]byte, stages*stage)
	ngroups := L.K / L.group
	gs := tileK / L.group
	moe := L.sorted != nil
	expert := 0
	if moe {
		e := int(L.experts[mblock])
		if e < 0 {
			return
		}
		expert = e
	}
	wOff := expert * (L.N * L.K / 32) // uint4 units
	sOff := expert * (L.N * ngroups / 8)
	niters := it1 - it0
	kchunks := L.K / 16

	type aRow struct {
		row   int
		valid bool
	}
	aSrc := make([][]aRow, threads)
	for tid := 0; tid < threads; tid++ {
		for i := 0; i < MT; i++ {
			r := (tid + i*threads) >> 4
			row := mblock*BM + r
			var valid bool
			if moe {
				id := int(L.sorted[row])
				valid = id < L.M
				row = 0
				if valid {
					row = id / L.aDiv
				}
			} else {
				valid = row < L.M
				if !valid {
					row = 0
				}
			}
			aSrc[tid] = append(aSrc[tid], aRow{row, valid})
		}
	}
	copyU4 := func(dst int, words []uint32) {
		for j, w := range words {
			binary.LittleEndian.PutUint32(smem[dst+4*j:], w)
		}
	}
	u4 := func(q []uint32, i int) []uint32 { return q[4*i : 4*i+4] }
	bf16Words := func(h []BF16) []uint32 {
		out := make([]uint32, len(h)/2)
		for i := range out {
			out[i] = uint32(h[2*i]) | uint32(h[2*i+1])<<16
		}
		return out
	}
	loadStage := func(slot, it int) {
		st := slot * stage
		k0 := it * tileK
		for tid := 0; tid < threads; tid++ {
			for i := 0; i < ch; i++ {
				gc := nblock*ch + i
				src := wOff + (gc*kchunks+k0/16)*32 + tid
				copyU4(st+(i*threads+tid)*16, u4(L.Q, src))
			}
			nsc := ch * gs * 8
			if tid < nsc {
				per := gs * 8
				c, j := tid/per, tid%per
				gc := nblock*ch + c
				src := sOff + (gc*ngroups+k0/L.group)*8 + j
				copyU4(st+bStage+tid*16, bf16Words(L.S[8*src:8*src+8]))
			}
			as := st + bStage + sStage
			achunk := tid & 15
			for i := 0; i < MT; i++ {
				r := (tid + i*threads) >> 4
				dst := as + r*(tileK*2) + ((achunk ^ (r & 7)) * 16)
				words := make([]uint32, 4)
				if a := aSrc[tid][i]; a.valid {
					off := a.row*L.K + achunk*8 + k0
					words = bf16Words(L.A[off : off+8])
				}
				copyU4(dst, words)
			}
		}
	}
	word := func(off int) uint32 { return binary.LittleEndian.Uint32(smem[off:]) }
	half := func(w uint32, h int) BF16 { return BF16(w >> (16 * h)) }

	// acc[warp][lane][m][tile][4]
	acc := make([][][][][4]float32, 8)
	for w := range acc {
		acc[w] = make([][][][4]float32, 32)
		for l := range acc[w] {
			acc[w][l] = make([][][4]float32, MT)
			for m := range acc[w][l] {
				acc[w][l][m] = make([][4]float32, 8)
			}
		}
	}
	for s := 0; s < stages-1; s++ {
		if s < niters {
			loadStage(s, it0+s)
		}
	}
	for it := 0; it < niters; it++ {
		if nx := it + stages - 1; nx < niters {
			loadStage(nx%stages, it0+nx)
		}
		st := (it % stages) * stage
		for warp := 0; warp < 8; warp++ {
			wn, wk := warp%L.wn, warp/L.wn
			for s := 0; s < ks; s++ {
				kl := wk*ks + s
				var frag [32][8][2][2]BF16 // lane, tile, b0/b1, halves
				chunk, w0 := wn*tn/8, (wn*tn%8)/2
				for lane := 0; lane < 32; lane++ {
					boff := st + ((chunk*8+kl)*32+lane)*16 + 4*w0
					grow := (kl * 16) / L.group
					soff := st + bStage + ((chunk*gs+grow)*8+(lane>>2))*16 + 4*w0
					for j := 0; j < tn/2; j++ {
						bw := word(boff + 4*j)
						sw := word(soff + 4*j)
						sLo, sHi := half(sw, 0), half(sw, 1)
						frag[lane][2*j][0] = emuDQ(bw, sLo)
						frag[lane][2*j][1] = emuDQ(bw>>4, sLo)
						frag[lane][2*j+1][0] = emuDQ(bw>>8, sHi)
						frag[lane][2*j+1][1] = emuDQ(bw>>12, sHi)
					}
				}
				as := st + bStage + sStage
				if L.swap {
					// ldmatrix.x2: lanes 0-7 address rows 0-7 at k 0-7 of the step,
					// lanes 8-15 the same rows at k 8-15; lane t gets row t/4,
					// elements 2(t%4), +1 of each matrix: B (k16 x n8 tokens).
					var bm [16][8]float64
					for t := 0; t < 32; t++ {
						n, k := t/4, (t%4)*2
						for q := 0; q < 2; q++ {
							row, chunk := n, kl*2+q
							w := word(as + row*(tileK*2) + ((chunk ^ (row & 7)) * 16) + 4*(t%4))
							for h := 0; h < 2; h++ {
								bm[k+8*q+h][n] = float64(half(w, h).Float32())
							}
						}
					}
					for j := 0; j < tn/2; j++ {
						// A (16 columns of W x k16) from the B fragments of tiles 2j, 2j+1.
						var am [16][16]float64
						for t := 0; t < 32; t++ {
							g, c := t/4, (t%4)*2
							for h := 0; h < 2; h++ {
								am[g][c+h] = float64(frag[t][2*j][0][h].Float32())
								am[g+8][c+h] = float64(frag[t][2*j+1][0][h].Float32())
								am[g][c+8+h] = float64(frag[t][2*j][1][h].Float32())
								am[g+8][c+8+h] = float64(frag[t][2*j+1][1][h].Float32())
							}
						}
						for t := 0; t < 32; t++ {
							g, c := t/4, (t%4)*2
							for e := 0; e < 4; e++ {
								row, col := g+8*(e/2), c+e%2
								var d float64
								for k := 0; k < 16; k++ {
									d += am[row][k] * bm[k][col]
								}
								acc[warp][t][0][j][e] += float32(d)
							}
						}
					}
					continue
				}
				for m := 0; m < MT; m++ {
					// ldmatrix.x4: lane l gives the address of row l%8 of matrix l/8.
					var addr [32]int
					for lane := 0; lane < 32; lane++ {
						row := m*16 + (lane & 15)
						chunk := kl*2 + (lane >> 4)
						addr[lane] = as + row*(tileK*2) + ((chunk ^ (row & 7)) * 16)
					}
					var a [32][4]uint32
					for t := 0; t < 32; t++ {
						for q := 0; q < 4; q++ {
							a[t][q] = word(addr[8*q+t/4] + 4*(t%4))
						}
					}
					// mma.sync m16n8k16: rebuild A (16x16) and B (16x8) from the
					// fragments, multiply, hand D back in the C layout.
					var am [16][16]float64
					for t := 0; t < 32; t++ {
						g, c := t/4, (t%4)*2
						for h := 0; h < 2; h++ {
							am[g][c+h] = float64(half(a[t][0], h).Float32())
							am[g+8][c+h] = float64(half(a[t][1], h).Float32())
							am[g][c+8+h] = float64(half(a[t][2], h).Float32())
							am[g+8][c+8+h] = float64(half(a[t][3], h).Float32())
						}
					}
					for tile := 0; tile < tn; tile++ {
						var bm [16][8]float64
						for t := 0; t < 32; t++ {
							n, k := t/4, (t%4)*2
							for h := 0; h < 2; h++ {
								bm[k+h][n] = float64(frag[t][tile][0][h].Float32())
								bm[k+8+h][n] = float64(frag[t][tile][1][h].Float32())
							}
						}
						for t := 0; t < 32; t++ {
							g, c := t/4, (t%4)*2
							for e := 0; e < 4; e++ {
								row, col := g+8*(e/2), c+e%2
								var d float64
								for k := 0; k < 16; k++ {
									d += am[row][k] * bm[k][col]
								}
								acc[warp][t][m][tile][e] += float32(d)
							}
						}
					}
				}
			}
		}
	}

	if MT*16*redStride*4 > stages*stage {
		panic("reduction buffer larger than the pipeline's shared memory")
	}
	red := make([]float32, MT*16*redStride)
	for src := 0; src < wk; src++ {
		for warp := 0; warp < 8; warp++ {
			wn, kw := warp%L.wn, warp/L.wn
			if kw != src {
				continue
			}
			for lane := 0; lane < 32; lane++ {
				if L.swap {
					for j := 0; j < tn/2; j++ {
						for e := 0; e < 4; e++ {
							row := (lane&3)*2 + e&1
							col := wn*tn*8 + j*16 + lane>>2 + 8*(e>>1)
							v := acc[warp][lane][0][j][e]
							if src > 0 {
								v += red[row*redStride+col]
							}
							red[row*redStride+col] = v
						}
					}
					continue
				}
				for m := 0; m < MT; m++ {
					for t := 0; t < tn; t++ {
						for h := 0; h < 2; h++ {
							row := m*16 + (lane >> 2) + h*8
							col := wn*tn*8 + t*8 + (lane&3)*2
							p := row*redStride + col
							v0, v1 := acc[warp][lane][m][t][2*h], acc[warp][lane][m][t][2*h+1]
							if src > 0 {
								v0 += red[p]
								v1 += red[p+1]
							}
							red[p], red[p+1] = v0, v1
						}
					}
				}
			}
		}
	}
	n0 := nblock * bn
	outRow := func(r int) (int, bool) {
		p := mblock*BM + r
		if moe {
			id := int(L.sorted[p])
			return id, id < L.M
		}
		return p, p < L.M
	}
	store := func(crow, ecol int, v []float32) {
		for j := 0; j < 8; j++ {
			L.C[crow*L.N+n0+ecol+j] = toBF16(v[j])
		}
	}
	if parts == 1 {
		for tid := 0; tid < threads; tid++ {
			ecol := (tid % cpt) * 8
			for i := 0; i < rpt; i++ {
				r := tid/cpt + i*rstep
				crow, ok := outRow(r)
				if ok {
					store(crow, ecol, red[r*redStride+ecol:])
				}
			}
		}
		return
	}
	slot := func(blk int) int {
		which := 1
		if blk*L.units >= t0 {
			which = 0
		}
		return (blk*2 + which) * BM * bn
	}
	mine := slot(b)
	for tid := 0; tid < threads; tid++ {
		ecol := (tid % cpt) * 8
		for i := 0; i < rpt; i++ {
			r := tid/cpt + i*rstep
			if _, ok := outRow(r); ok {
				copy(L.ws[mine+r*bn+ecol:][:8], red[r*redStride+ecol:])
			}
		}
	}
	ctr := mblock*(L.N/bn) + nblock
	L.counters[ctr]++
	if int(L.counters[ctr]) != parts {
		return
	}
	for tid := 0; tid < threads; tid++ {
		ecol := (tid % cpt) * 8
		for i := 0; i < rpt; i++ {
			r := tid/cpt + i*rstep
			crow, ok := outRow(r)
			if !ok {
				continue
			}
			v := make([]float32, 8)
			for sp := 0; sp < parts; sp++ {
				src := L.ws[slot(first+sp)+r*bn+ecol:]
				for j := range v {
					v[j] += src[j]
				}
			}
			store(crow, ecol, v)
		}
	}
	L.counters[ctr] = 0
}

func emuRun(p Plan, a []BF16, w *Weights, sorted, experts []int32, rows int) [][]BF16 {
	L := &emuLaunch{A: a, Q: w.Q, S: w.S, C: make([]BF16, rows*p.N), sorted: sorted, experts: experts,
		M: p.M, N: p.N, K: p.K, group: p.Group, aDiv: max(p.ADiv, 1), units: p.Units,
		MT: p.MT, mblocks: p.MBlocks, blocks: p.Blocks, stages: p.Stages, wn: p.WN, bn: p.BN, swap: p.Mode == modeSwap}
	for i := range L.C {
		L.C[i] = 0xffff
	}
	L.ws = make([]float32, p.WorkspaceBytes()/4)
	for i := range L.ws {
		L.ws[i] = float32(math.NaN())
	}
	L.counters = make([]int32, p.MBlocks*p.NBlocks)
	L.run()
	for i, c := range L.counters {
		if c != 0 {
			panic(fmt.Sprintf("counter %d left at %d", i, c))
		}
	}
	out := make([][]BF16, rows)
	for i := range out {
		out[i] = L.C[i*p.N : (i+1)*p.N]
	}
	return out
}

func TestKernelModelGEMM(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	m := &Module{SMs: 4}
	tests := []struct {
		M, N, K, g int
		o          Options
	}{
		{1, 128, 128, 32, Options{}},
		{3, 256, 384, 64, Options{Splits: 3}},
		{17, 128, 256, 128, Options{}},
		{20, 128, 512, 32, Options{MT: 4, Splits: 2}},
		{40, 256, 256, 64, Options{MT: 2}},
		{5, 256, 1024, 32, Options{Stages: 6, Splits: 1}},
		{30, 128, 896, 64, Options{MT: 2, Stages: 6}},
		{9, 384, 640, 32, Options{Units: 3}},   // runs cross tile ends
		{9, 384, 640, 32, Options{Units: 7}},   // longer than a tile
		{33, 256, 384, 64, Options{Units: 6}},  // two tiles a run, aligned
		{70, 128, 512, 128, Options{Units: 5}}, // MT 4, cut tiles
		{5, 256, 512, 32, Options{WN: 4, Units: 3}},
		{20, 128, 640, 64, Options{WN: 4, MT: 2}},
		{70, 256, 384, 128, Options{WN: 4, Units: 2}},
		{70, 512, 512, 32, Options{BN: 256, WN: 4, MT: 4, Units: 3}},
		{130, 256, 256, 64, Options{BN: 256, WN: 4, MT: 4, Stages: 3}},
		{3, 768, 384, 128, Options{BN: 256, WN: 4, MT: 4}},
		{1, 256, 512, 32, Options{Mode: modeSwap}},
		{8, 384, 640, 64, Options{Mode: modeSwap, WN: 4, Units: 3}},
		{5, 128, 256, 128, Options{Mode: modeSwap, WN: 2}},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("M%d_N%d_K%d_g%d_%+v", tt.M, tt.N, tt.K, tt.g, tt.o)
		pq, err := randomPackQuantized(rng, tt.N, tt.K, tt.g)
		require.NoError(t, err)
		w, err := Repack(pq)
		require.NoError(t, err)
		a := randomBF16(rng, tt.M*tt.K)
		p, err := m.PlanGEMM(tt.M, tt.N, tt.K, tt.g, tt.o)
		require.NoError(t, err)
		got := emuRun(p, a, w, nil, nil, tt.M)
		e, err := relError(got, referenceGEMM(a, tt.M, pq, nil))
		require.NoError(t, err, name)
		require.Less(t, e, 1e-2, name)
		t.Logf("%s (mt%d units %d blocks %d parts %d): rel error %.3g", name, p.MT, p.Units, p.Blocks, p.MaxParts, e)
	}
}

func TestKernelModelMoE(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	m := &Module{SMs: 4}
	const experts, topk, N, K, g = 6, 2, 128, 256, 32
	pqs := make([]*packQuantized, experts)
	all := &Weights{N: N, K: K, Group: g}
	for e := range pqs {
		pq, err := randomPackQuantized(rng, N, K, g)
		require.NoError(t, err)
		pqs[e] = pq
		w, err := Repack(pq)
		require.NoError(t, err)
		all.Q = append(all.Q, w.Q...)
		all.S = append(all.S, w.S...)
	}
	for _, down := range []bool{false, true} {
		r, err := routePowerLaw(5, 9, experts, topk, 1.0)
		require.NoError(t, err)
		rows := 9 * topk
		aRows, aDiv := 9, topk
		if down {
			aRows, aDiv = rows, 1
		}
		a := randomBF16(rng, aRows*K)
		ref := make([][]float64, rows)
		for id := 0; id < rows; id++ {
			ref[id] = referenceGEMM(a, aRows, pqs[r.TopK[id/topk][id%topk]], []int{id / aDiv})[0]
		}
		for _, block := range []int{16, 32} {
			for _, units := range []int{0, 1, 3} {
				al, err := Align(r, block)
				require.NoError(t, err)
				p, err := m.PlanMoE(al, N, K, g, aDiv, Options{Units: units})
				require.NoError(t, err)
				got := emuRun(p, a, all, al.SortedIDs, al.ExpertIDs, rows)
				e, err := relError(got, ref)
				name := fmt.Sprintf("down=%v block %d units %d parts %d", down, block, p.Units, p.MaxParts)
				require.NoError(t, err, name)
				require.Less(t, e, 1e-2, name)
				t.Logf("%s: rel error %.3g", name, e)
			}
		}
		// Expert parallelism: this rank holds experts [0, 3); the other
		// rows are not written.
		al, err := alignLocal(r, 16, 0, 3)
		require.NoError(t, err)
		p, err := m.PlanMoE(al, N, K, g, aDiv, Options{})
		require.NoError(t, err)
		got := emuRun(p, a, all, al.SortedIDs, al.ExpertIDs, rows)
		var gotLocal [][]BF16
		var refLocal [][]float64
		for id := 0; id < rows; id++ {
			if r.TopK[id/topk][id%topk] < 3 {
				gotLocal, refLocal = append(gotLocal, got[id]), append(refLocal, ref[id])
			} else {
				require.Equal(t, BF16(0xffff), got[id][0], "row %d of a remote expert was written", id)
			}
		}
		require.NotEmpty(t, gotLocal)
		e, err := relError(gotLocal, refLocal)
		require.NoError(t, err)
		require.Less(t, e, 1e-2)
		t.Logf("down=%v local experts [0,3): %d rows, rel error %.3g", down, len(gotLocal), e)
	}
}
