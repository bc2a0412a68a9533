// The online softmax of the wgmma attention forwards, on the accumulator layout
// of wgmma m64nNk16 (and k32): a thread holds, for its rows r0 and r0 + 8 of the
// warpgroup's 64, the columns 8j + c2 and 8j + c2 + 1 (c2 = 2·(lane % 4)) in
// s[4j], s[4j+1] (row r0) and s[4j+2], s[4j+3] (row r0 + 8). NS is the number of
// such values (N/2), NO the same for the output accumulator.
#pragma once

#include <cstdint>

#include "../common/attention_ptx.cuh"

namespace attn {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -__builtin_huge_valf();

// Masks (to -inf, before the softmax) column c of row r0 where c > lim0 and of
// row r0 + 8 where c > lim1: the causal diagonal and the keys past a sequence's
// end are both a per-row last attended column.
template <int NS>
DEVI void mask_after(float (&s)[NS], int lim0, int lim1, int c2) {
#pragma unroll
  for (int j = 0; j < NS / 4; ++j) {
    int c = 8 * j + c2;
    if (c > lim0) s[4 * j] = kNegInf;
    if (c + 1 > lim0) s[4 * j + 1] = kNegInf;
    if (c > lim1) s[4 * j + 2] = kNegInf;
    if (c + 1 > lim1) s[4 * j + 3] = kNegInf;
  }
}

// Online-softmax step: turns s into unnormalised probabilities (in place),
// updates the running max m (log2 units) and partial row sums l, and returns
// the factors by which the previous O rows must be rescaled. A row whose
// scores are all -inf so far keeps m = -inf and is never written out.
// kLog2Boost: the probabilities come out times 2^kLog2Boost (the fp8 forward
// lifts them out of e4m3's subnormal range; l carries the same factor).
template <int NS, int kLog2Boost = 0>
DEVI void softmax_step(float (&s)[NS], float (&m)[2], float (&l)[2], float (&alpha)[2],
                       float scale_log2) {
  float mx0 = kNegInf, mx1 = kNegInf;
#pragma unroll
  for (int j = 0; j < NS / 4; ++j) {
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
  const float b0 = kLog2Boost == 0 ? -n0 : kLog2Boost - n0;
  const float b1 = kLog2Boost == 0 ? -n1 : kLog2Boost - n1;
  float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
  for (int j = 0; j < NS / 4; ++j) {
    s[4 * j] = ex2(fmaf(s[4 * j], scale_log2, b0));
    s[4 * j + 1] = ex2(fmaf(s[4 * j + 1], scale_log2, b0));
    s[4 * j + 2] = ex2(fmaf(s[4 * j + 2], scale_log2, b1));
    s[4 * j + 3] = ex2(fmaf(s[4 * j + 3], scale_log2, b1));
    sum0 += s[4 * j] + s[4 * j + 1];
    sum1 += s[4 * j + 2] + s[4 * j + 3];
  }
  l[0] = l[0] * alpha[0] + sum0;
  l[1] = l[1] * alpha[1] + sum1;
}

template <int NO>
DEVI void rescale_o(float (&o)[NO], const float (&alpha)[2]) {
#pragma unroll
  for (int j = 0; j < NO / 4; ++j) {
    o[4 * j] *= alpha[0];
    o[4 * j + 1] *= alpha[0];
    o[4 * j + 2] *= alpha[1];
    o[4 * j + 3] *= alpha[1];
  }
}

// The S accumulator layout of m64nNk16 matches the A-fragment layout of the
// next wgmma: consecutive pairs become bf16x2 registers.
template <int NS>
DEVI void to_bf16_frags(const float (&s)[NS], uint32_t (&p)[NS / 2]) {
#pragma unroll
  for (int i = 0; i < NS / 2; ++i) p[i] = pack_bf16(s[2 * i], s[2 * i + 1]);
}

// Finishes the row sums across the quad (each thread kept a partial sum of its
// own columns).
DEVI void reduce_row_sums(float (&l)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
}

}  // namespace attn
