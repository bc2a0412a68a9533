#include "agent/data/run_data.hpp"

#include <algorithm>
#include <array>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/common/hash.hpp"
#include "evaluator/common/json_path.hpp"

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

namespace {

// The standing of a stored evaluation: its result's stage statuses, else its
// verdict column (a row written without them).
standing standing_of_row(const evaluation_row& e) {
  standing st;
  const auto& stages = e.result.is_object() ? e.result.value("stages", nlohmann::json()) : nlohmann::json();
  if (stages.is_object() && !stages.empty()) {
    st.judged = true;
    for (int s = 0; s < stage_count; ++s) {
      const auto& entry = stages.value(to_string(static_cast<stage>(s)), nlohmann::json());
      const std::string status = entry.is_object() ? entry.value("status", "") : "";
      try {
        st.stages[s] = status.empty() ? stage_status::not_run : parse_stage_status(status);
      } catch (const input_error&) {
        st.stages[s] = stage_status::not_run;  // a status this version does not know proves nothing
      }
    }
  } else if (auto v = parse_verdict_name(e.verdict); v && v->kind != verdict_kind::none) {
    st.judged = true;
    const int at = static_cast<int>(v->at);
    if (v->kind == verdict_kind::failed)
      for (int s = 0; s <= at; ++s) st.stages[s] = s < at ? stage_status::passed : stage_status::failed;
    // The name does not say where the evaluator failed: anywhere is as good.
    if (v->kind == verdict_kind::error) st.stages[static_cast<int>(stage::runtime)] = stage_status::error;
  }
  if (e.passed) {
    st.judged = true;
    st.stages.fill(stage_status::passed);
  }
  st.speedup = e.speedup;
  return st;
}

}  // namespace

candidate_quality quality_of(const turn_view& turn) {
  return turn.evaluation ? quality_of(*turn.evaluation) : candidate_quality{};
}

candidate_quality quality_of(const evaluation_row& evaluation) {
  candidate_quality q;
  q.st = standing_of_row(evaluation);
  q.speedup = q.st.speedup;
  const verdict v = verdict_of(q.st);
  q.kind = v.kind;
  for (int s = 0; s < stage_count; ++s) {
    q.stage_score[s] = stage_score(q.st.stages[s]);
    q.stage_passed[s] = q.st.stages[s] == stage_status::passed;
  }
  if (v.kind == verdict_kind::none || v.kind == verdict_kind::error) return q;
  q.verdict = v.kind == verdict_kind::passed ? passed_rank : static_cast<int>(v.at);
  q.reached = 0;
  while (q.reached < stage_count && q.stage_passed[q.reached]) ++q.reached;
  if (v.kind == verdict_kind::passed) q.reached = passed_rank;
  return q;
}

bool got_further(const candidate_quality& a, const candidate_quality& b) { return ptxbench::got_further(a.st, b.st); }

bool better(const candidate_quality& a, const candidate_quality& b) { return ptxbench::better(a.st, b.st); }

std::string model_of(const turn_view& turn, const experiment_row& experiment) {
  return turn.turn.model.empty() ? experiment.model : turn.turn.model;
}

bool compiled(const turn_view& turn) {
  return quality_of(turn).stage_passed[static_cast<int>(stage::compile)];
}

uint64_t stable_hash(const std::string& text) { return fnv1a(text); }

}  // namespace ptxbench::data
