#pragma once
// The rules a task suite keeps beyond what parse_task checks of one task
// (`ptxbench tasks check`, docs/task-authoring.md): every size name has a
// machine-checked rule, the hidden sizes exercise what the rules allow, a
// task has a level, a variant and its constraints in words, and the core
// suite holds one task per family and level.
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench {

// Problems of one task, each naming it ("gemm_x: size K has no size rule").
std::vector<std::string> task_problems(const task& t);

// Problems of the suite as a whole (the core suite's coverage, the problems
// of each task).
std::vector<std::string> suite_problems(const std::vector<task>& tasks);

// "the GPU" or "compile and SASS only (sm_100a)": where a task is judged.
std::string judged_at(const task& t);

}  // namespace ptxbench
