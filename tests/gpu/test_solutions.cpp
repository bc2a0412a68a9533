// Reference solutions (solution_dir: tasks/solutions/<task>/, or generated into
// build/solutions/<task>/ by scripts/gen_solutions.sh): every task has one,
// and each one that runs on this GPU passes every stage with timing on
// (correct at every public and hidden size, its target instructions proven at
// every counted size, fast enough). They are the evidence that the
// evaluator's rules can be met by honest kernels.
#include <doctest/doctest.h>

#include <algorithm>

#include "evaluator/api/solutions.hpp"
#include "gpu_fixture.hpp"
#include "sampling_checks.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;
namespace fs = std::filesystem;

TEST_CASE("reference solutions: every task has one and each runnable one passes every stage") {
  require_gpu();
  int found = 0, evaluated = 0;
  auto tasks = load_task_dir(source_dir() / "tasks");
  const solution_roots roots = default_solution_roots(source_dir() / "tasks");
  for (const auto& t : tasks) {
    const std::string& id = t.id;
    const auto dir = solution_dir(id, roots);
    CHECK_MESSAGE(dir.has_value(), "no reference solution for task " << id << " in " << roots.checked_in.string()
                                                                     << " or " << roots.generated.string());
    if (!dir) continue;
    ++found;
    evaluation_request req;
    req.t = t;
    if (!req.t.runs_on_hopper) {
      MESSAGE(id << ": not run (" << req.t.arch << " is not this GPU's architecture)");
      continue;
    }
    req.ptx = read_text_file(*dir / "kernel.ptx");
    req.manifest_text = read_text_file(*dir / "manifest.json");
    req.run_timing = true;
    auto r = shared_evaluator().evaluate(req);
    log_result("solution " + id, r);
    ++evaluated;
    INFO(id << ": " << r.headline);
    for (int s = 0; s < stage_count; ++s) {
      const stage_outcome& o = r.stages[stage(s)];
      CHECK_MESSAGE(o.status == stage_status::passed,
                    id << " " << to_string(stage(s)) << " is " << to_string(o.status) << ": " << o.reason);
    }
    CHECK(r.passed);
    check_sampling_record(r);
  }
  MESSAGE(found << " reference solutions found, " << evaluated << " evaluated");
  // Every task has a solution; the sm_100a ones are not run on a Hopper GPU.
  const auto runnable = std::count_if(tasks.begin(), tasks.end(), [](const task& t) { return t.runs_on_hopper; });
  CHECK(tasks.size() >= 50);
  CHECK(found == int(tasks.size()));
  CHECK(evaluated == int(runnable));
}
