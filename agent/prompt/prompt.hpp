#pragma once
// Prompts are data: templates in prompts/ with {{name}} placeholders, filled
// with the task, the architecture notes and the feedback (docs/design.md, "Agent").
// A change of prompt is a change of data, not code.
#include <filesystem>
#include <map>
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

// profile: full, and the candidate is profiled after its verdict (stall
// reasons on its PTX lines, counters beside the library's); full shows a
// profile too when the evaluation has one.
enum class feedback_detail { none, stage, full, profile };
const char* to_string(feedback_detail d);
feedback_detail parse_feedback_detail(const std::string& s);  // throws input_error

class prompt_library {
 public:
  // Loads every *.md template in `dir`. Throws input_error when a required
  // template (system, task, feedback_none, feedback_stage, feedback_<stage>
  // for every stage, feedback_passed, feedback_not_run) is missing.
  explicit prompt_library(const std::filesystem::path& dir);

  std::string system_prompt(const task& t) const;
  std::string task_prompt(const task& t) const;
  // The feedback message for `round`'s result (round is the 0-based round the
  // candidate came from). Hidden-seed figures are never quoted. The template:
  // feedback_none or feedback_stage at those details; else by the verdict
  // (evaluator/api/verdict.hpp): feedback_passed, feedback_not_run for a
  // partial one, feedback_<stage> for a failed one. Claims about stages come
  // from {{stages}}, {{stage_outcome}} and {{outcome}}, which follow the
  // stage statuses.
  // A result with an evaluator error says nothing about the candidate: its
  // feedback (feedback_error.md when present, else a built-in text) only asks
  // for the answer again and never quotes the error.
  std::string feedback(const task& t, const evaluation_result& r, int round, feedback_detail detail) const;
  // Put before the feedback of a reply cut off by the token limit
  // (finish_reason length / max_tokens): says so plainly.
  std::string cut_off_note(int max_tokens) const;
  // The request to a teacher for the reasoning from a failed attempt and its
  // feedback to the fix (template rationale.md; input_error when it is missing).
  std::string rationale_prompt(const task& t, const std::string& attempt, const std::string& feedback,
                               const std::string& fix) const;

  // Replaces {{name}} with vars[name]; throws input_error naming the template
  // and the placeholder when a name has no value.
  static std::string render(const std::string& name, const std::string& text,
                            const std::map<std::string, std::string>& vars);

 private:
  const std::string& get(const std::string& name) const;
  std::map<std::string, std::string> m_templates;
  std::filesystem::path m_dir;
};

// Plain-text renderings of result parts used by the feedback templates and the CLI.
std::string format_diagnostics(const compile_report& c);
std::string format_instruction_table(const instruction_report& r);
std::string format_correctness(const correctness_report& c, bool include_hidden_values);
std::string format_performance(const performance_report& p);
// The profile as the performance and passed templates show it: the kernel
// table (yours beside the library's), the roofline line and the `top_lines`
// hottest PTX lines; or, where it could not be measured, why, in plain words.
std::string format_profile(const profile_report& p, size_t top_lines);
std::string format_resources(const compile_report& c);

}  // namespace ptxbench
