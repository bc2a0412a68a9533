#pragma once
// GPU test cases start with REQUIRE_GPU(): without a usable GPU the whole
// executable prints why and exits 77, which CTest reports as skipped.
#include <cstdio>
#include <cstdlib>

#include "tests/baselines/gpu_support.hpp"

namespace ptxbench::gpu_test {
inline gpu& require_gpu() {
  gpu& g = the_gpu();
  if (!g.ok) {
    std::printf("SKIPPED: GPU library tests need a GPU: %s\n", g.why_not.c_str());
    std::fflush(stdout);
    std::exit(77);
  }
  return g;
}
}  // namespace ptxbench::gpu_test
