#include "agent/loop/coverage.hpp"

#include <cstdio>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench {

repair_coverage count_repairs(run_store& store, int64_t experiment_id, const std::vector<task>& tasks) {
  repair_coverage cov;
  for (const auto& t : tasks)
    for (int s = 0; s < stage_count; ++s) cov[t.id][to_string(static_cast<stage>(s))] = 0;
  for (const auto& tr : store.trajectories(experiment_id)) {
    auto it = cov.find(tr.task_id);
    if (it == cov.end()) continue;
    auto turns = store.turns(tr.id);
    for (size_t i = 0; i + 1 < turns.size(); ++i) {
      if (!turns[i].evaluation || !turns[i + 1].evaluation || turns[i + 1].turn.round != turns[i].turn.round + 1)
        continue;
      auto failed = evaluation_result_from_json(turns[i].evaluation->result);
      auto fix = evaluation_result_from_json(turns[i + 1].evaluation->result);
      const verdict before = verdict_of(failed);
      if (before.kind != verdict_kind::failed || verdict_of(fix).kind == verdict_kind::error) continue;
      if (got_further(fix, failed)) ++it->second[to_string(before.at)];
    }
  }
  return cov;
}

std::vector<const task*> unfilled_tasks(const repair_coverage& coverage, const std::vector<task>& tasks, int target) {
  std::vector<const task*> out;
  for (const auto& t : tasks) {
    auto it = coverage.find(t.id);
    if (it == coverage.end()) continue;
    for (const auto& [stage_name, n] : it->second)
      if (n < target) {
        out.push_back(&t);
        break;
      }
  }
  return out;
}

std::string format_repair_coverage(const repair_coverage& coverage, int target) {
  std::string out = "Verified repairs per task x failing stage (target " + std::to_string(target) + "):\n";
  char cell[64];
  std::snprintf(cell, sizeof cell, "  %-34s", "task");
  out += cell;
  for (int s = 0; s < stage_count; ++s) {
    std::snprintf(cell, sizeof cell, " %12s", to_string(static_cast<stage>(s)));
    out += cell;
  }
  out += "\n";
  std::vector<std::string> unfilled;
  for (const auto& [task_id, row] : coverage) {
    std::snprintf(cell, sizeof cell, "  %-34s", task_id.c_str());
    out += cell;
    for (int s = 0; s < stage_count; ++s) {
      const std::string name = to_string(static_cast<stage>(s));
      auto it = row.find(name);
      const int n = it == row.end() ? 0 : it->second;
      std::snprintf(cell, sizeof cell, " %12s", (std::to_string(n) + "/" + std::to_string(target)).c_str());
      out += cell;
      if (n < target) unfilled.push_back(task_id + " x " + name);
    }
    out += "\n";
  }
  if (unfilled.empty()) {
    out += "every cell filled\n";
  } else {
    out += "not filled (" + std::to_string(unfilled.size()) + "):";
    for (const auto& u : unfilled) out += " " + u + ";";
    out.back() = '\n';
  }
  return out;
}

}  // namespace ptxbench
