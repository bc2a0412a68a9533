// The line diff is dtl's (Debian's libdtl-dev): Wu's O(NP) algorithm finds a
// shortest edit script without an N x M table, so attention-sized PTX (4 000
// lines a side) diffs as GNU diff does instead of falling back to "every line
// changed" as a table-bounded LCS had to.
#include "agent/viewer/line_diff.hpp"

#include <dtl/dtl.hpp>

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

std::vector<diff_line> diff_lines(std::string_view old_text, std::string_view new_text, size_t max_lines) {
  auto a = split_lines(old_text);
  auto b = split_lines(new_text);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const size_t n = a.size() - prefix - suffix;  // middle of a
  const size_t m = b.size() - prefix - suffix;  // middle of b

  std::vector<diff_line> out;
  auto same = [&](size_t i, size_t j) {
    out.push_back({diff_op::same, a[i], static_cast<int>(i + 1), static_cast<int>(j + 1)});
  };
  auto removed = [&](size_t i) { out.push_back({diff_op::removed, a[i], static_cast<int>(i + 1), 0}); };
  auto added = [&](size_t j) { out.push_back({diff_op::added, b[j], 0, static_cast<int>(j + 1)}); };

  for (size_t k = 0; k < prefix; ++k) same(k, k);
  if (n > max_lines || m > max_lines) {
    for (size_t i = 0; i < n; ++i) removed(prefix + i);
    for (size_t j = 0; j < m; ++j) added(prefix + j);
  } else if (n > 0 || m > 0) {
    std::vector<std::string> mid_a(a.begin() + prefix, a.begin() + prefix + n);
    std::vector<std::string> mid_b(b.begin() + prefix, b.begin() + prefix + m);
    dtl::Diff<std::string, std::vector<std::string>> d(mid_a, mid_b);
    d.onHuge();  // bounded memory on long inputs
    d.compose();
    // dtl may list a change's added lines before its removed ones; each run of
    // changes is shown removed first, then added, as diff -u does.
    size_t i = 0, j = 0;
    std::vector<size_t> run_removed, run_added;
    auto flush = [&] {
      for (size_t k : run_removed) removed(k);
      for (size_t k : run_added) added(k);
      run_removed.clear();
      run_added.clear();
    };
    for (const auto& element : d.getSes().getSequence()) {
      const auto type = element.second.type;
      if (type == dtl::SES_COMMON) {
        flush();
        same(prefix + i++, prefix + j++);
      } else if (type == dtl::SES_DELETE) {
        run_removed.push_back(prefix + i++);
      } else {
        run_added.push_back(prefix + j++);
      }
    }
    flush();
  }
  for (size_t k = suffix; k-- > 0;) same(a.size() - 1 - k, b.size() - 1 - k);
  return out;
}

}  // namespace ptxbench::viewer
