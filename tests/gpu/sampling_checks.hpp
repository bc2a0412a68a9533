#pragma once
// What every timed evaluation's report must say about its sampling: how it
// ended (recorded, and consistent with the stopping rule), the raw samples
// (bounded, and the ones the medians came from), and a reason that says when
// sampling did not converge.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::gpu_test {

inline double median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? double(v[n / 2]) : 0.5 * (double(v[n / 2 - 1]) + double(v[n / 2]));
}

inline void check_sampling_record(const evaluation_result& r) {
  REQUIRE(r.performance);
  const performance_report& p = *r.performance;
  INFO("stop " << to_string(p.stop) << ", " << p.candidate_samples << " samples, noise " << p.candidate_noise << " / "
               << p.baseline_noise);
  CHECK(p.stop != sampling_stop::unrecorded);
  CHECK(p.converged == (p.stop == sampling_stop::converged));
  if (p.converged) {
    CHECK(p.candidate_samples >= 10);
    CHECK(p.candidate_noise < 0.005);
    if (p.baseline_samples > 0) CHECK(p.baseline_noise < 0.005);
  }
  const size_t cap = performance_report::k_kept_samples;
  CHECK(p.candidate_sample_ms.size() == std::min(size_t(p.candidate_samples), cap));
  CHECK(p.baseline_sample_ms.size() == std::min(size_t(p.baseline_samples), cap));
  for (float ms : p.candidate_sample_ms) CHECK(ms > 0.0f);
  for (float ms : p.baseline_sample_ms) CHECK(ms > 0.0f);
  if (size_t(p.candidate_samples) <= cap) CHECK(median_of(p.candidate_sample_ms) == doctest::Approx(p.candidate_ms));
  if (p.baseline_samples > 0 && size_t(p.baseline_samples) <= cap) {
    CHECK(median_of(p.baseline_sample_ms) == doctest::Approx(p.baseline_ms));
    CHECK(p.speedup == doctest::Approx(p.baseline_ms / p.candidate_ms));
  }
  auto it = r.stages.find(stage::performance);
  if (it != r.stages.end() && (it->second.status == stage_status::passed || it->second.status == stage_status::failed))
    CHECK((it->second.reason.find("did not converge") != std::string::npos) == !p.converged);
  MESSAGE("sampling: " << to_string(p.stop) << " after " << p.candidate_samples << " samples, noise "
                       << 100 * p.candidate_noise << "% / " << 100 * p.baseline_noise << "%");
}

}  // namespace ptxbench::gpu_test
