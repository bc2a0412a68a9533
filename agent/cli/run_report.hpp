#pragma once
// What run prints when it ends, and its exit code.
#include <string>
#include <vector>

#include "agent/loop/experiment_config.hpp"
#include "agent/loop/orchestrator.hpp"
#include "agent/store/store.hpp"

namespace ptxbench::cli {

// Prints the stage funnels, the summary line and the coverage fill, and says
// why the run stopped early if it did (a store failure and an unreachable
// evaluator are printed even with --quiet, with the command that resumes).
// Returns the exit code: 3 the database could not be written or no evaluator
// could judge; 130 interrupted; 1 an incomplete trajectory, or none that came
// through without a failed stage; else 0.
int report_run(const experiment_config& cfg, const std::string& config_path, run_store& store,
               const run_summary& summary, const std::vector<task>& tasks);

}  // namespace ptxbench::cli
