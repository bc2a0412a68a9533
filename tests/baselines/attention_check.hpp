#pragma once
// Runs the attention baselines on random data and compares their outputs with
// the fp64 reference, on every row (small problems) or on sampled rows.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "evaluator/baselines/baselines.hpp"
#include "tests/baselines/gpu_support.hpp"

namespace ptxbench::gpu_test {

struct attention_check_result {
  bool available = false;
  std::string name;
  std::string why_not;
  double setup_ms = 0.0;
  double time_ms = 0.0;  // median of timed runs (0 when not timed)
  std::vector<std::pair<std::string, comparison>> tensors;  // per output tensor
  bool passed() const;
  std::string summary() const;
};

struct attention_check_options {
  int64_t b = 1, h = 2, s = 256, d = 128;
  bool causal = false;
  int sampled_rows = 0;  // 0: every row
  int timed_runs = 0;    // 0: no timing
};

// Forward: random Q, K, V; checks O and LSE.
attention_check_result check_attention_forward(const attention_check_options& o);
// Backward: random Q, K, V, dO; O and LSE from the fp64 reference forward
// (every row when sampled_rows == 0, else only the sampled heads' rows are
// exact and the rest come from cuDNN's forward); checks dQ, dK, dV.
attention_check_result check_attention_backward(const attention_check_options& o);

}  // namespace ptxbench::gpu_test
