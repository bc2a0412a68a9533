// Every counter the evaluator asks CUPTI's range profiler for is a metric the
// Hopper chip has. A name CUPTI does not know fails the whole profile on the
// GPU (CUPTI_ERROR_INVALID_PARAMETER at ConfigAddMetrics), which no CPU test
// saw before: the profile's tensor-pipe metric had such a name.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "evaluator/profile/hw_host.hpp"
#include "evaluator/protocol/profile_protocol.hpp"
#include "evaluator/protocol/protocol.hpp"

using namespace ptxbench;

namespace {

constexpr const char* k_hopper = "GH100";  // H100 and H200

void require_known(const std::vector<std::string>& metrics, int max_passes) {
  for (const auto& m : metrics) {
    std::string error;
    INFO("metric " << m << ": " << error);
    const int passes = hardware_passes(k_hopper, {m}, error);
    CHECK_MESSAGE(passes >= 1, m << " is not a " << k_hopper << " metric: " << error);
  }
  std::string error;
  const int all = hardware_passes(k_hopper, metrics, error);
  INFO(error);
  CHECK(all >= 1);
  CHECK(all <= max_passes);
}

}  // namespace

TEST_CASE("profile counters are metrics of the Hopper chip within the profile's pass budget") {
  require_known(protocol::profile_counter_metrics(), 16);  // profile_job's max_passes
}

TEST_CASE("hardware cross-check counters are metrics of the Hopper chip within its pass budget") {
  require_known(protocol::hw_check_metrics(), 8);  // hw_pass's max_passes
}

TEST_CASE("a metric name the chip lacks is refused with CUPTI's reason") {
  std::string error;
  CHECK(hardware_passes(k_hopper, {"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed"}, error) ==
        -1);
  CHECK(error.find("CUPTI_ERROR_INVALID_PARAMETER") != std::string::npos);
  error.clear();
  CHECK(hardware_passes(k_hopper, {"gpu__time_duration.sum", "no__such_metric.sum"}, error) == -1);
  CHECK(!error.empty());
}
