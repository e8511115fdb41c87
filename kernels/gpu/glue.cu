// The kernels a MoE layer runs around its two expert GEMMs, as vLLM's
// fused_marlin_moe path runs them (router top-k, moe_align_block_size,
// silu_and_mul, moe_sum), and the small elementwise kernels of a decode
// step (RMSNorm, residual add), for `moecast calib gpu`.
//
// Written for moecast from the layouts the engines use (facts, not code):
//   - router: sigmoid scores, plus e_score_correction_bias for the choice,
//     grouped top-k (DeepSeek-V3 noaux_tc: a group's score is the sum of its
//     two best biased scores, the best topk_group groups are kept), the
//     k best biased scores, weights the unbiased sigmoid scores,
//     renormalised to sum 1 and times routed_scaling_factor. One warp per
//     token, ties to the lower expert index, ids in descending order.
//   - align: the (token, slot) pairs routed to the local experts [first,
//     first+count) sorted by expert, ids ascending within an expert, each
//     expert's run padded to a multiple of block with the sentinel n (the
//     pair count), one expert id (counted from first) per block, and the
//     padded row count and block count; exactly kernels/gpu AlignLocal's
//     layout. One block of 1024 threads.
//   - silu_and_mul: out[r, j] = silu(x[r, j]) * x[r, n + j], bf16, fp32 math.
//   - moe_sum: out[t, h] = sum over slots s of w[t, s] * y[t*k + s, h] for
//     the slots routed to a local expert (others count 0), bf16 out.
//   - rmsnorm: out = x / sqrt(mean(x^2) + eps) * weight, fp32 math, one
//     block per token; residual add: out = a + b.
// Only sm_80 features; bf16 tensors are read and written 8 elements (16 B)
// at a time, so their widths are multiples of 8.

#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int WARPS_PER_ROUTER_BLOCK = 4;
constexpr int ROUTER_MAXV = 16;  // router: experts <= 32 x 16 = 512
constexpr int ALIGN_THREADS = 1024;
constexpr int ALIGN_WARPS = ALIGN_THREADS / 32;
constexpr int ALIGN_ROUNDS = 8;                            // 32-pair rounds a warp takes per chunk
constexpr int ALIGN_CHUNK = ALIGN_THREADS * ALIGN_ROUNDS;  // pairs per chunk

__device__ __forceinline__ float load_logit(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ float load_logit(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }

// better orders (value, index) pairs: the larger value, ties to the lower index.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi); }

// order_key maps a float to an unsigned of the same order (no NaN): a > b
// if and only if order_key(a) > order_key(b); -inf maps above 0.
__device__ __forceinline__ unsigned order_key(float v) {
  const unsigned u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// warp_best reduces each lane's (v, i) to the warp's best, on every lane.
__device__ __forceinline__ void warp_best(float& v, int& i) {
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, i, o);
    if (better(ov, oi, v, i)) v = ov, i = oi;
  }
}

// router_body: one warp per token; lane l holds the biased choice scores
// of experts l, l+32, ... in registers (experts <= 32 x ROUTER_MAXV). sc
// (and, for grouped selection, chs) are the warp's experts floats of shared
// memory each: the sigmoid scores and a copy of the choice scores.
template <typename T>
__device__ __forceinline__ void router_body(const T* __restrict__ logits, const float* __restrict__ bias,
                                            int* __restrict__ ids, float* __restrict__ weights, int tokens,
                                            int experts, int k, int groups, int topk_groups, int renorm,
                                            float scale) {
  extern __shared__ float router_smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = blockIdx.x * WARPS_PER_ROUTER_BLOCK + warp;
  if (t >= tokens) return;  // whole warps leave together
  float* sc = router_smem + static_cast<size_t>(warp) * 2 * experts;
  float* chs = sc + experts;
  const long long row = static_cast<long long>(t) * experts;
  float ch[ROUTER_MAXV];
#pragma unroll
  for (int j = 0; j < ROUTER_MAXV; j++) {
    const int e = lane + 32 * j;
    ch[j] = -INFINITY;
    if (e < experts) {
      const float s = 1.0f / (1.0f + expf(-load_logit(logits, row + e)));
      sc[e] = s;
      ch[j] = s + (bias != nullptr ? bias[e] : 0.0f);
    }
  }
  if (groups > 1) {
    // A group's score: the sum of its two best choice scores; keep the
    // topk_groups best groups (ties to the lower group), mask the others.
#pragma unroll
    for (int j = 0; j < ROUTER_MAXV; j++) {
      if (lane + 32 * j < experts) chs[lane + 32 * j] = ch[j];
    }
    __syncwarp();
    const int gsize = experts / groups;
    float gs = -INFINITY;
    if (lane < groups) {
      float b1 = -INFINITY, b2 = -INFINITY;
      for (int e = lane * gsize; e < (lane + 1) * gsize; e++) {
        const float v = chs[e];
        if (v > b1) {
          b2 = b1, b1 = v;
        } else if (v > b2) {
          b2 = v;
        }
      }
      gs = gsize > 1 ? b1 + b2 : b1;
    }
    bool keep = false;
    for (int j = 0; j < topk_groups; j++) {
      float v = lane < groups && !keep ? gs : -INFINITY;
      int i = lane < groups && !keep ? lane : 0x7fffffff;
      warp_best(v, i);
      if (lane == i) keep = true;
    }
    const unsigned kept = __ballot_sync(0xffffffffu, keep);
#pragma unroll
    for (int j = 0; j < ROUTER_MAXV; j++) {
      const int e = lane + 32 * j;
      if (e < experts && !((kept >> (e / gsize)) & 1u)) ch[j] = -INFINITY;
    }
  }
  __syncwarp();  // sc is read across lanes below
  // The k best choice scores, as order keys (0: taken or no expert); lane
  // j keeps the j-th expert. Each pick: the lane's best (the first of
  // equal keys: the lower expert), the warp's largest key, the lowest
  // expert holding it (two redux instructions).
  unsigned ck[ROUTER_MAXV];
#pragma unroll
  for (int q = 0; q < ROUTER_MAXV; q++) ck[q] = lane + 32 * q < experts ? order_key(ch[q]) : 0u;
  int my_id = 0;
  for (int j = 0; j < k; j++) {
    unsigned best = 0;
    int bi = 0x7fffffff;
#pragma unroll
    for (int q = 0; q < ROUTER_MAXV; q++) {
      if (ck[q] > best) best = ck[q], bi = lane + 32 * q;
    }
    const unsigned top = __reduce_max_sync(0xffffffffu, best);
    const int i = static_cast<int>(__reduce_min_sync(0xffffffffu, best == top ? static_cast<unsigned>(bi) : 0x7fffffffu));
    if (lane == j) my_id = i;
#pragma unroll
    for (int q = 0; q < ROUTER_MAXV; q++) {
      if (lane + 32 * q == i) ck[q] = 0u;
    }
  }
  const float my_w = lane < k ? sc[my_id] : 0.0f;
  float sum = my_w;
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane < k) {
    const float w = renorm ? my_w / sum : my_w;
    ids[static_cast<long long>(t) * k + lane] = my_id;
    weights[static_cast<long long>(t) * k + lane] = w * scale;
  }
}

__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const float2 x = __bfloat1622float2(h[i]);
    f[2 * i] = x.x, f[2 * i + 1] = x.y;
  }
}

__device__ __forceinline__ uint4 pack8(const float (&f)[8]) {
  uint4 v;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; i++) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return v;
}

}  // namespace

// moecast_router_f32 / _bf16: logits [tokens][experts] (fp32 or bf16), bias
// [experts] fp32 (or null), out ids [tokens][k] int32 and weights
// [tokens][k] fp32. Grid ceil(tokens/4) blocks of 128 threads, dynamic shared
// memory 4 x 2 x experts floats. experts <= 512, k <= 32, groups <= 32,
// experts % groups == 0.
extern "C" __global__ void __launch_bounds__(128)
    moecast_router_f32(const float* logits, const float* bias, int* ids, float* weights, int tokens, int experts,
                       int k, int groups, int topk_groups, int renorm, float scale) {
  router_body(logits, bias, ids, weights, tokens, experts, k, groups, topk_groups, renorm, scale);
}

extern "C" __global__ void __launch_bounds__(128)
    moecast_router_bf16(const __nv_bfloat16* logits, const float* bias, int* ids, float* weights, int tokens,
                        int experts, int k, int groups, int topk_groups, int renorm, float scale) {
  router_body(logits, bias, ids, weights, tokens, experts, k, groups, topk_groups, renorm, scale);
}

// moecast_moe_align: topk_ids [n] (n = tokens x k) -> sorted_ids, expert_ids
// and post[0] = padded rows, post[1] = blocks. One block of 1024 threads;
// dynamic shared memory (32 x (count | 1) + 4 x count) x 4 + 128 bytes;
// count <= 1024 (the host allows 512: 74 KB, within every sm_80+ GPU's limit).
//
// Pairs are taken in id order in chunks of 8192: warp w takes 256
// consecutive pairs of a chunk in 8 rounds of 32, one a lane. In a round,
// lanes with the same expert find each other (match.any) and rank
// themselves by lane after the warp's earlier pairs of that expert, which
// hist[w][e] counts; a scan of each expert's column of hist over the warps
// then gives each warp's offset, so that a pair's position is its expert's
// start + the pairs of earlier chunks + earlier warps + its rank in the
// warp: ascending ids, as AlignLocal sorts them. hist rows are count | 1
// words apart (odd: a column read is free of bank conflicts) and entries
// carry the chunk's stamp in their high 16 bits, so no chunk clears them.
extern "C" __global__ void __launch_bounds__(ALIGN_THREADS)
    moecast_moe_align(const int* __restrict__ topk_ids, int n, int first, int count, int block,
                      int* __restrict__ sorted_ids, int* __restrict__ expert_ids, int* __restrict__ post) {
  extern __shared__ int align_smem[];
  const int stride = count | 1;
  unsigned* hist = reinterpret_cast<unsigned*>(align_smem);  // [ALIGN_WARPS][stride]
  int* cnt = align_smem + ALIGN_WARPS * stride;               // pairs per expert
  int* off = cnt + count;                                     // start of each expert's run
  int* cur = off + count;                                     // pairs placed so far per expert
  int* tot = cur + count;                                     // this chunk's pairs per expert
  int* wsum = tot + count;                                    // [32] scan of the warps' sums
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  for (int i = tid; i < ALIGN_WARPS * stride; i += ALIGN_THREADS) hist[i] = 0;
  for (int e = tid; e < count; e += ALIGN_THREADS) cnt[e] = 0, cur[e] = 0;
  __syncthreads();
  for (int i = tid; i < n; i += 8 * ALIGN_THREADS) {  // 8 loads in flight a thread
    int e[8];
#pragma unroll
    for (int u = 0; u < 8; u++) e[u] = i + u * ALIGN_THREADS < n ? topk_ids[i + u * ALIGN_THREADS] - first : -1;
#pragma unroll
    for (int u = 0; u < 8; u++) {
      if (e[u] >= 0 && e[u] < count) atomicAdd(&cnt[e[u]], 1);
    }
  }
  __syncthreads();
  // Exclusive scan of the padded counts (count <= 1024: one a thread).
  const int c = tid < count ? cnt[tid] : 0;
  const int padded = (c + block - 1) / block * block;
  int incl = padded;
  for (int o = 1; o < 32; o <<= 1) {
    const int v = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += v;
  }
  if (lane == 31) wsum[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    int w = wsum[lane], wi = w;
    for (int o = 1; o < 32; o <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, wi, o);
      if (lane >= o) wi += v;
    }
    wsum[lane] = wi - w;  // exclusive
    if (lane == 31) post[0] = wi, post[1] = wi / block;
  }
  __syncthreads();
  if (tid < count) {
    const int start = incl - padded + wsum[warp];
    off[tid] = start;
    for (int b = start / block; b < (start + padded) / block; b++) expert_ids[b] = tid;
    for (int p = start + c; p < start + padded; p++) sorted_ids[p] = n;
  }
  __syncthreads();
  const unsigned lt = (1u << lane) - 1u;
  unsigned* my_hist = hist + warp * stride;
  for (int base = 0, chunk = 1; base < n; base += ALIGN_CHUNK, chunk++) {
    const unsigned stamp = static_cast<unsigned>(chunk) << 16;
    const int wbase = base + warp * 32 * ALIGN_ROUNDS;
    int es[ALIGN_ROUNDS], rk[ALIGN_ROUNDS];
#pragma unroll
    for (int r = 0; r < ALIGN_ROUNDS; r++) {  // all the warp's loads first
      const int i = wbase + r * 32 + lane;
      es[r] = i < n ? topk_ids[i] - first : -1;
      if (es[r] >= count) es[r] = -1;
      rk[r] = 0;
    }
#pragma unroll
    for (int r = 0; r < ALIGN_ROUNDS; r++) {
      const int e = es[r];
      if (wbase + r * 32 >= n) continue;  // the whole warp
      const unsigned peers = __match_any_sync(0xffffffffu, e >= 0 ? e : -1 - lane);
      const int rank = __popc(peers & lt);
      int before = 0;
      if (e >= 0) {
        const unsigned h = my_hist[e];
        before = (h & 0xffff0000u) == stamp ? static_cast<int>(h & 0xffffu) : 0;
      }
      __syncwarp();
      if (e >= 0 && rank == 0) my_hist[e] = stamp | static_cast<unsigned>(before + __popc(peers));
      __syncwarp();
      rk[r] = before + rank;
    }
    __syncthreads();
    // Scan each touched expert's column over the warps (one warp an expert).
    for (int x = warp; x < count; x += ALIGN_WARPS) {
      if (cnt[x] == 0) continue;  // the whole warp
      const unsigned h0 = hist[lane * stride + x];
      const int h = (h0 & 0xffff0000u) == stamp ? static_cast<int>(h0 & 0xffffu) : 0;
      int s = h;
      for (int o = 1; o < 32; o <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o) s += v;
      }
      hist[lane * stride + x] = stamp | static_cast<unsigned>(s - h);
      if (lane == 31) tot[x] = s;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ALIGN_ROUNDS; r++) {
      const int e = es[r];
      if (e >= 0) sorted_ids[off[e] + cur[e] + static_cast<int>(my_hist[e] & 0xffffu) + rk[r]] = wbase + r * 32 + lane;
    }
    __syncthreads();
    for (int x = tid; x < count; x += ALIGN_THREADS) {
      if (cnt[x] > 0) cur[x] += tot[x];
    }
  }
}

// moecast_silu_and_mul: x [rows][2n] bf16 -> out [rows][n] bf16, out =
// silu(x[:, :n]) * x[:, n:]; n % 8 == 0. Any grid of 256-thread blocks.
extern "C" __global__ void __launch_bounds__(256)
    moecast_silu_and_mul(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int rows, int n) {
  const int vn = n / 8;
  const long long total = static_cast<long long>(rows) * vn;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < total;
       v += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = v / vn;
    const int c = static_cast<int>(v % vn);
    const uint4* in = reinterpret_cast<const uint4*>(x + r * 2 * n);
    float g[8], u[8], o[8];
    unpack8(in[c], g);
    unpack8(in[vn + c], u);
#pragma unroll
    for (int j = 0; j < 8; j++) o[j] = g[j] / (1.0f + expf(-g[j])) * u[j];
    reinterpret_cast<uint4*>(out + r * n)[c] = pack8(o);
  }
}

// moecast_swiglu_oai: gpt-oss's clamped SwiGLU, as vLLM's swigluoai_and_mul
// (csrc/activation_kernels.cu: gate and up interleaved, gate at even and up
// at odd columns): x [rows][2n] bf16 -> out [rows][n] bf16, g = min(gate,
// limit), u = clamp(up, -limit, limit), out = (u + 1) * g * sigmoid(alpha *
// g); n % 8 == 0. Any grid of 256-thread blocks.
extern "C" __global__ void __launch_bounds__(256)
    moecast_swiglu_oai(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int rows, int n,
                       float alpha, float limit) {
  const int vn = n / 8;
  const long long total = static_cast<long long>(rows) * vn;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < total;
       v += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = v / vn;
    const int c = static_cast<int>(v % vn);
    const uint4* in = reinterpret_cast<const uint4*>(x + r * 2 * n);
    float a[8], b[8], o[8];
    unpack8(in[2 * c], a);      // pairs 0-3 of this thread's 8 outputs
    unpack8(in[2 * c + 1], b);  // pairs 4-7
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const float gate = j < 4 ? a[2 * j] : b[2 * (j - 4)];
      const float up = j < 4 ? a[2 * j + 1] : b[2 * (j - 4) + 1];
      const float g = fminf(gate, limit);
      const float u = fminf(fmaxf(up, -limit), limit);
      o[j] = (u + 1.0f) * (g / (1.0f + expf(-alpha * g)));
    }
    reinterpret_cast<uint4*>(out + r * n)[c] = pack8(o);
  }
}

// moecast_moe_sum: y [tokens*k][h] bf16, weights [tokens*k] fp32, topk_ids
// [tokens*k] -> out [tokens][h] bf16: the weighted sum of each token's
// slots routed to the local experts [first, first+count); h % 8 == 0.
extern "C" __global__ void __launch_bounds__(256)
    moecast_moe_sum(const __nv_bfloat16* __restrict__ y, const float* __restrict__ weights,
                    const int* __restrict__ topk_ids, __nv_bfloat16* __restrict__ out, int tokens, int k, int h,
                    int first, int count) {
  const int vh = h / 8;
  const long long total = static_cast<long long>(tokens) * vh;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < total;
       v += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long t = v / vh;
    const int c = static_cast<int>(v % vh);
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int s = 0; s < k; s++) {
      const long long id = t * k + s;
      const int e = topk_ids[id] - first;
      if (e < 0 || e >= count) continue;
      const float w = weights[id];
      float f[8];
      unpack8(reinterpret_cast<const uint4*>(y + id * h)[c], f);
#pragma unroll
      for (int j = 0; j < 8; j++) acc[j] += w * f[j];
    }
    reinterpret_cast<uint4*>(out + t * h)[c] = pack8(acc);
  }
}

// moecast_rmsnorm: x [tokens][h] bf16, weight [h] bf16 -> out; one block a
// token (any multiple of 32 threads up to 1024), h % 8 == 0.
extern "C" __global__ void __launch_bounds__(1024)
    moecast_rmsnorm(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ weight,
                    __nv_bfloat16* __restrict__ out, int h, float eps) {
  __shared__ float red[32];
  const int vh = h / 8;
  const uint4* row = reinterpret_cast<const uint4*>(x + static_cast<long long>(blockIdx.x) * h);
  float ss = 0.0f;
  for (int c = threadIdx.x; c < vh; c += blockDim.x) {
    float f[8];
    unpack8(row[c], f);
#pragma unroll
    for (int j = 0; j < 8; j++) ss += f[j] * f[j];
  }
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) red[0] = rsqrtf(v / static_cast<float>(h) + eps);
  }
  __syncthreads();
  const float r = red[0];
  uint4* dst = reinterpret_cast<uint4*>(out + static_cast<long long>(blockIdx.x) * h);
  const uint4* w = reinterpret_cast<const uint4*>(weight);
  for (int c = threadIdx.x; c < vh; c += blockDim.x) {
    float f[8], g[8];
    unpack8(row[c], f);
    unpack8(w[c], g);
#pragma unroll
    for (int j = 0; j < 8; j++) f[j] = f[j] * r * g[j];
    dst[c] = pack8(f);
  }
}

// moecast_add: out = a + b over n bf16 elements (n % 8 == 0; out may be a).
extern "C" __global__ void __launch_bounds__(256)
    moecast_add(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, long long n) {
  const long long vn = n / 8;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < vn;
       v += static_cast<long long>(gridDim.x) * blockDim.x) {
    float f[8], g[8];
    unpack8(reinterpret_cast<const uint4*>(a)[v], f);
    unpack8(reinterpret_cast<const uint4*>(b)[v], g);
#pragma unroll
    for (int j = 0; j < 8; j++) f[j] += g[j];
    reinterpret_cast<uint4*>(out)[v] = pack8(f);
  }
}
