// The index math of the attention forward solutions (tasks/solutions/templates/
// attention_fwd_index.cuh), run on the CPU over every CTA and row of the grid the
// manifests launch: each query row of every (batch, head) is written exactly
// once, at the offset the task's layout gives, and attends exactly the keys the
// definition says (all keys < its length, or those <= itself when causal), read
// from the K/V rows of its KV head; no row starts from a fully masked first tile.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "evaluator/api/index_inputs.hpp"
#include "tasks/solutions/templates/attention_fwd_index.cuh"

using namespace ptxbench;

namespace {

struct problem {
  int batch, heads, kv_heads, seq_len;  // seq_len: the longest sequence when varlen
};

// The keys that row r of tile kb attends, as the kernel masks them.
template <class C>
std::vector<int> attended(const attn::cta_work& w, int n_kv, int r) {
  std::vector<int> keys;
  for (int kb = 0; kb < n_kv; ++kb) {
    const bool need = attn::tile_needs_mask<C>(w, kb, n_kv);
    const int last = attn::last_key<C>(w, kb, r);
    for (int c = 0; c < C::block_n; ++c)
      if (!need || c <= last) keys.push_back(kb * C::block_n + c);
  }
  return keys;
}

// Runs every CTA of the grid; returns "" or the first discrepancy.
template <class C>
std::string check_grid(const problem& p) {
  const std::vector<int32_t> cu = C::varlen ? varlen_cu_seqlens(p.batch, p.seq_len) : std::vector<int32_t>{};
  const int tiles = (p.seq_len + C::block_m - 1) / C::block_m;
  const int grid_y = C::grid3 ? p.heads : p.batch * p.heads, grid_z = C::grid3 ? p.batch : 1;
  const int kvh = C::gqa ? p.kv_heads : p.heads;
  const int64_t rows_total = C::varlen ? int64_t(cu.back()) * p.heads : int64_t(p.batch) * p.heads * p.seq_len;
  std::vector<int> o_written(size_t(rows_total), 0), lse_written(size_t(rows_total), 0);
  for (int z = 0; z < grid_z; ++z)
    for (int y = 0; y < grid_y; ++y)
      for (int x = 0; x < tiles; ++x) {
        const int m_blk = C::causal ? tiles - 1 - x : x;
        const attn::cta_work w = attn::locate<C>(m_blk, y, z, grid_y, grid_z, p.seq_len, p.kv_heads, cu.data());
        const int b = C::grid3 ? z : y / p.heads, h = C::grid3 ? y : y % p.heads;
        const int hk = C::gqa ? h / (p.heads / p.kv_heads) : h;
        const int len = C::varlen ? cu[size_t(b) + 1] - cu[size_t(b)] : p.seq_len;
        const int start = C::varlen ? cu[size_t(b)] : 0;
        if (w.len != len) return "wrong length";
        if (C::masked && w.m0 >= w.len) continue;  // the CTA returns at once
        const int n_kv = attn::key_tiles<C>(w);
        std::set<int> tiles_used;  // key tiles some stored row attends (none is loaded for nothing)
        for (int r = 0; r < C::block_m; ++r) {
          const int q = w.m0 + r;
          if (q >= len) {
            if (!C::masked) return "a row past S in a tile task";
            continue;  // computed, never stored
          }
          // O and LSE offsets of (b, h, q) in the task's layout.
          const int64_t row_index = C::varlen ? (int64_t(start) + q) * p.heads + h : (int64_t(b) * p.heads + h) * len + q;
          const int64_t lse_index = C::varlen ? int64_t(h) * cu.back() + start + q : (int64_t(b) * p.heads + h) * len + q;
          if (int64_t(w.o_row0 + size_t(r) * size_t(w.o_stride)) != row_index * C::head_dim) return "O offset";
          if (int64_t(w.lse0) + r != lse_index) return "LSE offset";
          o_written[size_t(row_index)]++;
          lse_written[size_t(lse_index)]++;
          // Q row coordinate.
          if (C::varlen ? (w.q_row + r != start + q || w.q_c0 != h * C::head_dim)
              : C::map3d ? (w.q_row + r != q || w.q_z != b * p.heads + h)
                         : (w.q_row + r != (b * p.heads + h) * len + q))
            return "Q coordinate";
          const std::vector<int> keys = attended<C>(w, n_kv, r);
          std::vector<int> want;
          for (int j = 0; j < len; ++j)
            if (!C::causal || j <= q) want.push_back(j);
          if (keys != want)
            return "row " + std::to_string(q) + " of length " + std::to_string(len) + " attends " +
                   std::to_string(keys.size()) + " keys, not " + std::to_string(want.size());
          if (attended<C>(w, 1, r).empty()) return "a fully masked first tile";
          for (int k : keys) tiles_used.insert(k / C::block_n);
          // K/V coordinate of key j: tile rows start at kv_row + kb * block_n.
          const int j = keys.back();
          const int kv_row = w.kv_row + j;
          if (C::varlen ? (kv_row != start + j || w.kv_c0 != hk * C::head_dim)
              : C::map3d ? (kv_row != j || w.kv_z != b * kvh + hk)
                         : (kv_row != (b * kvh + hk) * len + j))
            return "K/V coordinate";
        }
        if (int(tiles_used.size()) != n_kv) return "a key tile no stored row attends";
      }
  for (int64_t i = 0; i < rows_total; ++i)
    if (o_written[size_t(i)] != 1 || lse_written[size_t(i)] != 1)
      return "row " + std::to_string(i) + " written " + std::to_string(o_written[size_t(i)]) + " times";
  return "";
}

template <class C>
void check_sizes(const std::vector<problem>& problems) {
  for (const problem& p : problems) {
    INFO("B=" << p.batch << " H=" << p.heads << " HKV=" << p.kv_heads << " S=" << p.seq_len);
    CHECK(check_grid<C>(p) == "");
  }
}

// The masked variants' sizes: tails of every kind, tiny, odd batches.
std::vector<problem> any_sizes(int heads, int kv_heads) {
  std::vector<problem> v;
  for (int s : {1, 2, 63, 64, 65, 127, 128, 129, 255, 300})
    for (int b : {1, 3}) v.push_back({b, heads, kv_heads, s});
  return v;
}

}  // namespace

TEST_CASE("attention forward index: tile tasks (2-D maps and S a multiple of 128)") {
  const std::vector<problem> tiles = {{1, 2, 2, 512}, {2, 3, 3, 1152}, {3, 5, 5, 384}, {1, 1, 1, 128}};
  check_sizes<attn::fwd_config<128, 128, 128, false, false, false, false, false>>(tiles);
  check_sizes<attn::fwd_config<128, 128, 128, true, false, false, false, false>>(tiles);
  check_sizes<attn::fwd_config<128, 128, 64, true, false, false, false, false>>(tiles);
  check_sizes<attn::fwd_config<128, 64, 256, false, false, false, false, false>>(tiles);
  check_sizes<attn::fwd_config<128, 64, 256, true, false, false, false, false>>(tiles);
}

TEST_CASE("attention forward index: S any with 3-D maps - GQA and MQA head mapping") {
  check_sizes<attn::fwd_config<128, 128, 128, false, false, true, false, true>>(any_sizes(3, 3));
  check_sizes<attn::fwd_config<128, 128, 128, true, false, true, false, true>>(any_sizes(2, 2));
  check_sizes<attn::fwd_config<128, 128, 128, false, true, true, false, true>>(any_sizes(8, 2));
  check_sizes<attn::fwd_config<128, 128, 128, false, true, true, false, true>>(any_sizes(12, 3));
  check_sizes<attn::fwd_config<128, 128, 128, true, true, true, false, true>>(any_sizes(16, 2));
  check_sizes<attn::fwd_config<128, 128, 128, true, true, true, false, true>>(any_sizes(24, 3));
  check_sizes<attn::fwd_config<128, 128, 128, false, true, true, false, true>>(any_sizes(5, 1));
  check_sizes<attn::fwd_config<128, 64, 256, true, true, true, false, true>>(any_sizes(4, 2));
}

TEST_CASE("attention forward index: varlen packed sequences with uneven lengths") {
  std::vector<problem> v;
  for (int s : {1, 5, 127, 128, 129, 300, 777})
    for (int b : {1, 2, 5, 13}) v.push_back({b, 3, 3, s});
  check_sizes<attn::fwd_config<128, 128, 128, false, false, false, true, true>>(v);
  check_sizes<attn::fwd_config<128, 128, 128, true, false, false, true, true>>(v);
  for (auto& p : v) p.kv_heads = 1;
  check_sizes<attn::fwd_config<128, 128, 128, true, true, false, true, true>>(v);
}

TEST_CASE("attention forward index: the check itself fails on a wrong mask") {
  // A causal configuration that is told S is a tile multiple while it is not
  // reads keys past the sequence's end: the check must say so.
  using wrong = attn::fwd_config<128, 128, 128, false, false, false, false, true>;
  CHECK(check_grid<wrong>({1, 1, 1, 256}) == "");
  CHECK(check_grid<wrong>({1, 1, 1, 200}) != "");
}
