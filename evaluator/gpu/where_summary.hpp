#pragma once
// Where the bad elements of one output sit, in words a model can act on:
// "bad elements confined to rows 3968-4095 (the last row tile)", "every 2nd
// column tile", "512 elements never written". At a hidden size the same
// facts in shares and first/last tiles ("the last 2.9% of columns (within the
// last column tile)"), never an index or a count that would tell the size.
// Plain C++ (no CUDA), so it is unit-tested without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"

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
  bool relative = false;             // a hidden size: no indices, no counts
};

std::string summarize_bad_elements(const bad_element_map& m);

// One line for the model about the first failing check of a report; at a
// hidden size the shares only (output_check::hidden_size).
std::string correctness_headline(const correctness_report& r);

}  // namespace ptxbench::gpu
