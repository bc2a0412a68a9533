#pragma once
// A line diff (longest common subsequence) for showing how a candidate's PTX
// changed from one round to the next.
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
// when the rest is larger than max_cells (lines x lines) the middle is shown as
// all removed then all added, so memory stays bounded on huge inputs.
std::vector<diff_line> diff_lines(std::string_view old_text, std::string_view new_text,
                                  size_t max_cells = 4u << 20);

std::vector<std::string> split_lines(std::string_view text);

}  // namespace ptxbench::viewer
