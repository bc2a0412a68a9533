#pragma once
// The benchmark report: a terminal table and a self-contained HTML page with
// inline SVG plots (funnel, per-round curves, speedup histogram). The metric
// definitions are written into both outputs (see metrics.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/data/metrics.hpp"

namespace ptxbench::data {

// The across-task summary per experiment x model (over all tasks, per family,
// per level: summary.hpp), then one row per model x task, then each group's per-round table, then (when
// `curves` is not empty) the experiments side by side by LLM calls per trajectory.
std::string format_report_text(const std::vector<group_metrics>& groups, const std::vector<calls_curve>& curves = {});
// `text` with terminal control characters (C0, DEL, C1) written as \xHH.
std::string terminal_safe(const std::string& text);

// A complete HTML document (no external scripts, styles or fonts). `experiments`
// are listed in its header with their evaluator version and GPU.
std::string render_report_html(const std::vector<group_metrics>& groups,
                               const std::vector<experiment_row>& experiments, const std::string& database,
                               const std::vector<calls_curve>& curves = {});

// The figures as JSON: {database, experiments, fast_p_thresholds, pass_k,
// definitions, summary_definition, summaries: [{experiment, model, scope
// (all | family | level), family, level, tasks, trajectories, rates,
// pass_at_k, pass_at_k_tasks, geomean_speedup, tasks_with_speedup}],
// groups: [{experiment, model, task, family, level, variant, counts, stages,
// rates, pass_at_k, speedup, per_round}], by_llm_calls: [{experiment, branch,
// rounds, trajectories, llm_calls, calls_per_trajectory, points: [{calls,
// compiled, correct, instructions, passed, fast_1, no_failed_stage}]}]}.
// Rates whose stage never ran are null.
nlohmann::json render_report_json(const std::vector<group_metrics>& groups,
                                  const std::vector<experiment_row>& experiments, const std::string& database,
                                  const std::vector<calls_curve>& curves = {});

// The definitions printed under all outputs.
std::string metric_definitions();
// How the across-task summary (summary.hpp) is computed.
std::string summary_definitions();
// How to read the comparison by LLM calls.
std::string calls_definition();

}  // namespace ptxbench::data
