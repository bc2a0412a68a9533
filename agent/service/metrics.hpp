#pragma once
// The service's counters, rendered as Prometheus text (exposition format
// 0.0.4): evaluations, their latency histogram, the outcome of every stage,
// HTTP answers by endpoint and status, and the queue gauges given at render time.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::service {

class service_metrics {
 public:
  // Upper bounds (seconds) of the latency histogram's buckets; +Inf is implied.
  static constexpr std::array<double, 11> k_buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  void record_evaluation(const evaluation_result& r, double seconds);
  void record_http(const std::string& endpoint, int status);
  void record_log_failure();
  uint64_t evaluations() const;
  // `gpus`: the evaluator's usage per GPU (busy seconds, jobs, passes, spare starts).
  std::string render(int queue_waiting, int queue_running, int queue_capacity, int width,
                     const std::vector<gpu_usage>& gpus = {}) const;

 private:
  mutable std::mutex m_mutex;
  uint64_t m_evaluations = 0;
  std::array<uint64_t, k_buckets.size()> m_bucket_counts{};  // per bucket, not cumulative
  double m_seconds_sum = 0.0;
  std::map<std::pair<std::string, std::string>, uint64_t> m_stage_outcomes;  // (stage, status)
  std::map<std::string, uint64_t> m_verdicts;  // "passed" or the verdict stage
  std::map<std::pair<std::string, int>, uint64_t> m_http;
  uint64_t m_log_failures = 0;
};

}  // namespace ptxbench::service
