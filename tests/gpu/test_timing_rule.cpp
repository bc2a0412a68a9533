// The performance stage's arithmetic, without a GPU: sample statistics, the
// stopping rule, the kept samples, the summary and the stage's verdict.
#include <doctest/doctest.h>

#include <vector>

#include "evaluator/gpu/timing_rule.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu;

namespace {

// n samples around `ms`, alternating +-`rel` (relative): spread ~rel.
std::vector<double> around(double ms, int n, double rel) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(ms * (1.0 + (i % 2 ? rel : -rel)));
  return v;
}

}  // namespace

TEST_CASE("sample statistics - median and both spreads") {
  CHECK(summarize_samples({}).count == 0);
  CHECK(summarize_samples({}).median == 0.0);
  CHECK(summarize_samples({3.0, 1.0, 2.0}).median == doctest::Approx(2.0));
  CHECK(summarize_samples({4.0, 1.0, 2.0, 3.0}).median == doctest::Approx(2.5));
  sample_stats one = summarize_samples({2.0});
  CHECK(one.rel_stddev == 0.0);
  CHECK(one.robust_spread == 0.0);
  // Mean 2.5, sample stddev 1.2910; median 2.5, MAD 1.0.
  sample_stats s = summarize_samples({1.0, 2.0, 3.0, 4.0});
  CHECK(s.rel_stddev == doctest::Approx(1.2909944 / 2.5));
  CHECK(s.robust_spread == doctest::Approx(1.4826 * 1.0 / 2.5));
  // One sample in twenty at twice the time: the standard deviation jumps, the robust spread does not.
  std::vector<double> v(19, 1.0);
  v.push_back(2.0);
  sample_stats o = summarize_samples(v);
  CHECK(o.median == 1.0);
  CHECK(o.robust_spread == 0.0);
  CHECK(o.rel_stddev > 0.2);
}

TEST_CASE("stopping rule - converges with enough quiet samples on both sides") {
  stopping_rule r;
  std::vector<double> quiet = around(1.0, 10, 0.001), few = around(1.0, 9, 0.001);
  CHECK_FALSE(is_finished(r, few, nullptr, 10.0, 10).has_value());
  CHECK(is_finished(r, quiet, nullptr, 10.0, 11) == sampling_stop::converged);
  std::vector<double> noisy = around(0.5, 10, 0.02);
  CHECK_FALSE(is_finished(r, quiet, &noisy, 10.0, 11).has_value());  // the baseline is not settled yet
  CHECK(is_finished(r, quiet, &quiet, 10.0, 11) == sampling_stop::converged);
  std::vector<double> over = around(1.0, 10, 0.0051 / 1.4826);
  CHECK_FALSE(is_finished(r, over, nullptr, 10.0, 11).has_value());
  std::vector<double> under = around(1.0, 10, 0.0049 / 1.4826);
  CHECK(is_finished(r, under, nullptr, 10.0, 11) == sampling_stop::converged);
  // A rare outlier does not keep a steady kernel sampling until the budget.
  std::vector<double> outlier = around(1.0, 20, 0.001);
  outlier[7] = 1.85;
  CHECK(is_finished(r, outlier, nullptr, 10.0, 21) == sampling_stop::converged);
}

TEST_CASE("stopping rule - the budget or twice the budget or the cap ends a noisy measurement") {
  stopping_rule r;
  r.budget_ms = 100.0;
  std::vector<double> noisy = around(1.0, 50, 0.05);
  CHECK_FALSE(is_finished(r, noisy, nullptr, 99.0, 51).has_value());
  CHECK(is_finished(r, noisy, nullptr, 100.5, 51) == sampling_stop::time_budget);
  // Past the budget with too few samples: go on, until twice the budget.
  std::vector<double> two = around(40.0, 2, 0.05);
  CHECK_FALSE(is_finished(r, two, nullptr, 150.0, 3).has_value());
  CHECK(is_finished(r, two, nullptr, 200.5, 3) == sampling_stop::time_limit);
  std::vector<double> three = around(40.0, 3, 0.05);
  CHECK(is_finished(r, three, nullptr, 100.5, 4) == sampling_stop::time_budget);
  CHECK(is_finished(r, noisy, nullptr, 10.0, k_max_checked_samples) == sampling_stop::sample_cap);
  CHECK_FALSE(is_finished(r, noisy, nullptr, 10.0, k_max_checked_samples - 1).has_value());
  // Convergence wins when it comes with the budget's end.
  std::vector<double> quiet = around(1.0, 12, 0.001);
  CHECK(is_finished(r, quiet, nullptr, 500.0, k_max_checked_samples) == sampling_stop::converged);
}

TEST_CASE("kept samples - all when few and evenly spaced with both ends when many") {
  std::vector<double> few = {0.5, 0.25, 0.75};
  CHECK(kept_samples(few, 4) == std::vector<float>{0.5f, 0.25f, 0.75f});
  std::vector<double> many;
  for (int i = 0; i < 1000; ++i) many.push_back(double(i));
  std::vector<float> k = kept_samples(many, 256);
  REQUIRE(k.size() == 256);
  CHECK(k.front() == 0.0f);
  CHECK(k.back() == 999.0f);
  for (size_t i = 1; i < k.size(); ++i) CHECK(k[i] > k[i - 1]);
  CHECK(kept_samples(many, 2) == std::vector<float>{0.0f, 999.0f});
  CHECK(kept_samples(std::vector<double>(300, 1.0)).size() == performance_report::k_kept_samples);
}

TEST_CASE("summary - medians and speedup and rates and floor and how sampling ended") {
  performance_report p;
  p.peak_tflops = 100.0;
  timed_work work;
  work.flops = 2e12;  // 2 TFLOP: 20 ms at the peak
  work.bytes = 1e9;
  work.copy_gbps = 1000.0;  // 1 ms to move the bytes
  std::vector<double> cand = {41.0, 40.0, 39.0, 40.0, 40.5}, base = {30.0, 31.0, 30.0, 29.0, 30.0};
  summarise_samples(p, cand, &base, sampling_stop::time_budget, work);
  CHECK(p.candidate_ms == doctest::Approx(40.0));
  CHECK(p.baseline_ms == doctest::Approx(30.0));
  CHECK(p.speedup == doctest::Approx(0.75));
  CHECK(p.candidate_samples == 5);
  CHECK(p.baseline_samples == 5);
  CHECK(p.candidate_tflops == doctest::Approx(50.0));
  CHECK(p.pct_of_peak == doctest::Approx(50.0));
  CHECK(p.floor_ms == doctest::Approx(20.0));
  CHECK_FALSE(p.below_floor);
  CHECK_FALSE(p.converged);
  CHECK(p.stop == sampling_stop::time_budget);
  CHECK(p.candidate_noise == doctest::Approx(summarize_samples(cand).robust_spread));
  CHECK(p.candidate_sample_ms == std::vector<float>{41.0f, 40.0f, 39.0f, 40.0f, 40.5f});
  CHECK(p.baseline_sample_ms.size() == 5);

  performance_report fast;
  fast.peak_tflops = 100.0;
  std::vector<double> quick = {14.0, 14.0, 14.0};  // under 0.75 x the 20 ms floor
  summarise_samples(fast, quick, nullptr, sampling_stop::converged, work);
  CHECK(fast.below_floor);
  CHECK(fast.converged);
  CHECK(fast.speedup == 0.0);  // no baseline timed: no speedup, no baseline figures
  CHECK(fast.baseline_samples == 0);
  CHECK(fast.baseline_sample_ms.empty());
}

TEST_CASE("performance stage - floor and baseline gaps and threshold and non-convergence said") {
  performance_report p;
  p.candidate_ms = 1.0;
  p.baseline_ms = 0.9;
  p.baseline_name = "cuBLASLt";
  p.speedup = 0.9;
  p.threshold = 0.9;
  p.stop = sampling_stop::converged;
  p.converged = true;
  stage_outcome ok = performance_stage(p, true, false, "", 12.0);
  CHECK(ok.status == stage_status::passed);
  CHECK(ok.time_ms == 12.0);
  CHECK(ok.reason.find("did not converge") == std::string::npos);
  p.speedup = 0.89;
  CHECK(performance_stage(p, true, false, "", 12.0).status == stage_status::failed);
  CHECK(performance_stage(p, false, true, "baseline failed: x", 1.0).status == stage_status::error);
  stage_outcome gap = performance_stage(p, false, false, "no baseline library in this worker build", 1.0);
  CHECK(gap.status == stage_status::unverified);
  CHECK(gap.reason.find("no baseline library") != std::string::npos);
  p.stop = sampling_stop::time_budget;
  p.converged = false;
  p.candidate_samples = 37;
  p.candidate_noise = 0.012;
  stage_outcome slow = performance_stage(p, true, false, "", 1.0);
  CHECK(slow.status == stage_status::failed);  // the verdict is the medians', converged or not
  CHECK(slow.reason.find("sampling did not converge: the timing budget ended it after 37 samples (noise 1.20%") !=
        std::string::npos);
  p.below_floor = true;
  p.floor_ms = 2.0;
  CHECK(performance_stage(p, true, false, "", 1.0).status == stage_status::failed);
  CHECK(performance_stage(p, true, false, "", 1.0).reason.find("below the physical floor") != std::string::npos);
}

TEST_CASE("roofline baseline - the speedup is against the physical floor where no library covers the variant") {
  performance_report p;
  p.peak_tflops = 100.0;
  p.threshold = 0.5;
  timed_work work;
  work.flops = 2e12;  // 20 ms at the peak
  work.bytes = 1e9;
  work.copy_gbps = 1000.0;
  work.roofline = true;
  std::vector<double> cand = {40.0, 40.0, 40.0};
  summarise_samples(p, cand, nullptr, sampling_stop::converged, work);
  CHECK(p.baseline_kind == "roofline");
  CHECK(p.baseline_ms == doctest::Approx(20.0));
  CHECK(p.speedup == doctest::Approx(0.5));
  CHECK(p.baseline_name.find("roofline floor") == 0);
  const stage_outcome pass = performance_stage(p, false, false, "no library covers this variant", 1.0);
  CHECK(pass.status == stage_status::passed);
  CHECK(pass.reason.find("roofline floor") != std::string::npos);
  p.threshold = 0.8;
  CHECK(performance_stage(p, false, false, "no library covers this variant", 1.0).status == stage_status::failed);

  performance_report library;
  std::vector<double> base = {30.0, 30.0, 30.0};
  work.roofline = false;
  summarise_samples(library, cand, &base, sampling_stop::converged, work);
  CHECK(library.baseline_kind == "library");
}
