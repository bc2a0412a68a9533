#pragma once
// A task's baseline on random inputs, checked against the naive reference
// (tests/gpu/naive_reference.hpp) element by element: what the baseline
// tests and the variants probe share. Inputs are host-drawn uniform values
// rounded to each tensor's type; group offsets and cu_seqlens are the
// evaluator's index inputs; attention backward's O and LSE come from the
// naive forward pass (O rounded to its type).
#include <cstdint>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"
#include "tests/gpu/reference_fixtures.hpp"

namespace ptxbench::gpu_test {

struct output_error {
  std::string tensor;
  std::string type;  // the type the baseline wrote it in
  double rel_l2 = 0.0;
  double max_err_to_scale = 0.0;  // max |out - ref| / max |ref|
  bool compared = false;          // false: the baseline writes it elsewhere
};

struct variant_result {
  bool available = false;
  std::string name, why_not, error;  // error: an exception while running or comparing
  double setup_ms = 0.0, time_ms = 0.0;
  std::vector<output_error> outputs;
  // True when available, no error, and every compared output's rel L2 <= bound.
  bool passed(double rel_l2_bound) const;
  std::string summary() const;
};

// A size of the fixture's variant a little larger than its own (odd, past
// one tile, GQA ratios kept, MQA kept), still checkable on the host in seconds.
size_point probe_size(const task& t);

// Runs the baseline of `t` at `s`; compares every output unless `verify` is
// false (large sizes: set-up, a run and timing only, inputs left as constants).
variant_result check_variant(const task& t, const size_point& s, bool verify, int timed_runs);

}  // namespace ptxbench::gpu_test
