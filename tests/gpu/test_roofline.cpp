// A task whose variant no library covers says "baseline": "roofline": the
// candidate is timed against the physical floor, and the result says so.
#include <doctest/doctest.h>

#include "gpu_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

namespace {

evaluation_result evaluate_solution(const std::string& baseline, double threshold) {
  const auto dir = source_dir() / "tasks/solutions/gemm_bf16_wgmma_tma";
  evaluation_request req;
  req.t = load_task_file(source_dir() / "tasks/gemm_bf16_wgmma_tma.json");
  req.t.baseline = baseline;
  req.t.speedup_threshold = threshold;
  req.ptx = read_text_file(dir / "kernel.ptx");
  req.manifest_text = read_text_file(dir / "manifest.json");
  req.run_timing = true;
  return shared_evaluator().evaluate(req);
}

}  // namespace

TEST_CASE("a roofline task's speedup is against the physical floor and the result says so") {
  require_gpu();
  const evaluation_result lenient = evaluate_solution("roofline", 0.05);
  log_result("roofline lenient", lenient);
  REQUIRE(lenient.performance);
  const performance_report& p = *lenient.performance;
  CHECK(p.baseline_kind == "roofline");
  CHECK(p.baseline_name.find("roofline floor") == 0);
  CHECK(p.baseline_ms == doctest::Approx(p.floor_ms));
  CHECK(p.speedup == doctest::Approx(p.floor_ms / p.candidate_ms));
  CHECK(p.baseline_rel_l2.empty());  // no library ran
  CHECK(lenient.stages.at(stage::performance).status == stage_status::passed);
  // Nothing honest runs at 1.5x the floor (a time below 0.75 of it is flagged instead).
  const evaluation_result strict = evaluate_solution("roofline", 1.5);
  REQUIRE(strict.performance);
  CHECK(strict.stages.at(stage::performance).status == stage_status::failed);
  const evaluation_result library = evaluate_solution("cublaslt", 0.05);
  REQUIRE(library.performance);
  CHECK(library.performance->baseline_kind == "library");
}
