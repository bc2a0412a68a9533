#pragma once
// The lines of a text, as the tests that compare PTX line by line read them:
// split at '\n', a trailing newline giving a last empty line (line i of a
// file is element i-1).
#include <string>
#include <vector>

namespace ptxbench::test {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t eol = text.find('\n', at);
    out.push_back(text.substr(at, eol == std::string::npos ? std::string::npos : eol - at));
    if (eol == std::string::npos) break;
    at = eol + 1;
  }
  return out;
}

}  // namespace ptxbench::test
