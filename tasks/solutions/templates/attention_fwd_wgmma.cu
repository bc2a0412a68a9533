// Attention forward, bf16, FlashAttention-3 style, for sm_90a: the template of
// the wgmma forward tasks (design in README.md beside this file).
//
// One CTA computes a 128-row query tile of one (batch, head). Warpgroup 0 is
// the producer: one thread loads Q once and streams K and V tiles through a
// two-stage TMA + mbarrier ring. Warpgroups 1 and 2 each own 64 query rows:
// S = Q·Kᵀ with wgmma (both operands in shared memory), online softmax in
// registers, then O += P·V with P taken straight from the S accumulators as the
// register A operand. Within a warpgroup the next block's Q·Kᵀ and this block's
// P·V are in flight while the softmax runs.
//
// Macros (each task's solution.json sets them):
//   ATTN_HEAD_DIM  64 | 128 | 256 (256: 64-key K/V tiles, to fit shared memory)
//   ATTN_CAUSAL    key j attends query i iff j <= i
//   ATTN_GQA       K/V have kv_heads heads; query head h reads h / (H / kv_heads)
//   ATTN_SEQ_ANY   S any: 3-D tensor maps [B*H(KV), S, D] (TMA fills rows past S
//                  with zeros), keys >= S masked to -inf, rows >= S not stored
//   ATTN_VARLEN    packed [T, H(KV), D] rows with cu_seqlens (2-D maps [T, H*D]);
//                  masked like ATTN_SEQ_ANY with each sequence's own length
// Grid: [cdiv(S, 128), B*H] (ATTN_GQA / ATTN_SEQ_ANY / ATTN_VARLEN: [cdiv(S,128), H, B]),
// 384 threads, kSharedBytes of dynamic shared memory.
#include <cstdint>

#ifndef ATTN_HEAD_DIM
#define ATTN_HEAD_DIM 128
#endif
#ifndef ATTN_CAUSAL
#define ATTN_CAUSAL 0
#endif
#ifndef ATTN_GQA
#define ATTN_GQA 0
#endif
#ifndef ATTN_SEQ_ANY
#define ATTN_SEQ_ANY 0
#endif
#ifndef ATTN_VARLEN
#define ATTN_VARLEN 0
#endif

#include "../common/hopper_ptx.cuh"
#include "../common/wgmma_ptx.cuh"
#include "attention_fwd_index.cuh"
#include "attention_softmax.cuh"

namespace {
constexpr int kD = ATTN_HEAD_DIM;
constexpr int kBlockM = 128;                     // query rows per CTA
constexpr int kBlockN = kD == 256 ? 64 : 128;    // keys per K/V tile
constexpr int kHalves = kD / 64;                 // 64-column (128-byte) boxes per row
constexpr int kQHalfBytes = kBlockM * 128;
constexpr int kKvHalfBytes = kBlockN * 128;
constexpr int kQBytes = kHalves * kQHalfBytes;
constexpr int kKvBytes = kHalves * kKvHalfBytes;
constexpr int kSmemQ = 0;
constexpr int kSmemK = kQBytes;                  // two stages
constexpr int kSmemV = kSmemK + 2 * kKvBytes;    // two stages
constexpr int kSmemBar = kSmemV + 2 * kKvBytes;
// The manifest's shared_bytes: tiles, barriers, and the 1 KB alignment slack.
constexpr int kSharedBytes = kSmemBar + 128 + 1024;
constexpr int kNS = kBlockN / 2;                 // score accumulators per thread
constexpr int kNO = kD / 2;                      // output accumulators per thread
constexpr bool kCausal = ATTN_CAUSAL;
constexpr bool kMasked = ATTN_SEQ_ANY || ATTN_VARLEN;  // lengths not tile multiples
constexpr bool kMap3d = ATTN_SEQ_ANY && !ATTN_VARLEN;
using cfg = attn::fwd_config<kBlockM, kBlockN, kD, kCausal, ATTN_GQA, kMap3d, ATTN_VARLEN,
                             ATTN_GQA || ATTN_SEQ_ANY || ATTN_VARLEN>;
static_assert(kD == 64 || kD == 128 || kD == 256, "head dim 64, 128 or 256");
static_assert(kSharedBytes <= 232448, "shared memory of one CTA");
using wgmma_qk = wgmma_bf16<kBlockN, 0, 0>;
using wgmma_pv = wgmma_bf16<kD, 0, 1>;
}  // namespace

// Loads the kHalves 64-column boxes of a tile of `rows` rows; (c0, row, z) is
// the first row's coordinate in the tensor map (z only for 3-D maps).
template <int kRows>
DEVI void load_tile(uint32_t dst, const tensor_map_t* map, uint32_t bar, int c0, int row, int z) {
  mbar_expect_tx(bar, kHalves * kRows * 128);
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    if constexpr (kMap3d)
      tma_load_3d(dst + h * kRows * 128, map, bar, c0 + 64 * h, row, z);
    else
      tma_load_2d(dst + h * kRows * 128, map, bar, c0 + 64 * h, row);
  }
}

// s = Q_wg · K_tileᵀ for this warpgroup's 64 query rows (issue only).
DEVI void issue_qk(float (&s)[kNS], uint32_t q_base, uint32_t k_base) {
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    const uint32_t col = (kk & 3) * 32;
    wgmma_qk::ss(s, make_desc(q_base + (kk >> 2) * kQHalfBytes + col, 16, 1024),
                 make_desc(k_base + (kk >> 2) * kKvHalfBytes + col, 16, 1024), kk > 0);
  }
}

// o += P · V_tile with P as bf16 register fragments (issue only); V is the
// N-major B operand, 64-column boxes kKvHalfBytes apart.
DEVI void issue_pv(float (&o)[kNO], const uint32_t (&p)[kNS / 2], uint32_t v_base) {
#pragma unroll
  for (int kk = 0; kk < kBlockN / 16; ++kk) {
    const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
    wgmma_pv::rs(o, a, make_desc(v_base + kk * 2048, kKvHalfBytes, 1024));
  }
}

// Masks key tile kb in place where it holds keys after the diagonal or past the
// sequence's end (rows r0, r0 + 8 of the tile; c2 the thread's column pair).
DEVI void mask_tile(float (&s)[kNS], const attn::cta_work& w, int kb, int n_kv, int r0, int c2) {
  if (attn::tile_needs_mask<cfg>(w, kb, n_kv))
    attn::mask_after(s, attn::last_key<cfg>(w, kb, r0), attn::last_key<cfg>(w, kb, r0 + 8), c2);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_fwd(const __grid_constant__ tensor_map_t map_q,
             const __grid_constant__ tensor_map_t map_k,
             const __grid_constant__ tensor_map_t map_v, uint16_t* __restrict__ out,
             float* __restrict__ lse,
#if ATTN_VARLEN
             const int* __restrict__ cu_seqlens,
#endif
             int seq_len,
#if ATTN_GQA
             int kv_heads,
#endif
             float scale) {
#if !ATTN_VARLEN
  const int* cu_seqlens = nullptr;
#endif
#if !ATTN_GQA
  const int kv_heads = 0;
#endif
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~uintptr_t(1023));
  const uint32_t base = smem_u32(smem);
  const uint32_t bar_q = base + kSmemBar;
  const uint32_t bar_k_full = bar_q + 8;    // [2]
  const uint32_t bar_k_empty = bar_q + 24;  // [2]
  const uint32_t bar_v_full = bar_q + 40;   // [2]
  const uint32_t bar_v_empty = bar_q + 56;  // [2]

  const int m_blk = kCausal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const attn::cta_work w = attn::locate<cfg>(m_blk, blockIdx.y, blockIdx.z, gridDim.y, gridDim.z,
                                        seq_len, kv_heads, cu_seqlens);
  if (kMasked && w.m0 >= w.len) return;  // a tile past a short sequence's end
  const int n_kv = attn::key_tiles<cfg>(w);

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
      load_tile<kBlockM>(base + kSmemQ, &map_q, bar_q, w.q_c0, w.q_row, w.q_z);
      for (int kb = 0; kb < n_kv; ++kb) {
        const int s = kb & 1;
        const uint32_t phase = (kb >> 1) & 1;
        const int row = w.kv_row + kb * kBlockN;
        if (kb >= 2) mbar_wait(bar_k_empty + 8 * s, phase ^ 1);
        load_tile<kBlockN>(base + kSmemK + s * kKvBytes, &map_k, bar_k_full + 8 * s, w.kv_c0, row,
                           w.kv_z);
        if (kb >= 2) mbar_wait(bar_v_empty + 8 * s, phase ^ 1);
        load_tile<kBlockN>(base + kSmemV + s * kKvBytes, &map_v, bar_v_full + 8 * s, w.kv_c0, row,
                           w.kv_z);
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
    const float scale_log2 = scale * attn::kLog2e;
    const uint32_t q_base = base + kSmemQ + wg * 8192;

    float o[kNO];
#pragma unroll
    for (int i = 0; i < kNO; ++i) o[i] = 0.f;
    float m[2] = {attn::kNegInf, attn::kNegInf}, l[2] = {0.f, 0.f}, alpha[2];
    float s[kNS];
    uint32_t p[kNS / 2];

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
    mask_tile(s, w, 0, n_kv, r0, c2);
    attn::softmax_step(s, m, l, alpha, scale_log2);
    attn::to_bf16_frags(s, p);
    for (int kb = 1; kb < n_kv; ++kb) {
      const int st = kb & 1, sp = st ^ 1;
      const uint32_t phase = (kb >> 1) & 1, phase_prev = ((kb - 1) >> 1) & 1;
      mbar_wait(bar_k_full + 8 * st, phase);
      fence_regs(s);
      fence_regs(o);
      fence_regs(p);
      wgmma_fence();
      issue_qk(s, q_base, base + kSmemK + st * kKvBytes);
      wgmma_commit();
      mbar_wait(bar_v_full + 8 * sp, phase_prev);
      wgmma_fence();
      issue_pv(o, p, base + kSmemV + sp * kKvBytes);
      wgmma_commit();
      wgmma_wait<1>();
      fence_regs(s);
      mbar_arrive(bar_k_empty + 8 * st);
      mask_tile(s, w, kb, n_kv, r0, c2);
      attn::softmax_step(s, m, l, alpha, scale_log2);
      wgmma_wait<0>();
      fence_regs(o);
      fence_regs(p);
      mbar_arrive(bar_v_empty + 8 * sp);
      attn::rescale_o(o, alpha);
      attn::to_bf16_frags(s, p);
    }
    {
      const int sp = (n_kv - 1) & 1;
      mbar_wait(bar_v_full + 8 * sp, ((n_kv - 1) >> 1) & 1);
      fence_regs(o);
      fence_regs(p);
      wgmma_fence();
      issue_pv(o, p, base + kSmemV + sp * kKvBytes);
      wgmma_commit();
      wgmma_wait<0>();
      fence_regs(o);
      fence_regs(p);
      mbar_arrive(bar_v_empty + 8 * sp);
    }

    // Epilogue: normalise, write O and LSE (natural log) of the tile's valid rows.
    attn::reduce_row_sums(l);
    const float inv0 = 1.f / l[0], inv1 = 1.f / l[1];
    const bool ok0 = !kMasked || w.m0 + r0 < w.len;
    const bool ok1 = !kMasked || w.m0 + r0 + 8 < w.len;
    uint16_t* o0 = out + w.o_row0 + (size_t)r0 * w.o_stride + c2;
    uint16_t* o1 = o0 + 8 * (size_t)w.o_stride;
#pragma unroll
    for (int j = 0; j < kNO / 4; ++j) {
      if (ok0)
        *reinterpret_cast<uint32_t*>(o0 + 8 * j) = pack_bf16(o[4 * j] * inv0, o[4 * j + 1] * inv0);
      if (ok1)
        *reinterpret_cast<uint32_t*>(o1 + 8 * j) =
            pack_bf16(o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
    }
    if ((lane & 3) == 0) {
      if (ok0) lse[w.lse0 + r0] = (m[0] + __log2f(l[0])) * attn::kLn2;
      if (ok1) lse[w.lse0 + r0 + 8] = (m[1] + __log2f(l[1])) * attn::kLn2;
    }
  }
}
