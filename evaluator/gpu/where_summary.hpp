#pragma once
// Where the bad elements of one output sit, in words a model can act on:
// "bad elements confined to rows 3968-4095 (the last row tile)", "every 2nd
// column tile", "512 elements never written". Plain C++ (no CUDA), so it is
// unit-tested without a GPU.
#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::gpu {

struct bad_element_map {
  std::string tensor;                // "C"
  int64_t rows = 0;                  // of the [rows, cols] view (all but the last dimension flattened)
  int64_t cols = 0;
  std::vector<uint32_t> row_bad;     // bad count per row
  std::vector<uint32_t> col_bad;     // bad count per column
  std::vector<uint32_t> tile_bad;    // per 128x128 tile, row-major over tiles
  int64_t bad = 0;
  int64_t untouched = 0;
  int64_t nonfinite = 0;
  int64_t first_bad = -1;            // flat index, -1 if none
  double first_got = 0.0;
  double first_expected = 0.0;
  bool first_untouched = false;
};

std::string summarize_bad_elements(const bad_element_map& m);

}  // namespace ptxbench::gpu
