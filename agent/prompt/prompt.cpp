#include "agent/prompt/prompt.hpp"

#include <fstream>
#include <sstream>

#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench {

const char* to_string(feedback_detail d) {
  switch (d) {
    case feedback_detail::none: return "none";
    case feedback_detail::stage: return "stage";
    case feedback_detail::full: return "full";
    case feedback_detail::profile: return "profile";
  }
  return "?";
}

feedback_detail parse_feedback_detail(const std::string& s) {
  if (s == "none") return feedback_detail::none;
  if (s == "stage") return feedback_detail::stage;
  if (s == "full") return feedback_detail::full;
  if (s == "profile") return feedback_detail::profile;
  throw input_error("unknown feedback detail '" + s + "' (known: none, stage, full, profile)");
}

prompt_library::prompt_library(const std::filesystem::path& dir) : m_dir(dir) {
  if (!std::filesystem::is_directory(dir)) throw input_error(dir.string() + ": prompts folder not found");
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".md") continue;
    m_templates[e.path().stem().string()] = read_text_file(e.path(), "prompt template");
  }
  std::vector<std::string> required{"system", "task", "feedback_none", "feedback_stage", "feedback_passed", "feedback_not_run"};
  for (int i = 0; i < stage_count; ++i) required.push_back(std::string("feedback_") + to_string(static_cast<stage>(i)));
  for (const auto& r : required)
    if (!m_templates.count(r)) throw input_error(dir.string() + ": missing prompt template " + r + ".md");
}

const std::string& prompt_library::get(const std::string& name) const { return m_templates.at(name); }

std::string prompt_library::rationale_prompt(const task& t, const std::string& attempt, const std::string& feedback,
                                             const std::string& fix) const {
  auto it = m_templates.find("rationale");
  if (it == m_templates.end()) throw input_error(m_dir.string() + ": missing prompt template rationale.md");
  return render("rationale", it->second,
                {{"task_id", t.id}, {"arch", t.arch}, {"attempt", attempt}, {"feedback", feedback}, {"fix", fix}});
}

std::string prompt_library::render(const std::string& name, const std::string& text,
                                   const std::map<std::string, std::string>& vars) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open);
    if (close == std::string::npos) throw input_error("prompt template " + name + ": unclosed {{");
    out += text.substr(pos, open - pos);
    std::string key = text.substr(open + 2, close - open - 2);
    while (!key.empty() && key.front() == ' ') key.erase(key.begin());
    while (!key.empty() && key.back() == ' ') key.pop_back();
    auto it = vars.find(key);
    if (it == vars.end()) throw input_error("prompt template " + name + ": no value for {{" + key + "}}");
    out += it->second;
    pos = close + 2;
  }
  out += text.substr(pos);
  return out;
}

namespace {

std::string tensor_table(const task& t) {
  std::ostringstream o;
  for (const auto& ts : t.tensors) {
    o << "- " << ts.name << ": " << to_string(ts.type) << " [";
    for (size_t i = 0; i < ts.shape.size(); ++i) o << (i ? ", " : "") << ts.shape[i];
    o << "], " << (ts.role == tensor_role::input ? "input" : "output") << "\n";
  }
  return o.str();
}

// The constraints and the shown sizes; hidden sizes only by their number
// (docs/task-suite.md): never their values.
std::string size_list(const task& t) {
  std::ostringstream o;
  if (!t.constraints.empty()) o << "Every size obeys: " << t.constraints << "\n";
  for (const auto& s : t.public_sizes()) o << "- " << describe_size(s) << (s.timed ? " (timed)" : "") << "\n";
  if (size_t n = t.hidden_size_count())
    o << "- and " << n << " hidden size" << (n == 1 ? "" : "s")
      << " that obey the same constraints (never shown; correctness requires every one)\n";
  return o.str();
}

std::map<std::string, std::string> task_vars(const task& t) {
  std::ostringstream targets, scalars, tol;
  for (const auto& x : t.target_instructions) targets << (targets.tellp() ? ", " : "") << x;
  for (const auto& [k, v] : t.scalars) scalars << "- " << k << " = " << v << " (f32)\n";
  for (const auto& [k, v] : t.tolerances)
    tol << (tol.tellp() ? "; " : "") << k << ": atol " << v.atol << ", rtol " << v.rtol;
  std::ostringstream thr;
  thr << t.speedup_threshold;
  return {{"task_id", t.id},
          {"task_title", t.title},
          {"family", t.family},
          {"arch", t.arch},
          {"statement", t.statement},
          {"tensors", tensor_table(t)},
          {"sizes", size_list(t)},
          {"scalars", scalars.str().empty() ? "- (none)\n" : scalars.str()},
          {"target_instructions", targets.str()},
          {"tolerance", tol.str()},
          {"speedup_threshold", thr.str()},
          {"baseline", t.baseline},
          {"notes", t.notes}};
}

}  // namespace

std::string prompt_library::system_prompt(const task& t) const { return render("system", get("system"), task_vars(t)); }

std::string prompt_library::task_prompt(const task& t) const { return render("task", get("task"), task_vars(t)); }

namespace {

// Each stage's status, one line each ({{stages}}): what a template says of the
// stages before the verdict comes from here, never from its fixed text (a
// stage that did not run is never called passed). Failed stages give no
// reason (the headline does, without hidden-size figures).
std::string stage_list(const evaluation_result& r) {
  std::string out;
  for (const auto& [s, o] : r.stages) {
    std::string status;
    switch (o.status) {
      case stage_status::passed: status = "passed"; break;
      case stage_status::failed: status = "failed"; break;
      case stage_status::not_run: status = "not run"; break;
      case stage_status::unverified: status = "unverified"; break;
      case stage_status::error: status = "not judged (the evaluator failed)"; break;
    }
    const bool with_reason = o.status == stage_status::not_run || o.status == stage_status::unverified;
    out += "- " + std::string(to_string(s)) + ": " + status + (with_reason && !o.reason.empty() ? " (" + o.reason + ")" : "") + "\n";
  }
  return out.empty() ? "- (none)\n" : out;
}

// The verdict in words ({{stage_outcome}}), after "Your previous answer".
std::string verdict_in_words(const evaluation_result& r) {
  const verdict v = verdict_of(r);
  const std::string at = std::string("the **") + to_string(v.at) + "** stage";
  switch (v.kind) {
    case verdict_kind::passed: return "passed every stage";
    case verdict_kind::failed: return "failed at " + at;
    case verdict_kind::partial:
      return "failed no stage, but " + at +
             (standing_of(r).at(v.at) == stage_status::unverified ? " could not be verified" : " could not run here");
    case verdict_kind::error:
    case verdict_kind::none: break;
  }
  return "could not be judged";
}

}  // namespace

std::string prompt_library::feedback(const task& t, const evaluation_result& r, int round,
                                     feedback_detail detail) const {
  auto vars = task_vars(t);
  vars["round"] = std::to_string(round);
  vars["stage"] = verdict_name(r);
  vars["stages"] = stage_list(r);
  vars["stage_outcome"] = verdict_in_words(r);
  vars["outcome"] = r.passed ? "passed every stage" : "did not pass";
  vars["headline"] = r.headline;
  vars["diagnostics"] = format_diagnostics(r.compile);
  vars["resources"] = format_resources(r.compile);
  vars["instruction_table"] = format_instruction_table(r.instructions);
  vars["correctness"] = format_correctness(r.correctness, false);
  vars["runtime_error"] = r.runtime ? r.runtime->error : "";
  vars["runtime_launch"] = r.runtime ? std::to_string(r.runtime->launch_index) : "";
  vars["runtime_size"] = r.runtime ? r.runtime->size : "";
  vars["performance"] = r.performance ? format_performance(*r.performance) : "(not measured)\n";
  vars["profile"] = r.profile ? format_profile(*r.profile, 5) : "";
  std::string not_run;
  for (const auto& [s, o] : r.stages)
    if (o.status == stage_status::not_run || o.status == stage_status::unverified)
      if (!o.reason.empty()) not_run += "- " + std::string(to_string(s)) + ": " + to_string(o.status) + " (" + o.reason + ")\n";
  vars["not_run"] = not_run.empty() ? "- (none)\n" : not_run;
  if (!r.passed && r.evaluator_error()) {
    if (m_templates.count("feedback_error")) return render("feedback_error", get("feedback_error"), vars);
    return "## Feedback on round " + std::to_string(round) +
           ": not judged\nYour answer could not be judged because of a failure in the evaluator, not in your "
           "answer. Answer again with the whole PTX module and the launch manifest.\n";
  }
  if (detail == feedback_detail::none) return render("feedback_none", get("feedback_none"), vars);
  if (detail == feedback_detail::stage) return render("feedback_stage", get("feedback_stage"), vars);
  const verdict v = verdict_of(r);
  if (v.kind == verdict_kind::passed) return render("feedback_passed", get("feedback_passed"), vars);
  if (v.kind == verdict_kind::partial) return render("feedback_not_run", get("feedback_not_run"), vars);
  std::string name = std::string("feedback_") + to_string(v.at);
  return render(name, get(name), vars);
}

std::string prompt_library::cut_off_note(int max_tokens) const {
  return "Your previous reply was cut off: it reached the token limit (" + std::to_string(max_tokens) +
         " tokens) before it ended. Keep the reasoning and the prose short and give the whole PTX module and "
         "the launch manifest.\n\n";
}

}  // namespace ptxbench
