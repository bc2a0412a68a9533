#pragma once
// Coverage-driven collection (run --coverage-target N): how many verified
// repairs each task x failing-stage cell of an experiment holds. A verified
// repair is a pair of consecutive rounds of one trajectory where round r
// failed at stage S (its verdict, no evaluator error) and round r+1 got
// further (got_further): the correction examples `export` writes.
#include <map>
#include <string>
#include <vector>

#include "agent/store/store.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

// task id -> stage name -> verified repairs; every task and stage present.
using repair_coverage = std::map<std::string, std::map<std::string, int>>;
repair_coverage count_repairs(run_store& store, int64_t experiment_id, const std::vector<task>& tasks);
// Tasks with a cell below `target`, in the order of `tasks`.
std::vector<const task*> unfilled_tasks(const repair_coverage& coverage, const std::vector<task>& tasks, int target);
// One row per task, "n/N" per stage, then the unfilled cells by name.
std::string format_repair_coverage(const repair_coverage& coverage, int target);

}  // namespace ptxbench
