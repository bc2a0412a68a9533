#include <doctest/doctest.h>

#include "tests/baselines/attention_check.hpp"
#include "tests/baselines/require_gpu.hpp"

namespace ptxbench::gpu_test {
namespace {

// B1 H2 S256 D128, every row against the fp64 reference.
void check_case(bool backward, bool causal) {
  require_gpu();
  attention_check_options o;
  o.causal = causal;
  const attention_check_result r = backward ? check_attention_backward(o) : check_attention_forward(o);
  INFO(r.summary());
  REQUIRE_MESSAGE(r.available, r.why_not);
  CHECK(r.name.find("cuDNN") != std::string::npos);
  CHECK(r.passed());
}

TEST_CASE("cuDNN attention forward matches the fp64 reference (O and natural-log LSE)") { check_case(false, false); }
TEST_CASE("cuDNN causal attention forward matches the fp64 reference") { check_case(false, true); }
TEST_CASE("cuDNN attention backward matches the fp64 reference (dQ - dK - dV)") { check_case(true, false); }
TEST_CASE("cuDNN causal attention backward matches the fp64 reference") { check_case(true, true); }

}  // namespace
}  // namespace ptxbench::gpu_test
