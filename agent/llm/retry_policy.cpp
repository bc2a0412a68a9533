#include "agent/llm/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace ptxbench::llm_detail {

bool is_retryable_status(long http_status) {
  return http_status == 408 || http_status == 429 || http_status >= 500;
}

double backoff_delay_s(int retry_index, double initial_s, double max_s, double unit_random) {
  double delay = initial_s * std::pow(2.0, std::min(retry_index, 62));
  delay = std::min(delay, max_s);
  return delay * (0.5 + 0.5 * std::clamp(unit_random, 0.0, 1.0));
}

double unit_random() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

}  // namespace ptxbench::llm_detail
