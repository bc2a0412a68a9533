#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "agent/data/html.hpp"
#include "agent/data/report.hpp"
#include "agent/data/summary.hpp"
#include "agent/data/svg.hpp"

namespace ptxbench::data {
namespace {

// The tables fit a 1400 px window without scrolling (the browser test checks
// every table box): experiment and model names head a group of rows, where a
// long name wraps, instead of widening every row; task names wrap at 16em.
// The box still scrolls, rather than widening the page, in a narrower window.
const char* style = R"(body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:12px}
.wide{max-width:100%;overflow-x:auto}table.summary{font-size:13px}table.summary td.l{min-width:11em;
max-width:16em;overflow-wrap:anywhere}th.run{background:#e6ecf5;overflow-wrap:anywhere}td.nr{color:#888;background:#f0f0f0;white-space:nowrap}
.chart{border:1px solid #eee;background:#fff}h2{margin-top:32px}p.def{max-width:60em;color:#555})";

const char* k_passed_color = "#59a14f";
const char* k_failed_color = "#e15759";
const char* k_not_run_color = "#b0b0b0";

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

// A rate cell; grey "not run" when no candidate of the group ran its stage.
std::string rate_td(const group_metrics& g, rate_kind kind, double value) {
  if (!stage_ran(g, stage_of(kind))) return "<td class=\"nr\">not run</td>";
  return td(pct(value));
}

std::string series_name(const group_metrics& g) { return g.experiment + " / " + g.model + " / " + g.task; }

// Candidates per stage: passed, failed, not run (grey; never a failure).
std::string funnel(const group_metrics& g) {
  std::vector<std::string> labels{"format", "compile", "runtime", "correct", "instr", "perf"};
  std::vector<stack_part> parts{{"passed", k_passed_color, {}}, {"failed", k_failed_color, {}},
                                {"not run / unverified", k_not_run_color, {}}};
  for (int s = 0; s < 6; ++s) {
    parts[0].values.push_back(g.stages[s].passed);
    parts[1].values.push_back(g.stages[s].failed);
    parts[2].values.push_back(g.stages[s].not_run);
  }
  return svg_stacked_bars("candidates per stage", labels, parts);
}

std::string pass_at_k_chart(const std::vector<group_metrics>& groups) {
  std::vector<std::string> x;
  for (int k = 1; k <= 10; ++k) x.push_back("k=" + std::to_string(k));
  std::vector<series> lines;
  for (const auto& g : groups) {
    bool ran = stage_ran(g, stage_of(rate_kind::passed));
    series s{series_name(g) + (ran ? "" : " (performance not run)"), {}};
    for (int k = 1; k <= 10; ++k) {
      s.values.push_back(ran && k <= g.trajectories ? pass_at_k(g.trajectories, g.passed_trajectories, k)
                                                    : std::nan(""));
    }
    lines.push_back(std::move(s));
  }
  return svg_line_chart("pass@k (unbiased estimator; k up to the samples taken)", x, lines, 1.0, "pass_at_k");
}

std::string fast_p_chart(const std::vector<group_metrics>& groups) {
  std::vector<std::string> x;
  for (double p : fast_p_thresholds) x.push_back("p=" + fixed(p));
  std::vector<series> lines;
  for (const auto& g : groups) {
    bool ran = stage_ran(g, stage_of(rate_kind::passed));
    series s{series_name(g) + (ran ? "" : " (performance not run)"), {}};
    for (double f : g.final.fast_p) s.values.push_back(ran ? f : std::nan(""));
    lines.push_back(std::move(s));
  }
  return svg_line_chart("fast_p: share correct and faster than p x the frontier library", x, lines, 1.0, "fast_p");
}

std::string speedup_histogram(const group_metrics& g) {
  std::vector<reference_line> refs{{1.0, "1.0 (as fast)"}};
  if (g.speedup_threshold && *g.speedup_threshold != 1.0) {
    refs.push_back({*g.speedup_threshold, "threshold " + fixed(*g.speedup_threshold)});
  }
  return svg_histogram("best correct speedup per trajectory vs the frontier library", g.speedups, 8, refs);
}

std::string round_curves(const group_metrics& g) {
  std::vector<std::string> x;
  std::vector<series> lines{{"compile", {}}, {"correct", {}}, {"instr", {}}, {"passed", {}}, {"fast_1", {}}};
  const rate_kind kinds[] = {rate_kind::compiled, rate_kind::correct, rate_kind::instructions, rate_kind::passed,
                             rate_kind::passed};
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!stage_ran(g, stage_of(kinds[i]))) lines[i].name += " (not run)";
  }
  for (size_t r = 0; r < g.per_round.size(); ++r) {
    const auto& p = g.per_round[r];
    x.push_back("r" + std::to_string(r));
    const double values[] = {p.compiled, p.correct, p.instructions, p.passed, p.fast_p[fast_1_index]};
    for (size_t i = 0; i < lines.size(); ++i) {
      lines[i].values.push_back(stage_ran(g, stage_of(kinds[i])) ? values[i] : std::nan(""));
    }
  }
  return svg_line_chart("rates after each round (best so far)", x, lines, 1.0, "rounds");
}

// The rate columns' headers, shared by the summary and the per-task table.
std::string rate_headers() {
  std::ostringstream os;
  os << "<th>compile</th><th>correct</th><th>instr</th><th>passed</th>";
  for (double p : fast_p_thresholds) {
    char label[32];
    std::snprintf(label, sizeof label, "fast_%g", p);
    os << "<th>" << label << "</th>";
  }
  for (int k : pass_k_values) os << "<th>pass@" << k << "</th>";
  return os.str();
}

std::string optional_td(const std::optional<double>& v, bool percent) {
  if (!v) return "<td class=\"nr\">not run</td>";
  return td(percent ? pct(*v) : fixed(*v));
}

// The across-task headline (summary.hpp): one table per experiment x model,
// rows over all tasks, per family, per level.
std::string across_tasks_table(const std::vector<group_metrics>& groups) {
  const int columns = 4 + 4 + static_cast<int>(fast_p_thresholds.size() + pass_k_values.size());
  std::ostringstream os;
  os << "<div class=\"wide\"><table class=\"summary\">\n";
  for (const auto& r : compute_summaries(groups)) {
    if (r.scope == summary_scope::all) {
      os << "<tr><th class=\"l run\" colspan=\"" << columns << "\">" << html_escape(r.experiment) << " / "
         << html_escape(r.model) << "</th></tr>\n<tr><th class=\"l\">scope</th><th>tasks</th><th>n</th>"
         << rate_headers() << "<th>geomean speedup</th></tr>\n";
    }
    os << "<tr>" << td(scope_label(r), true) << td(std::to_string(r.tasks)) << td(std::to_string(r.trajectories))
       << optional_td(r.compiled, true) << optional_td(r.correct, true) << optional_td(r.instructions, true)
       << optional_td(r.passed, true);
    for (const auto& f : r.fast_p) os << optional_td(f, true);
    for (int k : pass_k_values) {
      const auto& v = r.pass_at_k.at(k);
      os << (v || r.passed ? td(v ? fixed(*v) : "-") : std::string("<td class=\"nr\">not run</td>"));
    }
    os << td(r.geomean_speedup ? fixed(*r.geomean_speedup) + " (" + std::to_string(r.tasks_with_speedup) + "/" +
                                     std::to_string(r.tasks) + ")"
                               : "-")
       << "</tr>\n";
  }
  os << "</table></div>\n";
  return os.str();
}

// One row per task, under a heading row per experiment x model (names of any
// length wrap there instead of widening every row).
std::string summary_table(const std::vector<group_metrics>& groups) {
  const int columns = 5 + 4 + static_cast<int>(fast_p_thresholds.size() + pass_k_values.size());
  std::ostringstream os;
  os << "<div class=\"wide\"><table class=\"summary\">\n";
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    if (i == 0 || g.experiment != groups[i - 1].experiment || g.model != groups[i - 1].model) {
      os << "<tr><th class=\"l run\" colspan=\"" << columns << "\">" << html_escape(g.experiment) << " / "
         << html_escape(g.model) << "</th></tr>\n<tr><th class=\"l\">task</th><th>level</th><th>n</th>"
         << rate_headers() << "<th>geomean speedup</th><th>speedup min / median / max</th></tr>\n";
    }
    os << "<tr>" << td(g.task, true) << td(g.level > 0 ? std::to_string(g.level) : "-")
       << td(std::to_string(g.trajectories)) << rate_td(g, rate_kind::compiled, g.final.compiled)
       << rate_td(g, rate_kind::correct, g.final.correct) << rate_td(g, rate_kind::instructions, g.final.instructions)
       << rate_td(g, rate_kind::passed, g.final.passed);
    for (double f : g.final.fast_p) os << rate_td(g, rate_kind::passed, f);
    for (int k : pass_k_values) {
      auto it = g.pass_at_k.find(k);
      if (it != g.pass_at_k.end() && !stage_ran(g, stage_of(rate_kind::passed))) {
        os << "<td class=\"nr\">not run</td>";
      } else {
        os << td(it == g.pass_at_k.end() ? "-" : fixed(it->second));
      }
    }
    os << td(g.geomean_correct ? fixed(*g.geomean_correct) : "-")
       << td(g.speedups.empty() ? "-"
                                : fixed(g.speedups.front()) + " / " + fixed(median_sorted(g.speedups)) + " / " +
                                      fixed(g.speedups.back()))
       << "</tr>\n";
  }
  os << "</table></div>\n";
  return os.str();
}

// The experiments by LLM calls per trajectory: one line per experiment, NaN
// (no point) past the calls it made; a rate whose stage never ran is not drawn.
std::string calls_chart(const std::vector<calls_curve>& curves, rate_kind kind, bool no_failure,
                        const std::string& title, const std::string& id) {
  size_t most = 0;
  for (const auto& c : curves) most = std::max(most, c.points.size());
  std::vector<std::string> x;
  for (size_t k = 1; k <= most; ++k) x.push_back(std::to_string(k));
  std::vector<series> lines;
  for (const auto& c : curves) {
    const bool ran = no_failure || curve_ran(c, kind);
    series s{c.experiment + " (branch " + std::to_string(c.branch) + ")" + (ran ? "" : " (not run)"), {}};
    for (size_t k = 0; k < most; ++k) {
      if (k >= c.points.size() || !ran) {
        s.values.push_back(std::nan(""));
        continue;
      }
      const auto& p = c.points[k];
      s.values.push_back(no_failure ? p.no_failed_stage : kind == rate_kind::compiled ? p.at.compiled
                                                      : kind == rate_kind::correct   ? p.at.correct
                                                                                     : p.at.passed);
    }
    lines.push_back(std::move(s));
  }
  return svg_line_chart(title, x, lines, 1.0, id);
}

std::string calls_table(const std::vector<calls_curve>& curves) {
  size_t most = 0;
  for (const auto& c : curves) most = std::max(most, c.points.size());
  std::ostringstream os;
  os << "<div class=\"wide\"><table class=\"summary\"><tr><th rowspan=\"2\">LLM calls</th>";
  for (const auto& c : curves)
    os << "<th colspan=\"4\" class=\"l\">" << html_escape(c.experiment) << " (branch " << c.branch << ", "
       << c.llm_calls << " calls over " << c.trajectories << " trajectories)</th>";
  os << "</tr>\n<tr>";
  for (size_t i = 0; i < curves.size(); ++i) os << "<th>compile</th><th>correct</th><th>passed</th><th>no failed stage</th>";
  os << "</tr>\n";
  for (size_t k = 0; k < most; ++k) {
    os << "<tr>" << td(std::to_string(k + 1));
    for (const auto& c : curves) {
      if (k >= c.points.size()) {
        os << td("-") << td("-") << td("-") << td("-");
        continue;
      }
      const auto& p = c.points[k];
      auto cell = [&](rate_kind kind, double v) {
        return curve_ran(c, kind) ? td(pct(v)) : std::string("<td class=\"nr\">not run</td>");
      };
      os << cell(rate_kind::compiled, p.at.compiled) << cell(rate_kind::correct, p.at.correct)
         << cell(rate_kind::passed, p.at.passed) << td(pct(p.no_failed_stage));
    }
    os << "</tr>\n";
  }
  os << "</table></div>\n";
  return os.str();
}

}  // namespace

std::string render_report_html(const std::vector<group_metrics>& groups,
                               const std::vector<experiment_row>& experiments, const std::string& database,
                               const std::vector<calls_curve>& curves) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ptxbench report</title>\n"
     << "<style>" << style << "</style></head><body>\n<h1>ptxbench report</h1>\n<p>database: <code>"
     << html_escape(database) << "</code></p>\n<table><tr><th class=\"l\">experiment</th><th class=\"l\">model</th>"
     << "<th class=\"l\">evaluator</th><th class=\"l\">GPU</th><th class=\"l\">status</th></tr>\n";
  for (const auto& e : experiments) {
    os << "<tr>" << td(e.name, true) << td(e.model, true) << td(e.evaluator_version, true) << td(e.gpu, true)
       << td(e.status, true) << "</tr>\n";
  }
  os << "</table>\n";
  if (!groups.empty()) {
    os << "<h2>Summary across tasks</h2>\n"
       << across_tasks_table(groups) << "<p class=\"def\">" << html_escape(summary_definitions()) << "</p>\n";
  }
  os << "<h2>Per task</h2>\n" << summary_table(groups) << "<p class=\"def\">" << html_escape(metric_definitions())
     << "</p>\n";
  if (!groups.empty()) os << "<div class=\"charts\">\n" << pass_at_k_chart(groups) << fast_p_chart(groups) << "</div>\n";
  if (!curves.empty()) {
    os << "<h2>By LLM calls per trajectory</h2>\n<div class=\"charts\">\n"
       << calls_chart(curves, rate_kind::passed, false, "passed after c LLM calls (best so far)", "calls_passed")
       << calls_chart(curves, rate_kind::passed, true, "no failed stage after c LLM calls (best so far)",
                      "calls_no_failure")
       << "</div>\n"
       << calls_table(curves) << "<p class=\"def\">" << html_escape(calls_definition()) << "</p>\n";
  }
  for (const auto& g : groups) {
    os << "<h2>" << html_escape(series_name(g)) << "</h2>\n<p>" << g.trajectories
       << " trajectories, " << g.candidates << " candidates";
    if (g.unevaluated) os << " (" << g.unevaluated << " not evaluated)";
    os << "</p>\n<div class=\"charts\">\n"
       << funnel(g) << round_curves(g) << speedup_histogram(g) << "</div>\n";
  }
  if (groups.empty()) os << "<p>No trajectories in the selected experiments.</p>\n";
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ptxbench::data
