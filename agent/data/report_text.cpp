#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "agent/data/report.hpp"
#include "agent/data/summary.hpp"

namespace ptxbench::data {
namespace {

std::string pct(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * fraction);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "not run" when no candidate of the group ran the rate's stage: never 0%.
std::string rate(const group_metrics& g, rate_kind kind, double value) {
  return stage_ran(g, stage_of(kind)) ? pct(value) : "not run";
}

std::string speedup_summary(const group_metrics& g) {
  if (g.speedups.empty()) return "-";
  return fixed(g.speedups.front(), 2) + "/" + fixed(median_sorted(g.speedups), 2) + "/" +
         fixed(g.speedups.back(), 2) + (g.geomean_correct ? " geomean " + fixed(*g.geomean_correct, 2) : "");
}

}  // namespace

std::string terminal_safe(const std::string& text) {
  // Model and task names come from configs and servers: an ESC or CR written
  // raw would let them rewrite the terminal. C0 controls, DEL and the C1
  // controls (UTF-8 C2 80..C2 9F) are written as \xHH.
  std::string out;
  out.reserve(text.size());
  auto hex = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      hex(c);
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      hex(c);
      hex(static_cast<unsigned char>(text[++i]));
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string metric_definitions() {
  return "Definitions: n = trajectories (samples). compile/correct/instr/passed % = share of trajectories with a "
         "candidate that passed that stage, best so far over rounds 0..r (the final column uses every round). "
         "fast_p = share of trajectories with a correct candidate whose speedup over the frontier library is > p. "
         "pass@k = 1 - C(n-c,k)/C(n,k) with c = trajectories that passed every stage. speedup min/median/max over "
         "trajectories' best correct candidate; geomean = geometric mean over every correct candidate with a "
         "measured speedup. A stage that did not run (no GPU) or could not be verified is 'not run', never a "
         "failure; a rate whose stage never ran reads 'not run'.";
}

std::string calls_definition() {
  return "By LLM calls: a trajectory's calls are its replies in the order they were asked (round 0, then every "
         "sibling of a branched round, in branch order); after c calls it counts with its best candidate so far "
         "among them (one that stopped earlier keeps its result). Read branch 1 against branch N in the same row: "
         "the same number of LLM calls per trajectory. no-fail = share of trajectories with a candidate that "
         "failed no stage (stages not run are no failure). '-': the experiment made no trajectory that many "
         "calls.";
}

namespace {

// One block of columns per experiment: compile, correct, passed, no-fail after c calls.
std::string calls_table(const std::vector<calls_curve>& curves) {
  std::ostringstream os;
  size_t most = 0;
  for (const auto& c : curves) most = std::max(most, c.points.size());
  os << "\nby LLM calls per trajectory (best so far over the first c calls):\n";
  for (const auto& c : curves) {
    char line[64];
    std::snprintf(line, sizeof line, "%.1f", c.trajectories ? static_cast<double>(c.llm_calls) / c.trajectories : 0.0);
    os << "  " << terminal_safe(c.experiment) << ": branch " << c.branch << ", " << c.rounds << " rounds, "
       << c.trajectories << " trajectories, " << c.llm_calls << " LLM calls (" << line << " per trajectory)\n";
  }
  const int width = 36;
  os << std::setw(7) << "";
  for (const auto& c : curves) {
    std::string title = terminal_safe(c.experiment) + " (branch " + std::to_string(c.branch) + ")";
    if (static_cast<int>(title.size()) > width - 2) title = title.substr(0, width - 5) + "...";
    os << "  " << std::left << std::setw(width - 2) << title << std::right;
  }
  os << '\n' << std::setw(7) << "calls";
  for (size_t i = 0; i < curves.size(); ++i)
    os << std::setw(9) << "compile" << std::setw(9) << "correct" << std::setw(9) << "passed" << std::setw(9)
       << "no-fail";
  os << '\n';
  for (size_t k = 0; k < most; ++k) {
    os << std::setw(7) << k + 1;
    for (const auto& c : curves) {
      if (k >= c.points.size()) {
        for (int i = 0; i < 4; ++i) os << std::setw(9) << "-";
        continue;
      }
      const auto& p = c.points[k];
      auto cell = [&](rate_kind kind, double v) { return curve_ran(c, kind) ? pct(v) : std::string("not run"); };
      os << std::setw(9) << cell(rate_kind::compiled, p.at.compiled) << std::setw(9)
         << cell(rate_kind::correct, p.at.correct) << std::setw(9) << cell(rate_kind::passed, p.at.passed)
         << std::setw(9) << pct(p.no_failed_stage);
    }
    os << '\n';
  }
  os << calls_definition() << '\n';
  return os.str();
}

std::string optional_pct(const std::optional<double>& v) { return v ? pct(*v) : "not run"; }

// The across-task headline: one row per experiment x model over all tasks,
// then per family and per level (summary.hpp).
std::string summary_table(const std::vector<group_metrics>& groups) {
  std::ostringstream os;
  os << "summary per experiment x model (every task weighs the same):\n"
     << std::left << std::setw(16) << "experiment" << std::setw(22) << "model" << std::setw(22) << "scope"
     << std::right << std::setw(6) << "tasks" << std::setw(6) << "n" << std::setw(9) << "compile" << std::setw(9)
     << "correct" << std::setw(9) << "instr" << std::setw(9) << "passed";
  for (double p : fast_p_thresholds) os << std::setw(9) << ("fast_" + fixed(p, p == static_cast<int>(p) ? 0 : 1));
  for (int k : pass_k_values) os << std::setw(9) << ("pass@" + std::to_string(k));
  os << "  geomean speedup\n";
  for (const auto& r : compute_summaries(groups)) {
    const bool first = r.scope == summary_scope::all;
    os << std::left << std::setw(16) << (first ? terminal_safe(r.experiment) : "") << std::setw(22)
       << (first ? terminal_safe(r.model) : "") << std::setw(22) << terminal_safe(scope_label(r)) << std::right
       << std::setw(6) << r.tasks << std::setw(6) << r.trajectories << std::setw(9) << optional_pct(r.compiled)
       << std::setw(9) << optional_pct(r.correct) << std::setw(9) << optional_pct(r.instructions) << std::setw(9)
       << optional_pct(r.passed);
    for (const auto& f : r.fast_p) os << std::setw(9) << optional_pct(f);
    for (int k : pass_k_values) {
      const auto& v = r.pass_at_k.at(k);
      os << std::setw(9) << (v ? fixed(*v, 2) : r.passed ? "-" : "not run");
    }
    os << "  "
       << (r.geomean_speedup ? fixed(*r.geomean_speedup, 2) + " (" + std::to_string(r.tasks_with_speedup) + " of " +
                                   std::to_string(r.tasks) + " tasks)"
                             : "-")
       << '\n';
  }
  return os.str();
}

}  // namespace

std::string summary_definitions() {
  return "Summary: tasks = tasks in the scope, n = their trajectories. Each figure is the mean over tasks of the "
         "task's figure, so every task weighs the same; a rate averages the tasks where its stage ran ('not run' "
         "when none did), pass@k the tasks with at least k samples ('-' when none has k), geomean speedup is the "
         "geometric mean over tasks of each task's geometric mean of its trajectories' best correct speedups (tasks "
         "without one are left out).";
}

std::string format_report_text(const std::vector<group_metrics>& groups, const std::vector<calls_curve>& curves) {
  std::ostringstream os;
  if (!groups.empty()) os << summary_table(groups) << summary_definitions() << "\n\nper task:\n";
  os << std::left << std::setw(16) << "experiment" << std::setw(22) << "model" << std::setw(34) << "task"
     << std::right << std::setw(4) << "n" << std::setw(9) << "compile" << std::setw(9) << "correct" << std::setw(9)
     << "instr" << std::setw(9) << "passed";
  for (double p : fast_p_thresholds) os << std::setw(9) << ("fast_" + fixed(p, p == static_cast<int>(p) ? 0 : 1));
  for (int k : pass_k_values) os << std::setw(9) << ("pass@" + std::to_string(k));
  os << "  speedup min/med/max\n";
  for (const auto& g : groups) {
    const bool perf = stage_ran(g, stage_of(rate_kind::passed));
    os << std::left << std::setw(16) << terminal_safe(g.experiment) << std::setw(22) << terminal_safe(g.model) << std::setw(34) << terminal_safe(g.task)
       << std::right << std::setw(4) << g.trajectories << std::setw(9)
       << rate(g, rate_kind::compiled, g.final.compiled) << std::setw(9) << rate(g, rate_kind::correct, g.final.correct)
       << std::setw(9) << rate(g, rate_kind::instructions, g.final.instructions) << std::setw(9)
       << rate(g, rate_kind::passed, g.final.passed);
    for (double f : g.final.fast_p) os << std::setw(9) << (perf ? pct(f) : "not run");
    for (int k : pass_k_values) {
      auto it = g.pass_at_k.find(k);
      os << std::setw(9) << (it == g.pass_at_k.end() ? "-" : perf ? fixed(it->second, 2) : "not run");
    }
    os << "  " << speedup_summary(g) << '\n';
  }
  for (const auto& g : groups) {
    if (g.per_round.size() < 2) continue;
    os << "\nper round, " << terminal_safe(g.experiment) << " / " << terminal_safe(g.model) << " / " << terminal_safe(g.task) << ":\n"
       << std::setw(7) << "round" << std::setw(9) << "compile" << std::setw(9) << "correct" << std::setw(8)
       << "instr" << std::setw(8) << "passed" << std::setw(9) << "fast_1\n";
    for (size_t r = 0; r < g.per_round.size(); ++r) {
      const auto& x = g.per_round[r];
      os << std::setw(7) << r << std::setw(9) << rate(g, rate_kind::compiled, x.compiled) << std::setw(9)
         << rate(g, rate_kind::correct, x.correct) << std::setw(8) << rate(g, rate_kind::instructions, x.instructions)
         << std::setw(8) << rate(g, rate_kind::passed, x.passed) << std::setw(8)
         << rate(g, rate_kind::passed, x.fast_p[fast_1_index]) << '\n';
    }
  }
  if (!curves.empty()) os << calls_table(curves);
  os << '\n' << metric_definitions() << '\n';
  return os.str();
}

}  // namespace ptxbench::data
