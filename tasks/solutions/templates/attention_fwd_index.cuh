// Where a forward attention CTA works: the index math of attention_fwd_wgmma.cu
// (and of the fp8 forward), kept apart from the kernel so that the CPU tests
// (tests/solutions) run this same code over every tile of every size and
// compare the keys each query row attends with the definition.
//
// A CTA owns query rows m0 .. m0 + block_m - 1 of one (batch, head) and visits
// key tiles 0 .. key_tiles() - 1 of block_n keys; in a tile that needs it, the
// keys of row r after last_key() are masked to -inf before the softmax.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define ATTN_HD __host__ __device__ __forceinline__
#else
#define ATTN_HD inline
#endif

namespace attn {

// The compile-time shape of a forward kernel (a traits type: its members are
// usable in device code as constants).
template <int BlockM, int BlockN, int HeadDim, bool Causal, bool Gqa, bool Map3d, bool Varlen, bool Grid3>
struct fwd_config {
  static constexpr int block_m = BlockM;   // query rows per CTA
  static constexpr int block_n = BlockN;   // keys per K/V tile
  static constexpr int head_dim = HeadDim;
  static constexpr bool causal = Causal;
  static constexpr bool gqa = Gqa;         // K/V have kv_heads heads
  static constexpr bool map3d = Map3d;     // dense tensors seen as 3-D [B*H, S, D] (S any)
  static constexpr bool varlen = Varlen;   // packed [T, H, D] with cu_seqlens, 2-D maps [T, H*D]
  static constexpr bool grid3 = Grid3;     // grid [tiles, H, B]; else [tiles, B*H] (one batch of B*H heads)
  static constexpr bool masked = Map3d || Varlen;  // lengths not tile multiples
};

// One CTA's place in the problem: tensor-map coordinates (c0 column, row, z)
// of its Q tile and of its first K/V row, where its O rows and LSE entries go,
// and the length of its sequence (queries = keys, self-attention).
struct cta_work {
  int m0;
  int len;
  int q_c0, q_row, q_z;
  int kv_c0, kv_row, kv_z;
  size_t o_row0;  // O element offset of the tile's first row
  int o_stride;   // elements between consecutive rows of O
  size_t lse0;    // LSE index of the tile's first row
};

// h, b: the CTA's head and batch (blockIdx.y, blockIdx.z); heads: gridDim.y;
// batch: gridDim.z; cu_seqlens only when varlen.
template <class C>
ATTN_HD cta_work locate(int m_blk, int h, int b, int heads, int batch, int seq_len, int kv_heads,
                        const int* cu_seqlens) {
  cta_work w;
  w.m0 = m_blk * C::block_m;
  if (!C::grid3) b = 0;
  const int hk = C::gqa ? h / (heads / kv_heads) : h;
  const int kvh = C::gqa ? kv_heads : heads;
  if (C::varlen) {
    const int start = cu_seqlens[b];
    const int total = cu_seqlens[batch];
    w.len = cu_seqlens[b + 1] - start;
    w.q_c0 = h * C::head_dim, w.q_row = start + w.m0, w.q_z = 0;
    w.kv_c0 = hk * C::head_dim, w.kv_row = start, w.kv_z = 0;
    w.o_row0 = ((size_t)(start + w.m0) * heads + h) * C::head_dim;
    w.o_stride = heads * C::head_dim;
    w.lse0 = (size_t)h * total + start + w.m0;
  } else {
    const int bh = b * heads + h, bkv = b * kvh + hk;
    w.len = seq_len;
    if (C::map3d) {
      w.q_c0 = 0, w.q_row = w.m0, w.q_z = bh;
      w.kv_c0 = 0, w.kv_row = 0, w.kv_z = bkv;
    } else {
      w.q_c0 = 0, w.q_row = bh * seq_len + w.m0, w.q_z = 0;
      w.kv_c0 = 0, w.kv_row = bkv * seq_len, w.kv_z = 0;
    }
    w.lse0 = (size_t)bh * seq_len + w.m0;
    w.o_row0 = w.lse0 * C::head_dim;
    w.o_stride = C::head_dim;
  }
  return w;
}

ATTN_HD int min_int(int a, int b) { return a < b ? a : b; }

// Key tiles the query tile visits (the causal ones stop at the diagonal).
template <class C>
ATTN_HD int key_tiles(const cta_work& w) {
  const int all = C::masked ? (w.len + C::block_n - 1) / C::block_n : w.len / C::block_n;
  if (!C::causal) return all;
  const int diag = (w.m0 + C::block_m + C::block_n - 1) / C::block_n;
  return C::masked ? min_int(all, diag) : diag;
}

// Whether key tile kb holds a key that some row of the tile must not attend.
template <class C>
ATTN_HD bool tile_needs_mask(const cta_work& w, int kb, int n_kv) {
  const int n0 = kb * C::block_n;
  // Exact tiles of equal size: only the last (diagonal) tile.
  if (C::causal && C::block_n == C::block_m && !C::masked) return kb == n_kv - 1;
  bool need = false;
  if (C::causal) need = n0 + C::block_n - 1 > w.m0;
  if (C::masked) need = need || w.len - 1 - n0 < C::block_n - 1;
  return need;
}

// The last key (a column of tile kb) that row r of the tile attends; columns
// after it are masked when tile_needs_mask().
template <class C>
ATTN_HD int last_key(const cta_work& w, int kb, int r) {
  const int n0 = kb * C::block_n;
  int lim = 1 << 30;
  if (C::causal) lim = (C::block_n == C::block_m && !C::masked) ? r : r + w.m0 - n0;
  if (C::masked) lim = min_int(lim, w.len - 1 - n0);
  return lim;
}

}  // namespace attn
