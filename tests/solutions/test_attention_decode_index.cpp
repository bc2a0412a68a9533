// The split-KV plan of the decode solutions (tasks/solutions/templates/
// attention_decode_index.cuh) on the CPU: the splits of a grid cover every key
// once, each (query head, split) has its own scratch entry, the query heads of a
// CTA are those that read its KV head, and the combine of the splits' partial
// softmax states equals the softmax over all keys.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "tasks/solutions/templates/attention_decode_index.cuh"

namespace {

// What split s of keys [begin, end) leaves for one query: its normalised
// output (one value column) and log2-sum-exp, from scores in log2 units.
void partial_state(const std::vector<float>& s2, const std::vector<float>& v, int begin, int end, float& o,
                   float& lse2) {
  float m = -INFINITY;
  for (int j = begin; j < end; ++j) m = std::max(m, s2[size_t(j)]);
  double sum = 0, acc = 0;
  for (int j = begin; j < end; ++j) {
    const double p = std::exp2(double(s2[size_t(j)] - m));
    sum += p;
    acc += p * v[size_t(j)];
  }
  o = float(acc / sum);
  lse2 = float(m + std::log2(sum));
}

}  // namespace

TEST_CASE("attention decode index: the splits of every size cover each key once") {
  for (int chunk : {64, 512, 1024})
    for (int s : {1, 2, 63, 64, 65, 511, 512, 513, 777, 1000, 8192, 12289}) {
      INFO("chunk " << chunk << " S " << s);
      const int splits = attn::decode_splits(s, chunk);
      std::vector<int> covered(static_cast<size_t>(s), 0);
      for (int i = 0; i < splits; ++i) {
        const int b = attn::split_begin(i, chunk), e = attn::split_end(i, chunk, s);
        CHECK(b < e);  // no split is empty: its LSE would be -inf
        for (int j = b; j < e; ++j) covered[size_t(j)]++;
      }
      CHECK(std::count(covered.begin(), covered.end(), 1) == s);
    }
}

TEST_CASE("attention decode index: query heads of a KV head and their scratch entries") {
  for (auto [heads, kv_heads] : {std::pair{32, 32}, std::pair{32, 4}, std::pair{40, 5}, std::pair{8, 1}}) {
    const int batch = 3, splits = 7, group = heads / kv_heads;
    std::set<size_t> entries;
    for (int b = 0; b < batch; ++b)
      for (int hk = 0; hk < kv_heads; ++hk)
        for (int g = 0; g < group; ++g) {
          const int bh = attn::query_row(b, hk, g, heads, kv_heads);
          CHECK(bh / heads == b);
          CHECK((bh % heads) / group == hk);  // the task's kv(h) = h / (H / HKV)
          for (int s = 0; s < splits; ++s) entries.insert(attn::part_index(bh, s, splits));
        }
    CHECK(entries.size() == size_t(batch) * heads * splits);
    CHECK(*entries.rbegin() == size_t(batch) * heads * splits - 1);
  }
}

TEST_CASE("attention decode index: combining split states gives the softmax over all keys") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int s : {1, 100, 1000, 5000}) {
    for (int chunk : {64, 512}) {
      // Peaked scores (log2 units) so that splits have very different maxima.
      std::vector<float> s2(static_cast<size_t>(s)), v(static_cast<size_t>(s));
      for (int j = 0; j < s; ++j) {
        s2[size_t(j)] = normal(rng) * (j % 97 == 0 ? 12.f : 3.f);
        v[size_t(j)] = normal(rng);
      }
      float want_o, want_lse2;
      partial_state(s2, v, 0, s, want_o, want_lse2);
      const int splits = attn::decode_splits(s, chunk);
      std::vector<float> lse2(static_cast<size_t>(splits)), o(static_cast<size_t>(splits) * 3);  // o_stride 3: a column of [splits][3]
      for (int i = 0; i < splits; ++i)
        partial_state(s2, v, attn::split_begin(i, chunk), attn::split_end(i, chunk, s), o[size_t(i) * 3],
                      lse2[size_t(i)]);
      float got_o, got_lse;
      attn::combine_column(lse2.data(), o.data(), 3, splits, got_o, got_lse);
      INFO("S " << s << " chunk " << chunk);
      CHECK(got_o == doctest::Approx(want_o).epsilon(1e-4));
      CHECK(got_lse == doctest::Approx(want_lse2 * std::log(2.0)).epsilon(1e-5));
    }
  }
}
