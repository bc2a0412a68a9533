// The stage funnel printed at the end of a run: where candidates pass, fall,
// or could not be judged.
#include <cstdio>
#include <sstream>

#include "agent/loop/orchestrator.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench {

std::vector<funnel_row> experiment_funnel(run_store& store, int64_t experiment_id, bool all_candidates) {
  std::vector<funnel_row> rows;
  for (int i = 0; i < stage_count; ++i) rows.push_back({to_string(static_cast<stage>(i))});
  rows.push_back({"passed"});
  rows.push_back({"partial"});
  for (const auto& tr : store.trajectories(experiment_id)) {
    auto turns = store.turns(tr.id);
    size_t first = all_candidates || turns.empty() ? 0 : turns.size() - 1;
    for (size_t k = first; k < turns.size(); ++k) {
      if (!turns[k].evaluation) continue;
      auto r = evaluation_result_from_json(turns[k].evaluation->result);
      for (int i = 0; i < stage_count; ++i) {
        auto it = r.stages.find(static_cast<stage>(i));
        stage_status st = it == r.stages.end() ? stage_status::not_run : it->second.status;
        switch (st) {
          case stage_status::passed: ++rows[i].passed; break;
          case stage_status::failed: ++rows[i].failed; break;
          case stage_status::not_run: ++rows[i].not_run; break;
          case stage_status::unverified: ++rows[i].unverified; break;
          case stage_status::error: ++rows[i].error; break;
        }
      }
      const verdict v = verdict_of(r);
      if (v.kind == verdict_kind::failed) ++rows[static_cast<int>(v.at)].verdict;
      if (v.kind == verdict_kind::passed) ++rows[stage_count].verdict;
      if (v.kind == verdict_kind::partial) ++rows[stage_count + 1].verdict;
      // An evaluator error is no verdict on the candidate: counted nowhere.
    }
  }
  return rows;
}

int trajectories_without_failure(run_store& store, int64_t experiment_id) {
  int n = 0;
  for (const auto& tr : store.trajectories(experiment_id)) {
    for (const auto& turn : store.turns(tr.id)) {
      if (!turn.evaluation) continue;
      auto r = evaluation_result_from_json(turn.evaluation->result);
      const verdict_kind k = verdict_of(r).kind;
      if (k == verdict_kind::passed || (k == verdict_kind::partial && !r.stages.empty())) {
        ++n;
        break;
      }
    }
  }
  return n;
}

std::string format_funnel(const std::vector<funnel_row>& rows, const std::string& title) {
  std::ostringstream o;
  o << title << "\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-13s %7s %7s %8s %11s %6s %8s\n", "stage", "passed", "failed", "not run",
                "unverified", "error", "verdict");
  o << line;
  for (const auto& r : rows) {
    if (r.stage == "passed" || r.stage == "partial")
      std::snprintf(line, sizeof line, "  %-13s %7s %7s %8s %11s %6s %8d\n",
                    r.stage == "passed" ? "all passed" : "none failed", "", "", "", "", "", r.verdict);
    else
      std::snprintf(line, sizeof line, "  %-13s %7d %7d %8d %11d %6d %8d\n", r.stage.c_str(), r.passed, r.failed,
                    r.not_run, r.unverified, r.error, r.verdict);
    o << line;
  }
  return o.str();
}

}  // namespace ptxbench
