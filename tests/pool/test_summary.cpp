// Where bad elements sit, in the words fed back to the model.
#include <doctest/doctest.h>

#include "evaluator/gpu/where_summary.hpp"

using ptxbench::gpu::bad_element_map;
using ptxbench::gpu::summarize_bad_elements;

namespace {

bad_element_map grid(int64_t rows, int64_t cols, bool (*bad)(int64_t, int64_t)) {
  bad_element_map m;
  m.tensor = "C";
  m.rows = rows;
  m.cols = cols;
  m.row_bad.assign(size_t(rows), 0);
  m.col_bad.assign(size_t(cols), 0);
  int64_t tc = (cols + 127) / 128;
  m.tile_bad.assign(size_t(((rows + 127) / 128) * tc), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (bad(r, c)) {
        ++m.bad;
        ++m.row_bad[size_t(r)];
        ++m.col_bad[size_t(c)];
        ++m.tile_bad[size_t((r / 128) * tc + c / 128)];
        if (m.first_bad < 0) m.first_bad = r * cols + c;
      }
  return m;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a forgotten last row tile is named as such") {
  auto m = grid(512, 256, [](int64_t r, int64_t) { return r >= 384; });
  m.untouched = m.bad;
  m.first_untouched = true;
  std::string s = summarize_bad_elements(m);
  CHECK(contains(s, "rows 384-511 (the last row tile)"));
  CHECK(contains(s, "never written"));
  CHECK(contains(s, "first bad C[384,0]"));
  CHECK_FALSE(contains(s, "columns"));
}

TEST_CASE("every second column tile is recognised") {
  auto m = grid(256, 1024, [](int64_t, int64_t c) { return (c / 128) % 2 == 1; });
  std::string s = summarize_bad_elements(m);
  CHECK(contains(s, "every 2nd column tile (column tiles 1, 3, 5"));
  CHECK(contains(s, "in 8 of 16 128x128 tiles"));
}

TEST_CASE("scattered errors give counts and the first bad element - not made-up patterns") {
  auto m = grid(300, 300, [](int64_t r, int64_t c) { return (r * 7 + c * 13) % 101 == 0; });
  m.first_got = 1.5;
  m.first_expected = 2.25;
  std::string s = summarize_bad_elements(m);
  INFO(s);
  CHECK_FALSE(contains(s, "every"));
  CHECK(contains(s, "= 1.5 (expected 2.25)"));
  CHECK(summarize_bad_elements(grid(8, 8, [](int64_t, int64_t) { return false; })).empty());
}

TEST_CASE("at a hidden size the summary speaks in shares and first or last tiles - never an index or a count") {
  // 3001 x 1288: the last 8 columns wrong (the part of a tile past the last multiple of 128).
  auto m = grid(3001, 1288, [](int64_t, int64_t c) { return c >= 1280; });
  m.relative = true;
  m.first_got = 0.5;
  m.first_expected = 2.25;
  std::string s = summarize_bad_elements(m);
  INFO(s);
  CHECK(contains(s, "bad elements confined to the last 0.621% of columns (within the last column tile)"));
  CHECK(contains(s, "in 9.09% of the 128x128 tiles"));
  CHECK(contains(s, "the first bad element of C lies in the first row tile and the last column tile = 0.5 (expected 2.25)"));
  for (const char* number : {"3001", "3000", "1288", "1287", "1280", "24", "240", "11"}) CHECK_MESSAGE(!contains(s, number), number);

  auto u = grid(3001, 1288, [](int64_t r, int64_t) { return r < 7; });
  u.relative = true;
  u.untouched = u.bad;
  u.first_untouched = true;
  s = summarize_bad_elements(u);
  CHECK(contains(s, "0.233% of the elements never written"));
  CHECK(contains(s, "bad elements confined to the first 0.233% of rows (within the first row tile)"));
  CHECK(contains(s, "never written (expected 0)"));
}

TEST_CASE("the correctness headline gives shares only at a hidden size") {
  ptxbench::correctness_report r;
  ptxbench::output_check c;
  c.tensor = "C";
  c.size = "a hidden size where N is not a multiple of 128";
  c.hidden_size = true;
  c.hidden_seed = true;
  c.elements = 0;
  c.mismatch_fraction = 0.031;
  c.max_abs_error = 0.8;
  c.where = "bad elements confined to the last 3.11% of columns (within the last column tile)";
  r.outputs.push_back(c);
  CHECK(ptxbench::gpu::correctness_headline(r) ==
        "C wrong at a hidden size where N is not a multiple of 128 (hidden seed): 3.1% of C bad, max abs error 0.8, "
        "rel L2 0; bad elements confined to the last 3.11% of columns (within the last column tile)");
  r.outputs[0].hidden_size = false;
  r.outputs[0].size = "K=64 M=256 N=128";
  r.outputs[0].elements = 32768;
  CHECK(ptxbench::gpu::correctness_headline(r).rfind("C wrong at K=64 M=256 N=128 (hidden seed): 1016 of 32768 elements bad (3.1%)", 0) == 0);
}
