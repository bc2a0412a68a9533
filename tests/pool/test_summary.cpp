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
  CHECK_FALSE(contains(s, "every"));
  CHECK(contains(s, "= 1.5 (expected 2.25)"));
  CHECK(summarize_bad_elements(grid(8, 8, [](int64_t, int64_t) { return false; })).empty());
}
