// The index math of the attention backward solutions (tasks/solutions/templates/
// attention_bwd_index.cuh), run on the CPU over every CTA and step of the grid
// the manifests launch: each (query head, query, key) pair that the definition
// needs (every pair, or key <= query when causal) reaches dQ/dK/dV exactly once,
// from the CTA that writes the key's dK/dV row (its KV head's, GQA), and no
// other pair does.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tasks/solutions/templates/attention_bwd_index.cuh"

namespace {

struct problem {
  int batch, heads, kv_heads, seq_len;
};

// causal: the definition checked against (C::causal is the schedule's).
template <class C>
std::string check_grid(const problem& p, bool causal = C::causal) {
  const int S = p.seq_len, kvh = C::gqa ? p.kv_heads : p.heads;
  const int grid_x = S / C::block_n, grid_y = C::gqa ? p.kv_heads : p.batch * p.heads;
  const int grid_z = C::gqa ? p.batch : 1;
  // uses[(b*H + h)*S*S + q*S + k]: how many times pair (q, k) of query head h is used.
  std::vector<int> uses(size_t(p.batch) * p.heads * S * S, 0);
  std::vector<int> kv_written(size_t(p.batch) * kvh * S, 0);
  for (int z = 0; z < grid_z; ++z)
    for (int y = 0; y < grid_y; ++y)
      for (int x = 0; x < grid_x; ++x) {
        const attn::bwd_work w = attn::locate_bwd<C>(x, y, z, grid_y, p.heads, S);
        const int b = C::gqa ? z : y / p.heads;
        const int hk = C::gqa ? y : y % p.heads;
        if (w.kv_row != (size_t(b) * kvh + hk) * S + size_t(x) * C::block_n) return "dK/dV row";
        for (int kr = 0; kr < C::block_n; ++kr) kv_written[w.kv_row + size_t(kr)]++;
        for (int it = 0; it < w.group * w.q_blocks; ++it) {
          const size_t row = attn::step_row<C>(w, it, S);  // in [B*H*S]
          const size_t bh = row / size_t(S);
          const int q0 = int(row % size_t(S));
          if (int(bh) / p.heads != b) return "a query head of another batch";
          const int h = int(bh) % p.heads;
          if ((C::gqa ? h / (p.heads / p.kv_heads) : h) != hk) return "a query head of another KV head";
          if (q0 % C::block_m != 0 || q0 + C::block_m > S) return "a query block off the grid";
          const bool mask = attn::step_needs_mask<C>(w, it);
          for (int qr = 0; qr < C::block_m; ++qr)
            for (int kr = 0; kr < C::block_n; ++kr)
              if (!mask || !attn::pair_masked<C>(w, it, kr, qr))
                uses[(bh * S + size_t(q0 + qr)) * S + size_t(x * C::block_n + kr)]++;
        }
      }
  for (size_t i = 0; i < kv_written.size(); ++i)
    if (kv_written[i] != 1) return "a dK/dV row written " + std::to_string(kv_written[i]) + " times";
  for (size_t bh = 0; bh < size_t(p.batch) * p.heads; ++bh)
    for (int q = 0; q < S; ++q)
      for (int k = 0; k < S; ++k) {
        const int want = (!causal || k <= q) ? 1 : 0;
        const int got = uses[(bh * S + size_t(q)) * S + size_t(k)];
        if (got != want)
          return "pair (q " + std::to_string(q) + ", k " + std::to_string(k) + ") used " + std::to_string(got) +
                 " times, not " + std::to_string(want);
      }
  return "";
}

template <class C>
void check_sizes(const std::vector<problem>& problems) {
  for (const problem& p : problems) {
    INFO("B=" << p.batch << " H=" << p.heads << " HKV=" << p.kv_heads << " S=" << p.seq_len);
    CHECK(check_grid<C>(p) == "");
  }
}

}  // namespace

TEST_CASE("attention backward index: every needed pair once - causal and not") {
  const std::vector<problem> v = {{1, 2, 2, 128}, {2, 3, 3, 256}, {1, 1, 1, 512}, {3, 1, 1, 384}};
  check_sizes<attn::bwd_config<128, 64, false, false>>(v);
  check_sizes<attn::bwd_config<128, 64, true, false>>(v);
}

TEST_CASE("attention backward index: GQA sums dK and dV over the query heads of a group") {
  const std::vector<problem> v = {{1, 8, 2, 256}, {2, 4, 1, 128}, {3, 6, 3, 384}, {1, 4, 4, 256}};
  check_sizes<attn::bwd_config<128, 64, false, true>>(v);
  check_sizes<attn::bwd_config<128, 64, true, true>>(v);
}

TEST_CASE("attention backward index: the check fails on a schedule of the other kind") {
  // Each schedule run against the other definition: a check that passed them
  // would prove nothing.
  using causal = attn::bwd_config<128, 64, true, false>;
  using plain = attn::bwd_config<128, 64, false, false>;
  CHECK(check_grid<plain>({1, 1, 1, 256}, true) != "");
  CHECK(check_grid<causal>({1, 1, 1, 256}, false) != "");
}
