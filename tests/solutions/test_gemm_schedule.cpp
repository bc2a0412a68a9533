// The GEMM solutions' work decomposition (tasks/solutions/templates/
// gemm_schedule.cuh, the very functions the kernels call) emulated on the CPU:
// every unit's job is played the way the kernel plays it (TMA boxes with
// zero fill outside the 2-D view, a BM×BN accumulator over the job's K
// tiles, stores guarded by row_end and N, split-K partial sums added), and
// the result must equal a direct GEMM at sizes that are not tile multiples.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "evaluator/api/index_inputs.hpp"
#include "gemm_schedule.cuh"

namespace {

// A row-major 2-D view [rows, cols]; reads outside it are 0, as TMA fills them.
struct view {
  const std::vector<float>* data;
  int rows, cols;
  float at(int r, int c) const { return r < rows && c < cols ? (*data)[size_t(r) * cols + c] : 0.f; }
};

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-4, 4);  // small integers: sums are exact in float
  std::vector<float> v(n);
  for (auto& x : v) x = float(d(gen));
  return v;
}

// Plays one job into `out` (row stride n): accumulate its K tiles, store or
// add (split-K) the elements inside [.., row_end) × [.., n). Returns how many
// elements it wrote.
int64_t play_job(const gemm::job& j, const view& a, const view& b, bool nn, int bm, int bn, int bk, int n,
                 bool add, std::vector<float>& out, std::vector<int>& writes) {
  std::vector<float> acc(size_t(bm) * bn, 0.f);
  for (int kt = j.kt_begin; kt < j.kt_end; ++kt)
    for (int r = 0; r < bm; ++r)
      for (int kk = 0; kk < bk; ++kk) {
        const float av = a.at(j.row0 + r, kt * bk + kk);
        if (av == 0.f) continue;
        for (int c = 0; c < bn; ++c)
          acc[size_t(r) * bn + c] +=
              av * (nn ? b.at(j.b_row + kt * bk + kk, j.n0 + c) : b.at(j.b_row + c, kt * bk + kk));
      }
  int64_t written = 0;
  for (int r = 0; r < bm && j.row0 + r < j.row_end; ++r)
    for (int c = 0; c < bn && j.n0 + c < n; ++c) {
      const size_t at = size_t(j.row0 + r) * n + j.n0 + c;
      out[at] = add ? out[at] + acc[size_t(r) * bn + c] : acc[size_t(r) * bn + c];
      ++writes[at];
      ++written;
    }
  return written;
}

// C[rows, n] of A·op(B) where batch/group of each row picks B's rows; every
// element written expected_writes times (1, or once per split).
void expect_gemm(const std::vector<float>& out, const std::vector<int>& writes, int expected_writes,
                 const std::vector<float>& a, const std::vector<float>& b, const std::vector<int>& row_group,
                 int n, int k, bool nn) {
  int64_t bad = 0;
  size_t first_bad = 0;
  for (size_t row = 0; row < row_group.size(); ++row) {
    const int g = row_group[row];
    for (int col = 0; col < n; ++col) {
      double ref = 0;
      for (int kk = 0; kk < k; ++kk)
        ref += double(a[row * k + kk]) *
               (nn ? b[(size_t(g) * k + kk) * n + col] : b[(size_t(g) * n + col) * k + kk]);
      const size_t at = row * n + col;
      if (writes[at] != expected_writes || double(out[at]) != ref) {
        if (bad++ == 0) first_bad = at;
      }
    }
  }
  CHECK_MESSAGE(bad == 0, bad << " elements wrong or not written " << expected_writes << "x, first at row "
                              << first_bad / n << " col " << first_bad % n << " (written " << writes[first_bad]
                              << "x)");
}

struct dense_case {
  int m, n, k, batches, bm, bn, bk, group_m, ctas;
  bool nn, split_k;
};

void check_dense(const dense_case& t) {
  CAPTURE(t.m);
  CAPTURE(t.n);
  CAPTURE(t.k);
  CAPTURE(t.batches);
  CAPTURE(t.nn);
  CAPTURE(t.split_k);
  gemm::dense_shape s{t.m, t.n, t.k, t.batches, t.bm, t.bn, t.bk, t.group_m, 1, t.nn};
  const int k_tiles = gemm::cdiv(t.k, t.bk);
  if (t.split_k) s.splits = gemm::split_count(gemm::dense_tiles(s) * t.batches, k_tiles, t.ctas);
  REQUIRE(s.splits >= 1);
  REQUIRE(s.splits <= k_tiles);
  const auto a = random_values(size_t(t.batches) * t.m * t.k, 1);
  const auto b = random_values(size_t(t.batches) * t.n * t.k, 2);
  const view av{&a, t.batches * t.m, t.k};
  const view bv = t.nn ? view{&b, t.batches * t.k, t.n} : view{&b, t.batches * t.n, t.k};
  std::vector<float> out(size_t(t.batches) * t.m * t.n, 0.f);
  std::vector<int> writes(out.size(), 0);
  for (int unit = 0; unit < gemm::dense_units(s); ++unit) {
    const gemm::job j = gemm::dense_job(s, unit);
    REQUIRE(j.row0 < j.row_end);  // no job lies wholly past its batch
    REQUIRE(j.n0 < t.n);
    REQUIRE(j.kt_begin < j.kt_end);  // every split has K tiles
    play_job(j, av, bv, t.nn, t.bm, t.bn, t.bk, t.n, t.split_k, out, writes);
  }
  std::vector<int> row_batch(out.size() / t.n);
  for (size_t r = 0; r < row_batch.size(); ++r) row_batch[r] = int(r) / t.m;
  expect_gemm(out, writes, s.splits, a, b, row_batch, t.n, t.k, t.nn);
}

}  // namespace

TEST_CASE("gemm schedule: dense and batched jobs cover C once at sizes that are not tile multiples") {
  // M = 1, 127, 129; N = 8, 136, 264; K = 8, 72, 520 (one K tile, a partial last tile).
  for (int m : {1, 127, 129, 300})
    for (int n : {8, 136, 264})
      for (int k : {8, 72, 200}) check_dense({m, n, k, 1, 128, 256, 64, 16, 132, false, false});
  check_dense({333, 264, 520, 1, 64, 128, 64, 2, 132, false, false});  // raster bands of 2 of 6 row blocks
  check_dense({129, 136, 72, 3, 128, 256, 64, 16, 132, false, false});  // batched: rows of the next batch read
  check_dense({129, 136, 72, 3, 64, 128, 64, 16, 132, true, false});    // batched nn: K rows of the next batch read
  check_dense({127, 200, 1000, 1, 128, 128, 128, 16, 132, false, false});  // fp8 tiles (K tile 128)
}

TEST_CASE("gemm schedule: split-K partitions K exactly and the partial sums add up") {
  for (int m : {1, 16, 37, 128})
    for (int k : {8, 72, 1032}) check_dense({m, 264, k, 1, 64, 256, 64, 16, 132, false, true});
  check_dense({128, 1000, 520, 1, 128, 256, 64, 16, 132, false, true});
  // The decode shape's decomposition: 32 tiles, 4 splits of 32 K tiles, 128 of 132 CTAs busy.
  gemm::dense_shape s{16, 8192, 8192, 1, 64, 256, 64, 16, 1, false};
  s.splits = gemm::split_count(gemm::dense_tiles(s), 8192 / 64, 132);
  CHECK(s.splits == 4);
  CHECK(gemm::dense_units(s) == 128);
  int begin, end;
  gemm::split_range(128, 4, 3, &begin, &end);
  CHECK(begin == 96);
  CHECK(end == 128);
}

TEST_CASE("gemm schedule: the raster is a permutation of the tile grid") {
  for (int m_blocks : {1, 5, 16, 64})
    for (int n_blocks : {1, 3, 112})
      for (int group_m : {0, 2, 16}) {
        std::vector<int> seen(size_t(m_blocks) * n_blocks, 0);
        for (int t = 0; t < m_blocks * n_blocks; ++t) {
          int mb, nb;
          gemm::raster(t, m_blocks, n_blocks, group_m, &mb, &nb);
          REQUIRE(mb >= 0);
          REQUIRE(mb < m_blocks);
          REQUIRE(nb >= 0);
          REQUIRE(nb < n_blocks);
          ++seen[size_t(nb) * m_blocks + mb];
        }
        for (int x : seen) REQUIRE(x == 1);
      }
}

namespace {

// The grouped kernel's walk: CTA b plays units b, b + ctas, ... with its own
// group cursor, as the persistent kernel's producer and consumers each do.
void check_grouped(int groups, int mean_rows, int n, int k, int ctas) {
  CAPTURE(groups);
  CAPTURE(mean_rows);
  CAPTURE(n);
  CAPTURE(k);
  const std::vector<int32_t> offsets = ptxbench::group_offsets(groups, mean_rows);
  const int total_rows = offsets.back();
  const gemm::grouped_shape s{groups, n, k, 128, 256, 64};
  std::vector<int> prefix(size_t(groups) + 1);
  gemm::group_tile_prefix(s, offsets.data(), prefix.data());
  const auto a = random_values(size_t(total_rows) * k, 3);
  const auto b = random_values(size_t(groups) * n * k, 4);
  const view av{&a, total_rows, k}, bv{&b, groups * n, k};
  std::vector<float> out(size_t(total_rows) * n, 0.f);
  std::vector<int> writes(out.size(), 0);
  for (int cta = 0; cta < ctas; ++cta) {
    int cursor = 0;
    for (int unit = cta; unit < prefix[size_t(groups)]; unit += ctas) {
      const gemm::job j = gemm::grouped_job(s, offsets.data(), prefix.data(), unit, &cursor);
      REQUIRE(cursor < groups);
      REQUIRE(j.row0 >= offsets[size_t(cursor)]);
      REQUIRE(j.row0 < j.row_end);
      REQUIRE(j.row_end == offsets[size_t(cursor) + 1]);
      play_job(j, av, bv, false, 128, 256, 64, n, false, out, writes);
    }
  }
  std::vector<int> row_group(static_cast<size_t>(total_rows));
  for (int g = 0; g < groups; ++g)
    for (int r = offsets[size_t(g)]; r < offsets[size_t(g) + 1]; ++r) row_group[size_t(r)] = g;
  expect_gemm(out, writes, 1, a, b, row_group, n, k, false);
}

}  // namespace

TEST_CASE("gemm schedule: grouped jobs follow the offsets with empty groups among them") {
  // group_rows has an empty group at g = 5 (and 12, ...), uneven ones around it.
  check_grouped(1, 1, 8, 8, 132);
  check_grouped(7, 300, 264, 72, 132);
  check_grouped(8, 100, 136, 520, 5);  // few CTAs: each walks several groups
  check_grouped(64, 37, 136, 72, 132);
  check_grouped(16, 130, 8, 8, 3);
  // The grid's bound on tiles, used by the manifests: (cdiv(T,128) + G) · cdiv(N,256).
  for (int g : {1, 7, 16, 64})
    for (int m : {1, 37, 300, 512}) {
      const auto offsets = ptxbench::group_offsets(g, m);
      const gemm::grouped_shape s{g, 4096, 64, 128, 256, 64};
      std::vector<int> prefix(size_t(g) + 1);
      gemm::group_tile_prefix(s, offsets.data(), prefix.data());
      CHECK(prefix[size_t(g)] <= (gemm::cdiv(offsets.back(), 128) + g) * 16);
    }
}

TEST_CASE("gemm schedule: one CTA per grouped m tile (the tcgen05 grid) finds each tile once") {
  for (int g : {1, 7, 16, 64})
    for (int m : {1, 37, 300}) {
      const auto offsets = ptxbench::group_offsets(g, m);
      const int bound = gemm::cdiv(offsets.back(), 128) + g;  // the manifest's grid
      std::vector<int> rows_seen(size_t(offsets.back()), 0);
      for (int t = 0; t < bound; ++t) {
        int group = -1, mb = -1;
        if (!gemm::grouped_m_tile(offsets.data(), g, 128, t, &group, &mb)) continue;
        const int row0 = offsets[size_t(group)] + mb * 128;
        REQUIRE(row0 < offsets[size_t(group) + 1]);
        for (int r = row0; r < std::min(row0 + 128, int(offsets[size_t(group) + 1])); ++r) ++rows_seen[size_t(r)];
      }
      for (int x : rows_seen) REQUIRE(x == 1);
    }
}
