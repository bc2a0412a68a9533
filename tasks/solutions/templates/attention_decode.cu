// Decode attention, bf16, head dim 128, for sm_90a: split-KV with a combine
// launch (design in README.md beside this file).
//
//  1. attn_decode_split, grid [cdiv(S, chunk), B*HKV], 160 threads: CTA (s, b·HKV + hk)
//     takes keys [s·chunk, min(S, (s+1)·chunk)) of KV head hk and the (up to 8)
//     query heads that read it. Warp 4 streams 64-key K and V tiles by TMA
//     (3-D maps [B*HKV, S, D]: keys past S arrive as zeros) through a
//     three-stage mbarrier ring. Warps 0-3 (one warpgroup) compute, per tile,
//     Sᵀ = K·Qᵀ with wgmma m64n8k16 (keys as M, the group's queries as N = 8:
//     a single query wastes 7/8 of a small product instead of 63/64 of one with
//     queries as M), the online softmax per query column (max across the four
//     warps through shared memory), Pᵀ to shared memory, and Oᵀ += Vᵀ·Pᵀ (V
//     read transposed from its TMA tile). The split's normalised O and its
//     log2-sum-exp go to fp32 scratch.
//  2. attn_decode_combine, grid [B*H], 128 threads: one thread per column.
//
// Macros: ATTN_DECODE_CHUNK (keys per split, a multiple of 64).
#include <cstdint>

#ifndef ATTN_DECODE_CHUNK
#define ATTN_DECODE_CHUNK 1024
#endif

#include "../common/hopper_ptx.cuh"
#include "../common/wgmma_ptx.cuh"
#include "attention_decode_index.cuh"
#include "attention_softmax.cuh"

namespace {
constexpr int kD = 128;
constexpr int kChunk = ATTN_DECODE_CHUNK;
constexpr int kTile = 64;                     // keys per K/V tile
constexpr int kStages = 3;
constexpr int kKvHalf = kTile * 128;          // [64 keys][64 cols] bf16, 8 KB
constexpr int kKvBytes = 2 * kKvHalf;         // one K (or V) tile
constexpr int kSmemQ = 0;                     // [2 halves][8 rows][64], 2 KB
constexpr int kSmemP = 2048;                  // Pᵀ as [8 queries][64 keys] bf16, 1 KB
constexpr int kSmemK = 4096;
constexpr int kSmemV = kSmemK + kStages * kKvBytes;
constexpr int kSmemRed = kSmemV + kStages * kKvBytes;  // [4 warps][8 queries] floats
constexpr int kSmemBar = kSmemRed + 128;
constexpr int kSharedBytes = kSmemBar + 8 * (1 + 2 * kStages) + 1024;  // the manifest's
static_assert(2 * (kSharedBytes + 1024) <= 233472, "two CTAs per SM");
static_assert(kChunk % kTile == 0, "a split is whole tiles");
using wgmma_s = wgmma_bf16<8, 0, 0>;   // Sᵀ: K (K-major) · Qᵀ (K-major)
using wgmma_o = wgmma_bf16<8, 1, 0>;   // Oᵀ: Vᵀ (V tile read M-major) · Pᵀ (K-major)
}  // namespace

// Producer: Q of the group once, then the split's K and V tiles.
DEVI void produce(uint32_t base, const tensor_map_t* map_q, const tensor_map_t* map_k,
                  const tensor_map_t* map_v, int q_row, int bkv, int key0, int tiles) {
  const uint32_t bar_q = base + kSmemBar, full = bar_q + 8, empty = full + 8 * kStages;
  mbar_expect_tx(bar_q, 2048);
  tma_load_2d(base + kSmemQ, map_q, bar_q, 0, q_row);
  tma_load_2d(base + kSmemQ + 1024, map_q, bar_q, 64, q_row);
  for (int t = 0; t < tiles; ++t) {
    const int s = t % kStages, round = t / kStages;
    if (round > 0) mbar_wait(empty + 8 * s, (round & 1) ^ 1);
    const uint32_t bar = full + 8 * s;
    mbar_expect_tx(bar, 2 * kKvBytes);
    const int key = key0 + t * kTile;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tma_load_3d(base + kSmemK + s * kKvBytes + h * kKvHalf, map_k, bar, 64 * h, key, bkv);
      tma_load_3d(base + kSmemV + s * kKvBytes + h * kKvHalf, map_v, bar, 64 * h, key, bkv);
    }
  }
}

// Max (or sum) of the thread's two query columns c, c + 1 over the
// warpgroup's 64 rows: across the lanes of a column (xor 4, 8, 16), then across
// the four warps in shared memory. red is free again after the next bar.sync 1.
template <bool kMax>
DEVI void column_reduce(float (&v)[2], float* red, int warp, int lane, int c) {
#pragma unroll
  for (int q = 0; q < 2; ++q)
#pragma unroll
    for (int off = 4; off < 32; off <<= 1) {
      const float o = __shfl_xor_sync(0xffffffffu, v[q], off);
      v[q] = kMax ? fmaxf(v[q], o) : v[q] + o;
    }
  if (lane < 4) {
    red[warp * 8 + c] = v[0];
    red[warp * 8 + c + 1] = v[1];
  }
  asm volatile("bar.sync 1, 128;\n" ::: "memory");
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    float r = red[c + q];
#pragma unroll
    for (int w = 1; w < 4; ++w) r = kMax ? fmaxf(r, red[w * 8 + c + q]) : r + red[w * 8 + c + q];
    v[q] = r;
  }
}

// Pᵀ element (query q, key k of the tile) in the 128-byte-swizzled K-major tile.
DEVI void store_p(uint8_t* p, int q, int k, uint16_t v) {
  *reinterpret_cast<uint16_t*>(p + q * 128 + ((((k >> 3) ^ q) & 7) << 4) + (k & 7) * 2) = v;
}

#include "attention_decode_consumer.cuh"

extern "C" __global__ void __launch_bounds__(160, 2)
    attn_decode_split(const __grid_constant__ tensor_map_t map_q,
                      const __grid_constant__ tensor_map_t map_k,
                      const __grid_constant__ tensor_map_t map_v, float* __restrict__ o_part,
                      float* __restrict__ lse_part, int seq_len, int heads, int kv_heads,
                      float scale) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~uintptr_t(1023));
  const uint32_t base = smem_u32(smem);
  const uint32_t bar_q = base + kSmemBar, full = bar_q + 8, empty = full + 8 * kStages;
  const int split = blockIdx.x, bkv = blockIdx.y;
  const int b = bkv / kv_heads, hk = bkv % kv_heads;
  const int key0 = attn::split_begin(split, kChunk);
  const int tiles = (attn::split_end(split, kChunk, seq_len) - key0 + kTile - 1) / kTile;

  if (threadIdx.x == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, 128);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x >= 128) {
    if (threadIdx.x == 128)
      produce(base, &map_q, &map_k, &map_v, attn::query_row(b, hk, 0, heads, kv_heads), bkv, key0,
              tiles);
  } else {
    consume(smem, base, key0, tiles, seq_len, split, b, hk, heads, kv_heads, scale, o_part,
            lse_part);
  }
}

// One thread per output column of one (batch, query head).
extern "C" __global__ void __launch_bounds__(128)
    attn_decode_combine(const float* __restrict__ o_part, const float* __restrict__ lse_part,
                        uint16_t* __restrict__ out, float* __restrict__ lse, int seq_len) {
  const int bh = blockIdx.x, d = threadIdx.x;
  const int splits = attn::decode_splits(seq_len, kChunk);
  const size_t first = attn::part_index(bh, 0, splits);
  float value, row_lse;
  attn::combine_column(lse_part + first, o_part + first * kD + d, kD, splits, value, row_lse);
  out[(size_t)bh * kD + d] = static_cast<uint16_t>(pack_bf16(value, 0.f) & 0xffffu);
  if (d == 0) lse[bh] = row_lse;
}
