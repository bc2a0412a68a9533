// `report --json`: the figures of every experiment x model x task group as one
// JSON document, for plotting and comparing runs without parsing tables.
#include <cstdio>

#include "agent/data/report.hpp"
#include "agent/data/summary.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string threshold_key(double p) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

// A rate whose stage never ran is null ("not run"), never 0.
json rate_or_null(const group_metrics& g, rate_kind kind, double value) {
  return stage_ran(g, stage_of(kind)) ? json(value) : json(nullptr);
}

json rates_json(const group_metrics& g, const rates& r) {
  json fast = json::object();
  bool perf = stage_ran(g, stage_of(rate_kind::passed));
  for (size_t i = 0; i < fast_p_thresholds.size(); ++i) {
    fast[threshold_key(fast_p_thresholds[i])] = perf ? json(r.fast_p[i]) : json(nullptr);
  }
  return {{"compiled", rate_or_null(g, rate_kind::compiled, r.compiled)},
          {"correct", rate_or_null(g, rate_kind::correct, r.correct)},
          {"instructions", rate_or_null(g, rate_kind::instructions, r.instructions)},
          {"passed", rate_or_null(g, rate_kind::passed, r.passed)},
          {"fast_p", fast}};
}

json group_json(const group_metrics& g) {
  json verdicts = json::object();
  for (int v = 0; v <= passed_rank; ++v) verdicts[verdict_name(v)] = g.verdicts[v];
  json stages = json::object();
  for (int s = 0; s < stage_count; ++s) {
    const auto& c = g.stages[s];
    stages[to_string(static_cast<stage>(s))] = {
        {"candidates_passed", c.passed},
        {"candidates_failed", c.failed},
        {"candidates_not_run", c.not_run},
        {"trajectories_passed", c.trajectories_passed},
        {"trajectories_ran", c.trajectories_ran},
        // Of the trajectories where the stage ran, the share that passed it.
        {"pass_rate", c.trajectories_ran ? json(static_cast<double>(c.trajectories_passed) / c.trajectories_ran)
                                         : json(nullptr)},
    };
  }
  json pass_k = json::object();
  for (int k : pass_k_values) {
    auto it = g.pass_at_k.find(k);
    // Without a performance stage that ran, no trajectory could pass: not run, not 0.
    const bool ran = stage_ran(g, stage_of(rate_kind::passed));
    pass_k[std::to_string(k)] = it == g.pass_at_k.end() || !ran ? json(nullptr) : json(it->second);
  }
  json per_round = json::array();
  for (size_t r = 0; r < g.per_round.size(); ++r) {
    json row = rates_json(g, g.per_round[r]);
    row["round"] = r;
    per_round.push_back(std::move(row));
  }
  return {
      {"experiment", g.experiment},
      {"model", g.model},
      {"task", g.task},
      {"family", g.family},
      {"level", g.level},
      {"variant", g.variant},
      {"counts",
       {{"trajectories", g.trajectories},
        {"candidates", g.candidates},
        {"evaluated", g.candidates - g.unevaluated},
        {"unevaluated", g.unevaluated},
        {"passed_trajectories", g.passed_trajectories},
        {"verdicts", verdicts}}},
      {"stages", stages},
      {"rates", rates_json(g, g.final)},
      {"pass_at_k", pass_k},
      {"speedup",
       {{"geomean_correct_candidates", optional_number(g.geomean_correct)},
        {"geomean_best_per_trajectory", optional_number(g.geomean_best)},
        {"best_per_trajectory", g.speedups},
        {"threshold", optional_number(g.speedup_threshold)}}},
      {"per_round", per_round},
  };
}

json curve_json(const calls_curve& c) {
  auto rate = [&](rate_kind kind, double v) { return curve_ran(c, kind) ? json(v) : json(nullptr); };
  json points = json::array();
  for (const auto& p : c.points) {
    points.push_back({{"calls", p.calls},
                      {"compiled", rate(rate_kind::compiled, p.at.compiled)},
                      {"correct", rate(rate_kind::correct, p.at.correct)},
                      {"instructions", rate(rate_kind::instructions, p.at.instructions)},
                      {"passed", rate(rate_kind::passed, p.at.passed)},
                      {"fast_1", rate(rate_kind::passed, p.at.fast_p[fast_1_index])},
                      {"no_failed_stage", p.no_failed_stage}});
  }
  return {{"experiment", c.experiment},
          {"branch", c.branch},
          {"rounds", c.rounds},
          {"trajectories", c.trajectories},
          {"llm_calls", c.llm_calls},
          {"calls_per_trajectory", c.trajectories ? json(static_cast<double>(c.llm_calls) / c.trajectories) : json(nullptr)},
          {"points", points}};
}

json summary_json(const summary_row& r) {
  json fast = json::object();
  for (size_t i = 0; i < fast_p_thresholds.size(); ++i) fast[threshold_key(fast_p_thresholds[i])] = optional_number(r.fast_p[i]);
  json pass_k = json::object(), pass_k_tasks = json::object();
  for (int k : pass_k_values) {
    pass_k[std::to_string(k)] = optional_number(r.pass_at_k.at(k));
    pass_k_tasks[std::to_string(k)] = r.pass_at_k_tasks.at(k);
  }
  return {{"experiment", r.experiment},
          {"model", r.model},
          {"scope", to_string(r.scope)},
          {"family", r.scope == summary_scope::family ? json(r.family) : json(nullptr)},
          {"level", r.scope == summary_scope::level ? json(r.level) : json(nullptr)},
          {"tasks", r.tasks},
          {"trajectories", r.trajectories},
          {"rates",
           {{"compiled", optional_number(r.compiled)},
            {"correct", optional_number(r.correct)},
            {"instructions", optional_number(r.instructions)},
            {"passed", optional_number(r.passed)},
            {"fast_p", fast}}},
          {"pass_at_k", pass_k},
          {"pass_at_k_tasks", pass_k_tasks},
          {"geomean_speedup", optional_number(r.geomean_speedup)},
          {"tasks_with_speedup", r.tasks_with_speedup}};
}

}  // namespace

json render_report_json(const std::vector<group_metrics>& groups, const std::vector<experiment_row>& experiments,
                        const std::string& database, const std::vector<calls_curve>& curves) {
  json exps = json::array();
  for (const auto& e : experiments) {
    exps.push_back({{"name", e.name},
                    {"model", e.model},
                    {"evaluator_version", e.evaluator_version},
                    {"gpu", e.gpu},
                    {"status", e.status},
                    {"created_at", e.created_at}});
  }
  json out_groups = json::array();
  for (const auto& g : groups) out_groups.push_back(group_json(g));
  json thresholds = json::array();
  for (double p : fast_p_thresholds) thresholds.push_back(p);
  json by_calls = json::array();
  for (const auto& c : curves) by_calls.push_back(curve_json(c));
  json summaries = json::array();
  for (const auto& r : compute_summaries(groups)) summaries.push_back(summary_json(r));
  return {{"database", database},
          {"experiments", exps},
          {"fast_p_thresholds", thresholds},
          {"pass_k", pass_k_values},
          {"definitions", metric_definitions()},
          {"summary_definition", summary_definitions()},
          {"summaries", summaries},
          {"groups", out_groups},
          {"by_llm_calls_definition", calls_definition()},
          {"by_llm_calls", by_calls}};
}

}  // namespace ptxbench::data
