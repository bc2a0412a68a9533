// The stage funnel printed at the end of a run: how many candidates reach each
// stage, and where they fall.
#include <cstdio>
#include <sstream>

#include "agent/loop/orchestrator.hpp"

namespace ptxbench {

std::vector<funnel_row> experiment_funnel(run_store& store, int64_t experiment_id, bool all_candidates) {
  std::vector<funnel_row> rows;
  for (int i = 0; i < stage_count; ++i) rows.push_back({to_string(static_cast<stage>(i))});
  rows.push_back({"passed"});
  for (const auto& tr : store.trajectories(experiment_id)) {
    auto turns = store.turns(tr.id);
    size_t first = all_candidates || turns.empty() ? 0 : turns.size() - 1;
    for (size_t k = first; k < turns.size(); ++k) {
      if (!turns[k].evaluation) continue;
      auto r = evaluation_result_from_json(turns[k].evaluation->result);
      for (int i = 0; i < stage_count; ++i) {
        auto it = r.stages.find(static_cast<stage>(i));
        if (it == r.stages.end()) break;
        if (it->second.status == stage_status::failed) {
          ++rows[i].reached;
          ++rows[i].failed;
          break;
        }
        if (it->second.status == stage_status::not_run || it->second.status == stage_status::unverified) {
          ++rows[i].reached;
          ++rows[i].not_run;
          break;
        }
        ++rows[i].reached;
      }
      if (r.passed) ++rows.back().reached;
    }
  }
  return rows;
}

std::string format_funnel(const std::vector<funnel_row>& rows, const std::string& title) {
  std::ostringstream o;
  o << title << "\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-13s %8s %8s %18s\n", "stage", "reached", "failed", "not run/unverified");
  o << line;
  for (const auto& r : rows) {
    if (r.stage == "passed")
      std::snprintf(line, sizeof line, "  %-13s %8d\n", r.stage.c_str(), r.reached);
    else
      std::snprintf(line, sizeof line, "  %-13s %8d %8d %18d\n", r.stage.c_str(), r.reached, r.failed, r.not_run);
    o << line;
  }
  return o.str();
}

}  // namespace ptxbench
