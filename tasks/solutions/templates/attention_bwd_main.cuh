// The main kernel of attention_bwd_wgmma.cu (included there, after its
// constants): producer ring, the per-step wgmma chain and the dQ update.
#pragma once

// Zeroes Pᵀ where the key (row kr, kr + 8 of the CTA's keys) comes after the
// query (column 8j + c2, + 1 of the step), before the exponential.
DEVI void mask_step(float (&s)[32], const attn::bwd_work& w, int it, int kr, int c2) {
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int q = 8 * j + c2;
    if (attn::pair_masked<cfg>(w, it, kr, q)) s[4 * j] = attn::kNegInf;
    if (attn::pair_masked<cfg>(w, it, kr, q + 1)) s[4 * j + 1] = attn::kNegInf;
    if (attn::pair_masked<cfg>(w, it, kr + 8, q)) s[4 * j + 2] = attn::kNegInf;
    if (attn::pair_masked<cfg>(w, it, kr + 8, q + 1)) s[4 * j + 3] = attn::kNegInf;
  }
}

// Producer: K and V of the CTA once, then Q, dO, LSE2 and Delta per step.
DEVI void produce(uint32_t base, const attn::bwd_work& w, int steps, int seq_len,
                  const tensor_map_t* map_q, const tensor_map_t* map_k,
                  const tensor_map_t* map_v, const tensor_map_t* map_do,
                  const float* lse2, const float* delta) {
  const uint32_t bar_kv = base + kSmemBar, bar_full = bar_kv + 8, bar_empty = bar_kv + 24;
  const int krow = (int)w.kv_row;
  mbar_expect_tx(bar_kv, 2 * kHalves * kKvHalf);
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    tma_load_2d(base + kSmemK + h * kKvHalf, map_k, bar_kv, 64 * h, krow);
    tma_load_2d(base + kSmemV + h * kKvHalf, map_v, bar_kv, 64 * h, krow);
  }
  for (int it = 0; it < steps; ++it) {
    const int s = it & 1;
    if (it >= 2) mbar_wait(bar_empty + 8 * s, ((it >> 1) & 1) ^ 1);
    const uint32_t bar = bar_full + 8 * s;
    const int qrow = (int)attn::step_row<cfg>(w, it, seq_len);
    mbar_expect_tx(bar, 2 * kHalves * kQHalf + 512);
    const uint32_t q = base + kSmemQ + s * kHalves * kQHalf;
    const uint32_t g = base + kSmemDO + s * kHalves * kQHalf;
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      tma_load_2d(q + h * kQHalf, map_q, bar, 64 * h, qrow);
      tma_load_2d(g + h * kQHalf, map_do, bar, 64 * h, qrow);
    }
    const uint32_t st = base + kSmemStat + s * 512;
    bulk_load(st, lse2 + qrow, 256, bar);
    bulk_load(st + 256, delta + qrow, 256, bar);
  }
}

// A 64×64 product over the head dimension, both operands K-major in shared
// memory (keys of this warpgroup × query rows of the step).
DEVI void issue_t(float (&acc)[32], uint32_t keys, uint32_t rows) {
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    const uint32_t ka = (kk >> 2) * kKvHalf + (kk & 3) * 32;
    const uint32_t kb = (kk >> 2) * kQHalf + (kk & 3) * 32;
    wgmma_s::ss(acc, make_desc(keys + ka, 16, 1024), make_desc(rows + kb, 16, 1024), kk > 0);
  }
}

// acc (64 keys × D) += frag (64 keys × 64 rows, registers) · rows (64 × D, N-major).
DEVI void issue_acc(float (&acc)[kNO], const uint32_t (&frag)[16], uint32_t rows) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint32_t a[4] = {frag[4 * kk], frag[4 * kk + 1], frag[4 * kk + 2], frag[4 * kk + 3]};
    wgmma_acc::rs(acc, a, make_desc(rows + kk * 2048, kQHalf, 1024));
  }
}

// dQ of the step: head dim 128, this warpgroup's 64-column half over all 128
// keys (dSᵀ of both warpgroups); 64: all columns over its own 64 keys.
DEVI void issue_dq(float (&dq)[kDqCols / 2], uint32_t base, uint32_t ds_s, int wg) {
  if constexpr (kD == 128) {
#pragma unroll
    for (int kk = 0; kk < 8; ++kk)
      wgmma_dq::ss(dq, make_desc(ds_s + kk * 2048, 8192, 1024),
                   make_desc(base + kSmemK + wg * kKvHalf + kk * 2048, kKvHalf, 1024), kk > 0);
  } else {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_dq::ss(dq, make_desc(ds_s + wg * 8192 + kk * 2048, 8192, 1024),
                   make_desc(base + kSmemK + wg * 8192 + kk * 2048, kKvHalf, 1024), kk > 0);
  }
}

#include "attention_bwd_consumer.cuh"

extern "C" __global__ void __launch_bounds__(384, 1)
    attn_bwd_main(const __grid_constant__ tensor_map_t map_q,
                  const __grid_constant__ tensor_map_t map_k,
                  const __grid_constant__ tensor_map_t map_v,
                  const __grid_constant__ tensor_map_t map_do, const float* __restrict__ lse2,
                  const float* __restrict__ delta, float* __restrict__ dq_acc,
                  uint16_t* __restrict__ dk, uint16_t* __restrict__ dv, int seq_len,
#if ATTN_GQA
                  int heads,
#endif
                  float scale) {
#if !ATTN_GQA
  const int heads = 0;
#endif
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~uintptr_t(1023));
  const uint32_t base = smem_u32(smem);
  const uint32_t bar_kv = base + kSmemBar;
  const uint32_t bar_full = bar_kv + 8;    // [2]
  const uint32_t bar_empty = bar_kv + 24;  // [2]

  const attn::bwd_work w =
      attn::locate_bwd<cfg>(blockIdx.x, blockIdx.y, blockIdx.z, gridDim.y, heads, seq_len);
  const int steps = w.group * w.q_blocks;

  if (threadIdx.x == 0) {
    mbar_init(bar_kv, 1);
    for (int s = 0; s < 2; ++s) {
      mbar_init(bar_full + 8 * s, 1);
      mbar_init(bar_empty + 8 * s, 256);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    if (threadIdx.x == 0)
      produce(base, w, steps, seq_len, &map_q, &map_k, &map_v, &map_do, lse2, delta);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    consume(smem, base, w, steps, seq_len, dq_acc, dk, dv, scale);
  }
}
