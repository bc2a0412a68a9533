// Every variant's baseline (tests/fixtures/reference_tasks.json) on the GPU,
// each output compared element by element with the naive fp64 reference.
#include <doctest/doctest.h>

#include "tests/baselines/require_gpu.hpp"
#include "tests/baselines/variant_check.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

TEST_CASE("every variant's library baseline computes the variant") {
  require_gpu();
  for (const task& t : reference_fixtures()) {
    const size_point s = probe_size(t);
    CAPTURE(t.id);
    CAPTURE(describe_size(s));
    const variant_result r = check_variant(t, s, true, 0);
    INFO(r.summary());
    CHECK(r.available);
    CHECK(r.error.empty());
    // An e4m3 O (cuDNN's fp8 forward) carries e4m3's rounding (2^-4 relative).
    CHECK(r.passed(t.op.fp8 ? 0.08 : 0.02));
    for (const auto& o : r.outputs)
      if (o.tensor != "LSE") CHECK(o.compared);  // only a varlen LSE may live elsewhere
  }
}
