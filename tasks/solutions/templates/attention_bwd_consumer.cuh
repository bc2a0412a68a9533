// The consumer warpgroups of attention_bwd_main.cuh: per step, the five
// products of the backward pass for this warpgroup's 64 keys.
#pragma once

// dSᵀ to shared memory, [128 keys][64 rows] bf16 with the 128-byte swizzle.
DEVI void store_ds(uint8_t* ds_ptr, const uint32_t (&ds_frag)[16], int kr, int lane) {
  const int sw = kr & 7;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int off = ((j ^ sw) << 4) + 4 * (lane & 3);
    *reinterpret_cast<uint32_t*>(ds_ptr + kr * 128 + off) = ds_frag[2 * j];
    *reinterpret_cast<uint32_t*>(ds_ptr + (kr + 8) * 128 + off) = ds_frag[2 * j + 1];
  }
}

DEVI void consume(uint8_t* smem, uint32_t base, const attn::bwd_work& w, int steps, int seq_len,
                  float* dq_acc, uint16_t* dk, uint16_t* dv, float scale) {
  const uint32_t bar_kv = base + kSmemBar, bar_full = bar_kv + 8, bar_empty = bar_kv + 24;
  const int tid = threadIdx.x - 128;
  const int wg = tid >> 7;
  const int warp = (tid >> 5) & 3;
  const int lane = tid & 31;
  const int c2 = 2 * (lane & 3);
  const int kr = wg * 64 + warp * 16 + (lane >> 2);  // key row in the block; kr + 8 too
  const float scale_log2 = scale * attn::kLog2e;
  const float* stat = reinterpret_cast<const float*>(smem + kSmemStat);

  float dv_acc[kNO], dk_acc[kNO];
#pragma unroll
  for (int i = 0; i < kNO; ++i) dv_acc[i] = dk_acc[i] = 0.f;
  float s[32], dp[32], dq[kDqCols / 2];
  uint32_t p_frag[16], ds_frag[16];

  const uint32_t k_wg = base + kSmemK + wg * 8192;  // this warpgroup's 64 keys (A operand)
  const uint32_t v_wg = base + kSmemV + wg * 8192;
  mbar_wait(bar_kv, 0);

  for (int it = 0; it < steps; ++it) {
    const int st = it & 1;
    const uint32_t q_s = base + kSmemQ + st * kHalves * kQHalf;
    const uint32_t g_s = base + kSmemDO + st * kHalves * kQHalf;
    const uint32_t ds_s = base + kSmemDS + st * 16384;
    mbar_wait(bar_full + 8 * st, (it >> 1) & 1);

    // Sᵀ = K_wg · Qᵀ and dPᵀ = V_wg · dOᵀ (64 keys × 64 rows each).
    fence_regs(s);
    fence_regs(dp);
    wgmma_fence();
    issue_t(s, k_wg, q_s);
    wgmma_commit();
    issue_t(dp, v_wg, g_s);
    wgmma_commit();
    wgmma_wait<1>();
    fence_regs(s);

    // Pᵀ = exp2(S·scale·log2e − LSE·log2e); columns are query rows.
    if (cfg::causal && attn::step_needs_mask<cfg>(w, it)) mask_step(s, w, it, kr, c2);
    const float* l2 = stat + st * 128;
    const float* dl = l2 + 64;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float la = l2[8 * j + c2], lb = l2[8 * j + c2 + 1];
      s[4 * j] = ex2(fmaf(s[4 * j], scale_log2, -la));
      s[4 * j + 1] = ex2(fmaf(s[4 * j + 1], scale_log2, -lb));
      s[4 * j + 2] = ex2(fmaf(s[4 * j + 2], scale_log2, -la));
      s[4 * j + 3] = ex2(fmaf(s[4 * j + 3], scale_log2, -lb));
    }
#pragma unroll
    for (int q = 0; q < 16; ++q) p_frag[q] = pack_bf16(s[2 * q], s[2 * q + 1]);
    wgmma_wait<0>();
    fence_regs(dp);

    // dSᵀ = Pᵀ ∘ (dPᵀ − Delta).
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float da = dl[8 * j + c2], db = dl[8 * j + c2 + 1];
      dp[4 * j] = s[4 * j] * (dp[4 * j] - da);
      dp[4 * j + 1] = s[4 * j + 1] * (dp[4 * j + 1] - db);
      dp[4 * j + 2] = s[4 * j + 2] * (dp[4 * j + 2] - da);
      dp[4 * j + 3] = s[4 * j + 3] * (dp[4 * j + 3] - db);
    }
#pragma unroll
    for (int q = 0; q < 16; ++q) ds_frag[q] = pack_bf16(dp[2 * q], dp[2 * q + 1]);

    // dV += Pᵀ·dO, dK += dSᵀ·Q (A from registers, B N-major in shared memory).
    fence_regs(dv_acc);
    fence_regs(dk_acc);
    fence_regs(p_frag);
    fence_regs(ds_frag);
    wgmma_fence();
    issue_acc(dv_acc, p_frag, g_s);
    issue_acc(dk_acc, ds_frag, q_s);
    wgmma_commit();

    store_ds(smem + kSmemDS + st * 16384, ds_frag, kr, lane);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    // dQ at head dim 128 reads both warpgroups' dSᵀ; at 64 only its own.
    if constexpr (kD == 128)
      asm volatile("bar.sync 1, 256;\n" ::: "memory");
    else if (wg == 0)
      asm volatile("bar.sync 2, 128;\n" ::: "memory");
    else
      asm volatile("bar.sync 3, 128;\n" ::: "memory");

    fence_regs(dq);
    wgmma_fence();
    issue_dq(dq, base, ds_s, wg);
    wgmma_commit();
    wgmma_wait<1>();
    fence_regs(dv_acc);
    fence_regs(dk_acc);
    fence_regs(p_frag);
    fence_regs(ds_frag);
    mbar_arrive(bar_empty + 8 * st);
    wgmma_wait<0>();
    fence_regs(dq);

    const size_t qrow = attn::step_row<cfg>(w, it, seq_len);
    const int col0 = kD == 128 ? wg * 64 : 0;
    float* dst = dq_acc + (qrow + warp * 16 + (lane >> 2)) * kD + col0 + c2;
#pragma unroll
    for (int j = 0; j < kDqCols / 8; ++j) {
      red_add_v2(dst + 8 * j, dq[4 * j], dq[4 * j + 1]);
      red_add_v2(dst + 8 * kD + 8 * j, dq[4 * j + 2], dq[4 * j + 3]);
    }
  }

  // dK (scaled) and dV out, bf16 (summed over the query heads of the group).
  const size_t grow = w.kv_row + kr;
  uint16_t* k0 = dk + grow * kD + c2;
  uint16_t* v0 = dv + grow * kD + c2;
#pragma unroll
  for (int j = 0; j < kNO / 4; ++j) {
    *reinterpret_cast<uint32_t*>(k0 + 8 * j) =
        pack_bf16(dk_acc[4 * j] * scale, dk_acc[4 * j + 1] * scale);
    *reinterpret_cast<uint32_t*>(k0 + 8 * kD + 8 * j) =
        pack_bf16(dk_acc[4 * j + 2] * scale, dk_acc[4 * j + 3] * scale);
    *reinterpret_cast<uint32_t*>(v0 + 8 * j) = pack_bf16(dv_acc[4 * j], dv_acc[4 * j + 1]);
    *reinterpret_cast<uint32_t*>(v0 + 8 * kD + 8 * j) =
        pack_bf16(dv_acc[4 * j + 2], dv_acc[4 * j + 3]);
  }
}
