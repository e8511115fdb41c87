// W4A16 GEMM and MoE GEMM: C[M,N] = A[M,K] x dequant(W)[K,N], bf16 activations,
// int4 symmetric weights with bf16 scales per group of `group` rows of K
// (32, 64 or 128), fp32 accumulation on the tensor cores.
//
// Written for moecast from the Marlin paper (Frantar et al., arXiv 2408.11743)
// and the PTX ISA: weights are repacked once on the host (kernels/gpu/pack.go)
// so that each thread's mma.sync B fragments for one k16 step of 64 columns
// are one 16-byte word; tiles stream through a multi-stage cp.async pipeline
// into shared memory; int4 -> bf16 dequantisation happens in registers with
// the 0x4300 exponent trick (bf16(0x4300 | q) = 128 + q); partial sums over K
// are split across the warps of a block, and the launch's work (tiles x K
// iterations) is cut into equal runs, one per block (stream-K, Marlin's
// striped partitioning), so that any shape fills the GPU in one wave; a tile
// shared by several blocks is summed by the last of them, in a fixed order
// (deterministic).
//
// Only sm_80 features (mma.sync m16n8k16 bf16, ldmatrix, cp.async): the same
// source runs on Ampere, Hopper and Blackwell.
//
// Variants: MT = 1, 2, 4 m16 tiles per block (16, 32, 64 rows) and 4 or 6
// pipeline stages; the host picks one per launch (kernels/gpu/gemm.go).
//
// Shapes: N % 128 == 0, K % 128 == 0, K % group == 0; any M.
// MoE: sorted_ids (moe_align_block_size's sorted_token_ids, padded per expert
// to BM = 16*MT rows with the sentinel M) and expert_ids (one per BM rows) pick
// for each block of rows an expert's weights; A's row is id / a_div (top_k for
// gate_up, 1 for down) and C's row is id.

#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int THREADS = 256;
// Columns per block (tile): a template parameter BN, 128 or 256 (the
// large-batch tiles: twice the columns for each activation row loaded).
constexpr int BK = 128;      // k per pipeline stage
// Warps: WN along N (128/WN columns each) x 8/WN along K, a template
// parameter (2: 64 columns and 4 K-slices a warp; 4: 32 columns and 2
// K-slices, half the accumulators, for more blocks per SM).

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp_async16 copies 16 bytes from global src to the shared address dst
// (zeros when !valid).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// lop3 is (a & b) | c in one instruction.
__device__ __forceinline__ uint32_t and_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

__device__ __forceinline__ __nv_bfloat162 as_bf162(uint32_t x) {
  return *reinterpret_cast<__nv_bfloat162*>(&x);
}

__device__ __forceinline__ uint32_t as_u32(__nv_bfloat162 x) { return *reinterpret_cast<uint32_t*>(&x); }

// dq turns the two nibbles at bits 0 and 16 of x into (q - 8) * s as bf16x2:
// bf16x2 (128 + q_lo, 128 + q_hi) by one lop3, times 1 minus 136 (exact),
// times the scale (rounds once). s is one bf16 scale for both halves.
__device__ __forceinline__ uint32_t dq(uint32_t x, __nv_bfloat162 s) {
  const __nv_bfloat162 v = as_bf162(and_or(x, 0x000F000Fu, 0x43004300u));
  const __nv_bfloat162 q = __hfma2(v, as_bf162(0x3F803F80u), as_bf162(0xC308C308u));
  return as_u32(__hmul2(q, s));
}

// dq_e2m1 turns the two MXFP4 (e2m1) codes at bits 0-3 and 16-19 of x
// into code * s as bf16x2: the sign to bit 15 and exponent/mantissa bits to
// bits 6-8 make the bf16 bit pattern of code * 2^-126 (a subnormal when the
// exponent field is 0), widened to fp32 (subnormals kept: no -ftz), scaled
// by 2^126 and s (both exact: products of powers of two and 2-bit
// significands) and narrowed exactly. s is the group's scale, a power of two.
__device__ __forceinline__ uint32_t dq_e2m1(uint32_t x, float s) {
  const uint32_t b = ((x & 0x00080008u) << 12) | ((x & 0x00070007u) << 6);
  const float lo = __uint_as_float(b << 16) * 0x1p126f;
  const float hi = __uint_as_float(b & 0xFFFF0000u) * 0x1p126f;
  return as_u32(__floats2bfloat162_rn(lo * s, hi * s));
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma_m64n128 issues D[64 x 128] += A[64 x 16] x B[16 x 128] asynchronously
// for the warpgroup: A from registers (mma.sync's m16n8k16 A fragment, warp w
// of the warpgroup holding rows 16w..16w+15), B from shared memory through
// the descriptor desc (K-major, 128-byte swizzle), fp32 accumulators d;
// scale_d = 0 ignores d's old values.
__device__ __forceinline__ void wgmma_m64n128(float (&d)[64], const uint32_t (&a)[4], uint64_t desc, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

// wgmma_m64n64 is wgmma_m64n128 for 64 rows of activations (the 64-row
// tile): D[64 x 64] += A[64 x 16] x B[16 x 64].
__device__ __forceinline__ void wgmma_m64n64(float (&d)[32], const uint32_t (&a)[4], uint64_t desc, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

// wgmma_rs issues the m64nBMk16 wgmma of a BM-row tile (BM = 64 or 128).
template <int BM>
__device__ __forceinline__ void wgmma_rs(float (&d)[BM / 2], const uint32_t (&a)[4], uint64_t desc, int scale_d) {
  if constexpr (BM == 128)
    wgmma_m64n128(d, a, desc, scale_d);
  else
    wgmma_m64n64(d, a, desc, scale_d);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// fence_f keeps the compiler from moving reads or writes of r across it.
__device__ __forceinline__ void fence_f(float& r) { asm volatile("" : "+f"(r)::"memory"); }
// fence_frag keeps an A fragment in its registers up to here: a wgmma in
// flight reads them (the compiler does not know it).
__device__ __forceinline__ void fence_frag(uint32_t (&a)[4]) {
  asm volatile("" : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3])::"memory");
}

// smem_desc is the wgmma descriptor of a K-major operand in shared memory at
// byte address addr with the 128-byte swizzle: rows of 64 bf16 (128 B), 8-row
// atoms of 1024 B stacked along N (stride 1024 B), the atoms 1024-B aligned.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}
#endif

// store_tile writes a BM x BN tile of fp32 sums (red, rows of BN + 8
// floats in shared memory; the caller synchronised after filling it) as
// bf16 to C, or, where parts > 1 blocks share the tile, adds this block's
// partial to theirs: each writes its fp32 partial to one of its two
// workspace slots and the last to arrive sums them in block order.
// PAR_MIN_BM: the fewest rows of a tile whose kernel carries the parallel
// fixup (gemm.go parMinMT = PAR_MIN_BM / 16).
constexpr int PAR_MIN_BM = 64;

template <int BM, int BN>
__device__ __forceinline__ void store_tile(const float* red, __nv_bfloat16* __restrict__ C, float* __restrict__ ws,
                                           int* __restrict__ counters, const int* __restrict__ sorted_ids, int M,
                                           int N, int mblock, int nblock, int tile, int first, int parts,
                                           int units_per_block, long long t0, int coresident) {
  constexpr int RED_STRIDE = BN + 8;
  constexpr int CPT = BN / 8;              // 8-column groups of a row
  constexpr int RPT = BM * CPT / THREADS;  // rows a thread writes
  constexpr int RSTEP = THREADS / CPT;     // rows between a thread's rows
  const int tid = threadIdx.x;
  const bool moe = sorted_ids != nullptr;
  // Each thread owns 8 consecutive columns of BM/16 rows.
  const int ecol = (tid % CPT) * 8;
  const int n0 = nblock * BN;
  auto out_row = [&](int r, int& crow) -> bool {
    const int p = mblock * BM + r;
    if (moe) {
      const int id = sorted_ids[p];
      crow = id;
      return id < M;
    }
    crow = p;
    return p < M;
  };
  auto store_bf16 = [&](int crow, const float* v) {
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * j], v[2 * j + 1]);
      w[j] = *reinterpret_cast<uint32_t*>(&h);
    }
    *reinterpret_cast<uint4*>(C + static_cast<size_t>(crow) * N + n0 + ecol) = make_uint4(w[0], w[1], w[2], w[3]);
  };

  if (parts == 1) {
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
      const int r = tid / CPT + i * RSTEP;
      int crow;
      if (!out_row(r, crow)) continue;
      float v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = red[r * RED_STRIDE + ecol + j];
      store_bf16(crow, v);
    }
    return;
  }

  // Several blocks share the tile: each writes its fp32 partial to one of its
  // two slots (0: the tile where its run starts, 1: the tile where it ends
  // after starting earlier); the last to arrive adds them in block order.
  auto slot = [&](int b) -> float* {
    const int which = static_cast<long long>(b) * units_per_block >= t0 ? 0 : 1;
    return ws + (static_cast<size_t>(b) * 2 + which) * BM * BN;
  };
  float* mine = slot(blockIdx.x);
  // The parallel fixup is compiled into the tiles of 64 and 128 rows only
  // (PAR_MIN_BM; the host's plans set coresident for those alone: gemm.go,
  // finish). In the 16- and 32-row tiles (the small-M kernels, w4a16_mt1*,
  // w4a16_mt2*) its code cost registers in the main loop: with it, nvcc 13.0
  // spilled w4a16_mt1_w4 (4 bytes) and w4a16_mt2 (20 bytes), which had no
  // spills before (bench/gpu-w4a16-runs/run12 and run15 build logs), and
  // the Kimi-K2.5 W4A16 MoE layer ran 4-7% slower at 1-1024 tokens
  // (bench/RESULTS-recal.md). A coresident flag reaching one of those
  // kernels anyway gets the serial fixup below (correct, only slower).
  if constexpr (BM >= PAR_MIN_BM) {
    if (coresident) {
      // Parallel fixup (the host sets coresident only when every block of the
      // grid is resident at once). The serial one below has the tile's last
      // block to finish read every partial alone: parts x BM x BN x 4 bytes
      // through one SM (1 MiB for 8 parts of a 128 x 256 tile). Here every
      // part writes its partial; the blocks for which this tile is the end of
      // their run (first .. first+parts-2: they have nothing left to do) wait
      // until all parts have written, then each sums a 1/(parts-1) share of the
      // tile's rows, in block order (deterministic). The tile's last part
      // starts its run here and goes on to the next tile without waiting: no
      // block waits on one that is itself waiting, so no chain forms. The
      // counter counts parts arrivals, then parts-1 reducers done; the last
      // resets it for the next launch.
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        const int r = tid / CPT + i * RSTEP;
        int crow;
        if (!out_row(r, crow)) continue;
        float4* dst = reinterpret_cast<float4*>(mine + r * BN + ecol);
        const float* v = red + r * RED_STRIDE + ecol;
        __stcg(dst, make_float4(v[0], v[1], v[2], v[3]));
        __stcg(dst + 1, make_float4(v[4], v[5], v[6], v[7]));
      }
      __threadfence();
      __syncthreads();
      const int q = blockIdx.x - first;
      if (q == parts - 1) {
        if (tid == 0) atomicAdd(counters + tile, 1);
        return;
      }
      if (tid == 0) {
        atomicAdd(counters + tile, 1);
        int seen;
        for (;;) {
          asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(seen) : "l"(counters + tile) : "memory");
          if (seen >= parts) break;
          __nanosleep(32);
        }
        __threadfence();
      }
      __syncthreads();
      constexpr int CHUNKS = BM * CPT;  // 8-column groups of the tile
      const int reducers = parts - 1;
      const int c1 = (q + 1) * CHUNKS / reducers;
      for (int c = q * CHUNKS / reducers + tid; c < c1; c += THREADS) {
        const int r = c / CPT, col = (c % CPT) * 8;
        int crow;
        if (!out_row(r, crow)) continue;
        float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll 4
        for (int sp = 0; sp < parts; ++sp) {
          const float4* src = reinterpret_cast<const float4*>(slot(first + sp) + r * BN + col);
          const float4 x = __ldcg(src), y = __ldcg(src + 1);
          v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
          v[4] += y.x, v[5] += y.y, v[6] += y.z, v[7] += y.w;
        }
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * j], v[2 * j + 1]);
          w[j] = *reinterpret_cast<uint32_t*>(&h);
        }
        *reinterpret_cast<uint4*>(C + static_cast<size_t>(crow) * N + n0 + col) = make_uint4(w[0], w[1], w[2], w[3]);
      }
      __syncthreads();
      if (tid == 0 && atomicAdd(counters + tile, 1) == 2 * parts - 2) counters[tile] = 0;
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int r = tid / CPT + i * RSTEP;
    int crow;
    if (!out_row(r, crow)) continue;
    float4* dst = reinterpret_cast<float4*>(mine + r * BN + ecol);
    const float* v = red + r * RED_STRIDE + ecol;
    __stcg(dst, make_float4(v[0], v[1], v[2], v[3]));
    __stcg(dst + 1, make_float4(v[4], v[5], v[6], v[7]));
  }
  __threadfence();
  __syncthreads();
  __shared__ int last;
  if (tid == 0) last = atomicAdd(counters + tile, 1) == parts - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int r = tid / CPT + i * RSTEP;
    int crow;
    if (!out_row(r, crow)) continue;
    float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll 4
    for (int sp = 0; sp < parts; ++sp) {
      const float4* src = reinterpret_cast<const float4*>(slot(first + sp) + r * BN + ecol);
      const float4 x = __ldcg(src), y = __ldcg(src + 1);
      v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
      v[4] += y.x, v[5] += y.y, v[6] += y.z, v[7] += y.w;
    }
    store_bf16(crow, v);
  }
  if (tid == 0) counters[tile] = 0;  // ready for the next launch (graph replays)
}

// One segment: k iterations [it0, it1) of tile (mblock, nblock), accumulated
// and written out. The blocks first .. first+parts-1 share the tile, whose
// first unit is t0 (runs of units_per_block units per block).
template <int MT, int STAGES, int WN, int MODE, bool PRIV, int BN>
__device__ __forceinline__ void w4a16_segment(const __nv_bfloat16* __restrict__ A, const uint4* __restrict__ W,
                                              const uint4* __restrict__ S, __nv_bfloat16* __restrict__ C,
                                              float* __restrict__ ws, int* __restrict__ counters,
                                              const int* __restrict__ sorted_ids,
                                              const int* __restrict__ expert_ids, int M, int N, int K, int group,
                                              int a_div, int mblock, int nblock, int it0, int it1, int first,
                                              int parts, int units_per_block, long long t0, int coresident) {
  constexpr int BM = 16 * MT;
  constexpr int CH = BN / 64;            // 64-column chunks of the repacked weights a tile
  constexpr int WK = 8 / WN;             // warps along K
  constexpr int KS = BK / 16 / WK;       // k16 steps per warp per stage
  constexpr int TN = BN / 8 / WN;        // n8 tiles per warp
  constexpr int B_STAGE = BK * BN / 2;   // bytes of int4 weights per stage
  constexpr int S_STAGE = CH * 512;      // bytes of scales per stage (group 32: 4 rows x BN x 2)
  constexpr int RED_STRIDE = BN + 8;     // floats per row of the reduction buffer
  static_assert(TN == 8 || TN == 4, "a warp holds 4 or 8 n8 tiles");
  static_assert(!PRIV || BN == 128, "warp-private pipelines use 128-column tiles");
  // MODE 3 (swapped operands, M <= 8): the weights are mma's A operand (16
  // columns of W as its 16 rows; the B fragments of two n8 tiles are exactly
  // one A fragment) and the activations its B operand (8 tokens as its 8
  // columns): half the mma.sync and half the accumulators of MODE 0.
  constexpr bool SWAP = MODE == 3;
  static_assert(!SWAP || (MT == 1 && !PRIV && BN == 128), "swapped operands: 16-row tiles (M <= 8)");
  constexpr int A_STAGE = BM * BK * 2;
  // PRIV: each warp streams its own slice of a stage (its weights, its
  // group's scales, its 32 k of the activations) and waits only for its own
  // copies (__syncwarp, no block barrier in the main loop): a slow warp no
  // longer holds up the other seven.
  static_assert(!PRIV || WN == 2, "warp-private pipelines have one scale group a warp and stage");
  constexpr int W_B = KS * 512;                  // PRIV: a warp's weights a stage
  constexpr int W_STAGE = W_B + 128 + BM * 64;   // PRIV: weights, 8 scale words, BM rows x 32 k
  constexpr int STAGE = PRIV ? 8 * W_STAGE : B_STAGE + S_STAGE + A_STAGE;
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wn = warp % WN;
  const int wk = warp / WN;
  const int ntiles_n = N / BN;
  const int tile = mblock * ntiles_n + nblock;
  const int ngroups = K / group;

  const bool moe = sorted_ids != nullptr;
  size_t expert = 0;
  if (moe) {
    const int e = expert_ids[mblock];
    if (e < 0) return;  // a block of padding only (every part of the tile returns)
    expert = static_cast<size_t>(e);
  }
  W += expert * (static_cast<size_t>(N) * K / 32);
  S += expert * (static_cast<size_t>(N) * ngroups / 8);

  const int niters = it1 - it0;

  // Addresses are set up once per segment and advanced by constants: the
  // main loop has no division and little index arithmetic (at small M the
  // kernel is bound by instruction issue as much as by memory).
  const int gshift = 31 - __clz(group);  // group is 32, 64 or 128
  const int gs_shift = 7 - gshift;       // log2 of the group rows per stage
  const uint32_t s_base = smem_addr(smem);

  const int kchunks = K / 16;  // k16 steps of the whole matrix
  const int wofs = PRIV ? warp * W_STAGE : 0;  // this warp's slice of a stage
  // Weights: two 64-column chunks of 8 k16 steps a stage, 4 KiB contiguous
  // each; thread tid copies word tid of both (PRIV: lane copies its own
  // fragment word of each of its warp's k16 steps).
  const uint4* w_src = PRIV ? W + (static_cast<size_t>(nblock * 2 + wn) * kchunks + it0 * 8 + wk * KS) * 32 + lane
                            : W + (static_cast<size_t>(nblock) * CH * kchunks + it0 * 8) * 32 + tid;
  const size_t w_chunk = static_cast<size_t>(kchunks) * 32;
  // Scales: gs group rows of 64 columns (128 B) per chunk and stage (PRIV:
  // the 8 words of the warp's one group row, copied by lanes 0-7).
  const int s_per = 8 << gs_shift;
  const bool s_copy = PRIV ? lane < 8 : tid < CH * s_per;
  const int s_c = tid >> (gs_shift + 3);
  const uint4* s_src =
      PRIV ? S + (static_cast<size_t>(nblock * 2 + wn) * ngroups + ((it0 * BK + wk * KS * 16) >> gshift)) * 8 + (lane & 7)
           : S + (static_cast<size_t>(nblock * CH + s_c) * ngroups + ((it0 * BK) >> gshift)) * 8 + (tid & (s_per - 1));
  // Activations: BM rows of 128 k, 16 chunks of 16 B a row, swizzled (PRIV:
  // BM rows of the warp's 32 k, 4 chunks a row, 2*MT chunks a lane). Rows
  // past the batch (or padding) are zeroed once here, never copied.
  constexpr int AN = PRIV ? 2 * MT : MT;
  const __nv_bfloat16* a_src[AN];
  bool a_valid[AN];
  uint32_t a_dst[AN];
#pragma unroll
  for (int i = 0; i < AN; ++i) {
    int r, chunk;
    if constexpr (PRIV) {
      const int idx = lane + 32 * i;
      r = idx >> 2, chunk = idx & 3;
    } else {
      r = (tid + i * THREADS) >> 4, chunk = tid & 15;
    }
    int row = mblock * BM + r;
    bool valid;
    if (moe) {
      const int id = sorted_ids[row];
      valid = id < M;
      row = valid ? id / a_div : 0;
    } else {
      valid = row < M;
      row = valid ? row : 0;
    }
    a_valid[i] = valid;
    if constexpr (PRIV) {
      a_src[i] = A + static_cast<size_t>(row) * K + it0 * BK + wk * KS * 16 + chunk * 8;
      a_dst[i] = wofs + W_B + 128 + r * 64 + ((chunk ^ ((r >> 1) & 3)) * 16);
    } else {
      a_src[i] = A + static_cast<size_t>(row) * K + it0 * BK + chunk * 8;
      a_dst[i] = B_STAGE + S_STAGE + r * (BK * 2) + ((chunk ^ (r & 7)) * 16);
    }
    if (!valid) {
#pragma unroll
      for (int st = 0; st < STAGES; ++st)
        *reinterpret_cast<uint4*>(smem + st * STAGE + a_dst[i]) = make_uint4(0, 0, 0, 0);
    }
  }

  // load_stage copies the next stage (in k order) into slot and advances.
  auto load_stage = [&](int slot) {
    const uint32_t st = s_base + slot * STAGE;
    if constexpr (PRIV) {
#pragma unroll
      for (int s = 0; s < KS; ++s) cp_async16(st + wofs + s * 512 + lane * 16, w_src + s * 32, true);
      if (s_copy) cp_async16(st + wofs + W_B + lane * 16, s_src, true);
    } else {
#pragma unroll
      for (int c = 0; c < CH; ++c) cp_async16(st + (c * THREADS + tid) * 16, w_src + c * w_chunk, true);
      if (s_copy) cp_async16(st + B_STAGE + tid * 16, s_src, true);
    }
    w_src += 8 * 32;
    s_src += s_per;  // gs group rows of 8 words
#pragma unroll
    for (int i = 0; i < AN; ++i) {
      if (a_valid[i]) cp_async16(st + a_dst[i], a_src[i], true);
      a_src[i] += BK;
    }
  };

  // Shared-memory offsets this lane reads, per k16 step s of its warp.
  // A warp's TN tiles are words w0 .. w0+TN/2-1 of its chunk's 16-byte
  // fragment words (two tiles a word), likewise for the scales.
  const int chunk = (wn * TN) / 8;
  const int w0 = ((wn * TN) % 8) / 2;
  uint32_t b_rd[KS], s_rd[KS], a_rd[MT][KS];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    const int kl = wk * KS + s;
    if constexpr (PRIV) {
      b_rd[s] = wofs + s * 512 + lane * 16;
      s_rd[s] = wofs + W_B + (lane >> 2) * 16;
    } else {
      b_rd[s] = ((chunk * 8 + kl) * 32 + lane) * 16 + w0 * 4;
      s_rd[s] = B_STAGE + (((chunk << gs_shift) + ((kl * 16) >> gshift)) * 8 + (lane >> 2)) * 16 + w0 * 4;
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      const int row = m * 16 + (lane & 15);
      if constexpr (PRIV) {
        const int ac = s * 2 + (lane >> 4);
        a_rd[m][s] = wofs + W_B + 128 + row * 64 + ((ac ^ ((row >> 1) & 3)) * 16);
      } else {
        const int ac = kl * 2 + (lane >> 4);
        a_rd[m][s] = B_STAGE + S_STAGE + row * (BK * 2) + ((ac ^ (row & 7)) * 16);
      }
    }
  }

  uint32_t x2_rd[KS];  // SWAP: ldmatrix.x2 rows 0-7 (tokens), k 0-7 and 8-15 of step s
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    const int row = lane & 7;
    const int ac = (wk * KS + s) * 2 + ((lane >> 3) & 1);
    x2_rd[s] = B_STAGE + S_STAGE + row * (BK * 2) + ((ac ^ (row & 7)) * 16);
  }

  float acc[MT][TN][4];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int t = 0; t < TN; ++t)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[m][t][j] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < niters) load_stage(s);
    cp_async_commit();
  }

  int rd_slot = 0, wr_slot = STAGES - 1;
  for (int it = 0; it < niters; ++it) {
    cp_async_wait<STAGES - 2>();
    if constexpr (PRIV)
      __syncwarp();
    else
      __syncthreads();
    if (it + STAGES - 1 < niters) load_stage(wr_slot);
    cp_async_commit();
    wr_slot = wr_slot == STAGES - 1 ? 0 : wr_slot + 1;
    const unsigned char* st = smem + rd_slot * STAGE;
    const uint32_t st_addr = s_base + rd_slot * STAGE;
    rd_slot = rd_slot == STAGES - 1 ? 0 : rd_slot + 1;
    constexpr int KS_RUN = MODE == 2 ? 0 : KS;  // diagnostic: the pipeline alone
#pragma unroll
    for (int s = 0; s < KS_RUN; ++s) {
      uint32_t bw[TN / 2], sw[TN / 2];
      if constexpr (TN == 8) {
        const uint4 b = *reinterpret_cast<const uint4*>(st + b_rd[s]);
        const uint4 sc = *reinterpret_cast<const uint4*>(st + s_rd[s]);
        bw[0] = b.x, bw[1] = b.y, bw[2] = b.z, bw[3] = b.w;
        sw[0] = sc.x, sw[1] = sc.y, sw[2] = sc.z, sw[3] = sc.w;
      } else {
        const uint2 b = *reinterpret_cast<const uint2*>(st + b_rd[s]);
        const uint2 sc = *reinterpret_cast<const uint2*>(st + s_rd[s]);
        bw[0] = b.x, bw[1] = b.y;
        sw[0] = sc.x, sw[1] = sc.y;
      }
      uint32_t frag[TN][2];
#pragma unroll
      for (int j = 0; j < TN / 2; ++j) {
        if (MODE == 1) {  // diagnostic: raw bits, no dequantisation
          frag[2 * j][0] = bw[j], frag[2 * j][1] = sw[j];
          frag[2 * j + 1][0] = sw[j], frag[2 * j + 1][1] = bw[j];
          continue;
        }
        if (MODE == 4) {  // MXFP4: e2m1 codes, power-of-two scales
          const float f_lo = __low2float(as_bf162(sw[j])), f_hi = __high2float(as_bf162(sw[j]));
          frag[2 * j][0] = dq_e2m1(bw[j], f_lo);
          frag[2 * j][1] = dq_e2m1(bw[j] >> 4, f_lo);
          frag[2 * j + 1][0] = dq_e2m1(bw[j] >> 8, f_hi);
          frag[2 * j + 1][1] = dq_e2m1(bw[j] >> 12, f_hi);
          continue;
        }
        // scales of tiles 2j (low half of sw[j]) and 2j+1 (high half).
        const __nv_bfloat162 s_lo = __low2bfloat162(as_bf162(sw[j]));
        const __nv_bfloat162 s_hi = __high2bfloat162(as_bf162(sw[j]));
        frag[2 * j][0] = dq(bw[j], s_lo);
        frag[2 * j][1] = dq(bw[j] >> 4, s_lo);
        frag[2 * j + 1][0] = dq(bw[j] >> 8, s_hi);
        frag[2 * j + 1][1] = dq(bw[j] >> 12, s_hi);
      }
      if constexpr (SWAP) {
        uint32_t b0, b1;
        ldmatrix_x2(b0, b1, st_addr + x2_rd[s]);
#pragma unroll
        for (int j = 0; j < TN / 2; ++j) {
          const uint32_t w[4] = {frag[2 * j][0], frag[2 * j + 1][0], frag[2 * j][1], frag[2 * j + 1][1]};
          mma_bf16(acc[0][j], w, b0, b1);
        }
      } else {
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          uint32_t a[4];
          ldmatrix_x4(a, st_addr + a_rd[m][s]);
#pragma unroll
          for (int t = 0; t < TN; ++t) mma_bf16(acc[m][t], a, frag[t][0], frag[t][1]);
        }
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // Reduce the WK warps' partial sums in shared memory, in a fixed order.
  float* red = reinterpret_cast<float*>(smem);
#pragma unroll 1
  for (int src = 0; src < WK; ++src) {
    if (wk == src && SWAP) {
      // c0, c1: column g of the 16-column tile j, tokens 2t, 2t+1; c2, c3: column g+8.
#pragma unroll
      for (int j = 0; j < TN / 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = (lane & 3) * 2 + (e & 1);
          const int col = wn * (TN * 8) + j * 16 + (lane >> 2) + 8 * (e >> 1);
          float* p = red + row * RED_STRIDE + col;
          float v = acc[0][j][e];
          if (src > 0) v += *p;
          *p = v;
        }
    } else if (wk == src) {
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int t = 0; t < TN; ++t)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = m * 16 + (lane >> 2) + h * 8;
            const int col = wn * (TN * 8) + t * 8 + (lane & 3) * 2;
            float2* p = reinterpret_cast<float2*>(red + row * RED_STRIDE + col);
            float2 v = make_float2(acc[m][t][2 * h], acc[m][t][2 * h + 1]);
            if (src > 0) {
              const float2 o = *p;
              v.x += o.x;
              v.y += o.y;
            }
            *p = v;
          }
    }
    __syncthreads();
  }

  store_tile<BM, BN>(red, C, ws, counters, sorted_ids, M, N, mblock, nblock, tile, first, parts, units_per_block, t0, coresident);
}

// The large-batch tile (MT = 8 in the variant tables): 128 rows x 256
// columns a block, 8 warps as 2 along M x 4 along N, each warp 64 rows x 64
// columns over the whole k of a stage (no split of K inside the block, so no
// shared-memory reduction of partial sums and twice the mma.sync per
// dequantised weight of the 64-row tiles). Same repacked weights, scales,
// activation swizzle, cp.async pipeline and stream-K work split as
// w4a16_segment; the two warps along M dequantise the same weights.
template <int STAGES>
__device__ __forceinline__ void w4a16_big_segment(const __nv_bfloat16* __restrict__ A, const uint4* __restrict__ W,
                                                  const uint4* __restrict__ S, __nv_bfloat16* __restrict__ C,
                                                  float* __restrict__ ws, int* __restrict__ counters,
                                                  const int* __restrict__ sorted_ids,
                                                  const int* __restrict__ expert_ids, int M, int N, int K,
                                                  int group, int a_div, int mblock, int nblock, int it0, int it1,
                                                  int first, int parts, int units_per_block, long long t0, int coresident) {
  constexpr int BM = 128, BN = 256;
  constexpr int MT = 4;                  // m16 tiles a warp
  constexpr int TN = 8;                  // n8 tiles a warp
  constexpr int KS = BK / 16;            // k16 steps a stage
  constexpr int CH = BN / 64;            // 64-column chunks of the repacked weights
  constexpr int B_STAGE = BK * BN / 2;   // 16 KiB of int4 weights
  constexpr int S_STAGE = CH * 512;      // scales (group 32: 4 rows x 256 columns x 2 B)
  constexpr int A_STAGE = BM * BK * 2;   // 32 KiB of activations
  constexpr int STAGE = B_STAGE + S_STAGE + A_STAGE;
  constexpr int RED_STRIDE = BN + 8;
  constexpr int AROWS = BM * 16 / THREADS;  // 16-byte activation chunks a thread copies a stage
  extern __shared__ __align__(128) unsigned char smem[];

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wn = warp & 3;
  const int wm = warp >> 2;
  const int ntiles_n = N / BN;
  const int tile = mblock * ntiles_n + nblock;
  const int ngroups = K / group;

  const bool moe = sorted_ids != nullptr;
  size_t expert = 0;
  if (moe) {
    const int e = expert_ids[mblock];
    if (e < 0) return;
    expert = static_cast<size_t>(e);
  }
  W += expert * (static_cast<size_t>(N) * K / 32);
  S += expert * (static_cast<size_t>(N) * ngroups / 8);
  const int niters = it1 - it0;
  const int gshift = 31 - __clz(group);
  const int gs_shift = 7 - gshift;
  const uint32_t s_base = smem_addr(smem);
  const int kchunks = K / 16;

  const uint4* w_src = W + (static_cast<size_t>(nblock) * CH * kchunks + it0 * 8) * 32 + tid;
  const size_t w_chunk = static_cast<size_t>(kchunks) * 32;
  const int s_per = 8 << gs_shift;
  const bool s_copy = tid < CH * s_per;
  const int s_c = tid >> (gs_shift + 3);
  const uint4* s_src = S + (static_cast<size_t>(nblock * CH + s_c) * ngroups + ((it0 * BK) >> gshift)) * 8 + (tid & (s_per - 1));

  // Activations: thread tid copies chunk tid%16 of rows tid/16 + 16i; rows
  // past the batch (or padding) are zeroed once, never copied.
  const int a_chunk = tid & 15;
  const int a_r0 = tid >> 4;
  const uint32_t a_dst0 = B_STAGE + S_STAGE + a_r0 * (BK * 2) + ((a_chunk ^ (a_r0 & 7)) * 16);
  const __nv_bfloat16* a_ptr = A + static_cast<size_t>(it0) * BK + a_chunk * 8;
  uint32_t a_row[AROWS];
  uint32_t a_mask = 0;
#pragma unroll
  for (int i = 0; i < AROWS; ++i) {
    int row = mblock * BM + a_r0 + 16 * i;
    bool valid;
    if (moe) {
      const int id = sorted_ids[row];
      valid = id < M;
      row = valid ? id / a_div : 0;
    } else {
      valid = row < M;
      row = valid ? row : 0;
    }
    a_row[i] = static_cast<uint32_t>(row) * static_cast<uint32_t>(K);
    if (valid) {
      a_mask |= 1u << i;
    } else {
#pragma unroll
      for (int st = 0; st < STAGES; ++st)
        *reinterpret_cast<uint4*>(smem + st * STAGE + a_dst0 + i * 16 * BK * 2) = make_uint4(0, 0, 0, 0);
    }
  }

  auto load_stage = [&](int slot) {
    const uint32_t st = s_base + slot * STAGE;
#pragma unroll
    for (int c = 0; c < CH; ++c) cp_async16(st + (c * THREADS + tid) * 16, w_src + c * w_chunk, true);
    if (s_copy) cp_async16(st + B_STAGE + tid * 16, s_src, true);
    w_src += 8 * 32;
    s_src += s_per;
#pragma unroll
    for (int i = 0; i < AROWS; ++i)
      if (a_mask >> i & 1) cp_async16(st + a_dst0 + i * 16 * BK * 2, a_ptr + a_row[i], true);
    a_ptr += BK;
  };

  // This lane's shared-memory reads: weights of chunk wn, k16 step s at
  // b_rd0 + 512 s; scales of the group row of step s; activations of rows
  // wm*64 + 16m + lane%16, 16-byte chunk (2s + lane/16) ^ (lane%8).
  const uint32_t b_rd0 = (wn * 8 * 32 + lane) * 16;
  const uint32_t s_rd0 = B_STAGE + (((wn << gs_shift) * 8) + (lane >> 2)) * 16;
  const uint32_t a_rd0 = B_STAGE + S_STAGE + (wm * 64 + (lane & 15)) * (BK * 2);
  const int a_hi = lane >> 4, a_x = lane & 7;

  float acc[MT][TN][4];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int t = 0; t < TN; ++t)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[m][t][j] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < niters) load_stage(s);
    cp_async_commit();
  }

  int rd_slot = 0, wr_slot = STAGES - 1;
  for (int it = 0; it < niters; ++it) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (it + STAGES - 1 < niters) load_stage(wr_slot);
    cp_async_commit();
    wr_slot = wr_slot == STAGES - 1 ? 0 : wr_slot + 1;
    const unsigned char* st = smem + rd_slot * STAGE;
    const uint32_t st_addr = s_base + rd_slot * STAGE;
    rd_slot = rd_slot == STAGES - 1 ? 0 : rd_slot + 1;
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      const uint4 b = *reinterpret_cast<const uint4*>(st + b_rd0 + s * 512);
      const uint4 sc = *reinterpret_cast<const uint4*>(st + s_rd0 + (((s * 16) >> gshift) * 128));
      const uint32_t bw[4] = {b.x, b.y, b.z, b.w};
      const uint32_t sw[4] = {sc.x, sc.y, sc.z, sc.w};
      uint32_t frag[TN][2];
#pragma unroll
      for (int j = 0; j < TN / 2; ++j) {
        const __nv_bfloat162 s_lo = __low2bfloat162(as_bf162(sw[j]));
        const __nv_bfloat162 s_hi = __high2bfloat162(as_bf162(sw[j]));
        frag[2 * j][0] = dq(bw[j], s_lo);
        frag[2 * j][1] = dq(bw[j] >> 4, s_lo);
        frag[2 * j + 1][0] = dq(bw[j] >> 8, s_hi);
        frag[2 * j + 1][1] = dq(bw[j] >> 12, s_hi);
      }
      const uint32_t a_col = (((2 * s + a_hi) ^ a_x) * 16);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        uint32_t a[4];
        ldmatrix_x4(a, st_addr + a_rd0 + m * 16 * (BK * 2) + a_col);
#pragma unroll
        for (int t = 0; t < TN; ++t) mma_bf16(acc[m][t], a, frag[t][0], frag[t][1]);
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  float* red = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int t = 0; t < TN; ++t)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = wm * 64 + m * 16 + (lane >> 2) + h * 8;
        const int col = wn * 64 + t * 8 + (lane & 3) * 2;
        *reinterpret_cast<float2*>(red + row * RED_STRIDE + col) = make_float2(acc[m][t][2 * h], acc[m][t][2 * h + 1]);
      }
  __syncthreads();
  store_tile<BM, BN>(red, C, ws, counters, sorted_ids, M, N, mblock, nblock, tile, first, parts, units_per_block, t0, coresident);
}

// The large-batch tile on Hopper's wgmma (mode 5, sm_90a images only): the
// same 128 rows x 256 columns a block, pipeline, weights, scales and stream-K
// split as w4a16_big_segment, but the product is computed transposed,
// C^T = W^T A^T: the dequantised weights are wgmma's A operand, from
// registers (the repacked B fragments of two n8 tiles are one m16 A
// fragment, as in the swapped-operand kernel), and the activations its B
// operand, read by the tensor cores from shared memory (K-major, 128-byte
// swizzle: each stage's 128 k as two halves of 64). Warpgroup g (warps 4g..
// 4g+3) owns the 128 columns of chunks 2g and 2g+1; its warp r dequantises
// half r%2 of chunk 2g + r/2 (two 16-column slices) and supplies, in wgmma j
// (j = 0, 1; m64n128k16 over all 128 rows), slice 2(r%2) + j as its 16 rows.
// Each weight is dequantised once per block (the mma.sync tile does it once
// per warp along M).
template <int MT, int STAGES, int BN>
__device__ __forceinline__ void w4a16_wg_segment(const __nv_bfloat16* __restrict__ A, const uint4* __restrict__ W,
                                                 const uint4* __restrict__ S, __nv_bfloat16* __restrict__ C,
                                                 float* __restrict__ ws, int* __restrict__ counters,
                                                 const int* __restrict__ sorted_ids,
                                                 const int* __restrict__ expert_ids, int M, int N, int K, int group,
                                                 int a_div, int mblock, int nblock, int it0, int it1, int first,
                                                 int parts, int units_per_block, long long t0, int coresident) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(STAGES >= 3, "stages are loaded STAGES - 2 ahead");
  static_assert(BN == 128 || BN == 256, "tiles of 128 or 256 columns");
  static_assert(MT == 4 || MT == 8, "tiles of 64 or 128 rows");
  constexpr int BM = 16 * MT;  // the wgmma's n: rows of activations a tile
  constexpr int NJ = BN / 128;  // wgmmas a warpgroup issues per k16 step (64 columns each)
  constexpr int KS = BK / 16;
  constexpr int CH = BN / 64;
  constexpr int B_STAGE = BK * BN / 2;
  constexpr int S_STAGE = CH * 512;
  constexpr int A_HALF = BM * 128;        // one 64-k half of the activations: 128 B a row
  constexpr int STAGE = B_STAGE + S_STAGE + 2 * A_HALF;
  static_assert(STAGE % 1024 == 0 && (B_STAGE + S_STAGE) % 1024 == 0, "swizzle atoms 1024-B aligned");
  constexpr int RED_STRIDE = BN + 8;
  constexpr int AROWS = BM * 16 / THREADS;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // The 128-byte swizzle is of absolute address bits: align the base to 1 KiB
  // (the host adds 1 KiB to the dynamic shared memory).
  const uint32_t raw_addr = smem_addr(smem_raw);
  const uint32_t s_base = (raw_addr + 1023) & ~1023u;
  unsigned char* smem = smem_raw + (s_base - raw_addr);

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wg = warp >> 2;
  const int wr = warp & 3;
  const int ntiles_n = N / BN;
  const int tile = mblock * ntiles_n + nblock;
  const int ngroups = K / group;

  const bool moe = sorted_ids != nullptr;
  size_t expert = 0;
  if (moe) {
    const int e = expert_ids[mblock];
    if (e < 0) return;
    expert = static_cast<size_t>(e);
  }
  W += expert * (static_cast<size_t>(N) * K / 32);
  S += expert * (static_cast<size_t>(N) * ngroups / 8);
  const int niters = it1 - it0;
  const int gshift = 31 - __clz(group);
  const int gs_shift = 7 - gshift;
  const int kchunks = K / 16;

  const uint4* w_src = W + (static_cast<size_t>(nblock) * CH * kchunks + it0 * 8) * 32 + tid;
  const size_t w_chunk = static_cast<size_t>(kchunks) * 32;
  const int s_per = 8 << gs_shift;
  const bool s_copy = tid < CH * s_per;
  const int s_c = tid >> (gs_shift + 3);
  const uint4* s_src = S + (static_cast<size_t>(nblock * CH + s_c) * ngroups + ((it0 * BK) >> gshift)) * 8 + (tid & (s_per - 1));

  // Activations: thread tid copies 16-byte chunk tid%16 (half (tid%16)/8) of
  // rows tid/16 + 16i, at row*128 + ((chunk%8) ^ (row%8))*16 of its half.
  const int a_chunk = tid & 15;
  const int a_r0 = tid >> 4;
  const uint32_t a_dst0 = B_STAGE + S_STAGE + (a_chunk >> 3) * A_HALF + a_r0 * 128 + (((a_chunk & 7) ^ (a_r0 & 7)) * 16);
  const __nv_bfloat16* a_ptr = A + static_cast<size_t>(it0) * BK + a_chunk * 8;
  uint32_t a_row[AROWS];
  uint32_t a_mask = 0;
#pragma unroll
  for (int i = 0; i < AROWS; ++i) {
    int row = mblock * BM + a_r0 + 16 * i;
    bool valid;
    if (moe) {
      const int id = sorted_ids[row];
      valid = id < M;
      row = valid ? id / a_div : 0;
    } else {
      valid = row < M;
      row = valid ? row : 0;
    }
    a_row[i] = static_cast<uint32_t>(row) * static_cast<uint32_t>(K);
    if (valid) {
      a_mask |= 1u << i;
    } else {
#pragma unroll
      for (int st = 0; st < STAGES; ++st)
        *reinterpret_cast<uint4*>(smem + st * STAGE + a_dst0 + i * 16 * 128) = make_uint4(0, 0, 0, 0);
    }
  }

  auto load_stage = [&](int slot) {
    const uint32_t st = s_base + slot * STAGE;
#pragma unroll
    for (int c = 0; c < CH; ++c) cp_async16(st + (c * THREADS + tid) * 16, w_src + c * w_chunk, true);
    if (s_copy) cp_async16(st + B_STAGE + tid * 16, s_src, true);
    w_src += 8 * 32;
    s_src += s_per;
#pragma unroll
    for (int i = 0; i < AROWS; ++i)
      if (a_mask >> i & 1) cp_async16(st + a_dst0 + i * 16 * 128, a_ptr + a_row[i], true);
    a_ptr += BK;
  };

  // This warp's weights: chunk wc, words sl0 .. sl0+NJ-1 of each lane's
  // 16-byte fragment (slices sl0 + j); likewise its scales. 256 columns:
  // chunk 2*wg + wr/2, slices 2*(wr%2) + j; 128: chunk wg, slice wr.
  const int wc = NJ == 2 ? 2 * wg + (wr >> 1) : wg;
  const int sl0 = NJ == 2 ? 2 * (wr & 1) : wr;
  const uint32_t b_rd0 = (wc * 8 * 32 + lane) * 16 + sl0 * 4;
  const uint32_t s_rd0 = B_STAGE + (((wc << gs_shift) * 8) + (lane >> 2)) * 16 + sl0 * 4;

  float acc[NJ][BM / 2];
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int i = 0; i < BM / 2; ++i) acc[j][i] = 0.f;

  // Stages are loaded STAGES - 2 ahead (not STAGES - 1): the slot refilled
  // at iteration it was read at it - 2, whose products the waits of
  // iteration it - 1 have retired, so no iteration drains the tensor cores.
#pragma unroll
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < niters) load_stage(s);
    cp_async_commit();
  }

  int rd_slot = 0, wr_slot = STAGES - 2;
  for (int it = 0; it < niters; ++it) {
    cp_async_wait<STAGES - 3>();
    __syncthreads();
    if (it + STAGES - 2 < niters) load_stage(wr_slot);
    cp_async_commit();
    wr_slot = wr_slot == STAGES - 1 ? 0 : wr_slot + 1;
    const unsigned char* st = smem + rd_slot * STAGE;
    const uint32_t a_addr = s_base + rd_slot * STAGE + B_STAGE + S_STAGE;
    rd_slot = rd_slot == STAGES - 1 ? 0 : rd_slot + 1;
    uint32_t frag[2][NJ][4];  // [k16 step parity][wgmma j][A fragment]
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      uint32_t bw[NJ], sw[NJ];
      if constexpr (NJ == 2) {
        const uint2 b = *reinterpret_cast<const uint2*>(st + b_rd0 + s * 512);
        const uint2 sc = *reinterpret_cast<const uint2*>(st + s_rd0 + (((s * 16) >> gshift) * 128));
        bw[0] = b.x, bw[NJ - 1] = b.y, sw[0] = sc.x, sw[NJ - 1] = sc.y;
      } else {
        bw[0] = *reinterpret_cast<const uint32_t*>(st + b_rd0 + s * 512);
        sw[0] = *reinterpret_cast<const uint32_t*>(st + s_rd0 + (((s * 16) >> gshift) * 128));
      }
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const __nv_bfloat162 s_lo = __low2bfloat162(as_bf162(sw[j]));
        const __nv_bfloat162 s_hi = __high2bfloat162(as_bf162(sw[j]));
        frag[s & 1][j][0] = dq(bw[j], s_lo);
        frag[s & 1][j][1] = dq(bw[j] >> 8, s_hi);
        frag[s & 1][j][2] = dq(bw[j] >> 4, s_lo);
        frag[s & 1][j][3] = dq(bw[j] >> 12, s_hi);
      }
      const uint64_t desc = smem_desc(a_addr + (s >> 2) * A_HALF + (s & 3) * 32);
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < NJ; ++j) wgmma_rs<BM>(acc[j], frag[s & 1][j], desc, 1);
      wgmma_commit();
      wgmma_wait<1>();  // step s-1's products are done: its fragments may be overwritten
    }
  }
  wgmma_wait<0>();
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int i = 0; i < BM / 2; ++i) fence_f(acc[j][i]);
  cp_async_wait<0>();
  __syncthreads();

  // acc[j][4i + e]: column 64*wc + 16*(sl0 + j) + lane/4 + 8*(e/2) of the
  // tile, row 8i + 2*(lane%4) + e%2.
  float* red = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int i = 0; i < BM / 8; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = 8 * i + 2 * (lane & 3) + (e & 1);
        const int col = 64 * wc + 16 * (sl0 + j) + (lane >> 2) + 8 * (e >> 1);
        red[row * RED_STRIDE + col] = acc[j][4 * i + e];
      }
  __syncthreads();
  store_tile<BM, BN>(red, C, ws, counters, sorted_ids, M, N, mblock, nblock, tile, first, parts, units_per_block, t0, coresident);
#else
  __trap();  // built without sm_90a: the host never launches this kernel
#endif
}

// w4a16_wgp is the persistent form of the wgmma tile (MODE 6, dense GEMMs,
// whole tiles, no partial sums): block b runs tiles b, b + gridDim.x, ...
// one after another through one pipeline, so the first stages of its next
// tile are in flight while this tile's last products retire and its
// epilogue runs (the whole-tile launch of w4a16_wg_segment fills and drains
// the pipeline once a tile: at K = 256, two k iterations a tile, that is
// most of the time). The epilogue stages the tile as bf16 in the two slots
// no copy is in flight to (this iteration's and the previous one's: stages
// are loaded STAGES - 2 ahead), half the rows in each, then writes it out
// with 16-byte stores.
template <int MT, int STAGES, int BN>
__device__ __forceinline__ void w4a16_wgp(const __nv_bfloat16* __restrict__ A, const uint4* __restrict__ W,
                                          const uint4* __restrict__ S, __nv_bfloat16* __restrict__ C, int M, int N,
                                          int K, int group, int mblocks) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(STAGES >= 4, "the epilogue needs two slots without copies in flight");
  static_assert(BN == 128 || BN == 256, "tiles of 128 or 256 columns");
  constexpr int BM = 16 * MT;
  constexpr int NJ = BN / 128;
  constexpr int KS = BK / 16;
  constexpr int CH = BN / 64;
  constexpr int B_STAGE = BK * BN / 2;
  constexpr int S_STAGE = CH * 512;
  constexpr int A_HALF = BM * 128;
  constexpr int STAGE = B_STAGE + S_STAGE + 2 * A_HALF;
  static_assert(STAGE % 1024 == 0 && (B_STAGE + S_STAGE) % 1024 == 0, "swizzle atoms 1024-B aligned");
  constexpr int OUT_STRIDE = BN + 8;  // bf16 a staged row (16-byte aligned, rows 4 banks apart)
  constexpr int HALF_ROWS = BM / 2;
  static_assert(HALF_ROWS * OUT_STRIDE * 2 <= STAGE, "half a tile fits a slot");
  constexpr int AROWS = BM * 16 / THREADS;
  constexpr int CPT = BN / 8;  // 16-byte chunks of an output row
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const uint32_t raw_addr = smem_addr(smem_raw);
  const uint32_t s_base = (raw_addr + 1023) & ~1023u;
  unsigned char* smem = smem_raw + (s_base - raw_addr);

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wg = warp >> 2;
  const int wr = warp & 3;
  const int ntiles_n = N / BN;
  const int tiles = mblocks * ntiles_n;
  if (static_cast<int>(blockIdx.x) >= tiles) return;
  const int kiters = K / BK;
  const int total = ((tiles - 1 - static_cast<int>(blockIdx.x)) / static_cast<int>(gridDim.x) + 1) * kiters;
  const int ngroups = K / group;
  const int gshift = 31 - __clz(group);
  const int gs_shift = 7 - gshift;
  const int kchunks = K / 16;
  const size_t w_chunk = static_cast<size_t>(kchunks) * 32;
  const int s_per = 8 << gs_shift;
  const bool s_copy = tid < CH * s_per;
  const int s_c = tid >> (gs_shift + 3);
  const int a_chunk = tid & 15;
  const int a_r0 = tid >> 4;
  const uint32_t a_dst0 = B_STAGE + S_STAGE + (a_chunk >> 3) * A_HALF + a_r0 * 128 + (((a_chunk & 7) ^ (a_r0 & 7)) * 16);

  // The loader's position: the tile and k iteration of the next stage.
  int ld_tile = blockIdx.x, ld_k = 0;
  auto load_stage = [&](int slot) {
    const int mb = ld_tile / ntiles_n, nb = ld_tile - (ld_tile / ntiles_n) * ntiles_n;
    const uint32_t st = s_base + slot * STAGE;
    const uint4* w_src = W + (static_cast<size_t>(nb) * CH * kchunks + ld_k * 8) * 32 + tid;
#pragma unroll
    for (int c = 0; c < CH; ++c) cp_async16(st + (c * THREADS + tid) * 16, w_src + c * w_chunk, true);
    if (s_copy)
      cp_async16(st + B_STAGE + tid * 16,
                 S + (static_cast<size_t>(nb * CH + s_c) * ngroups + ((ld_k * BK) >> gshift)) * 8 + (tid & (s_per - 1)), true);
    const __nv_bfloat16* a_ptr = A + static_cast<size_t>(ld_k) * BK + a_chunk * 8;
#pragma unroll
    for (int i = 0; i < AROWS; ++i) {
      const int row = mb * BM + a_r0 + 16 * i;
      const bool valid = row < M;  // rows past the batch: zeros (no bytes read)
      cp_async16(st + a_dst0 + i * 16 * 128, a_ptr + static_cast<size_t>(valid ? row : 0) * K, valid);
    }
    if (++ld_k == kiters) ld_k = 0, ld_tile += gridDim.x;
  };

  const int wc = NJ == 2 ? 2 * wg + (wr >> 1) : wg;
  const int sl0 = NJ == 2 ? 2 * (wr & 1) : wr;
  const uint32_t b_rd0 = (wc * 8 * 32 + lane) * 16 + sl0 * 4;
  const uint32_t s_rd0 = B_STAGE + (((wc << gs_shift) * 8) + (lane >> 2)) * 16 + sl0 * 4;

  float acc[NJ][BM / 2];
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int i = 0; i < BM / 2; ++i) acc[j][i] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < total) load_stage(s);
    cp_async_commit();
  }

  int rd_slot = 0, wr_slot = STAGES - 2;
  int g = 0;  // iterations run, over all of this block's tiles
  // The A fragments of the last two k16 steps, at function scope and fenced
  // after the wait that retires their wgmma: no register of a fragment in
  // flight is reused before then.
  uint32_t frag[2][NJ][4] = {};
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    for (int k = 0; k < kiters; ++k, ++g) {
      cp_async_wait<STAGES - 3>();
      __syncthreads();
      if (g + STAGES - 2 < total) load_stage(wr_slot);
      cp_async_commit();
      wr_slot = wr_slot == STAGES - 1 ? 0 : wr_slot + 1;
      const unsigned char* st = smem + rd_slot * STAGE;
      const uint32_t a_addr = s_base + rd_slot * STAGE + B_STAGE + S_STAGE;
      rd_slot = rd_slot == STAGES - 1 ? 0 : rd_slot + 1;
#pragma unroll
      for (int s = 0; s < KS; ++s) {
        uint32_t bw[NJ], sw[NJ];
        if constexpr (NJ == 2) {
          const uint2 b = *reinterpret_cast<const uint2*>(st + b_rd0 + s * 512);
          const uint2 sc = *reinterpret_cast<const uint2*>(st + s_rd0 + (((s * 16) >> gshift) * 128));
          bw[0] = b.x, bw[NJ - 1] = b.y, sw[0] = sc.x, sw[NJ - 1] = sc.y;
        } else {
          bw[0] = *reinterpret_cast<const uint32_t*>(st + b_rd0 + s * 512);
          sw[0] = *reinterpret_cast<const uint32_t*>(st + s_rd0 + (((s * 16) >> gshift) * 128));
        }
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
          const __nv_bfloat162 s_lo = __low2bfloat162(as_bf162(sw[j]));
          const __nv_bfloat162 s_hi = __high2bfloat162(as_bf162(sw[j]));
          frag[s & 1][j][0] = dq(bw[j], s_lo);
          frag[s & 1][j][1] = dq(bw[j] >> 8, s_hi);
          frag[s & 1][j][2] = dq(bw[j] >> 4, s_lo);
          frag[s & 1][j][3] = dq(bw[j] >> 12, s_hi);
        }
        const uint64_t desc = smem_desc(a_addr + (s >> 2) * A_HALF + (s & 3) * 32);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < NJ; ++j) wgmma_rs<BM>(acc[j], frag[s & 1][j], desc, 1);
        wgmma_commit();
        wgmma_wait<1>();  // step s-1's products are done
#pragma unroll
        for (int j = 0; j < NJ; ++j) fence_frag(frag[(s + 1) & 1][j]);
      }
    }
    // The tile is done: every warpgroup's products retire (the barrier: no
    // wgmma still reads the last two slots), then the tile is staged as
    // bf16, rows 0..BM/2-1 in the slot read last and the rest in the one
    // before, and written out.
    wgmma_wait<0>();
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      fence_frag(frag[0][j]);
      fence_frag(frag[1][j]);
#pragma unroll
      for (int i = 0; i < BM / 2; ++i) fence_f(acc[j][i]);
    }
    // The fences above are no instructions, and ptxas (nvcc 13.0) moves
    // plain reads of the accumulators above the wait: in the 256-column
    // form it converted all 128 of them to bf16 right after the k loop,
    // before WARPGROUP.DEPBAR (SASS of bench/gpu-w4a16-runs/run22), so the
    // second wgmma's accumulators (R88-R151), whose last k16 step was still
    // in flight, lost it (runs 18-22: rel error 0.05-0.2 on the 16-column
    // slices of odd parity). So one instruction reads every fragment
    // register of the last steps and an accumulator (keep), the barrier
    // reads its result, and the staging reads each accumulator through an
    // xor with z, the barrier's result (0, unknown to the compiler): no
    // read can move above the barrier, which comes after the wait (every
    // warpgroup's wgmmas are done before the staging overwrites their
    // slots).
    uint32_t keep = __float_as_uint(acc[NJ - 1][BM / 2 - 1]) ^ __float_as_uint(acc[0][0]);
#pragma unroll
    for (int p = 0; p < 2; ++p)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) keep ^= frag[p][j][q];
    const uint32_t z = __syncthreads_count(M < 0 && keep == 0x5bd1e995u);
    const int cur = rd_slot == 0 ? STAGES - 1 : rd_slot - 1;
    __nv_bfloat16* half0 = reinterpret_cast<__nv_bfloat16*>(smem + cur * STAGE);
    __nv_bfloat16* half1 = reinterpret_cast<__nv_bfloat16*>(smem + (cur == 0 ? STAGES - 1 : cur - 1) * STAGE);
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int i = 0; i < BM / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = 8 * i + 2 * (lane & 3) + (e & 1);
          const int col = 64 * wc + 16 * (sl0 + j) + (lane >> 2) + 8 * (e >> 1);
          __nv_bfloat16* h = 8 * i < HALF_ROWS ? half0 : half1;
          h[(row & (HALF_ROWS - 1)) * OUT_STRIDE + col] = __float2bfloat16_rn(__uint_as_float(__float_as_uint(acc[j][4 * i + e]) ^ z));
        }
    __syncthreads();
    const int mb = tile / ntiles_n, nb = tile - (tile / ntiles_n) * ntiles_n;
    for (int c = tid; c < BM * CPT; c += THREADS) {
      const int r = c / CPT, col = (c % CPT) * 8;
      const int grow = mb * BM + r;
      if (grow >= M) continue;
      const __nv_bfloat16* h = r < HALF_ROWS ? half0 : half1;
      *reinterpret_cast<uint4*>(C + static_cast<size_t>(grow) * N + nb * BN + col) =
          *reinterpret_cast<const uint4*>(h + (r & (HALF_ROWS - 1)) * OUT_STRIDE + col);
    }
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int i = 0; i < BM / 2; ++i) acc[j][i] = 0.f;
  }
  cp_async_wait<0>();
#else
  __trap();  // built without sm_90a: the host never launches this kernel
#endif
}

// The work of a launch is mblocks x (N/BN) tiles of K/BK iterations each,
// laid end to end (tile-major) and cut into equal runs of units_per_block
// iterations, one run per block (stream-K, as Marlin's striped
// partitioning): every block gets the same work whatever the tile count, and
// a tile cut between blocks is summed by its last block. The workspace holds
// two BM x BN fp32 slots per block.
template <int MT, int STAGES, int WN, int MODE, bool PRIV, int BN>
__device__ __forceinline__ void w4a16_stream_k(const __nv_bfloat16* __restrict__ A, const uint4* __restrict__ W,
                                           const uint4* __restrict__ S, __nv_bfloat16* __restrict__ C,
                                           float* __restrict__ ws, int* __restrict__ counters,
                                           const int* __restrict__ sorted_ids, const int* __restrict__ expert_ids,
                                           int M, int N, int K, int group, int a_div, int mblocks,
                                           int units_per_block, int coresident) {
  const int kiters = K / BK;
  const int ntiles_n = N / BN;
  const long long total = static_cast<long long>(mblocks) * ntiles_n * kiters;
  long long u = static_cast<long long>(blockIdx.x) * units_per_block;
  const long long end = min(total, u + units_per_block);
  while (u < end) {
    const int tile = static_cast<int>(u / kiters);
    const int kb = static_cast<int>(u % kiters);
    const int ke = static_cast<int>(min(static_cast<long long>(kiters), kb + (end - u)));
    const long long t0 = static_cast<long long>(tile) * kiters;
    const int first = static_cast<int>(t0 / units_per_block);
    const int lastb = static_cast<int>((t0 + kiters - 1) / units_per_block);
    if constexpr (MODE == 5)
      w4a16_wg_segment<MT, STAGES, BN>(A, W, S, C, ws, counters, sorted_ids, expert_ids, M, N, K, group, a_div,
                               tile / ntiles_n, tile % ntiles_n, kb, ke, first, lastb - first + 1, units_per_block, t0, coresident);
    else if constexpr (MT == 8)
      w4a16_big_segment<STAGES>(A, W, S, C, ws, counters, sorted_ids, expert_ids, M, N, K, group, a_div,
                                tile / ntiles_n, tile % ntiles_n, kb, ke, first, lastb - first + 1, units_per_block, t0, coresident);
    else
      w4a16_segment<MT, STAGES, WN, MODE, PRIV, BN>(A, W, S, C, ws, counters, sorted_ids, expert_ids, M, N, K, group, a_div,
                                tile / ntiles_n, tile % ntiles_n, kb, ke, first, lastb - first + 1,
                                units_per_block, t0, coresident);
    u += ke - kb;
    __syncthreads();  // shared memory is reused by the next segment
  }
}

// w4a16_body runs the launch: the persistent wgmma tile (MODE 6) or
// stream-K runs (w4a16_stream_k) of any other tile.
template <int MT, int STAGES, int WN, int MODE, bool PRIV, int BN>
__device__ __forceinline__ void w4a16_body(const __nv_bfloat16* __restrict__ A, const uint4* __restrict__ W,
                                           const uint4* __restrict__ S, __nv_bfloat16* __restrict__ C,
                                           float* __restrict__ ws, int* __restrict__ counters,
                                           const int* __restrict__ sorted_ids, const int* __restrict__ expert_ids,
                                           int M, int N, int K, int group, int a_div, int mblocks,
                                           int units_per_block, int coresident) {
  if constexpr (MODE == 6)
    w4a16_wgp<MT, STAGES, BN>(A, W, S, C, M, N, K, group, mblocks);
  else
    w4a16_stream_k<MT, STAGES, WN, MODE, PRIV, BN>(A, W, S, C, ws, counters, sorted_ids, expert_ids, M, N, K, group,
                                                   a_div, mblocks, units_per_block, coresident);
}

}  // namespace

// w4a16_mt<MT>: 4 pipeline stages, 2 warps along N; _s6: 6 stages (more
// bytes in flight per block, less occupancy); _w4: 4 warps along N (32
// columns a warp, half the accumulators: more blocks per SM). _nodq and
// _ldonly are diagnostics for the benchmark (wrong results): mma.sync on the
// raw weight bits, and the cp.async pipeline without any arithmetic; _wp:
// warp-private pipelines (each warp copies and waits for its own slice of
// a stage, no block barrier in the main loop); _n256: tiles of 256 columns
// (4 warps along N of 64 columns, 2 along K), for large batches: half the
// activation reads per weight; _sw: swapped mma operands for M <= 8 (the
// weights as A, the tokens as n8: half the mma.sync).
#define W4A16_KERNEL(NAME, MT, STAGES, WN, MODE, PRIV, BN, MINB)                                                         \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB)                                                   \
      NAME(const __nv_bfloat16* A, const uint4* W, const uint4* S, __nv_bfloat16* C, float* ws, int* counters, \
           const int* sorted_ids, const int* expert_ids, int M, int N, int K, int group, int a_div,            \
           int mblocks, int units_per_block, int coresident) {                                                  \
    w4a16_body<MT, STAGES, WN, MODE, PRIV, BN>(A, W, S, C, ws, counters, sorted_ids, expert_ids, M, N, K, group, a_div, \
                                     mblocks, units_per_block, coresident);                                     \
  }

W4A16_KERNEL(w4a16_mt1, 1, 4, 2, 0, false, 128, 3)
W4A16_KERNEL(w4a16_mt2, 2, 4, 2, 0, false, 128, 2)
W4A16_KERNEL(w4a16_mt4, 4, 4, 2, 0, false, 128, 1)
W4A16_KERNEL(w4a16_mt1_s6, 1, 6, 2, 0, false, 128, 2)
W4A16_KERNEL(w4a16_mt2_s6, 2, 6, 2, 0, false, 128, 1)
W4A16_KERNEL(w4a16_mt1_w4, 1, 4, 4, 0, false, 128, 4)
W4A16_KERNEL(w4a16_mt2_w4, 2, 4, 4, 0, false, 128, 3)
W4A16_KERNEL(w4a16_mt4_w4, 4, 4, 4, 0, false, 128, 2)
W4A16_KERNEL(w4a16_mt1_nodq, 1, 4, 2, 1, false, 128, 3)
W4A16_KERNEL(w4a16_mt1_ldonly, 1, 4, 2, 2, false, 128, 3)
W4A16_KERNEL(w4a16_mt1_wp, 1, 4, 2, 0, true, 128, 3)
W4A16_KERNEL(w4a16_mt1_s6_wp, 1, 6, 2, 0, true, 128, 2)
W4A16_KERNEL(w4a16_mt2_wp, 2, 4, 2, 0, true, 128, 2)
W4A16_KERNEL(w4a16_mt4_n256, 4, 4, 4, 0, false, 256, 1)
W4A16_KERNEL(w4a16_mt4_s3_n256, 4, 3, 4, 0, false, 256, 1)
// _mt8_n256: the large-batch tile (w4a16_big_segment), 128 rows x 256
// columns, 8 warps as 2 x 4 of 64 x 64; 4 stages need 200 KiB of shared
// memory (Hopper; 3 stages, 150 KiB, also fit an A100).
W4A16_KERNEL(w4a16_mt8_n256, 8, 4, 4, 0, false, 256, 1)
W4A16_KERNEL(w4a16_mt8_s3_n256, 8, 3, 4, 0, false, 256, 1)
// _wg: the same tile on Hopper's wgmma (w4a16_wg_segment); a trap in images
// built for other targets (the host launches it only from the sm_90a cubin).
W4A16_KERNEL(w4a16_mt8_wg_n256, 8, 4, 4, 5, false, 256, 1)
// _w4_wg: the wgmma tile at 128 columns (one m64n128k16 a warpgroup and k16
// step, each warp dequantising one 16-column slice): twice the tiles of
// the 256-column form, for matrices whose 256-column tiles leave SMs idle
// or cut every tile (the expert and TP8 shards); _s5: 5 stages (205 KiB).
W4A16_KERNEL(w4a16_mt8_w4_wg, 8, 4, 4, 5, false, 128, 1)
W4A16_KERNEL(w4a16_mt8_s5_w4_wg, 8, 5, 4, 5, false, 128, 1)
// _mt4_..._wg: the wgmma tile at 64 rows (m64n64k16: half the activation
// rows and accumulators), two blocks a multiprocessor (about 100 KiB of
// shared memory and at most 128 registers each): one block's pipeline fill
// and epilogue overlap the other's main loop. For short K (the TP8 down
// 7168 x 256: two k iterations, whole tiles) and narrow N (the TP8 gate_up
// 512 x 7168: four times the tiles of the 128 x 256 tile). 256 columns at
// 3 stages (102 KiB), 128 columns at 4 (100 KiB).
// _wgp: the persistent form (w4a16_wgp): a grid of at most one block an
// SM, each running whole tiles one after another through one pipeline.
W4A16_KERNEL(w4a16_mt8_wgp_n256, 8, 4, 4, 6, false, 256, 1)
W4A16_KERNEL(w4a16_mt8_w4_wgp, 8, 4, 4, 6, false, 128, 1)
W4A16_KERNEL(w4a16_mt4_s3_wg_n256, 4, 3, 4, 5, false, 256, 2)
W4A16_KERNEL(w4a16_mt4_w4_wg, 4, 4, 4, 5, false, 128, 2)
W4A16_KERNEL(w4a16_mt1_sw, 1, 4, 2, 3, false, 128, 3)
W4A16_KERNEL(w4a16_mt1_w4_sw, 1, 4, 4, 3, false, 128, 4)
// _s6_sw: the swapped-operand kernel with 6 stages (5 in flight, two blocks
// a multiprocessor): more weight bytes in flight per SM at M <= 8.
W4A16_KERNEL(w4a16_mt1_s6_sw, 1, 6, 2, 3, false, 128, 2)
// MXFP4 (MODE 4): the same pipelines and layouts, e2m1 codes dequantised
// with dq_e2m1 (group 32, scales bf16 powers of two converted from e8m0).
W4A16_KERNEL(w4a16_mt1_fp4, 1, 4, 2, 4, false, 128, 3)
// FP4_W4_MINB: the blocks a multiprocessor w4a16_mt1_w4_fp4 is built for.
// On sm_90 at 4 (at most 64 registers) nvcc 13.0 spilled it (32 bytes
// stored, 40 loaded: bench/gpu-w4a16-runs/run25); at 3 it takes 80
// registers and no spill, and the gpt-oss MXFP4 MoE layer ran 3-9% faster
// at 1-128 tokens on the H200, even from 1024 (bench/RESULTS-gpu24.md).
// Other targets keep 4 (not measured there).
#ifndef FP4_W4_MINB
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
#define FP4_W4_MINB 3
#else
#define FP4_W4_MINB 4
#endif
#endif
W4A16_KERNEL(w4a16_mt1_w4_fp4, 1, 4, 4, 4, false, 128, FP4_W4_MINB)
W4A16_KERNEL(w4a16_mt2_fp4, 2, 4, 2, 4, false, 128, 2)
W4A16_KERNEL(w4a16_mt4_fp4, 4, 4, 2, 4, false, 128, 1)
W4A16_KERNEL(w4a16_mt4_w4_fp4, 4, 4, 4, 4, false, 128, 2)
W4A16_KERNEL(w4a16_mt4_n256_fp4, 4, 4, 4, 4, false, 256, 1)

// Calibration helpers (moecast calib gpu): a kernel that does nothing, for
// the cost of a launch eager and in a graph, and a device-to-device copy of
// n 16-byte words, four loads in flight a thread, for the copy bandwidth.
extern "C" __global__ void moecast_empty() {}

extern "C" __global__ void __launch_bounds__(256) moecast_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                               long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a, dst[i + stride] = b, dst[i + 2 * stride] = c, dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}
