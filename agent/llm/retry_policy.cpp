#include "agent/llm/retry_policy.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <string>

namespace ptxbench::llm_detail {

bool is_retryable_status(long http_status) {
  return http_status == 408 || http_status == 429 || http_status >= 500;
}

std::optional<double> parse_retry_after(std::string_view value, std::time_t now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r' ||
                            value.back() == '\n'))
    value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  std::string text(value);
  if (std::isdigit(static_cast<unsigned char>(text.front()))) {
    size_t used = 0;
    try {
      double seconds = std::stod(text, &used);
      if (used == text.size() && std::isfinite(seconds) && seconds >= 0) return seconds;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  // curl_getdate reads the RFC 7231 date formats; it is thread-safe.
  std::time_t when = curl_getdate(text.c_str(), nullptr);
  if (when == -1) return std::nullopt;
  return std::max(0.0, std::difftime(when, now));
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
