#pragma once
// GPU test cases start with require_gpu(): on a machine without a GPU the
// whole executable prints why and exits 77, which CTest reports as skipped;
// where the driver is there but fails, it exits 1 (a GPU machine that cannot
// run the tests is a failure, not a skip).
#include <cstdio>
#include <cstdlib>

#include "tests/baselines/gpu_support.hpp"

namespace ptxbench::gpu_test {
inline gpu& require_gpu() {
  gpu& g = the_gpu();
  if (!g.ok && g.absent) {
    std::printf("SKIPPED: GPU library tests need a GPU: %s\n", g.why_not.c_str());
    std::fflush(stdout);
    std::exit(77);
  }
  if (!g.ok) {
    std::printf("FAILED: the NVIDIA driver is here but unusable: %s\n", g.why_not.c_str());
    std::fflush(stdout);
    std::exit(1);
  }
  return g;
}
}  // namespace ptxbench::gpu_test
