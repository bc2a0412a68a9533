#pragma once
// What results, prompts and reports say about a hidden size: its properties,
// never its numbers (docs/task-suite.md, "Hidden-size feedback"). The
// evaluator labels sizes with size_label where it writes them, and
// redact_hidden_sizes scrubs a finished result once more before anyone
// stores or shows it, so a message that quoted a hidden size's numbers
// (a launch refused "at M=3001", a tensor map's extent) cannot leak them.
#include <cstdint>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

// The properties that tell hidden size `s` apart from the task's shown sizes,
// most telling first, at most three: "N is not a multiple of 128", "M is odd",
// "S is smaller than 64", "some groups are empty", "sequence lengths are not
// multiples of 64". When none tells it apart, its properties; when it has
// none, nothing.
std::vector<std::string> hidden_size_properties(const task& t, const size_point& s);

// describe_size(s) for a shown size; for a hidden one "a hidden size where N is
// not a multiple of 128 and M is odd" (or "a hidden size").
std::string size_label(const task& t, const size_point& s);
inline constexpr const char* k_hidden_size_prefix = "a hidden size";

// "at size M=4096 N=4096 K=4096" or "at a hidden size where N is odd", from a
// size_label.
std::string at_size(const std::string& label);

// The numbers of hidden sizes that text about task `t` must never contain:
// their values (from 100) and their tensors' element and byte counts (from
// 10000) that are no number of a shown size, of its statement, notes, title
// or constraints, or of a label. (Smaller or shared ones cannot be told from
// ordinary figures: they are hidden in "NAME=value" form only.)
std::vector<int64_t> distinctive_hidden_values(const task& t);

// Rewrites every string of `r`: a hidden size's describe_size text becomes its
// label and a distinctive hidden value becomes "(hidden)"; the output checks
// at a hidden size lose their element counts (elements 0; NaN and untouched
// counts become 0 or 1) and are marked hidden_size. A result of a task with no
// hidden size is left as it is.
void redact_hidden_sizes(evaluation_result& r, const task& t);

}  // namespace ptxbench
