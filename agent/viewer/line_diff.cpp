#include "agent/viewer/line_diff.hpp"

#include <algorithm>
#include <cstdint>

namespace ptxbench::viewer {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

std::vector<diff_line> diff_lines(std::string_view old_text, std::string_view new_text, size_t max_cells) {
  auto a = split_lines(old_text);
  auto b = split_lines(new_text);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  size_t n = a.size() - prefix - suffix;  // middle of a
  size_t m = b.size() - prefix - suffix;  // middle of b

  std::vector<diff_line> out;
  auto same = [&](size_t i, size_t j) {
    out.push_back({diff_op::same, a[i], static_cast<int>(i + 1), static_cast<int>(j + 1)});
  };
  auto removed = [&](size_t i) { out.push_back({diff_op::removed, a[i], static_cast<int>(i + 1), 0}); };
  auto added = [&](size_t j) { out.push_back({diff_op::added, b[j], 0, static_cast<int>(j + 1)}); };

  for (size_t k = 0; k < prefix; ++k) same(k, k);
  if ((n + 1) * (m + 1) > max_cells) {
    for (size_t i = 0; i < n; ++i) removed(prefix + i);
    for (size_t j = 0; j < m; ++j) added(prefix + j);
  } else {
    // lcs[i][j]: LCS length of a[prefix+i..] and b[prefix+j..], filled backwards
    // so the walk below can go forwards and emit lines in order.
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = a[prefix + i] == b[prefix + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        same(prefix + i++, prefix + j++);
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        removed(prefix + i++);
      } else {
        added(prefix + j++);
      }
    }
  }
  for (size_t k = suffix; k-- > 0;) same(a.size() - 1 - k, b.size() - 1 - k);
  return out;
}

}  // namespace ptxbench::viewer
