#pragma once
// The verified solutions and a GPU-less evaluator for the mutation tests.
#include <filesystem>
#include <memory>
#include <string>

#include "agent/mutate/mutate_run.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::testing {

inline std::filesystem::path source_root() { return PTXBENCH_SOURCE_DIR; }

inline mutate::task_solution solution_of(const std::string& task_id) {
  auto all = load_task_dir(source_root() / "tasks");
  auto found = mutate::load_solutions(all, default_solution_roots(source_root() / "tasks"), {task_id});
  return found.at(0);
}

// Compile and static checks only, whatever the machine has.
inline std::unique_ptr<evaluator> static_evaluator() {
  local_evaluator_options o;
  o.gpu_mode = "off";
  return make_local_evaluator(o);
}

}  // namespace ptxbench::testing
