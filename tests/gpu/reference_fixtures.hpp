#pragma once
// The reference tests' task fixtures: one small task of every variant
// (tests/fixtures/reference_tasks.json, written from docs/task-suite.md).
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench {

// The tasks of a JSON array file; throws input_error naming the bad entry.
std::vector<task> load_task_array(const std::string& path);

// tests/fixtures/reference_tasks.json under $PTXBENCH_SOURCE_DIR, else the
// source tree it was built from; loaded once.
const std::vector<task>& reference_fixtures();

}  // namespace ptxbench
