// Reference solutions (tasks/solutions/<task>/): every task has one, and each
// one that runs on this GPU passes every stage with timing on (correct, its
// target instructions proven at every counted size, fast enough). They are
// the evidence that the evaluator's rules can be met by honest kernels.
#include <doctest/doctest.h>

#include "gpu_fixture.hpp"
#include "sampling_checks.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> task_files() {
  std::vector<fs::path> v;
  for (const auto& f : fs::directory_iterator(source_dir() / "tasks"))
    if (f.is_regular_file() && f.path().extension() == ".json") v.push_back(f.path());
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("reference solutions: every task has one and each runnable one passes every stage") {
  require_gpu();
  int found = 0, evaluated = 0;
  auto tasks = task_files();
  for (const auto& task_file : tasks) {
    std::string id = task_file.stem().string();
    fs::path dir = source_dir() / "tasks/solutions" / id;
    bool present = fs::exists(dir / "kernel.ptx") && fs::exists(dir / "manifest.json");
    CHECK_MESSAGE(present, "no reference solution for task " << id << " (" << dir.string() << ")");
    if (!present) continue;
    ++found;
    evaluation_request req;
    req.t = load_task_file(task_file);
    if (!req.t.runs_on_hopper) {
      MESSAGE(id << ": not run (" << req.t.arch << " is not this GPU's architecture)");
      continue;
    }
    req.ptx = read_text_file(dir / "kernel.ptx");
    req.manifest_text = read_text_file(dir / "manifest.json");
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
  // Eight tasks, eight solutions; one (tcgen05) needs sm_100a.
  CHECK(tasks.size() >= 8);
  CHECK(found == int(tasks.size()));
  CHECK(evaluated >= 7);
}
