#include <doctest/doctest.h>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/json_path.hpp"

using namespace ptxbench;

TEST_CASE("an evaluation result survives JSON and keeps its seed metrics") {
  evaluation_result r;
  r.passed = false;
  r.verdict = stage::performance;
  r.headline = "performance: speedup 0.61 below 0.9";
  for (int i = 0; i < 5; ++i) r.stages[static_cast<stage>(i)] = {stage_status::passed, "", 1.0 * i};
  r.stages[stage::performance] = {stage_status::failed, "too slow", 200.0};
  r.compile.kernels.push_back({"k", 168, 0, 0, 0, 0, 0});
  instruction_check ic;
  ic.ptx = "wgmma.mma_async";
  ic.executed = 123456;
  ic.flop_share = 0.99;
  ic.passed = true;
  r.instructions.checks.push_back(ic);
  r.instructions.dynamic_ran = true;
  performance_report p;
  p.speedup = 0.61;
  p.baseline_name = "cuBLASLt";
  r.performance = p;
  auto back = evaluation_result_from_json(to_json(r));
  CHECK(back.verdict == stage::performance);
  CHECK(back.correct());
  CHECK(back.instructions_executed());
  REQUIRE(back.speedup());
  CHECK(*back.speedup() == doctest::Approx(0.61));
  CHECK(back.furthest_passed() == stage::instructions);
  CHECK(back.instructions.checks[0].executed == 123456);
  CHECK(to_json(r)["verdict"] == "performance");
}

TEST_CASE("a result whose GPU stages did not run is neither correct nor fast") {
  evaluation_result r;
  r.stages[stage::format] = {stage_status::passed, "", 0};
  r.stages[stage::compile] = {stage_status::passed, "", 0};
  r.stages[stage::runtime] = {stage_status::not_run, "no GPU", 0};
  r.stages[stage::correctness] = {stage_status::not_run, "no GPU", 0};
  r.stages[stage::instructions] = {stage_status::unverified, "static only", 0};
  CHECK_FALSE(r.correct());
  CHECK_FALSE(r.instructions_executed());
  CHECK_FALSE(r.speedup());
  CHECK(r.furthest_passed() == stage::compile);
}

TEST_CASE("unknown stage names are input errors") {
  CHECK_THROWS_AS(parse_stage("speed"), input_error);
  CHECK(parse_stage("correctness") == stage::correctness);
}

TEST_CASE("candidates rank stage by stage in table order - then by speedup") {
  auto result = [](std::initializer_list<std::pair<stage, stage_status>> s, std::optional<double> speedup) {
    evaluation_result r;
    for (auto [k, v] : s) r.stages[k] = {v, "", 0};
    if (speedup) {
      performance_report p;
      p.speedup = *speedup;
      r.performance = p;
    }
    return r;
  };
  using enum stage_status;
  // Without a GPU: the static check failing is worse than its proof being unverified.
  auto missing = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, not_run},
                         {stage::instructions, failed}}, std::nullopt);
  auto present = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, not_run},
                         {stage::instructions, unverified}}, std::nullopt);
  CHECK(got_further(present, missing));
  CHECK_FALSE(got_further(missing, present));
  auto slow = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, passed}}, 0.5);
  auto fast = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, passed}}, 0.9);
  CHECK(got_further(slow, present));
  CHECK_FALSE(got_further(fast, slow));
  CHECK(better(fast, slow));
  CHECK_FALSE(better(slow, fast));
  CHECK(better(slow, result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, passed}}, std::nullopt)));
  CHECK(stage_score(failed) < stage_score(not_run));
  CHECK(stage_score(unverified) == stage_score(not_run));
}
