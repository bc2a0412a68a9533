#pragma once
// The across-task headline of a report: per experiment x model, over all its
// tasks, per task family and per level (docs/task-suite.md). Every task weighs
// the same: a figure is the mean over tasks of that task's figure
// (metrics.hpp), so a task sampled more often does not count more.
//  - compile / correct / instr / passed and fast_p: the mean over the tasks
//    where the rate's stage ran; when it ran in none, "not run" (never 0);
//  - pass@k: the mean over the tasks with at least k samples where
//    performance ran (pass@k averaged over problems, as HumanEval and
//    KernelBench report it);
//  - geomean speedup: the geometric mean over tasks of each task's geometric
//    mean of its trajectories' best correct speedups; tasks without a correct
//    candidate with a speedup are left out (tasks_with_speedup counts the rest).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/data/metrics.hpp"

namespace ptxbench::data {

enum class summary_scope { all, family, level };
const char* to_string(summary_scope s);

struct summary_row {
  std::string experiment;
  std::string model;
  summary_scope scope = summary_scope::all;
  std::string family;  // scope family
  int level = 0;       // scope level (0: the tasks whose level is not given)
  int tasks = 0;
  int trajectories = 0;
  std::optional<double> compiled, correct, instructions, passed;
  std::vector<std::optional<double>> fast_p;       // one per fast_p_thresholds
  std::map<int, std::optional<double>> pass_at_k;  // one per pass_k_values
  std::map<int, int> pass_at_k_tasks;              // the tasks each pass@k averages
  std::optional<double> geomean_speedup;
  int tasks_with_speedup = 0;
};

// "all tasks", "family gemm", "level 2" / "level not given".
std::string scope_label(const summary_row& r);

// Per (experiment, model) in the order of `groups`: the row over all tasks,
// then one per family (by name), then one per level (ascending, "not given"
// last) when any of its tasks has a level.
std::vector<summary_row> compute_summaries(const std::vector<group_metrics>& groups);

}  // namespace ptxbench::data
