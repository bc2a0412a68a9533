#pragma once
// Text the service puts in answers and in its log, which quotes what models
// and clients wrote (any bytes, any length).
#include <nlohmann/json.hpp>
#include <string>

#include "evaluator/api/utf8.hpp"

namespace ptxbench::service {

// JSON text of an answer: invalid UTF-8 in a string becomes U+FFFD instead
// of a throw that would lose the answer (and every result of a batch).
inline std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `s` cut to about `n` bytes, between characters, with its size noted.
inline std::string truncated(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, utf8_boundary(s, n)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace ptxbench::service
