// Decode attention for moecast's calibration: MLA over a latent KV cache (the
// absorbed form vLLM's and SGLang's MLA backends run at decode) and GQA over a
// per-head K/V cache, both split along the KV sequence (flash-decoding) with
// a combine kernel that merges the splits by their log-sum-exp.
//
// Written for moecast from public descriptions of the layouts (DeepSeek-V2/V3
// MLA: a 576-wide cache entry, kv_lora_rank 512 + qk_rope 64, shared by every
// head; the absorbed query of 576 per head; the output of 512 per head) and
// the PTX ISA; no code from another project.
//
// Only sm_80 features (mma.sync m16n8k16 bf16 with fp32 accumulation,
// ldmatrix, cp.async): one source for Ampere, Hopper and Blackwell.
//
// KV caches are either contiguous (table == nullptr: token t of sequence b at
// row b*kv_stride + t) or paged (page size 64 tokens: token t of sequence b at
// row table[b*max_pages + t/64]*64 + t%64). A row is 576 bf16 for MLA and
// kv_heads x head_dim bf16 for GQA (K and V separate caches, vLLM's layout).
//
// Softmax runs in base 2: scores are multiplied by scale*log2(e) (scale_log2)
// and exponentiated with exp2; lse holds m + log2(l) per split.

#include <cuda_bf16.h>
#include <stdint.h>

namespace {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp_async16 copies 16 bytes from src to shared dst (zeros when !valid; src
// must still be a mapped address).
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

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// pack2 rounds two floats to bf16x2 (lo in the low half).
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

__device__ __forceinline__ uint32_t ld32(const __nv_bfloat16* p) { return *reinterpret_cast<const uint32_t*>(p); }

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffff, v, 2));
}

__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffff, v, 1);
  return v + __shfl_xor_sync(0xffffffff, v, 2);
}

// row_index is the cache row of token t of sequence b.
__device__ __forceinline__ long long row_index(const int* __restrict__ table, int b, int t, int max_pages,
                                               long long kv_stride) {
  if (table == nullptr) return (long long)b * kv_stride + t;
  return (long long)table[(long long)b * max_pages + (t >> 6)] * 64 + (t & 63);
}

// ---- MLA ----
//
// Block: 128 threads (4 warps), 16 heads (one m16 tile; heads beyond the
// count are zero rows), one split of one sequence. Grid: x = head group
// (fastest, so blocks reading the same KV run together and share it through
// L2), y = split, z = sequence. Per tile of 32 tokens (a multi-stage cp.async
// pipeline): each warp computes the scores over its 144 of the 576 dims,
// the four partial score tiles are summed in shared memory in a fixed order
// (every warp gets the same scores and runs the same online softmax), and
// each warp accumulates the output for its 128 of the 512 latent columns.
constexpr int MLA_D = 576;
constexpr int MLA_DV = 512;
constexpr int MLA_ROW = MLA_D + 8;   // padded shared-memory row (conflict-free ldmatrix)
constexpr int MLA_KS = MLA_D / 4 / 16;  // k16 steps of one warp's score slice (9)

template <int MLA_T, int STAGES, int HT>
__device__ __forceinline__ void mla_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kv,
                                           const int* __restrict__ table, const int* __restrict__ lens,
                                           __nv_bfloat16* __restrict__ out, float* __restrict__ opart,
                                           float* __restrict__ lse, int heads, int max_pages, long long kv_stride,
                                           int chunk, float scale_log2) {
  extern __shared__ uint4 smem_raw[];
  __nv_bfloat16* kvs = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  float4* part = reinterpret_cast<float4*>(kvs + STAGES * MLA_T * MLA_ROW);  // [warp][ntile][lane]
  const int hg = blockIdx.x, split = blockIdx.y, b = blockIdx.z, nsplit = gridDim.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, qd = lane & 3;
  const int hw = HT == 1 ? warp : (warp & 3), ht = HT == 1 ? 0 : (warp >> 2);  // warp of its head tile, head tile
  const int len = lens[b];
  const int t0 = split * chunk;
  const int t1 = min(len, t0 + chunk);
  const int ntiles = t1 > t0 ? (t1 - t0 + MLA_T - 1) / MLA_T : 0;
  const int h0 = (hg * HT + ht) * 16;

  uint32_t qf[MLA_KS][4];
  {
    const int r0 = h0 + g, r1 = h0 + g + 8;
    const __nv_bfloat16* q0 = q + ((long long)b * heads + r0) * MLA_D;
    const __nv_bfloat16* q1 = q + ((long long)b * heads + r1) * MLA_D;
#pragma unroll
    for (int kk = 0; kk < MLA_KS; kk++) {
      const int d = hw * (MLA_KS * 16) + kk * 16 + 2 * qd;
      qf[kk][0] = r0 < heads ? ld32(q0 + d) : 0u;
      qf[kk][1] = r1 < heads ? ld32(q1 + d) : 0u;
      qf[kk][2] = r0 < heads ? ld32(q0 + d + 8) : 0u;
      qf[kk][3] = r1 < heads ? ld32(q1 + d + 8) : 0u;
    }
  }

  auto load = [&](int stage, int tile) {
    const uint32_t base = smem_addr(kvs + stage * MLA_T * MLA_ROW);
    constexpr int CH = MLA_D / 8;  // 16-byte chunks a row (72)
#pragma unroll
    for (int i = tid; i < MLA_T * CH; i += 128 * HT) {
      const int r = i / CH, c = i - r * CH;
      const int t = t0 + tile * MLA_T + r;
      const bool ok = t < t1;
      const __nv_bfloat16* src = kv + row_index(table, b, ok ? t : t0, max_pages, kv_stride) * MLA_D + c * 8;
      cp_async16(base + (r * MLA_ROW + c * 8) * 2, src, ok);
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ntiles) load(s, s);
    cp_async_commit();
  }

  float acc[16][4];
#pragma unroll
  for (int j = 0; j < 16; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

  for (int it = 0; it < ntiles; it++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    {
      const int nt = it + STAGES - 1;
      if (nt < ntiles) load(nt % STAGES, nt);
      cp_async_commit();
    }
    const __nv_bfloat16* tile = kvs + (it % STAGES) * MLA_T * MLA_ROW;
    const uint32_t tbase = smem_addr(tile);

    constexpr int NT = MLA_T / 8;  // n8 tiles of scores
    float s[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < MLA_KS; kk++) {
      const int d0 = hw * (MLA_KS * 16) + kk * 16;
#pragma unroll
      for (int np = 0; np < NT / 2; np++) {
        uint32_t bf[4];
        const int row = np * 16 + (lane & 7) + (lane >> 4) * 8;
        const int col = d0 + ((lane >> 3) & 1) * 8;
        ldmatrix_x4(bf, tbase + (row * MLA_ROW + col) * 2);
        mma_bf16(s[2 * np], qf[kk], bf[0], bf[1]);
        mma_bf16(s[2 * np + 1], qf[kk], bf[2], bf[3]);
      }
    }
#pragma unroll
    for (int j = 0; j < NT; j++) part[(warp * NT + j) * 32 + lane] = make_float4(s[j][0], s[j][1], s[j][2], s[j][3]);
    __syncthreads();
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < NT; j++) {
      float4 v = part[(ht * 4 * NT + j) * 32 + lane];
#pragma unroll
      for (int w = 1; w < 4; w++) {
        const float4 u = part[((ht * 4 + w) * NT + j) * 32 + lane];
        v.x += u.x;
        v.y += u.y;
        v.z += u.z;
        v.w += u.w;
      }
      const int tok = t0 + it * MLA_T + j * 8 + 2 * qd;
      s[j][0] = tok < t1 ? v.x * scale_log2 : -INFINITY;
      s[j][1] = tok + 1 < t1 ? v.y * scale_log2 : -INFINITY;
      s[j][2] = tok < t1 ? v.z * scale_log2 : -INFINITY;
      s[j][3] = tok + 1 < t1 ? v.w * scale_log2 : -INFINITY;
      mx0 = fmaxf(mx0, fmaxf(s[j][0], s[j][1]));
      mx1 = fmaxf(mx1, fmaxf(s[j][2], s[j][3]));
    }
    const float n0 = fmaxf(m0, quad_max(mx0)), n1 = fmaxf(m1, quad_max(mx1));
    const float b0 = n0 == -INFINITY ? 0.f : n0, b1 = n1 == -INFINITY ? 0.f : n1;
    const float a0 = exp2f(m0 - b0), a1 = exp2f(m1 - b1);
    m0 = n0;
    m1 = n1;
    float ps0 = 0.f, ps1 = 0.f;
#pragma unroll
    for (int j = 0; j < NT; j++) {
      s[j][0] = exp2f(s[j][0] - b0);
      s[j][1] = exp2f(s[j][1] - b0);
      s[j][2] = exp2f(s[j][2] - b1);
      s[j][3] = exp2f(s[j][3] - b1);
      ps0 += s[j][0] + s[j][1];
      ps1 += s[j][2] + s[j][3];
    }
    l0 = l0 * a0 + ps0;
    l1 = l1 * a1 + ps1;
#pragma unroll
    for (int j = 0; j < 16; j++) {
      acc[j][0] *= a0;
      acc[j][1] *= a0;
      acc[j][2] *= a1;
      acc[j][3] *= a1;
    }
#pragma unroll
    for (int kk = 0; kk < NT / 2; kk++) {
      const uint32_t pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
                              pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int jp = 0; jp < 8; jp++) {
        uint32_t bf[4];
        const int row = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = hw * 128 + jp * 16 + (lane >> 4) * 8;
        ldmatrix_x4_trans(bf, tbase + (row * MLA_ROW + col) * 2);
        mma_bf16(acc[2 * jp], pa, bf[0], bf[1]);
        mma_bf16(acc[2 * jp + 1], pa, bf[2], bf[3]);
      }
    }
  }
  cp_async_wait<0>();

  l0 = quad_sum(l0);
  l1 = quad_sum(l1);
  const float i0 = l0 > 0.f ? 1.f / l0 : 0.f, i1 = l1 > 0.f ? 1.f / l1 : 0.f;
  const int r0 = h0 + g, r1 = h0 + g + 8;
  if (nsplit == 1) {
#pragma unroll
    for (int j = 0; j < 16; j++) {
      const int c = hw * 128 + j * 8 + 2 * qd;
      if (r0 < heads)
        *reinterpret_cast<uint32_t*>(out + ((long long)b * heads + r0) * MLA_DV + c) = pack2(acc[j][0] * i0, acc[j][1] * i0);
      if (r1 < heads)
        *reinterpret_cast<uint32_t*>(out + ((long long)b * heads + r1) * MLA_DV + c) = pack2(acc[j][2] * i1, acc[j][3] * i1);
    }
    return;
  }
  const long long p0 = ((long long)b * nsplit + split) * heads + r0;
  const long long p1 = ((long long)b * nsplit + split) * heads + r1;
#pragma unroll
  for (int j = 0; j < 16; j++) {
    const int c = hw * 128 + j * 8 + 2 * qd;
    if (r0 < heads) *reinterpret_cast<float2*>(opart + p0 * MLA_DV + c) = make_float2(acc[j][0] * i0, acc[j][1] * i0);
    if (r1 < heads) *reinterpret_cast<float2*>(opart + p1 * MLA_DV + c) = make_float2(acc[j][2] * i1, acc[j][3] * i1);
  }
  if (hw == 0 && qd == 0) {
    if (r0 < heads) lse[p0] = l0 > 0.f ? m0 + log2f(l0) : -INFINITY;
    if (r1 < heads) lse[p1] = l1 > 0.f ? m1 + log2f(l1) : -INFINITY;
  }
}

// ---- GQA ----
//
// Block: 128 threads (4 warps), up to 16 query heads of one KV head (one m16
// tile; GQA groups above 16 heads take several blocks), one split of one
// sequence. Grid: x = kv_head * qgroups + query group, y = split, z =
// sequence. Per tile of 64 tokens (a multi-stage cp.async pipeline of K and
// V), each warp takes 16 of the tokens with the whole head dim: its own
// scores, online softmax and output accumulator; the four warps' states are
// merged in shared memory at the end.
constexpr int GQA_T = 64;

template <int D, int STAGES>
__device__ __forceinline__ void gqa_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kc,
                                           const __nv_bfloat16* __restrict__ vc, const int* __restrict__ table,
                                           const int* __restrict__ lens, __nv_bfloat16* __restrict__ out,
                                           float* __restrict__ opart, float* __restrict__ lse, int hq, int hkv,
                                           int max_pages, long long kv_stride, int chunk, float scale_log2) {
  constexpr int ROW = D + 8;
  constexpr int KS = D / 16;
  constexpr int NT = D / 8;
  extern __shared__ uint4 smem_raw[];
  __nv_bfloat16* ks = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [stage][K|V][64][ROW]
  __shared__ float ml[4][2][16];                                   // per warp: m, l of each row
  const int gsz = hq / hkv;
  const int qgroups = (gsz + 15) / 16;
  const int kvh = blockIdx.x / qgroups, qg = blockIdx.x % qgroups;
  const int split = blockIdx.y, b = blockIdx.z, nsplit = gridDim.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, qd = lane & 3;
  const int len = lens[b];
  const int t0 = split * chunk;
  const int t1 = min(len, t0 + chunk);
  const int ntiles = t1 > t0 ? (t1 - t0 + GQA_T - 1) / GQA_T : 0;
  const int rows = min(16, gsz - qg * 16);  // valid query rows of this block
  const int h0 = kvh * gsz + qg * 16;       // first query head

  uint32_t qf[KS][4];
  {
    const __nv_bfloat16* q0 = q + ((long long)b * hq + h0 + g) * D;
    const __nv_bfloat16* q1 = q + ((long long)b * hq + h0 + g + 8) * D;
#pragma unroll
    for (int kk = 0; kk < KS; kk++) {
      const int d = kk * 16 + 2 * qd;
      qf[kk][0] = g < rows ? ld32(q0 + d) : 0u;
      qf[kk][1] = g + 8 < rows ? ld32(q1 + d) : 0u;
      qf[kk][2] = g < rows ? ld32(q0 + d + 8) : 0u;
      qf[kk][3] = g + 8 < rows ? ld32(q1 + d + 8) : 0u;
    }
  }

  auto load = [&](int stage, int tile) {
    const uint32_t base = smem_addr(ks + stage * 2 * GQA_T * ROW);
    constexpr int CH = D / 8;
#pragma unroll
    for (int i = tid; i < 2 * GQA_T * CH; i += 128) {
      const int kv = i / (GQA_T * CH);
      const int j = i - kv * GQA_T * CH;
      const int r = j / CH, c = j - r * CH;
      const int t = t0 + tile * GQA_T + r;
      const bool ok = t < t1;
      const long long row = row_index(table, b, ok ? t : t0, max_pages, kv_stride);
      const __nv_bfloat16* src = (kv ? vc : kc) + (row * hkv + kvh) * D + c * 8;
      cp_async16(base + ((kv * GQA_T + r) * ROW + c * 8) * 2, src, ok);
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ntiles) load(s, s);
    cp_async_commit();
  }

  float acc[NT][4];
#pragma unroll
  for (int j = 0; j < NT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

  for (int it = 0; it < ntiles; it++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    {
      const int nt = it + STAGES - 1;
      if (nt < ntiles) load(nt % STAGES, nt);
      cp_async_commit();
    }
    const uint32_t kb = smem_addr(ks + (it % STAGES) * 2 * GQA_T * ROW);
    const uint32_t vb = kb + GQA_T * ROW * 2;
    float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
    for (int kk = 0; kk < KS; kk++) {
      uint32_t bf[4];
      const int row = warp * 16 + (lane & 7) + (lane >> 4) * 8;
      const int col = kk * 16 + ((lane >> 3) & 1) * 8;
      ldmatrix_x4(bf, kb + (row * ROW + col) * 2);
      mma_bf16(s[0], qf[kk], bf[0], bf[1]);
      mma_bf16(s[1], qf[kk], bf[2], bf[3]);
    }
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < 2; j++) {
      const int tok = t0 + it * GQA_T + warp * 16 + j * 8 + 2 * qd;
      s[j][0] = tok < t1 ? s[j][0] * scale_log2 : -INFINITY;
      s[j][1] = tok + 1 < t1 ? s[j][1] * scale_log2 : -INFINITY;
      s[j][2] = tok < t1 ? s[j][2] * scale_log2 : -INFINITY;
      s[j][3] = tok + 1 < t1 ? s[j][3] * scale_log2 : -INFINITY;
      mx0 = fmaxf(mx0, fmaxf(s[j][0], s[j][1]));
      mx1 = fmaxf(mx1, fmaxf(s[j][2], s[j][3]));
    }
    const float n0 = fmaxf(m0, quad_max(mx0)), n1 = fmaxf(m1, quad_max(mx1));
    const float b0 = n0 == -INFINITY ? 0.f : n0, b1 = n1 == -INFINITY ? 0.f : n1;
    const float a0 = exp2f(m0 - b0), a1 = exp2f(m1 - b1);
    m0 = n0;
    m1 = n1;
    float ps0 = 0.f, ps1 = 0.f;
#pragma unroll
    for (int j = 0; j < 2; j++) {
      s[j][0] = exp2f(s[j][0] - b0);
      s[j][1] = exp2f(s[j][1] - b0);
      s[j][2] = exp2f(s[j][2] - b1);
      s[j][3] = exp2f(s[j][3] - b1);
      ps0 += s[j][0] + s[j][1];
      ps1 += s[j][2] + s[j][3];
    }
    l0 = l0 * a0 + ps0;
    l1 = l1 * a1 + ps1;
#pragma unroll
    for (int j = 0; j < NT; j++) {
      acc[j][0] *= a0;
      acc[j][1] *= a0;
      acc[j][2] *= a1;
      acc[j][3] *= a1;
    }
    const uint32_t pa[4] = {pack2(s[0][0], s[0][1]), pack2(s[0][2], s[0][3]), pack2(s[1][0], s[1][1]),
                            pack2(s[1][2], s[1][3])};
#pragma unroll
    for (int jp = 0; jp < KS; jp++) {
      uint32_t bf[4];
      const int row = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
      const int col = jp * 16 + (lane >> 4) * 8;
      ldmatrix_x4_trans(bf, vb + (row * ROW + col) * 2);
      mma_bf16(acc[2 * jp], pa, bf[0], bf[1]);
      mma_bf16(acc[2 * jp + 1], pa, bf[2], bf[3]);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the stages are free: reuse them for the merge

  l0 = quad_sum(l0);
  l1 = quad_sum(l1);
  float* mrg = reinterpret_cast<float*>(smem_raw);  // [warp][16][D]
  if (qd == 0) {
    ml[warp][0][g] = m0;
    ml[warp][0][g + 8] = m1;
    ml[warp][1][g] = l0;
    ml[warp][1][g + 8] = l1;
  }
#pragma unroll
  for (int j = 0; j < NT; j++) {
    const int c = j * 8 + 2 * qd;
    *reinterpret_cast<float2*>(mrg + (warp * 16 + g) * D + c) = make_float2(acc[j][0], acc[j][1]);
    *reinterpret_cast<float2*>(mrg + (warp * 16 + g + 8) * D + c) = make_float2(acc[j][2], acc[j][3]);
  }
  __syncthreads();
  for (int i = tid; i < 16 * D; i += 128) {
    const int r = i / D, c = i - r * D;
    if (r >= rows) break;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < 4; w++) M = fmaxf(M, ml[w][0][r]);
    float L = 0.f, o = 0.f;
    if (M != -INFINITY) {
#pragma unroll
      for (int w = 0; w < 4; w++) {
        const float e = exp2f(ml[w][0][r] - M);
        L += e * ml[w][1][r];
        o += e * mrg[(w * 16 + r) * D + c];
      }
    }
    const float v = L > 0.f ? o / L : 0.f;
    const int h = h0 + r;
    if (nsplit == 1) {
      out[((long long)b * hq + h) * D + c] = __float2bfloat16_rn(v);
    } else {
      const long long p = ((long long)b * nsplit + split) * hq + h;
      opart[p * D + c] = v;
      if (c == 0) lse[p] = L > 0.f ? M + log2f(L) : -INFINITY;
    }
  }
}

// ---- combine ----
constexpr int MAX_SPLITS = 256;
constexpr int CMB_COLS = 64;    // columns a combine block
constexpr int CMB_GROUPS = 16;  // split groups a combine block (256 threads = 16 column quads x 16 groups)

// combine merges the splits of one (sequence, head) over CMB_COLS columns:
// warp 0 turns the splits' lse into weights, then each thread sums the
// splits s = group (mod CMB_GROUPS) for 4 columns, and the groups' sums
// are added in a fixed order.
__device__ __forceinline__ void combine(const float* __restrict__ opart, const float* __restrict__ lse,
                                        __nv_bfloat16* __restrict__ out, int heads, int nsplit, int d) {
  __shared__ float w[MAX_SPLITS];
  __shared__ float denom;
  __shared__ float4 red[CMB_GROUPS][CMB_COLS / 4];
  const int b = blockIdx.x / heads, h = blockIdx.x % heads;
  const int c0 = blockIdx.y * CMB_COLS;
  const int tid = threadIdx.x;
  if (tid < 32) {
    float M = -INFINITY;
    for (int s = tid; s < nsplit; s += 32) M = fmaxf(M, lse[((long long)b * nsplit + s) * heads + h]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffff, M, o));
    float L = 0.f;
    for (int s = tid; s < nsplit; s += 32) {
      const float e = M == -INFINITY ? 0.f : exp2f(lse[((long long)b * nsplit + s) * heads + h] - M);
      w[s] = e;
      L += e;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) L += __shfl_xor_sync(0xffffffff, L, o);
    if (tid == 0) denom = L > 0.f ? 1.f / L : 0.f;
  }
  __syncthreads();
  const int q = tid % (CMB_COLS / 4), g = tid / (CMB_COLS / 4);
  const int c = c0 + 4 * q;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const float* base = opart + ((long long)b * nsplit * heads + h) * d + c;
#pragma unroll 4
  for (int s = g; s < nsplit; s += CMB_GROUPS) {
    const float4 v = *reinterpret_cast<const float4*>(base + (long long)s * heads * d);
    const float ws = w[s];
    acc.x += ws * v.x;
    acc.y += ws * v.y;
    acc.z += ws * v.z;
    acc.w += ws * v.w;
  }
  red[g][q] = acc;
  __syncthreads();
  if (tid < CMB_COLS) {
    const int qq = tid / 4, e = tid % 4;
    float o = 0.f;
#pragma unroll
    for (int gg = 0; gg < CMB_GROUPS; gg++) o += reinterpret_cast<const float*>(&red[gg][qq])[e];
    out[((long long)b * heads + h) * d + c0 + tid] = __float2bfloat16_rn(o * denom);
  }
}

__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// ---- prefill ----
//
// Causal attention of a chunk of new tokens against its cached prefix, as
// the engines' varlen FlashAttention runs a prefill chunk: query token i of
// the chunk sits at position prefix+i and sees the cache's keys j <= prefix+i
// (and, with a sliding window w > 0, j > prefix+i-w). The chunk's own K and
// V are already in the cache (positions prefix..prefix+chunk-1). FA2-style:
// a block holds 64 query rows of one head (16 a warp, the whole QK dim in
// registers), streams 64-key tiles of K and V through a cp.async pipeline,
// and runs the online softmax per row in registers (base 2); the output is
// written once, normalised. QK and V dims are separate (MLA prefill: q/k
// 192, v 128; GQA: both head_dim). Query heads h use KV head h/(hq/hkv).
constexpr int PF_M = 64;  // query rows a block
constexpr int PF_N = 64;  // keys a tile (one page of a paged cache)

template <int DQK, int DV, int STAGES>
__device__ __forceinline__ void prefill(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kc,
                                        const __nv_bfloat16* __restrict__ vc, const int* __restrict__ table,
                                        __nv_bfloat16* __restrict__ out, int hq, int hkv, int chunk, int prefix,
                                        int window, int max_pages, long long kv_stride, float scale_log2) {
  constexpr int RK = DQK + 8, RV = DV + 8;  // padded shared-memory rows (conflict-free ldmatrix)
  constexpr int KS = DQK / 16;              // k16 steps of the scores
  constexpr int NT = DV / 8;                // n8 tiles of the output
  constexpr int STAGE = PF_N * (RK + RV);   // elements a stage (K then V)
  extern __shared__ uint4 smem_raw[];
  __nv_bfloat16* sm = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int qt = gridDim.x - 1 - blockIdx.x;  // the longest tiles (last queries) first
  const int h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (hq / hkv);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, qd = lane & 3;
  const int q0 = qt * PF_M;
  const int total = prefix + chunk;                // keys in the cache
  const int last = prefix + min(q0 + PF_M, chunk);  // one past the last key any row sees
  int first = 0;                                    // the first key any row sees
  if (window > 0) first = max(0, prefix + q0 - window + 1);
  const int tile0 = first / PF_N, tile1 = (last + PF_N - 1) / PF_N;
  const int ntiles = tile1 - tile0;

  // This warp's rows r0, r1 (chunk indices) and their positions.
  const int r0 = q0 + warp * 16 + g, r1 = r0 + 8;
  const int p0 = prefix + r0, p1 = prefix + r1;
  uint32_t qf[KS][4];
  {
    const __nv_bfloat16* qa = q + (((long long)b * chunk + r0) * hq + h) * DQK;
    const __nv_bfloat16* qb = q + (((long long)b * chunk + r1) * hq + h) * DQK;
    const bool v0 = r0 < chunk, v1 = r1 < chunk;
#pragma unroll
    for (int kk = 0; kk < KS; kk++) {
      const int d = kk * 16 + 2 * qd;
      qf[kk][0] = v0 ? ld32(qa + d) : 0u;
      qf[kk][1] = v1 ? ld32(qb + d) : 0u;
      qf[kk][2] = v0 ? ld32(qa + d + 8) : 0u;
      qf[kk][3] = v1 ? ld32(qb + d + 8) : 0u;
    }
  }

  auto load = [&](int stage, int tile) {
    const uint32_t base = smem_addr(sm + stage * STAGE);
    const int t0 = (tile0 + tile) * PF_N;
    constexpr int CK = DQK / 8, CV = DV / 8;  // 16-byte chunks a row
#pragma unroll 4
    for (int i = tid; i < PF_N * (CK + CV); i += 128) {
      const bool isv = i >= PF_N * CK;
      const int j = isv ? i - PF_N * CK : i;
      const int cw = isv ? CV : CK;
      const int r = j / cw, c = j - r * cw;
      const int t = t0 + r;
      const bool ok = t < total;
      const long long row = row_index(table, b, ok ? t : 0, max_pages, kv_stride);
      const __nv_bfloat16* src = isv ? vc + (row * hkv + kvh) * DV + c * 8 : kc + (row * hkv + kvh) * DQK + c * 8;
      const int off = isv ? PF_N * RK + r * RV + c * 8 : r * RK + c * 8;
      cp_async16(base + off * 2, src, ok);
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ntiles) load(s, s);
    cp_async_commit();
  }

  float acc[NT][4];
#pragma unroll
  for (int j = 0; j < NT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

  for (int it = 0; it < ntiles; it++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    {
      const int nt = it + STAGES - 1;
      if (nt < ntiles) load(nt % STAGES, nt);
      cp_async_commit();
    }
    const uint32_t kb = smem_addr(sm + (it % STAGES) * STAGE);
    const uint32_t vb = kb + PF_N * RK * 2;
    const int t0 = (tile0 + it) * PF_N;

    float s[8][4];
#pragma unroll
    for (int j = 0; j < 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KS; kk++) {
#pragma unroll
      for (int np = 0; np < 4; np++) {
        uint32_t bf[4];
        const int row = np * 16 + (lane & 7) + (lane >> 4) * 8;
        const int col = kk * 16 + ((lane >> 3) & 1) * 8;
        ldmatrix_x4(bf, kb + (row * RK + col) * 2);
        mma_bf16(s[2 * np], qf[kk], bf[0], bf[1]);
        mma_bf16(s[2 * np + 1], qf[kk], bf[2], bf[3]);
      }
    }
    // Mask only the tiles that cross a row's causal edge or window start
    // (block-uniform test: any key past the first row's position, or any
    // key the last row's window leaves out).
    const bool edge = t0 + PF_N - 1 > prefix + q0 || (window > 0 && t0 <= prefix + q0 + PF_M - 1 - window);
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < 8; j++) {
#pragma unroll
      for (int e = 0; e < 4; e++) {
        float v = s[j][e] * scale_log2;
        if (edge) {
          const int key = t0 + j * 8 + 2 * qd + (e & 1);
          const int p = e < 2 ? p0 : p1;
          if (key > p || (window > 0 && key <= p - window)) v = -INFINITY;
        }
        s[j][e] = v;
      }
      mx0 = fmaxf(mx0, fmaxf(s[j][0], s[j][1]));
      mx1 = fmaxf(mx1, fmaxf(s[j][2], s[j][3]));
    }
    const float n0 = fmaxf(m0, quad_max(mx0)), n1 = fmaxf(m1, quad_max(mx1));
    const float b0 = n0 == -INFINITY ? 0.f : n0, b1 = n1 == -INFINITY ? 0.f : n1;
    const float a0 = exp2f(m0 - b0), a1 = exp2f(m1 - b1);
    m0 = n0;
    m1 = n1;
    float ps0 = 0.f, ps1 = 0.f;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      s[j][0] = exp2f(s[j][0] - b0);
      s[j][1] = exp2f(s[j][1] - b0);
      s[j][2] = exp2f(s[j][2] - b1);
      s[j][3] = exp2f(s[j][3] - b1);
      ps0 += s[j][0] + s[j][1];
      ps1 += s[j][2] + s[j][3];
    }
    l0 = l0 * a0 + ps0;
    l1 = l1 * a1 + ps1;
#pragma unroll
    for (int j = 0; j < NT; j++) {
      acc[j][0] *= a0;
      acc[j][1] *= a0;
      acc[j][2] *= a1;
      acc[j][3] *= a1;
    }
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
      const uint32_t pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
                              pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int jp = 0; jp < DV / 16; jp++) {
        uint32_t bf[4];
        const int row = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = jp * 16 + (lane >> 4) * 8;
        ldmatrix_x4_trans(bf, vb + (row * RV + col) * 2);
        mma_bf16(acc[2 * jp], pa, bf[0], bf[1]);
        mma_bf16(acc[2 * jp + 1], pa, bf[2], bf[3]);
      }
    }
  }
  cp_async_wait<0>();

  l0 = quad_sum(l0);
  l1 = quad_sum(l1);
  const float i0 = l0 > 0.f ? 1.f / l0 : 0.f, i1 = l1 > 0.f ? 1.f / l1 : 0.f;
  __nv_bfloat16* oa = out + (((long long)b * chunk + r0) * hq + h) * DV;
  __nv_bfloat16* ob = out + (((long long)b * chunk + r1) * hq + h) * DV;
#pragma unroll
  for (int j = 0; j < NT; j++) {
    const int c = j * 8 + 2 * qd;
    if (r0 < chunk) *reinterpret_cast<uint32_t*>(oa + c) = pack2(acc[j][0] * i0, acc[j][1] * i0);
    if (r1 < chunk) *reinterpret_cast<uint32_t*>(ob + c) = pack2(acc[j][2] * i1, acc[j][3] * i1);
  }
}

}  // namespace

// mla_decode_t<T>_s<STAGES>(q [B][heads][576], kv, table or null, lens [B],
// out [B][heads][512] (one split), opart [B][splits][heads][512] and lse
// [B][splits][heads] (several), heads, max_pages, kv_stride, chunk (tokens
// a split, a multiple of T), scale_log2). 128 threads; grid
// (ceil(heads/16), splits, B); dynamic shared memory STAGES*T*584*2 +
// 4*(T/8)*32*16 bytes. T tokens a pipeline stage (32 or 16). The _h2
// kernels: 256 threads, two head tiles (32 heads) a block sharing each KV
// tile (half the KV reads for many heads per GPU); grid (ceil(heads/32),
// splits, B); the score buffer twice as large.
#define MLA_KERNEL(T, S)                                                                                       \
  MLA_KERNEL_H(T, S, 1, )                                                                                      \
  MLA_KERNEL_H(T, S, 2, _h2)
#define MLA_KERNEL_H(T, S, H, SUFFIX)                                                                          \
  extern "C" __global__ void __launch_bounds__(128 * H) moecast_mla_decode_t##T##_s##S##SUFFIX(                \
      const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kv, const int* __restrict__ table, \
      const int* __restrict__ lens, __nv_bfloat16* __restrict__ out, float* __restrict__ opart,                 \
      float* __restrict__ lse, int heads, int max_pages, long long kv_stride, int chunk, float scale_log2) {     \
    mla_decode<T, S, H>(q, kv, table, lens, out, opart, lse, heads, max_pages, kv_stride, chunk, scale_log2);    \
  }
MLA_KERNEL(32, 2)
MLA_KERNEL(32, 3)
MLA_KERNEL(16, 4)
MLA_KERNEL(16, 6)

// gqa_decode_d<D>_s<STAGES>(q [B][hq][D], k, v caches, table or null, lens,
// out [B][hq][D], opart [B][splits][hq][D], lse [B][splits][hq], hq, hkv,
// max_pages, kv_stride, chunk (a multiple of 64), scale_log2). 128 threads;
// grid (hkv*ceil((hq/hkv)/16), splits, B); dynamic shared memory
// STAGES*2*64*(D+8)*2 bytes (at least 4*16*D*4 for the merge).
#define GQA_KERNEL(D, S)                                                                                            \
  extern "C" __global__ void __launch_bounds__(128) moecast_gqa_decode_d##D##_s##S(                                 \
      const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kc, const __nv_bfloat16* __restrict__ vc, \
      const int* __restrict__ table, const int* __restrict__ lens, __nv_bfloat16* __restrict__ out,                  \
      float* __restrict__ opart, float* __restrict__ lse, int hq, int hkv, int max_pages, long long kv_stride,      \
      int chunk, float scale_log2) {                                                                                \
    gqa_decode<D, S>(q, kc, vc, table, lens, out, opart, lse, hq, hkv, max_pages, kv_stride, chunk, scale_log2);    \
  }
GQA_KERNEL(64, 2)
GQA_KERNEL(64, 3)
GQA_KERNEL(128, 2)
GQA_KERNEL(128, 3)

// prefill_q<DQK>_v<DV>_s<STAGES>(q [B][chunk][hq][DQK], k cache, v cache
// (rows of hkv x DQK and hkv x DV), table or null, out [B][chunk][hq][DV],
// hq, hkv, chunk, prefix, window (0: none), max_pages, kv_stride,
// scale_log2). 128 threads; grid (ceil(chunk/64), hq, B); dynamic shared
// memory STAGES*64*(DQK+DV+16)*2 bytes.
#define PREFILL_KERNEL(DQK, DV, S)                                                                                  \
  extern "C" __global__ void __launch_bounds__(128, DQK == 192 ? 2 : 3) moecast_prefill_q##DQK##_v##DV##_s##S(                          \
      const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ kc, const __nv_bfloat16* __restrict__ vc, \
      const int* __restrict__ table, __nv_bfloat16* __restrict__ out, int hq, int hkv, int chunk, int prefix,        \
      int window, int max_pages, long long kv_stride, float scale_log2) {                                            \
    prefill<DQK, DV, S>(q, kc, vc, table, out, hq, hkv, chunk, prefix, window, max_pages, kv_stride, scale_log2);    \
  }
PREFILL_KERNEL(64, 64, 2)
PREFILL_KERNEL(64, 64, 3)
PREFILL_KERNEL(128, 128, 2)
PREFILL_KERNEL(128, 128, 3)
PREFILL_KERNEL(192, 128, 2)
PREFILL_KERNEL(192, 128, 3)

// moecast_attn_combine(opart, lse, out, heads, splits, d): 256 threads; grid
// (sequences x heads, d / 64); splits <= 256, d a multiple of 64.
extern "C" __global__ void __launch_bounds__(256) moecast_attn_combine(const float* __restrict__ opart,
                                                                       const float* __restrict__ lse,
                                                                       __nv_bfloat16* __restrict__ out, int heads,
                                                                       int nsplit, int d) {
  combine(opart, lse, out, heads, nsplit, d);
}

// ---- the MLA module's small kernels ----

// moecast_rmsnorm(x, ld, width, w, eps): in place, row b of x (ld elements
// apart): x = x / sqrt(mean(x^2) + eps) * w over its first width values
// (q_a_layernorm, kv_a_layernorm). One block of 128 threads a row; width a
// multiple of 2.
extern "C" __global__ void __launch_bounds__(128) moecast_rmsnorm(__nv_bfloat16* __restrict__ x, int ld, int width,
                                                                  const __nv_bfloat16* __restrict__ w, float eps) {
  __shared__ float part[4];
  __nv_bfloat16* row = x + (long long)blockIdx.x * ld;
  float ss = 0.f;
  for (int i = 2 * threadIdx.x; i < width; i += 256) {
    const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(row + i));
    ss += v.x * v.x + v.y * v.y;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
  __syncthreads();
  const float inv = rsqrtf((part[0] + part[1] + part[2] + part[3]) / width + eps);
  for (int i = 2 * threadIdx.x; i < width; i += 256) {
    const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(row + i));
    const float2 g = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(w + i));
    *reinterpret_cast<uint32_t*>(row + i) = pack2(v.x * inv * g.x, v.y * inv * g.y);
  }
}

// moecast_mla_rope(qb, qa, kva, ld_kva, heads, lens): rotary embedding of
// the decode token of sequence b at position lens[b]-1 (pairs (2i, 2i+1),
// theta_i = pos * 10000^(-2i/64), DeepSeek's interleaved form): each head's
// q_pe (qb[b][h][128:192]) into qa[b][h][512:576] (the absorbed query's rope
// part), and k_pe (kva[b][ld_kva-64:]) in place. One block of 128 threads a
// sequence.
extern "C" __global__ void __launch_bounds__(128) moecast_mla_rope(const __nv_bfloat16* __restrict__ qb,
                                                                   __nv_bfloat16* __restrict__ qa,
                                                                   __nv_bfloat16* __restrict__ kva, int ld_kva, int heads,
                                                                   const int* __restrict__ lens) {
  const int b = blockIdx.x;
  const float pos = (float)(lens[b] - 1);
  for (int i = threadIdx.x; i < (heads + 1) * 32; i += 128) {
    const int h = i >> 5, p = i & 31;
    float sn, cs;
    sincosf(pos * exp2f(-(float)(2 * p) / 64.f * 13.287712379549449f), &sn, &cs);  // 10000^(-2p/64)
    const __nv_bfloat16* src = h < heads ? qb + ((long long)b * heads + h) * 192 + 128 : kva + (long long)b * ld_kva + ld_kva - 64;
    __nv_bfloat16* dst = h < heads ? qa + ((long long)b * heads + h) * 576 + 512 : kva + (long long)b * ld_kva + ld_kva - 64;
    const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + 2 * p));
    *reinterpret_cast<uint32_t*>(dst + 2 * p) = pack2(v.x * cs - v.y * sn, v.x * sn + v.y * cs);
  }
}

// moecast_mla_cache_write(kva, ld_kva, cache, table, lens, max_pages,
// kv_stride): the decode token's cache entry, kva[b][ld_kva-576:] (the
// normed latent 512 and the rotated k_pe 64), at position lens[b]-1 of
// sequence b (concat_and_cache_mla). One block of 72 threads (16 bytes
// each) a sequence.
extern "C" __global__ void __launch_bounds__(96) moecast_mla_cache_write(const __nv_bfloat16* __restrict__ kva, int ld_kva,
                                                                         __nv_bfloat16* __restrict__ cache,
                                                                         const int* __restrict__ table,
                                                                         const int* __restrict__ lens, int max_pages,
                                                                         long long kv_stride) {
  const int b = blockIdx.x;
  if (threadIdx.x >= MLA_D / 8) return;
  const long long row = row_index(table, b, lens[b] - 1, max_pages, kv_stride);
  const uint4 v = *reinterpret_cast<const uint4*>(kva + (long long)b * ld_kva + ld_kva - MLA_D + threadIdx.x * 8);
  *reinterpret_cast<uint4*>(cache + row * MLA_D + threadIdx.x * 8) = v;
}

// moecast_fill_bf16(p, n8, seed, amp): n8 x 8 bf16 values, amp x a hash of
// (index, seed) uniform in [-1, 1): fills large KV caches on the device.
extern "C" __global__ void __launch_bounds__(256) moecast_fill_bf16(uint4* __restrict__ p, long long n8, uint32_t seed,
                                                                    float amp) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n8; i += (long long)gridDim.x * 256) {
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
      const uint32_t h = hash32((uint32_t)(i * 4 + k) * 2654435761U ^ seed ^ (uint32_t)(i >> 30));
      const float lo = amp * ((float)(h & 0xffff) / 32768.f - 1.f);
      const float hi = amp * ((float)(h >> 16) / 32768.f - 1.f);
      w[k] = pack2(lo, hi);
    }
    p[i] = make_uint4(w[0], w[1], w[2], w[3]);
  }
}
