// Where a backward attention CTA works: the index math of attention_bwd_wgmma.cu,
// kept apart from the kernel so that the CPU tests (tests/solutions) run this
// same code over every CTA and compare the (query, key) pairs whose
// contributions reach dQ, dK and dV with the definition.
//
// A CTA owns block_n keys of one (batch, KV head) and visits, for each of the
// `group` query heads that read that KV head, the block_m-row query blocks from
// first_q_block() on; in a block that needs it, P (and so dS) is zeroed where
// the key comes after the query.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define ATTN_HD __host__ __device__ __forceinline__
#else
#define ATTN_HD inline
#endif

namespace attn {

template <int BlockN, int BlockM, bool Causal, bool Gqa>
struct bwd_config {
  static constexpr int block_n = BlockN;  // keys per CTA
  static constexpr int block_m = BlockM;  // query rows per step
  static constexpr bool causal = Causal;
  static constexpr bool gqa = Gqa;        // grid [S/block_n, HKV, B], dK/dV summed over the group
};

struct bwd_work {
  int n0;           // first key of the CTA within its sequence
  int q_first;      // first query block visited
  int q_blocks;     // query blocks visited per query head
  int group;        // query heads per KV head
  size_t kv_row;    // row of the CTA's first key in [B*HKV*S] (K, V, dK, dV)
  size_t q_row0;    // row of the group's first query head's row 0 in [B*H*S] (Q, dO, LSE, dQ)
};

// n_blk, y, z: blockIdx.x, .y, .z; grid_y: gridDim.y (B*H, or HKV with GQA);
// heads: H (GQA only).
template <class C>
ATTN_HD bwd_work locate_bwd(int n_blk, int y, int z, int grid_y, int heads, int seq_len) {
  bwd_work w;
  w.n0 = n_blk * C::block_n;
  w.q_first = C::causal ? w.n0 / C::block_m : 0;
  w.q_blocks = seq_len / C::block_m - w.q_first;
  if (C::gqa) {
    const int kv_heads = grid_y, hk = y, b = z;
    w.group = heads / kv_heads;
    w.kv_row = ((size_t)b * kv_heads + hk) * seq_len + w.n0;
    w.q_row0 = ((size_t)b * heads + (size_t)hk * w.group) * seq_len;
  } else {
    w.group = 1;
    w.kv_row = (size_t)y * seq_len + w.n0;
    w.q_row0 = (size_t)y * seq_len;
  }
  return w;
}

// Row in [B*H*S] of the first query of step `it` (it = 0 .. group*q_blocks - 1:
// query heads outermost, query blocks inner).
template <class C>
ATTN_HD int step_block(const bwd_work& w, int it) {
  return w.q_first + (C::gqa ? it % w.q_blocks : it);
}
template <class C>
ATTN_HD size_t step_row(const bwd_work& w, int it, int seq_len) {
  const int g = C::gqa ? it / w.q_blocks : 0;
  return w.q_row0 + (size_t)g * seq_len + (size_t)step_block<C>(w, it) * C::block_m;
}

// Whether step `it` holds a (query, key) pair with the key after the query.
template <class C>
ATTN_HD bool step_needs_mask(const bwd_work& w, int it) {
  const int i = step_block<C>(w, it);
  return C::causal && i * C::block_m < w.n0 + C::block_n - 1;
}

// In a masked step: key kr of the CTA (0 .. block_n-1) and query q of the step
// (0 .. block_m-1) contribute iff the key is not after the query.
template <class C>
ATTN_HD bool pair_masked(const bwd_work& w, int it, int kr, int q) {
  const int i = step_block<C>(w, it);
  return w.n0 + kr > i * C::block_m + q;
}

}  // namespace attn
