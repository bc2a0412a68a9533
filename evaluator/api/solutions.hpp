#pragma once
// Where a task's reference solution lives (docs/task-suite.md, "Reference
// solutions"). A solution written by hand keeps kernel.ptx and manifest.json
// in tasks/solutions/<id>/; one generated from a template keeps its
// solution.json and manifest there, and scripts/gen_solutions.sh writes the
// complete folder (kernel.ptx, manifest.json) to build/solutions/<id>/. Every
// user (mutate, the GPU tests, the benches) finds a solution through
// solution_dir, so none of them lists the places again.
#include <filesystem>
#include <optional>
#include <string>

namespace ptxbench {

struct solution_roots {
  std::filesystem::path checked_in;  // <tasks>/solutions
  std::filesystem::path generated;   // <source>/build/solutions
};

// The roots of the tasks folder `tasks_dir`: <tasks_dir>/solutions, and the
// generated folder named by $PTXBENCH_GENERATED_SOLUTIONS, else
// <tasks_dir>/../build/solutions (where scripts/setup.sh builds).
solution_roots default_solution_roots(const std::filesystem::path& tasks_dir);

// The folder holding kernel.ptx and manifest.json of task `id`'s solution:
// the checked-in one when it has both, else the generated one when it has
// both, else nullopt.
std::optional<std::filesystem::path> solution_dir(const std::string& id, const solution_roots& roots);

}  // namespace ptxbench
