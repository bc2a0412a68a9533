#pragma once
// A line diff (a shortest edit script, as GNU diff finds) for showing how a
// candidate's PTX changed from one round to the next.
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::viewer {

enum class diff_op { same, removed, added };

struct diff_line {
  diff_op op = diff_op::same;
  std::string text;
  int old_line = 0;  // 1-based line in the old text; 0 for added lines
  int new_line = 0;  // 1-based line in the new text; 0 for removed lines
};

// Lines of `old_text` and `new_text` (split on '\n'; a final newline adds no
// line) aligned by a longest common subsequence: applying the removed and added
// lines to old_text gives new_text. Common prefix and suffix are matched first;
// when a side's rest has more than max_lines lines (model output is hostile:
// the time grows with lines x edit distance) it is shown as all removed then
// all added.
std::vector<diff_line> diff_lines(std::string_view old_text, std::string_view new_text,
                                  size_t max_lines = 20000);

std::vector<std::string> split_lines(std::string_view text);

}  // namespace ptxbench::viewer
