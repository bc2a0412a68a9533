#include "agent/http/retry_after.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace ptxbench::http {

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

}  // namespace ptxbench::http
