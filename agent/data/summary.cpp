#include "agent/data/summary.hpp"

#include <cmath>

namespace ptxbench::data {
namespace {

// The mean of the values given; nullopt when there are none.
struct mean_of {
  double sum = 0.0;
  int n = 0;
  void add(double v) {
    sum += v;
    ++n;
  }
  std::optional<double> value() const { return n ? std::optional<double>(sum / n) : std::nullopt; }
};

summary_row summarize_tasks(const std::vector<const group_metrics*>& tasks) {
  summary_row r;
  r.experiment = tasks.front()->experiment;
  r.model = tasks.front()->model;
  r.tasks = static_cast<int>(tasks.size());
  mean_of compiled, correct, instructions, passed;
  std::vector<mean_of> fast(fast_p_thresholds.size());
  std::map<int, mean_of> pass_k;
  double log_sum = 0.0;
  for (const auto* g : tasks) {
    r.trajectories += g->trajectories;
    if (stage_ran(*g, stage_of(rate_kind::compiled))) compiled.add(g->final.compiled);
    if (stage_ran(*g, stage_of(rate_kind::correct))) correct.add(g->final.correct);
    if (stage_ran(*g, stage_of(rate_kind::instructions))) instructions.add(g->final.instructions);
    if (stage_ran(*g, stage_of(rate_kind::passed))) {
      passed.add(g->final.passed);
      for (size_t i = 0; i < fast.size(); ++i) fast[i].add(g->final.fast_p[i]);
      for (const auto& [k, value] : g->pass_at_k) pass_k[k].add(value);
    }
    if (g->geomean_best && *g->geomean_best > 0.0) {
      log_sum += std::log(*g->geomean_best);
      ++r.tasks_with_speedup;
    }
  }
  r.compiled = compiled.value();
  r.correct = correct.value();
  r.instructions = instructions.value();
  r.passed = passed.value();
  for (const auto& f : fast) r.fast_p.push_back(f.value());
  for (int k : pass_k_values) {
    r.pass_at_k[k] = pass_k[k].value();
    r.pass_at_k_tasks[k] = pass_k[k].n;
  }
  if (r.tasks_with_speedup) r.geomean_speedup = std::exp(log_sum / r.tasks_with_speedup);
  return r;
}

}  // namespace

const char* to_string(summary_scope s) {
  switch (s) {
    case summary_scope::all: return "all";
    case summary_scope::family: return "family";
    case summary_scope::level: return "level";
  }
  return "?";
}

std::string scope_label(const summary_row& r) {
  switch (r.scope) {
    case summary_scope::all: return "all tasks";
    case summary_scope::family: return "family " + r.family;
    case summary_scope::level: return level_label(r.level);
  }
  return "?";
}

std::vector<summary_row> compute_summaries(const std::vector<group_metrics>& groups) {
  // (experiment, model) in order of first appearance.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const group_metrics*>> by_run;
  for (const auto& g : groups) {
    auto key = std::make_pair(g.experiment, g.model);
    if (!by_run.count(key)) order.push_back(key);
    by_run[key].push_back(&g);
  }
  std::vector<summary_row> out;
  for (const auto& key : order) {
    const auto& tasks = by_run[key];
    out.push_back(summarize_tasks(tasks));
    std::map<std::string, std::vector<const group_metrics*>> families;
    std::map<int, std::vector<const group_metrics*>> levels;  // 0 sorted last below
    bool any_level = false;
    for (const auto* g : tasks) {
      families[g->family].push_back(g);
      levels[g->level].push_back(g);
      any_level = any_level || g->level > 0;
    }
    for (const auto& [family, members] : families) {
      out.push_back(summarize_tasks(members));
      out.back().scope = summary_scope::family;
      out.back().family = family;
    }
    if (!any_level) continue;
    for (const auto& [level, members] : levels) {
      if (level == 0) continue;
      out.push_back(summarize_tasks(members));
      out.back().scope = summary_scope::level;
      out.back().level = level;
    }
    if (levels.count(0)) {
      out.push_back(summarize_tasks(levels[0]));
      out.back().scope = summary_scope::level;
    }
  }
  return out;
}

}  // namespace ptxbench::data
