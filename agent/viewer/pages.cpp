#include "agent/viewer/pages.hpp"

#include <sstream>

#include "agent/data/html.hpp"
#include "agent/data/run_data.hpp"

namespace ptxbench::viewer {

using data::html_escape;

std::string layout(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + html_escape(title) +
         "</title>\n<link rel=\"stylesheet\" href=\"/assets/style.css\">\n"
         "<script src=\"/assets/viewer.js\" defer></script></head>\n<body>\n"
         "<header><a href=\"/\">ptxbench</a> &middot; " +
         html_escape(title) + "</header>\n<main>\n" + body + "</main>\n</body></html>\n";
}

std::string badge(const std::string& verdict) {
  std::string v = verdict.empty() ? "pending" : verdict;
  const auto known = parse_verdict_name(v);
  std::string cls = known && known->kind != verdict_kind::none ? v : "none";
  return "<span class=\"badge " + cls + "\">" + html_escape(v) + "</span>";
}

std::string evaluation_badge(const std::optional<evaluation_row>& evaluation) {
  if (!evaluation) return badge("none");
  // The verdict as evaluator/api/verdict.hpp reads the stage statuses, not the
  // stored name: a row written before "partial" existed named its first stage
  // not run, as if that stage had failed.
  const auto q = data::quality_of(*evaluation);
  if (q.kind == verdict_kind::partial) {
    const stage at = verdict_of(q.st).at;
    const bool unverified = q.st.at(at) == stage_status::unverified;
    return "<span class=\"badge not-run\">" + html_escape(std::string(to_string(at)) +
                                                            (unverified ? " unverified" : " not run")) + "</span>";
  }
  return badge(q.kind == verdict_kind::none ? evaluation->verdict : verdict_name(verdict_of(q.st)));
}

std::string error_page(int status, const std::string& message) {
  return layout("error " + std::to_string(status), "<h1>" + std::to_string(status) + "</h1>\n<p class=\"error\">" +
                                                       html_escape(message) + "</p>\n");
}

std::string experiments_page(const std::vector<experiment_summary>& experiments, const std::string& database) {
  std::ostringstream os;
  os << "<h1>Experiments</h1>\n<p>database: <code>" << html_escape(database) << "</code></p>\n";
  if (experiments.empty()) {
    os << "<p>No experiments in this database.</p>\n";
    return layout("experiments", os.str());
  }
  os << "<table id=\"experiments\"><tr><th>experiment</th><th>kind</th><th>model</th><th>provider</th>"
     << "<th>evaluator</th><th>GPU</th><th>status</th><th>trajectories</th><th>passed</th><th>created</th></tr>\n";
  for (const auto& s : experiments) {
    const auto& e = s.experiment;
    os << "<tr><td><a href=\"/experiments/" << e.id << "\">" << html_escape(e.name) << "</a></td><td>"
       << html_escape(e.kind) << "</td><td>" << html_escape(e.model) << "</td><td>" << html_escape(e.provider)
       << "</td><td>" << html_escape(e.evaluator_version) << "</td><td>" << html_escape(e.gpu) << "</td><td>"
       << html_escape(e.status) << "</td><td class=\"num\">" << s.trajectories << "</td><td class=\"num\">"
       << s.passed << "</td><td>" << html_escape(e.created_at) << "</td></tr>\n";
  }
  os << "</table>\n";
  return layout("experiments", os.str());
}

std::string experiment_page(const experiment_row& e, const std::vector<trajectory_row>& trajectories) {
  std::ostringstream os;
  os << "<h1>" << html_escape(e.name) << "</h1>\n<p>model <b>" << html_escape(e.model) << "</b> via "
     << html_escape(e.provider) << ", evaluator " << html_escape(e.evaluator_version) << " on "
     << html_escape(e.gpu) << ", host " << html_escape(e.host) << ", status " << html_escape(e.status) << "</p>\n";
  if (e.parent_experiment_id) {
    os << "<p>replay of experiment " << *e.parent_experiment_id << " in <code>" << html_escape(e.parent_database)
       << "</code></p>\n";
  }
  os << "<p><a href=\"/experiments/" << e.id << "/report\">report with plots</a></p>\n"
     << "<table id=\"trajectories\"><tr><th>trajectory</th><th>task</th><th>family</th><th>sample</th>"
     << "<th>rounds</th><th>verdict</th><th>status</th></tr>\n";
  for (const auto& t : trajectories) {
    os << "<tr><td><a href=\"/trajectories/" << t.id << "\">#" << t.id << "</a></td><td>" << html_escape(t.task_id)
       << "</td><td>" << html_escape(t.family) << "</td><td class=\"num\">" << t.sample << "</td><td class=\"num\">"
       << t.rounds_done << "</td><td>" << badge(t.final_verdict) << "</td><td>" << html_escape(t.status)
       << "</td></tr>\n";
  }
  os << "</table>\n<details><summary>experiment config</summary><pre>" << html_escape(e.config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
     << "</pre></details>\n";
  return layout(e.name, os.str());
}

}  // namespace ptxbench::viewer
