#pragma once
// Plain text edits shared across the tree.
#include <string>

namespace ptxbench {

// `text` with every occurrence of `from` replaced by `to`, left to right, the
// replacement never searched again; an empty `from` changes nothing.
inline std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace ptxbench
