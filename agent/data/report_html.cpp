#include <cstdio>
#include <sstream>

#include "agent/data/html.hpp"
#include "agent/data/report.hpp"
#include "agent/data/svg.hpp"

namespace ptxbench::data {
namespace {

const char* style = R"(body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{border:1px solid #eee;background:#fff}h2{margin-top:32px}p.def{max-width:60em;color:#555})";

std::string pct(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * fraction);
  return buf;
}

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string td(const std::string& text, bool left = false) {
  return std::string(left ? "<td class=\"l\">" : "<td>") + html_escape(text) + "</td>";
}

// Bars of candidates that passed each stage: the funnel of DESIGN.md.
std::vector<bar> funnel(const group_metrics& g) {
  static const char* labels[] = {"format", "compile", "runtime", "correct", "instr", "perf"};
  std::vector<bar> bars;
  int evaluated = g.candidates - g.unevaluated;
  bars.push_back({"evaluated", static_cast<double>(evaluated)});
  for (int s = 0; s < 6; ++s) {
    bars.push_back({labels[s], static_cast<double>(g.stage_passed[s])});
  }
  return bars;
}

std::string round_curves(const group_metrics& g) {
  std::vector<std::string> x;
  std::vector<series> lines{{"compile", {}}, {"correct", {}}, {"instr", {}}, {"passed", {}}, {"fast_1", {}}};
  for (size_t r = 0; r < g.per_round.size(); ++r) {
    const auto& p = g.per_round[r];
    x.push_back("r" + std::to_string(r));
    lines[0].values.push_back(p.compiled);
    lines[1].values.push_back(p.correct);
    lines[2].values.push_back(p.instructions);
    lines[3].values.push_back(p.passed);
    lines[4].values.push_back(p.fast_p.back());
  }
  return svg_line_chart("rates after each round (best so far)", x, lines, 1.0);
}

std::string summary_table(const std::vector<group_metrics>& groups) {
  std::ostringstream os;
  os << "<table class=\"summary\"><tr><th class=\"l\">model</th><th class=\"l\">task</th><th>n</th>"
     << "<th>compile</th><th>correct</th><th>instr</th><th>passed</th>";
  for (double p : fast_p_thresholds) os << "<th>fast_" << html_escape(fixed(p)) << "</th>";
  for (int k : pass_k_values) os << "<th>pass@" << k << "</th>";
  os << "<th>speedup min / median / max</th></tr>\n";
  for (const auto& g : groups) {
    os << "<tr>" << td(g.model, true) << td(g.task, true) << td(std::to_string(g.trajectories))
       << td(pct(g.final.compiled)) << td(pct(g.final.correct)) << td(pct(g.final.instructions))
       << td(pct(g.final.passed));
    for (double f : g.final.fast_p) os << td(pct(f));
    for (int k : pass_k_values) {
      auto it = g.pass_at_k.find(k);
      os << td(it == g.pass_at_k.end() ? "-" : fixed(it->second));
    }
    os << td(g.speedups.empty() ? "-"
                                : fixed(g.speedups.front()) + " / " + fixed(median_sorted(g.speedups)) + " / " +
                                      fixed(g.speedups.back()))
       << "</tr>\n";
  }
  os << "</table>\n";
  return os.str();
}

}  // namespace

std::string render_report_html(const std::vector<group_metrics>& groups,
                               const std::vector<experiment_row>& experiments, const std::string& database) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ptxbench report</title>\n"
     << "<style>" << style << "</style></head><body>\n<h1>ptxbench report</h1>\n<p>database: <code>"
     << html_escape(database) << "</code></p>\n<table><tr><th class=\"l\">experiment</th><th class=\"l\">model</th>"
     << "<th class=\"l\">evaluator</th><th class=\"l\">GPU</th><th class=\"l\">status</th></tr>\n";
  for (const auto& e : experiments) {
    os << "<tr>" << td(e.name, true) << td(e.model, true) << td(e.evaluator_version, true) << td(e.gpu, true)
       << td(e.status, true) << "</tr>\n";
  }
  os << "</table>\n<h2>Summary</h2>\n" << summary_table(groups) << "<p class=\"def\">"
     << html_escape(metric_definitions()) << "</p>\n";
  for (const auto& g : groups) {
    os << "<h2>" << html_escape(g.model) << " / " << html_escape(g.task) << "</h2>\n<p>" << g.trajectories
       << " trajectories, " << g.candidates << " candidates";
    if (g.unevaluated) os << " (" << g.unevaluated << " not evaluated)";
    os << "</p>\n<div class=\"charts\">\n"
       << svg_bar_chart("candidates passing each stage", funnel(g)) << round_curves(g)
       << svg_histogram("best correct speedup per trajectory", g.speedups, 8) << "</div>\n";
  }
  if (groups.empty()) os << "<p>No trajectories in the selected experiments.</p>\n";
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ptxbench::data
