// The consumer warpgroups of attention_fwd_fp8.cu (included there, after its
// constants and issue helpers).
#pragma once

// Four floats to one register of e4m3 bytes, x0 in the lowest byte.
DEVI uint32_t pack_e4m3x4(float x0, float x1, float x2, float x3) {
  uint16_t lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;\n" : "=h"(lo) : "f"(x0), "f"(x1));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;\n" : "=h"(hi) : "f"(x2), "f"(x3));
  return uint32_t(lo) | (uint32_t(hi) << 16);
}

// P's accumulators of 32-key step kk as the four A registers of wgmma k32:
// row r0 then r0 + 8, k 4t..4t+3 then 16+4t..16+4t+3 (attention_fp8_layout.cuh).
DEVI void to_fp8_frags(const float (&s)[64], uint32_t (&p)[16]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int reg = 0; reg < 4; ++reg)
      p[4 * kk + reg] = pack_e4m3x4(
          s[attn::fp8_frag_source(kk, reg, 0)], s[attn::fp8_frag_source(kk, reg, 1)],
          s[attn::fp8_frag_source(kk, reg, 2)], s[attn::fp8_frag_source(kk, reg, 3)]);
}

DEVI void consume(uint32_t base, const attn::cta_work& w, int n_kv, uint16_t* out, float* lse,
                  float scale_log2, float scale_v) {
  const uint32_t bar_q = base + kSmemBar;
  const uint32_t bar_k_full = bar_q + 8, bar_k_empty = bar_q + 24;
  const uint32_t bar_v_full = bar_q + 40, bar_v_empty = bar_q + 56;
  const int tid = threadIdx.x - 128;
  const int wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
  const int r0 = wg * 64 + warp * 16 + (lane >> 2);
  const int c2 = 2 * (lane & 3);
  const uint32_t q_base = base + kSmemQ + wg * 64 * kD;

  float o[64], t[64], s[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float m[2] = {attn::kNegInf, attn::kNegInf}, l[2] = {0.f, 0.f}, alpha[2];
  uint32_t p[16];

  mbar_wait(bar_q, 0);
  mbar_wait(bar_k_full, 0);
  fence_regs(s);
  wgmma_fence();
  issue_qk(s, q_base, base + kSmemK);
  wgmma_commit();
  wgmma_wait<0>();
  fence_regs(s);
  mbar_arrive(bar_k_empty);
  mask_tile(s, w, 0, n_kv, r0, c2);
  attn::softmax_step<64, kLog2Boost>(s, m, l, alpha, scale_log2);
  to_fp8_frags(s, p);
  for (int kb = 1; kb < n_kv; ++kb) {
    const int st = kb & 1, sp = st ^ 1;
    const uint32_t phase = (kb >> 1) & 1, phase_prev = ((kb - 1) >> 1) & 1;
    mbar_wait(bar_k_full + 8 * st, phase);
    fence_regs(s);
    fence_regs(t);
    fence_regs(p);
    wgmma_fence();
    issue_qk(s, q_base, base + kSmemK + st * kTileBytes);
    wgmma_commit();
    mbar_wait(bar_v_full + 8 * sp, phase_prev);
    wgmma_fence();
    issue_pv(t, p, base + kSmemV + sp * kTileBytes);
    wgmma_commit();
    wgmma_wait<1>();
    fence_regs(s);
    mbar_arrive(bar_k_empty + 8 * st);
    mask_tile(s, w, kb, n_kv, r0, c2);
    attn::softmax_step<64, kLog2Boost>(s, m, l, alpha, scale_log2);
    wgmma_wait<0>();
    fence_regs(t);
    fence_regs(p);
    mbar_arrive(bar_v_empty + 8 * sp);
    // O holds the blocks before kb-1 and t block kb-1, both against the old max.
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      o[4 * j] = (o[4 * j] + t[4 * j]) * alpha[0];
      o[4 * j + 1] = (o[4 * j + 1] + t[4 * j + 1]) * alpha[0];
      o[4 * j + 2] = (o[4 * j + 2] + t[4 * j + 2]) * alpha[1];
      o[4 * j + 3] = (o[4 * j + 3] + t[4 * j + 3]) * alpha[1];
    }
    to_fp8_frags(s, p);
  }
  {
    const int sp = (n_kv - 1) & 1;
    mbar_wait(bar_v_full + 8 * sp, ((n_kv - 1) >> 1) & 1);
    fence_regs(t);
    fence_regs(p);
    wgmma_fence();
    issue_pv(t, p, base + kSmemV + sp * kTileBytes);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(t);
    fence_regs(p);
    mbar_arrive(bar_v_empty + 8 * sp);
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] += t[i];
  }

  // Epilogue: O = scale_v · Σ P·V / Σ P (the 2^8 of P cancels), LSE without it.
  attn::reduce_row_sums(l);
  const float inv0 = scale_v / l[0], inv1 = scale_v / l[1];
  uint16_t* o0 = out + w.o_row0 + (size_t)r0 * kD + c2;
  uint16_t* o1 = o0 + 8 * kD;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    *reinterpret_cast<uint32_t*>(o0 + 8 * j) = pack_bf16(o[4 * j] * inv0, o[4 * j + 1] * inv0);
    *reinterpret_cast<uint32_t*>(o1 + 8 * j) = pack_bf16(o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
  }
  if ((lane & 3) == 0) {
    lse[w.lse0 + r0] = (m[0] + __log2f(l[0]) - kLog2Boost) * attn::kLn2;
    lse[w.lse0 + r0 + 8] = (m[1] + __log2f(l[1]) - kLog2Boost) * attn::kLn2;
  }
}
