#pragma once
// Text the service puts in answers and in its log, which quotes what models
// and clients wrote (any bytes, any length). Answers are made with json_text
// (evaluator/common/json_path.hpp).
#include <string>

#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench::service {

// `s` cut to about `n` bytes, between characters, with its size noted.
inline std::string truncated(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, utf8_boundary(s, n)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace ptxbench::service
