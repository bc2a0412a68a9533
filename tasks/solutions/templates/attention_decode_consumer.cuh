// The consumer warpgroup of attention_decode.cu (included there, after its
// constants). Accumulator layouts (wgmma m64n8, per warp 16 rows × 8 columns):
// row lane/4 (and + 8) of the warp's 16, columns c = 2·(lane % 4) and c + 1.
// Sᵀ: rows are keys, columns query heads; Oᵀ: rows are head-dim columns.
#pragma once

DEVI void consume(uint8_t* smem, uint32_t base, int key0, int tiles, int seq_len, int split,
                  int b, int hk, int heads, int kv_heads, float scale, float* o_part,
                  float* lse_part) {
  const uint32_t bar_q = base + kSmemBar, full = bar_q + 8, empty = full + 8 * kStages;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int row = warp * 16 + (lane >> 2);  // key (Sᵀ) or head-dim column (Oᵀ) within 64
  const int c = 2 * (lane & 3);             // query columns c, c + 1
  float* red = reinterpret_cast<float*>(smem + kSmemRed);
  uint8_t* p_tile = smem + kSmemP;
  const float scale_log2 = scale * attn::kLog2e;

  float o[2][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) o[0][i] = o[1][i] = 0.f;
  float m[2] = {attn::kNegInf, attn::kNegInf}, l[2] = {0.f, 0.f};
  float s[4];

  mbar_wait(bar_q, 0);
  for (int t = 0; t < tiles; ++t) {
    const int st = t % kStages;
    const uint32_t k_s = base + kSmemK + st * kKvBytes, v_s = base + kSmemV + st * kKvBytes;
    mbar_wait(full + 8 * st, (t / kStages) & 1);

    // Sᵀ = K_tile · Qᵀ: 64 keys × 8 queries over the 128 head-dim columns.
    fence_regs(s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      const uint32_t col = (kk & 3) * 32;
      wgmma_s::ss(s, make_desc(k_s + (kk >> 2) * kKvHalf + col, 16, 1024),
                  make_desc(base + kSmemQ + (kk >> 2) * 1024 + col, 16, 1024), kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(s);

    // Keys at or past S (zeros from TMA) take no part.
    const int key = key0 + t * kTile + row;
    if (key >= seq_len) s[0] = s[1] = attn::kNegInf;
    if (key + 8 >= seq_len) s[2] = s[3] = attn::kNegInf;

    // Online softmax per query column, the running max shared by the four warps
    // (the Pᵀ barrier below also frees red for the next tile).
    float mx[2] = {fmaxf(s[0], s[2]), fmaxf(s[1], s[3])}, alpha[2];
    column_reduce<true>(mx, red, warp, lane, c);
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const float n = fmaxf(m[q], mx[q] * scale_log2);
      alpha[q] = ex2(m[q] - n);
      m[q] = n;
      s[q] = ex2(fmaf(s[q], scale_log2, -n));
      s[q + 2] = ex2(fmaf(s[q + 2], scale_log2, -n));
      l[q] = l[q] * alpha[q] + s[q] + s[q + 2];
    }
    const uint32_t p01 = pack_bf16(s[0], s[1]), p23 = pack_bf16(s[2], s[3]);
    store_p(p_tile, c, row, uint16_t(p01 & 0xffffu));
    store_p(p_tile, c + 1, row, uint16_t(p01 >> 16));
    store_p(p_tile, c, row + 8, uint16_t(p23 & 0xffffu));
    store_p(p_tile, c + 1, row + 8, uint16_t(p23 >> 16));
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("bar.sync 1, 128;\n" ::: "memory");

    // Oᵀ += Vᵀ · Pᵀ: head-dim columns (two 64-row halves) × 8 queries over 64 keys.
#pragma unroll
    for (int mb = 0; mb < 2; ++mb) {
      o[mb][0] *= alpha[0];
      o[mb][1] *= alpha[1];
      o[mb][2] *= alpha[0];
      o[mb][3] *= alpha[1];
      fence_regs(o[mb]);
    }
    wgmma_fence();
#pragma unroll
    for (int mb = 0; mb < 2; ++mb)
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma_o::ss(o[mb], make_desc(v_s + mb * kKvHalf + kk * 2048, kKvHalf, 1024),
                    make_desc(base + kSmemP + kk * 32, 16, 1024), 1);
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int mb = 0; mb < 2; ++mb) fence_regs(o[mb]);
    mbar_arrive(empty + 8 * st);
  }

  // The split's partial state: normalised O and log2-sum-exp per query head.
  const int group = heads / kv_heads;
  column_reduce<false>(l, red, warp, lane, c);
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const float total = l[q];
    if (c + q >= group) continue;
    const int bh = attn::query_row(b, hk, c + q, heads, kv_heads);
    const size_t part = attn::part_index(bh, split, attn::decode_splits(seq_len, kChunk));
    const float inv = 1.f / total;
#pragma unroll
    for (int mb = 0; mb < 2; ++mb) {
      o_part[part * kD + mb * 64 + row] = o[mb][q] * inv;
      o_part[part * kD + mb * 64 + row + 8] = o[mb][q + 2] * inv;
    }
    if (warp == 0 && lane < 4) lse_part[part] = m[q] + __log2f(total);
  }
}
