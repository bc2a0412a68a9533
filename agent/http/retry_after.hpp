#pragma once
// The Retry-After header of an answer (429, 503), as the transport reads it.
#include <ctime>
#include <optional>
#include <string_view>

namespace ptxbench::http {

// Reads a Retry-After value: delay seconds ("2", "0.5") or an HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT", relative to `now`; a past date gives 0).
// Returns nullopt when the value is neither.
std::optional<double> parse_retry_after(std::string_view value, std::time_t now);

}  // namespace ptxbench::http
