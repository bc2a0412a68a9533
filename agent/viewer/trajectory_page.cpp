// The trajectory page: every round's prompt, feedback, reply, PTX diff and figures.
#include <sstream>

#include "agent/data/html.hpp"
#include "agent/data/run_data.hpp"
#include "agent/viewer/line_diff.hpp"
#include "agent/viewer/pages.hpp"

namespace ptxbench::viewer {
namespace {

using data::html_escape;

std::string pre(const std::string& text, const std::string& cls) {
  return "<pre class=\"" + cls + "\">" + html_escape(text) + "</pre>\n";
}

std::string messages_block(const nlohmann::json& messages) {
  std::ostringstream os;
  os << "<details class=\"prompt\"><summary>prompt sent (" << (messages.is_array() ? messages.size() : 0)
     << " messages)</summary>\n";
  if (messages.is_array()) {
    for (const auto& m : messages) {
      std::string role = m.is_object() ? m.value("role", "?") : "?";
      std::string content;
      if (m.is_object() && m.contains("content")) {
        content = m["content"].is_string() ? m["content"].get<std::string>()
                                           : m["content"].dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      }
      os << "<div class=\"message\"><b>" << html_escape(role) << "</b>" << pre(content, "message-content")
         << "</div>\n";
    }
  }
  os << "</details>\n";
  return os.str();
}

std::string round_section(const turn_view& view, const std::string* previous_ptx) {
  const auto& t = view.turn;
  std::ostringstream os;
  os << "<section class=\"round\" id=\"round-" << t.round << "\">\n<h2>round " << t.round << " "
     << evaluation_badge(view.evaluation) << "</h2>\n<p class=\"turn-meta\">model "
     << html_escape(t.model) << ", " << t.prompt_tokens << " prompt + " << t.completion_tokens
     << " completion tokens";
  if (t.reasoning_tokens) os << " (" << t.reasoning_tokens << " reasoning)";
  os << ", " << static_cast<long long>(t.latency_ms) << " ms, finish " << html_escape(t.finish_reason)
     << ", feedback detail " << html_escape(t.feedback_detail.empty() ? "-" : t.feedback_detail) << "</p>\n";
  os << messages_block(t.messages);
  if (!t.feedback.empty()) os << "<h3>feedback sent</h3>\n" << pre(t.feedback, "feedback");
  if (!t.reasoning.empty()) {
    os << "<details><summary>reasoning</summary>" << pre(t.reasoning, "reasoning") << "</details>\n";
  }
  os << "<details class=\"reply\"><summary>reply</summary>" << pre(t.reply, "reply") << "</details>\n";
  // With a profile of its lines the full PTX is the profile's listing, its hot lines marked.
  const auto profile = view.evaluation ? evaluation_profile(*view.evaluation) : std::nullopt;
  const std::string* ptx = view.candidate && !view.candidate->ptx.empty() ? &view.candidate->ptx : nullptr;
  const bool listed = profile && !profile->lines.empty() && ptx;
  if (view.candidate) {
    const auto& c = *view.candidate;
    if (!c.format_problem.empty()) os << "<p class=\"status-failed\">format: " << html_escape(c.format_problem) << "</p>\n";
    if (!c.ptx.empty()) {
      if (previous_ptx) {
        os << "<h3>PTX (diff against the previous round)</h3>\n" << diff_table(*previous_ptx, c.ptx);
        if (!listed) os << "<details><summary>full PTX</summary>" << pre(c.ptx, "ptx") << "</details>\n";
      } else if (!listed) {
        os << "<h3>PTX</h3>\n" << pre(c.ptx, "ptx");
      }
    }
  }
  if (profile) {
    os << profile_section(*profile, listed ? *ptx : std::string(), "round-" + std::to_string(t.round));
  }
  if (view.candidate && !view.candidate->manifest.empty())
    os << "<details><summary>launch manifest</summary>" << pre(view.candidate->manifest, "manifest") << "</details>\n";
  if (view.evaluation) os << evaluation_section(*view.evaluation);
  os << "</section>\n";
  return os.str();
}

}  // namespace

std::string diff_table(const std::string& old_text, const std::string& new_text) {
  std::ostringstream os;
  int added = 0, removed = 0;
  auto lines = diff_lines(old_text, new_text);
  for (const auto& l : lines) {
    added += l.op == diff_op::added;
    removed += l.op == diff_op::removed;
  }
  os << "<p class=\"diff-stat\">+" << added << " &minus;" << removed << " lines</p>\n<table class=\"diff\">\n";
  for (const auto& l : lines) {
    const char* cls = l.op == diff_op::same ? "same" : l.op == diff_op::added ? "added" : "removed";
    const char* mark = l.op == diff_op::same ? " " : l.op == diff_op::added ? "+" : "-";
    os << "<tr class=\"" << cls << "\"><td class=\"ln\">" << (l.old_line ? std::to_string(l.old_line) : "")
       << "</td><td class=\"ln\">" << (l.new_line ? std::to_string(l.new_line) : "") << "</td><td>" << mark
       << html_escape(l.text) << "</td></tr>\n";
  }
  os << "</table>\n";
  return os.str();
}

namespace {

// The trajectory's verdict from its turns, its best candidate's (as the loop
// names it), so that a row stored before partial verdicts existed does not
// show a stage that did not run as failed. A trajectory the agent failed on
// (final verdict error) or not finished keeps its stored name.
std::string trajectory_badge(const trajectory_row& t, const std::vector<turn_view>& turns) {
  if (t.final_verdict.empty() || t.final_verdict == "error") return badge(t.final_verdict);
  const turn_view* best = nullptr;
  for (const auto& v : turns)
    if (v.evaluation && (!best || data::better(data::quality_of(v), data::quality_of(*best)))) best = &v;
  return best ? evaluation_badge(best->evaluation) : badge(t.final_verdict);
}

}  // namespace

std::string trajectory_page(const experiment_row& e, const trajectory_row& t, const std::vector<turn_view>& turns) {
  std::ostringstream os;
  os << "<h1>" << html_escape(t.task_id) << " &middot; sample " << t.sample << " " << trajectory_badge(t, turns)
     << "</h1>\n<p>experiment <a href=\"/experiments/" << e.id << "\">" << html_escape(e.name) << "</a>, family "
     << html_escape(t.family) << ", " << turns.size() << " rounds, status " << html_escape(t.status) << "</p>\n";
  os << "<table class=\"rounds\"><tr><th>round</th><th>verdict</th><th>headline</th><th>speedup</th></tr>\n";
  for (const auto& v : turns) {
    os << "<tr><td><a href=\"#round-" << v.turn.round << "\">" << v.turn.round << "</a></td><td>"
       << evaluation_badge(v.evaluation) << "</td><td>";
    if (v.evaluation && v.evaluation->result.is_object() && v.evaluation->result.contains("headline") &&
        v.evaluation->result["headline"].is_string()) {
      os << html_escape(v.evaluation->result["headline"].get<std::string>());
    }
    os << "</td><td class=\"num\">";
    if (v.evaluation && v.evaluation->speedup) os << *v.evaluation->speedup;
    os << "</td></tr>\n";
  }
  os << "</table>\n";
  const std::string* previous_ptx = nullptr;
  for (const auto& v : turns) {
    os << round_section(v, previous_ptx);
    if (v.candidate && !v.candidate->ptx.empty()) previous_ptx = &v.candidate->ptx;
  }
  return layout(t.task_id + " #" + std::to_string(t.id), os.str());
}

}  // namespace ptxbench::viewer
