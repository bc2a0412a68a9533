// Attention forward, fp8 e4m3 in, bf16 out, head dim 128, for sm_90a (design in
// README.md beside this file). Two launches:
//  1. attn_fp8_vt: fp8 wgmma takes both operands K-major, so P·V needs Vᵀ. One
//     CTA per 128-key tile of a head writes the tile's Vᵀ to scratch as the exact
//     shared-memory image the main kernel's wgmma reads (128 rows of head-dim
//     columns × 128 keys, 128-byte swizzle), the keys of every 16 permuted so
//     that P's accumulator registers are its A fragments as they stand
//     (attention_fp8_layout.cuh).
//  2. attn_fwd_fp8: the bf16 forward's structure (producer warpgroup, two
//     consumer warpgroups of 64 query rows, Q·Kᵀ of block j+1 in flight during
//     the softmax of block j) with wgmma m64n128k32 e4m3, Q and K by TMA and the
//     Vᵀ images by cp.async.bulk. P is taken ×256 into e4m3 (out of its
//     subnormal range; l carries the factor, so O needs no descale), and each
//     block's P·V lands in a fresh accumulator added to O in fp32.
// Macros: ATTN_CAUSAL. S is a multiple of 128 (the tasks' constraint).
#include <cstdint>

#ifndef ATTN_CAUSAL
#define ATTN_CAUSAL 0
#endif

#include "../common/hopper_ptx.cuh"
#include "../common/wgmma_ptx.cuh"
#include "attention_fp8_layout.cuh"
#include "attention_fwd_index.cuh"
#include "attention_softmax.cuh"

namespace {
constexpr int kD = 128;
constexpr int kTile = 128;                  // query rows per CTA, keys per K/V tile
constexpr int kTileBytes = kTile * kD;      // e4m3: 16 KB
constexpr int kSmemQ = 0;
constexpr int kSmemK = kTileBytes;          // two stages
constexpr int kSmemV = 3 * kTileBytes;      // two stages of Vᵀ images
constexpr int kSmemBar = 5 * kTileBytes;
constexpr int kSharedBytes = kSmemBar + 128 + 1024;  // the manifest's shared_bytes
constexpr int kLog2Boost = 8;               // P·256
static_assert(kSharedBytes <= 232448, "shared memory of one CTA");
using cfg = attn::fwd_config<kTile, kTile, kD, ATTN_CAUSAL, false, false, false, false>;
using wgmma_f8 = wgmma_e4m3<128>;
}  // namespace

extern "C" __global__ void __launch_bounds__(256)
    attn_fp8_vt(const uint8_t* __restrict__ v, uint8_t* __restrict__ vt, int seq_len) {
  __shared__ __align__(16) uint8_t tile[kTile * kD];
  const int kb = blockIdx.x, bh = blockIdx.y;
  const size_t first = ((size_t)bh * seq_len + (size_t)kb * kTile) * kD;
  const uint4* src = reinterpret_cast<const uint4*>(v + first);
#pragma unroll
  for (int i = 0; i < 4; ++i)
    reinterpret_cast<uint4*>(tile)[threadIdx.x + 256 * i] = src[threadIdx.x + 256 * i];
  __syncthreads();
  // Chunk ci of the image: 16 bytes of row d = ci % 128 (a warp: 32 consecutive d).
  uint8_t* dst = vt + first;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int ci = threadIdx.x + 256 * i, d = ci % kD, chunk = ci / kD;
    uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      w[q] = 0;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = attn::vt_key(chunk, 4 * q + e);
        w[q] |= uint32_t(tile[key * kD + d]) << (8 * e);
      }
    }
    *reinterpret_cast<uint4*>(dst + attn::vt_offset(d, chunk)) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

DEVI void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

// s = Q_wg · K_tileᵀ (64 rows × 128 keys over 128 e4m3 columns, issue only).
DEVI void issue_qk(float (&s)[64], uint32_t q_base, uint32_t k_base) {
#pragma unroll
  for (int kk = 0; kk < kD / 32; ++kk)
    wgmma_f8::ss(s, make_desc(q_base + kk * 32, 16, 1024), make_desc(k_base + kk * 32, 16, 1024),
                 kk > 0);
}

// t = P · V_tile into a fresh accumulator (issue only); the Vᵀ image is the
// K-major B operand, its keys in the order of P's fragments.
DEVI void issue_pv(float (&t)[64], const uint32_t (&p)[16], uint32_t v_base) {
#pragma unroll
  for (int kk = 0; kk < kTile / 32; ++kk) {
    const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
    wgmma_f8::rs(t, a, make_desc(v_base + kk * 32, 16, 1024), kk > 0);
  }
}

DEVI void mask_tile(float (&s)[64], const attn::cta_work& w, int kb, int n_kv, int r0, int c2) {
  if (attn::tile_needs_mask<cfg>(w, kb, n_kv))
    attn::mask_after(s, attn::last_key<cfg>(w, kb, r0), attn::last_key<cfg>(w, kb, r0 + 8), c2);
}

#include "attention_fwd_fp8_consumer.cuh"

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_fwd_fp8(const __grid_constant__ tensor_map_t map_q,
                 const __grid_constant__ tensor_map_t map_k, const uint8_t* __restrict__ vt,
                 uint16_t* __restrict__ out, float* __restrict__ lse, int seq_len, float scale,
                 float scale_q, float scale_k, float scale_v) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~uintptr_t(1023));
  const uint32_t base = smem_u32(smem);
  const uint32_t bar_q = base + kSmemBar;
  const uint32_t bar_k_full = bar_q + 8, bar_k_empty = bar_q + 24;  // [2] each
  const uint32_t bar_v_full = bar_q + 40, bar_v_empty = bar_q + 56;

  const int m_blk = cfg::causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const attn::cta_work w =
      attn::locate<cfg>(m_blk, blockIdx.y, 0, gridDim.y, 1, seq_len, 0, nullptr);
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
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    if (threadIdx.x == 0) {
      mbar_expect_tx(bar_q, kTileBytes);
      tma_load_2d(base + kSmemQ, &map_q, bar_q, 0, w.q_row);
      const uint8_t* vt_head = vt + (size_t)w.kv_row * kD;  // the head's images, in key order
      for (int kb = 0; kb < n_kv; ++kb) {
        const int s = kb & 1;
        const uint32_t phase = (kb >> 1) & 1;
        if (kb >= 2) mbar_wait(bar_k_empty + 8 * s, phase ^ 1);
        mbar_expect_tx(bar_k_full + 8 * s, kTileBytes);
        tma_load_2d(base + kSmemK + s * kTileBytes, &map_k, bar_k_full + 8 * s, 0,
                    w.kv_row + kb * kTile);
        if (kb >= 2) mbar_wait(bar_v_empty + 8 * s, phase ^ 1);
        mbar_expect_tx(bar_v_full + 8 * s, kTileBytes);
        bulk_load(base + kSmemV + s * kTileBytes, vt_head + (size_t)kb * kTileBytes, kTileBytes,
                  bar_v_full + 8 * s);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    consume(base, w, n_kv, out, lse, scale * scale_q * scale_k * attn::kLog2e, scale_v);
  }
}
