#include "agent/data/run_data.hpp"

#include <algorithm>
#include <array>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::data {

experiment_data load_experiment(run_store& store, const experiment_row& experiment) {
  experiment_data data;
  data.experiment = experiment;
  for (auto& t : store.trajectories(experiment.id)) {
    trajectory_data td;
    td.turns = store.turns(t.id);
    std::sort(td.turns.begin(), td.turns.end(),
              [](const turn_view& a, const turn_view& b) { return a.turn.round < b.turn.round; });
    for (auto& b : store.branch_replies(t.id)) {  // by round and branch
      sibling_data s;
      s.branch = b.branch;
      s.chosen = b.chosen;
      s.view.turn = std::move(b.turn);
      s.view.candidate = std::move(b.candidate);
      s.view.evaluation = std::move(b.evaluation);
      td.siblings[s.view.turn.round].push_back(std::move(s));
    }
    td.trajectory = std::move(t);
    data.trajectories.push_back(std::move(td));
  }
  std::sort(data.trajectories.begin(), data.trajectories.end(),
            [](const trajectory_data& a, const trajectory_data& b) {
              const auto& x = a.trajectory;
              const auto& y = b.trajectory;
              return std::tie(x.task_id, x.sample, x.id) < std::tie(y.task_id, y.sample, y.id);
            });
  return data;
}

std::vector<experiment_data> load_experiments(run_store& store, const std::vector<std::string>& names) {
  std::vector<experiment_row> rows;
  if (names.empty()) {
    rows = store.experiments();
    std::sort(rows.begin(), rows.end(),
              [](const experiment_row& a, const experiment_row& b) { return a.id < b.id; });
  } else {
    for (const auto& name : names) {
      auto row = store.find_experiment(name);
      if (!row) throw input_error("no experiment named '" + name + "' in " + store.path().string());
      rows.push_back(*row);
    }
  }
  std::vector<experiment_data> out;
  for (const auto& row : rows) out.push_back(load_experiment(store, row));
  return out;
}

int verdict_rank(const std::string& verdict) {
  if (verdict == "passed") return passed_rank;
  for (int i = 0; i < stage_count; ++i) {
    if (verdict == to_string(static_cast<stage>(i))) return i;
  }
  return -1;
}

std::string verdict_name(int rank) {
  if (rank == passed_rank) return "passed";
  if (rank >= 0 && rank < stage_count) return to_string(static_cast<stage>(rank));
  return "none";
}

int parse_verdict_rank(const std::string& name) {
  int rank = verdict_rank(name);
  if (rank < 0) {
    throw input_error("unknown stage '" + name +
                      "' (expected format, compile, runtime, correctness, instructions, performance or passed)");
  }
  return rank;
}

candidate_quality quality_of(const turn_view& turn) {
  candidate_quality q;
  if (!turn.evaluation) return q;
  const auto& e = *turn.evaluation;
  q.verdict = e.passed ? passed_rank : verdict_rank(e.verdict);
  q.speedup = e.speedup;
  const auto& stages = e.result.is_object() ? e.result.value("stages", nlohmann::json()) : nlohmann::json();
  for (int s = 0; s < stage_count; ++s) {
    int score = e.passed || s < q.verdict ? 2 : s == q.verdict ? 0 : 1;  // from the verdict alone
    if (stages.is_object() && !stages.empty()) {
      const auto& entry = stages.value(to_string(static_cast<stage>(s)), nlohmann::json());
      std::string status = entry.is_object() ? entry.value("status", "") : "";
      score = stage_score(status == "passed" ? stage_status::passed
                          : status == "failed" ? stage_status::failed
                                               : stage_status::not_run);
    }
    q.stage_score[s] = score;
    q.stage_passed[s] = score == 2;
  }
  q.reached = 0;
  while (q.reached < stage_count && q.stage_passed[q.reached]) ++q.reached;
  if (e.passed) q.reached = passed_rank;
  return q;
}

bool got_further(const candidate_quality& a, const candidate_quality& b) {
  if (a.verdict < 0 || b.verdict < 0) return a.verdict >= 0 && b.verdict < 0;
  return a.stage_score > b.stage_score;
}

bool better(const candidate_quality& a, const candidate_quality& b) {
  if (got_further(a, b) || got_further(b, a)) return got_further(a, b);
  if (a.speedup.has_value() != b.speedup.has_value()) return a.speedup.has_value();
  return a.speedup && *a.speedup > *b.speedup;
}

std::string model_of(const turn_view& turn, const experiment_row& experiment) {
  return turn.turn.model.empty() ? experiment.model : turn.turn.model;
}

bool compiled(const turn_view& turn) {
  return quality_of(turn).stage_passed[static_cast<int>(stage::compile)];
}

uint64_t stable_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace ptxbench::data
