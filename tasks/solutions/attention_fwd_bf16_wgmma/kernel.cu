// Attention forward, bf16, head dim 128, FlashAttention-3 style, for sm_90a.
//
// One CTA computes a 128-row query tile of one (batch, head). Warpgroup 0 is
// the producer: one thread loads Q once and streams 128-key K and V tiles
// through a two-stage TMA + mbarrier ring. Warpgroups 1 and 2 each own 64
// query rows: S = Q·Kᵀ with wgmma (both operands in shared memory), online
// softmax in registers (base-2 exponentials, the softmax scale folded into
// log2(e)·scale), then O += P·V with P taken straight from the S accumulators
// as the register A operand of wgmma. Within a warpgroup the next block's
// Q·Kᵀ and this block's P·V are in flight while the softmax runs.
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -ptx kernel.cu
// Define ATTN_CAUSAL=1 for the causal variant (key j attends query i iff j <= i).
#include <cstdint>

#ifndef ATTN_CAUSAL
#define ATTN_CAUSAL 0
#endif

#include "../common/hopper_ptx.cuh"
#include "../common/attention_ptx.cuh"

// D (+)= A·B, A and B from shared memory (descriptors); 64x128x16, bf16 in, f32 accumulate.
template <int TA, int TB>
DEVI void wgmma_m64n128k16_ss(float (&d)[64], uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, %67, %68;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
}

namespace {
constexpr int kTile = 128;                  // query rows per CTA and keys per K/V tile
constexpr int kHalfBytes = 128 * 64 * 2;    // one [128 rows][64 cols] bf16 box, 16 KB
constexpr int kTileBytes = 2 * kHalfBytes;  // a full [128][128] tile in two 64-column halves
constexpr int kSmemQ = 0;
constexpr int kSmemK = kTileBytes;          // two stages
constexpr int kSmemV = 3 * kTileBytes;      // two stages
constexpr int kSmemBar = 5 * kTileBytes;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -__builtin_huge_valf();
}  // namespace

// Loads both 64-column halves of a [128][128] tile at row `row` of the
// [B*H*S, 128] view into dst (128-byte swizzled).
DEVI void load_tile(uint32_t dst, const tensor_map_t* map, uint32_t bar, int row) {
  mbar_expect_tx(bar, kTileBytes);
  tma_load_2d(dst, map, bar, 0, row);
  tma_load_2d(dst + kHalfBytes, map, bar, 64, row);
}

// s[64] = Q_wg · K_tileᵀ for this warpgroup's 64 query rows (issue only).
DEVI void issue_qk(float (&s)[64], uint32_t q_base, uint32_t k_base) {
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    uint32_t off = (kk >> 2) * kHalfBytes + (kk & 3) * 32;
    wgmma_m64n128k16_ss<0, 0>(s, make_desc(q_base + off, 16, 1024),
                              make_desc(k_base + off, 16, 1024), kk > 0);
  }
}

// o[64] += P · V_tile with P as bf16 register fragments (issue only).
DEVI void issue_pv(float (&o)[64], const uint32_t (&p)[32], uint32_t v_base) {
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
    wgmma_m64n128k16_rs<1>(o, a, make_desc(v_base + kk * 2048, kHalfBytes, 1024));
  }
}

// Causal mask inside the diagonal block: column c attends row r iff c <= r.
DEVI void mask_diagonal(float (&s)[64], int r0, int c2) {
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    int c = 8 * j + c2;
    if (c > r0) s[4 * j] = kNegInf;
    if (c + 1 > r0) s[4 * j + 1] = kNegInf;
    if (c > r0 + 8) s[4 * j + 2] = kNegInf;
    if (c + 1 > r0 + 8) s[4 * j + 3] = kNegInf;
  }
}

// Online-softmax step: turns s into unnormalised probabilities (in place),
// updates the running max m (log2 units) and partial row sums l, and returns
// the factors by which the previous O rows must be rescaled.
DEVI void softmax_step(float (&s)[64], float (&m)[2], float (&l)[2], float (&alpha)[2],
                       float scale_log2) {
  float mx0 = kNegInf, mx1 = kNegInf;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    mx0 = fmaxf(mx0, fmaxf(s[4 * j], s[4 * j + 1]));
    mx1 = fmaxf(mx1, fmaxf(s[4 * j + 2], s[4 * j + 3]));
  }
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
  const float n0 = fmaxf(m[0], mx0 * scale_log2);
  const float n1 = fmaxf(m[1], mx1 * scale_log2);
  alpha[0] = ex2(m[0] - n0);
  alpha[1] = ex2(m[1] - n1);
  m[0] = n0;
  m[1] = n1;
  float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    s[4 * j] = ex2(fmaf(s[4 * j], scale_log2, -n0));
    s[4 * j + 1] = ex2(fmaf(s[4 * j + 1], scale_log2, -n0));
    s[4 * j + 2] = ex2(fmaf(s[4 * j + 2], scale_log2, -n1));
    s[4 * j + 3] = ex2(fmaf(s[4 * j + 3], scale_log2, -n1));
    sum0 += s[4 * j] + s[4 * j + 1];
    sum1 += s[4 * j + 2] + s[4 * j + 3];
  }
  l[0] = l[0] * alpha[0] + sum0;
  l[1] = l[1] * alpha[1] + sum1;
}

DEVI void rescale_o(float (&o)[64], const float (&alpha)[2]) {
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    o[4 * j] *= alpha[0];
    o[4 * j + 1] *= alpha[0];
    o[4 * j + 2] *= alpha[1];
    o[4 * j + 3] *= alpha[1];
  }
}

// The S accumulator layout of m64nNk16 matches the A-fragment layout of the
// next wgmma: consecutive pairs become bf16x2 registers.
DEVI void to_bf16_frags(const float (&s)[64], uint32_t (&p)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) p[i] = pack_bf16(s[2 * i], s[2 * i + 1]);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_fwd(const __grid_constant__ tensor_map_t map_q,
                     const __grid_constant__ tensor_map_t map_k,
                     const __grid_constant__ tensor_map_t map_v, uint16_t* __restrict__ out,
                     float* __restrict__ lse, int seq_len, float scale) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~uintptr_t(1023));
  const uint32_t base = smem_u32(smem);
  const uint32_t bar_q = base + kSmemBar;
  const uint32_t bar_k_full = bar_q + 8;    // [2]
  const uint32_t bar_k_empty = bar_q + 24;  // [2]
  const uint32_t bar_v_full = bar_q + 40;   // [2]
  const uint32_t bar_v_empty = bar_q + 56;  // [2]

  const int bh = blockIdx.y;
  const int m_blk = ATTN_CAUSAL ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const int n_kv = ATTN_CAUSAL ? m_blk + 1 : seq_len / kTile;
  const int row0 = bh * seq_len;  // first row of this (b, h) in the [B*H*S, D] view

  if (threadIdx.x == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < 2; ++s) {
      mbar_init(bar_k_full + 8 * s, 1);
      mbar_init(bar_v_full + 8 * s, 1);
      mbar_init(bar_k_empty + 8 * s, 256);
      mbar_init(bar_v_empty + 8 * s, 256);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // Producer warpgroup: one thread drives the TMA ring.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    if (threadIdx.x == 0) {
      load_tile(base + kSmemQ, &map_q, bar_q, row0 + m_blk * kTile);
      for (int kb = 0; kb < n_kv; ++kb) {
        const int s = kb & 1;
        const uint32_t phase = (kb >> 1) & 1;
        if (kb >= 2) mbar_wait(bar_k_empty + 8 * s, phase ^ 1);
        load_tile(base + kSmemK + s * kTileBytes, &map_k, bar_k_full + 8 * s, row0 + kb * kTile);
        if (kb >= 2) mbar_wait(bar_v_empty + 8 * s, phase ^ 1);
        load_tile(base + kSmemV + s * kTileBytes, &map_v, bar_v_full + 8 * s, row0 + kb * kTile);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    const int tid = threadIdx.x - 128;
    const int wg = tid >> 7;
    const int warp = (tid >> 5) & 3;
    const int lane = tid & 31;
    const int r0 = wg * 64 + warp * 16 + (lane >> 2);  // row in the tile; r0 + 8 is the other
    const int c2 = 2 * (lane & 3);
    const float scale_log2 = scale * kLog2e;
    const uint32_t q_base = base + kSmemQ + wg * 8192;

    float o[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] = 0.f;
    float m[2] = {kNegInf, kNegInf}, l[2] = {0.f, 0.f}, alpha[2];
    float s[64];
    uint32_t p[32];

    mbar_wait(bar_q, 0);
    // Block 0: scores and softmax only.
    mbar_wait(bar_k_full, 0);
    fence_regs(s);
    wgmma_fence();
    issue_qk(s, q_base, base + kSmemK);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(s);
    mbar_arrive(bar_k_empty);
    if (ATTN_CAUSAL && n_kv == 1) mask_diagonal(s, r0, c2);
    softmax_step(s, m, l, alpha, scale_log2);
    to_bf16_frags(s, p);
    for (int kb = 1; kb < n_kv; ++kb) {
      const int st = kb & 1, sp = st ^ 1;
      const uint32_t phase = (kb >> 1) & 1, phase_prev = ((kb - 1) >> 1) & 1;
      mbar_wait(bar_k_full + 8 * st, phase);
      fence_regs(s);
      fence_regs(o);
      fence_regs(p);
      wgmma_fence();
      issue_qk(s, q_base, base + kSmemK + st * kTileBytes);
      wgmma_commit();
      mbar_wait(bar_v_full + 8 * sp, phase_prev);
      wgmma_fence();
      issue_pv(o, p, base + kSmemV + sp * kTileBytes);
      wgmma_commit();
      wgmma_wait<1>();
      fence_regs(s);
      mbar_arrive(bar_k_empty + 8 * st);
      if (ATTN_CAUSAL && kb == n_kv - 1) mask_diagonal(s, r0, c2);
      softmax_step(s, m, l, alpha, scale_log2);
      wgmma_wait<0>();
      fence_regs(o);
      fence_regs(p);
      mbar_arrive(bar_v_empty + 8 * sp);
      rescale_o(o, alpha);
      to_bf16_frags(s, p);
    }
    {
      const int sp = (n_kv - 1) & 1;
      mbar_wait(bar_v_full + 8 * sp, ((n_kv - 1) >> 1) & 1);
      fence_regs(o);
      fence_regs(p);
      wgmma_fence();
      issue_pv(o, p, base + kSmemV + sp * kTileBytes);
      wgmma_commit();
      wgmma_wait<0>();
      fence_regs(o);
      fence_regs(p);
      mbar_arrive(bar_v_empty + 8 * sp);
    }

    // Epilogue: finish the row sums across the quad, normalise, write O and LSE.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    const float inv0 = 1.f / l[0], inv1 = 1.f / l[1];
    const size_t grow0 = (size_t)row0 + (size_t)m_blk * kTile + r0;
    uint16_t* o0 = out + grow0 * 128 + c2;
    uint16_t* o1 = o0 + 8 * 128;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      *reinterpret_cast<uint32_t*>(o0 + 8 * j) = pack_bf16(o[4 * j] * inv0, o[4 * j + 1] * inv0);
      *reinterpret_cast<uint32_t*>(o1 + 8 * j) =
          pack_bf16(o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
    }
    if ((lane & 3) == 0) {
      lse[grow0] = (m[0] + __log2f(l[0])) * kLn2;
      lse[grow0 + 8] = (m[1] + __log2f(l[1])) * kLn2;
    }
  }
}
