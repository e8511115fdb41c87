// Block-fp8 MoE grouped GEMM (DeepSeek-V3's checkpoint format): C[M,N] =
// A[M,K] x W[N,K]^T per expert, e4m3 weights with one fp32 scale per 128 x
// 128 block (W[e][n][k] row-major, scales [e][N/128][K/128]), e4m3
// activations with one fp32 scale per token and group of 128 along K
// (A[m][k], scales [m][K/128]: fp8moe_quant makes them from bf16, as vLLM's
// per_token_group_quant_fp8 does), bf16 out.
//
// Written for moecast from the PTX ISA and the scaling rule of the format
// (each 128-wide K block's partial product is scaled by a_scale[row, kb] x
// w_scale[nb, kb] before it joins the sum, as vLLM's triton fused_moe does in
// its block-quantised loop). On the tensor cores the e4m3 codes are widened
// to fp16, exactly (fp16 holds every e4m3 value), and multiplied by
// mma.sync m16n8k16 f16 with fp32 accumulation: the products are those of an
// fp8 MMA; not Hopper's fp8 wgmma. sm_89+ widens with cvt.rn.f16x2.e4m3x2,
// older targets (the compute_80 PTX) with bit operations and one fp16
// multiply.
//
// Rows come as in kernels/gpu's W4A16 MoE kernel: sorted_ids
// (moe_align_block_size's layout, padded per expert to BM = 16*MT rows with
// the sentinel M) and expert_ids (one per BM rows; -1: a block of another
// rank's experts, skipped); A's row is id / a_div (top-k for gate_up, 1 for
// down), C's row is id.
//
// Tiles: BM = 16*MT rows x 128 columns, K in steps of 128 (one scale block)
// through a 3-stage cp.async pipeline; 8 warps side by side along N (16
// columns each), every warp all BM rows. K may be cut into gridDim.z slices
// (split-K for launches of few tiles): each slice writes fp32 partial sums to
// a workspace and fp8moe_reduce adds them in slice order (deterministic).
//
// Fragments: a k16 step of mma needs, per lane (g = lane/4, t = lane%4), k
// 2t, 2t+1, 2t+8, 2t+9 of its rows/columns; as the sum over k is the same in
// any order, this kernel gives lane t the four consecutive bytes 16t+4j..+3
// of a 64-wide k chunk in step j (j = 0..3), for A and W alike: one 16-byte
// shared-memory load feeds four k16 steps.
//
// Shapes: N % 128 == 0, K % 128 == 0; any M.

#include <cuda_fp16.h>
#include <stdint.h>

namespace {

constexpr int THREADS = 256;
constexpr int BN = 128;
constexpr int BK = 128;
constexpr int STAGES = 3;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void mma_f16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// e4m3x2 widens the two e4m3 codes in the low 16 bits of x (byte 0 to the
// low half) to f16x2, exactly.
__device__ __forceinline__ uint32_t e4m3x2(uint32_t x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t d;
  asm("{\n .reg .b16 lo;\n cvt.u16.u32 lo, %1;\n cvt.rn.f16x2.e4m3x2 %0, lo;\n}\n" : "=r"(d) : "r"(x));
  return d;
#else
  // sign to bit 15, exponent and mantissa to bits 7-13: the f16 pattern of
  // code x 2^-8 (an f16 subnormal for exponent 0), times 2^8 (exact).
  // e4m3 0x7f/0xff is NaN, never produced by fp8moe_quant or the host.
  const uint32_t y = (x & 0xFFu) | ((x & 0xFF00u) << 8);
  const uint32_t h = ((y & 0x00800080u) << 8) | ((y & 0x007F007Fu) << 7);
  const __half2 v = __hmul2(*reinterpret_cast<const __half2*>(&h), __halves2half2(__ushort_as_half(0x5C00), __ushort_as_half(0x5C00)));
  return *reinterpret_cast<const uint32_t*>(&v);
#endif
}

__device__ __forceinline__ unsigned short bf16_rn(float v) {  // round to nearest even (no NaN inputs)
  const uint32_t u = __float_as_uint(v);
  return static_cast<unsigned short>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Shared-memory layout of one stage: W (BN rows x 128 bytes), A (BM rows x
// 128 bytes), A's scales (BM floats), W's scale (one float, padded to 16 B).
// A row's eight 16-byte chunks are stored at chunk ^ ((row & 1) << 2): the 8
// lanes of a quarter warp (rows g, g+1; chunks t) hit 8 distinct chunks.
template <int MT>
struct Stage {
  static constexpr int BM = 16 * MT;
  static constexpr int W_OFF = 0;
  static constexpr int A_OFF = BN * BK;
  static constexpr int AS_OFF = A_OFF + BM * BK;
  static constexpr int WS_OFF = AS_OFF + BM * 4;
  static constexpr int BYTES = WS_OFF + 16;
};

__device__ __forceinline__ int swz(int row, int chunk) { return row * BK + ((chunk ^ ((row & 1) << 2)) << 4); }

template <int MT>
__device__ __forceinline__ void fp8moe_body(const uint8_t* __restrict__ A, const float* __restrict__ AS,
                                            const uint8_t* __restrict__ W, const float* __restrict__ WS,
                                            uint16_t* __restrict__ C, float* __restrict__ ws,
                                            const int* __restrict__ sorted_ids, const int* __restrict__ expert_ids,
                                            int M, int N, int K, int a_div) {
  using S = Stage<MT>;
  constexpr int BM = S::BM;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int s_row[BM];  // A's row of each tile row, -1: none
  __shared__ int s_out[BM];  // C's row of each tile row, -1: none

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int mblock = blockIdx.y, nblock = blockIdx.x;
  const int kb_all = K / BK;
  const int per = (kb_all + gridDim.z - 1) / gridDim.z;
  const int kb0 = blockIdx.z * per;
  const int kb1 = min(kb_all, kb0 + per);
  const bool moe = sorted_ids != nullptr;
  size_t expert = 0;
  if (moe) {
    const int e = expert_ids[mblock];
    if (e < 0) return;
    expert = static_cast<size_t>(e);
  }
  if (tid < BM) {
    const int p = mblock * BM + tid;
    int arow = -1, crow = -1;
    if (moe) {
      const int id = sorted_ids[p];
      if (id < M) arow = id / a_div, crow = id;
    } else if (p < M) {
      arow = crow = p;
    }
    s_row[tid] = arow, s_out[tid] = crow;
  }
  __syncthreads();
  // The host makes no empty slice (kb0 < kb1 for every z).

  const int n0 = nblock * BN;
  const uint8_t* w_base = W + expert * static_cast<size_t>(N) * K + static_cast<size_t>(n0) * K;
  const float* ws_base = WS + expert * static_cast<size_t>(N / BN) * kb_all + static_cast<size_t>(nblock) * kb_all;
  const uint32_t s_base = smem_addr(smem);

  // W: 128 rows x 8 chunks = 1024 chunks, 4 a thread; A: BM x 8 chunks.
  auto load = [&](int slot, int kb) {
    const uint32_t st = s_base + slot * S::BYTES;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int c = tid + i * THREADS, r = c >> 3, ch = c & 7;
      cp_async16(st + S::W_OFF + swz(r, ch), w_base + static_cast<size_t>(r) * K + kb * BK + ch * 16, true);
    }
#pragma unroll
    for (int i = 0; i < (BM * 8 + THREADS - 1) / THREADS; ++i) {
      const int c = tid + i * THREADS;
      if (c < BM * 8) {
        const int r = c >> 3, ch = c & 7, ar = s_row[r];
        cp_async16(st + S::A_OFF + swz(r, ch), A + static_cast<size_t>(max(ar, 0)) * K + kb * BK + ch * 16, ar >= 0);
      }
    }
    if (tid < BM) {
      const int ar = s_row[tid];
      cp_async4(st + S::AS_OFF + tid * 4, AS + static_cast<size_t>(max(ar, 0)) * kb_all + kb, ar >= 0);
    }
    if (tid == BM) cp_async4(st + S::WS_OFF, ws_base + kb, true);
  };

  float acc[MT][2][4];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (kb0 + s < kb1) load(s, kb0 + s);
    cp_async_commit();
  }
  const int niters = kb1 - kb0;
  for (int it = 0; it < niters; ++it) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (it + STAGES - 1 < niters) load((it + STAGES - 1) % STAGES, kb0 + it + STAGES - 1);
    cp_async_commit();
    const unsigned char* st = smem + (it % STAGES) * S::BYTES;
    float part[MT][2][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) part[m][n][e] = 0.f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // 64-wide k chunks
      uint4 bw[2];
#pragma unroll
      for (int n = 0; n < 2; ++n)
        bw[n] = *reinterpret_cast<const uint4*>(st + S::W_OFF + swz(warp * 16 + n * 8 + g, h * 4 + t));
      uint4 aw[MT][2];
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          aw[m][r] = *reinterpret_cast<const uint4*>(st + S::A_OFF + swz(m * 16 + r * 8 + g, h * 4 + t));
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint32_t b[2][2];
#pragma unroll
        for (int n = 0; n < 2; ++n) {
          const uint32_t x = j == 0 ? bw[n].x : j == 1 ? bw[n].y : j == 2 ? bw[n].z : bw[n].w;
          b[n][0] = e4m3x2(x), b[n][1] = e4m3x2(x >> 16);
        }
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          const uint32_t x0 = j == 0 ? aw[m][0].x : j == 1 ? aw[m][0].y : j == 2 ? aw[m][0].z : aw[m][0].w;
          const uint32_t x1 = j == 0 ? aw[m][1].x : j == 1 ? aw[m][1].y : j == 2 ? aw[m][1].z : aw[m][1].w;
          const uint32_t a[4] = {e4m3x2(x0), e4m3x2(x1), e4m3x2(x0 >> 16), e4m3x2(x1 >> 16)};
#pragma unroll
          for (int n = 0; n < 2; ++n) mma_f16(part[m][n], a, b[n][0], b[n][1]);
        }
      }
    }
    const float wsc = *reinterpret_cast<const float*>(st + S::WS_OFF);
    const float* asc = reinterpret_cast<const float*>(st + S::AS_OFF);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      const float s0 = asc[m * 16 + g] * wsc, s1 = asc[m * 16 + g + 8] * wsc;
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        acc[m][n][0] += part[m][n][0] * s0, acc[m][n][1] += part[m][n][1] * s0;
        acc[m][n][2] += part[m][n][2] * s1, acc[m][n][3] += part[m][n][3] * s1;
      }
    }
  }
  cp_async_wait<0>();

  // Lane holds rows g, g+8 of each m16 tile, columns 2t, 2t+1 of each n8.
  const bool split = gridDim.z > 1;
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int crow = s_out[m * 16 + g + hr * 8];
      if (crow < 0) continue;
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const int col = n0 + warp * 16 + n * 8 + 2 * t;
        const float v0 = acc[m][n][2 * hr], v1 = acc[m][n][2 * hr + 1];
        if (split) {
          float2* p = reinterpret_cast<float2*>(ws + (static_cast<size_t>(blockIdx.z) * M + crow) * N + col);
          __stcg(p, make_float2(v0, v1));
        } else {
          const uint32_t w = static_cast<uint32_t>(bf16_rn(v0)) | (static_cast<uint32_t>(bf16_rn(v1)) << 16);
          *reinterpret_cast<uint32_t*>(C + static_cast<size_t>(crow) * N + col) = w;
        }
      }
    }
}

// e4m3_rn rounds v (|v| <= 448) to the nearest e4m3 code, ties to even.
__device__ __forceinline__ uint32_t e4m3_rn(float v) {
  const uint32_t sign = __float_as_uint(v) >> 31 << 7;
  float a = fminf(fabsf(v), 448.f);
  // Normal range from 2^-6: 3 mantissa bits; below it the step is 2^-9.
  uint32_t code;
  if (a < 0x1p-6f) {
    code = static_cast<uint32_t>(__float2int_rn(a * 0x1p9f));  // 0..8 (8 is 2^-6, the first normal)
  } else {
    const uint32_t u = __float_as_uint(a);
    // round the fp32 mantissa to 3 bits, ties to even
    const uint32_t r = u + 0x7FFFFu + ((u >> 20) & 1u);
    const int e = static_cast<int>(r >> 23) - 127 + 7;
    code = (static_cast<uint32_t>(e) << 3) | ((r >> 20) & 7u);
  }
  return sign | code;
}

}  // namespace

#define FP8MOE_KERNEL(NAME, MT, MINB)                                                                                    \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB)                                                           \
      NAME(const uint8_t* A, const float* AS, const uint8_t* W, const float* WS, uint16_t* C, float* ws,      \
           const int* sorted_ids, const int* expert_ids, int M, int N, int K, int a_div) {                              \
    fp8moe_body<MT>(A, AS, W, WS, C, ws, sorted_ids, expert_ids, M, N, K, a_div);                                       \
  }

FP8MOE_KERNEL(fp8moe_mt1, 1, 2)
FP8MOE_KERNEL(fp8moe_mt2, 2, 2)
FP8MOE_KERNEL(fp8moe_mt4, 4, 2)

// fp8moe_reduce adds the split-K slices' fp32 partial sums of the rows the
// sorted ids name (rows entries; a thread per 8 columns) and writes bf16.
// ws is [slices][M][N].
extern "C" __global__ void __launch_bounds__(256) fp8moe_reduce(const float* __restrict__ ws,
                                                                uint16_t* __restrict__ C,
                                                                const int* __restrict__ sorted_ids, int rows, int M,
                                                                int N, int slices) {
  const int per_row = N / 8;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(rows) * per_row) return;
  const int p = static_cast<int>(i / per_row), c = static_cast<int>(i % per_row) * 8;
  const int id = sorted_ids != nullptr ? sorted_ids[p] : p;
  if (id >= M) return;
  float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int s = 0; s < slices; ++s) {
    const float4* src = reinterpret_cast<const float4*>(ws + (static_cast<size_t>(s) * M + id) * N + c);
    const float4 x = __ldcg(src), y = __ldcg(src + 1);
    v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
    v[4] += y.x, v[5] += y.y, v[6] += y.z, v[7] += y.w;
  }
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) w[j] = static_cast<uint32_t>(bf16_rn(v[2 * j])) | (static_cast<uint32_t>(bf16_rn(v[2 * j + 1])) << 16);
  *reinterpret_cast<uint4*>(C + static_cast<size_t>(id) * N + c) = make_uint4(w[0], w[1], w[2], w[3]);
}

// fp8moe_quant quantises bf16 activations X[rows][K] per token and group of
// 128 along K, as vLLM's per_token_group_quant_fp8: scale = max|x| / 448
// (floored at 1e-10 / 448), q = e4m3(x / scale). One warp per group: a lane
// holds 4 values. Q[rows][K] e4m3, QS[rows][K/128] fp32. With sorted_ids,
// only the rows that sorted_ids[0 .. n) names (ids < rows; the padding
// skipped) are quantised: the down GEMM's inputs on an expert-parallel rank.
extern "C" __global__ void __launch_bounds__(256) fp8moe_quant(const uint16_t* __restrict__ X,
                                                               uint8_t* __restrict__ Q, float* __restrict__ QS,
                                                               const int* __restrict__ sorted_ids, int n, int rows,
                                                               int K) {
  const int groups = K / 128;
  const long long gi = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (gi >= static_cast<long long>(n) * groups) return;
  int r = static_cast<int>(gi / groups);
  const int grp = static_cast<int>(gi % groups);
  if (sorted_ids != nullptr) {
    r = sorted_ids[r];
    if (r >= rows) return;
  }
  const size_t off = static_cast<size_t>(r) * K + grp * 128 + lane * 4;
  const uint2 raw = *reinterpret_cast<const uint2*>(X + off);
  float x[4] = {__uint_as_float(raw.x << 16), __uint_as_float(raw.x & 0xFFFF0000u), __uint_as_float(raw.y << 16),
                __uint_as_float(raw.y & 0xFFFF0000u)};
  float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
  const float scale = fmaxf(amax, 1e-10f) / 448.f;
  uint32_t q = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) q |= e4m3_rn(x[j] / scale) << (8 * j);
  *reinterpret_cast<uint32_t*>(Q + off) = q;
  if (lane == 0) QS[static_cast<size_t>(r) * groups + grp] = scale;
}
