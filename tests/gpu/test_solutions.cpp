// Reference solutions (tasks/solutions/<task>/) must be correct on the GPU;
// their instructions and speed are printed, not asserted (they are data).
#include <doctest/doctest.h>

#include "gpu_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;
namespace fs = std::filesystem;

TEST_CASE("reference solutions pass runtime and correctness") {
  require_gpu();
  fs::path root = source_dir() / "tasks/solutions";
  int found = 0;
  if (fs::exists(root))
    for (const auto& dir : fs::directory_iterator(root)) {
      if (!fs::exists(dir.path() / "kernel.ptx") || !fs::exists(dir.path() / "manifest.json")) continue;
      std::string id = dir.path().filename().string();
      fs::path task_file = source_dir() / "tasks" / (id + ".json");
      if (!fs::exists(task_file)) continue;
      evaluation_request req;
      req.t = load_task_file(task_file);
      if (!req.t.runs_on_hopper) continue;
      req.ptx = read_text_file(dir.path() / "kernel.ptx");
      req.manifest_text = read_text_file(dir.path() / "manifest.json");
      auto r = shared_evaluator().evaluate(req);
      log_result("solution " + id, r);
      ++found;
      INFO(id << ": " << r.headline);
      CHECK(r.stages[stage::runtime].status == stage_status::passed);
      CHECK(r.stages[stage::correctness].status == stage_status::passed);
    }
  MESSAGE(found << " reference solutions evaluated");
}
