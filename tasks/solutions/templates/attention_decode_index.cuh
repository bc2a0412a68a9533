// The index math and the split combination of attention_decode.cu, kept apart
// from the kernels so that the CPU tests (tests/solutions) run this same code:
// the splits of the S keys, where each split's partial output goes, which
// query heads a KV head serves, and the combine of the partial softmax states.
//
// Split s of a (batch, KV head) owns keys [s·chunk, min(S, (s+1)·chunk)) and
// leaves, for each query head h of the group, its normalised partial output
// O_s (fp32, D values) and its log-sum-exp in log2 units L_s. The combine:
// M = max_s L_s, w_s = 2^(L_s − M), O = Σ_s w_s·O_s / Σ_s w_s,
// LSE = (M + log2 Σ_s w_s)·ln 2.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define ATTN_HD __host__ __device__ __forceinline__
#else
#include <cmath>
#define ATTN_HD inline
#endif

namespace attn {

ATTN_HD int decode_splits(int seq_len, int chunk) { return (seq_len + chunk - 1) / chunk; }

// First and one-past-last key of split s.
ATTN_HD int split_begin(int s, int chunk) { return s * chunk; }
ATTN_HD int split_end(int s, int chunk, int seq_len) {
  const int e = (s + 1) * chunk;
  return e < seq_len ? e : seq_len;
}

// Query head g (0 .. group-1) of KV head hk in batch b, as a row of [B*H].
ATTN_HD int query_row(int b, int hk, int g, int heads, int kv_heads) {
  return b * heads + hk * (heads / kv_heads) + g;
}

// Index of split s of query row bh in the scratch [B*H][splits] (LSE), times
// D for the partial outputs [B*H][splits][D].
ATTN_HD size_t part_index(int bh, int s, int splits) { return (size_t)bh * splits + s; }

ATTN_HD float ex2_hd(float x) {
#ifdef __CUDA_ARCH__
  return exp2f(x);
#else
  return std::exp2(x);
#endif
}
ATTN_HD float log2_hd(float x) {
#ifdef __CUDA_ARCH__
  return __log2f(x);
#else
  return std::log2(x);
#endif
}

// The combine of one output column: lse2[s] (log2 units) and o[s·o_stride] for
// s < splits. Writes the column's value and the row's natural-log LSE.
ATTN_HD void combine_column(const float* lse2, const float* o, size_t o_stride, int splits,
                            float& out, float& lse) {
  float m = lse2[0];
  for (int s = 1; s < splits; ++s) m = lse2[s] > m ? lse2[s] : m;
  float sum = 0.f, acc = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float w = ex2_hd(lse2[s] - m);
    sum += w;
    acc += w * o[(size_t)s * o_stride];
  }
  out = acc / sum;
  lse = (m + log2_hd(sum)) * 0.6931471805599453f;
}

}  // namespace attn
