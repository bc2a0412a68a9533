#include <doctest/doctest.h>
#include <cmath>
#include <limits>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/common/json_path.hpp"

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
  p.baseline_kind = "roofline";
  r.performance = p;
  auto back = evaluation_result_from_json(to_json(r));
  CHECK(back.verdict == stage::performance);
  CHECK(back.performance->baseline_kind == "roofline");
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

// A kernel whose output is NaN or infinite gives error figures that JSON
// cannot hold (written as null): the result must read back with its verdict,
// not fail as an evaluator error (seen on the H200: "type must be number, but
// is null" for every wgmma -> mma.sync mutant of the GEMM tasks).
TEST_CASE("non-finite figures survive the trip through JSON") {
  evaluation_result r;
  r.verdict = stage::correctness;
  r.headline = "correctness failed: C wrong";
  r.stages[stage::runtime] = {stage_status::passed, "", 1.0};
  r.stages[stage::correctness] = {stage_status::failed, "C wrong", 2.0};
  output_check o;
  o.tensor = "C";
  o.max_abs_error = std::numeric_limits<double>::quiet_NaN();
  o.rel_l2_error = std::numeric_limits<double>::infinity();
  o.max_err_to_scale = -std::numeric_limits<double>::infinity();
  o.nan_count = 7;
  r.correctness.outputs.push_back(o);
  r.instructions.other_math_share["M=4096"] = std::numeric_limits<double>::quiet_NaN();
  performance_report p;
  p.speedup = 0.5;
  p.candidate_ms = std::numeric_limits<double>::infinity();
  r.performance = p;
  const std::string text = to_json(r).dump();
  evaluation_result back;
  REQUIRE_NOTHROW(back = evaluation_result_from_json(nlohmann::json::parse(text)));
  CHECK(back.verdict == stage::correctness);
  CHECK(back.stages[stage::correctness].status == stage_status::failed);
  REQUIRE(back.correctness.outputs.size() == 1);
  CHECK(std::isnan(back.correctness.outputs[0].max_abs_error));
  CHECK(std::isnan(back.correctness.outputs[0].rel_l2_error));
  CHECK(back.correctness.outputs[0].nan_count == 7);
  CHECK(back.correctness.outputs[0].tensor == "C");
  REQUIRE(back.performance.has_value());
  CHECK(back.performance->speedup == doctest::Approx(0.5));
  // Absent parts stay absent.
  evaluation_result none;
  none.verdict = stage::compile;
  evaluation_result none_back = evaluation_result_from_json(nlohmann::json::parse(to_json(none).dump()));
  CHECK_FALSE(none_back.runtime.has_value());
  CHECK_FALSE(none_back.performance.has_value());
}

TEST_CASE("how sampling ended and the raw samples survive JSON") {
  evaluation_result r;
  r.verdict = stage::performance;
  performance_report p;
  p.candidate_samples = 3;
  p.converged = false;
  p.stop = sampling_stop::time_budget;
  p.candidate_noise = 0.012;
  p.candidate_sample_ms = {0.875f, 0.8799f, 1.25f};
  p.baseline_sample_ms = {0.5f, 0.51f, 0.5f};
  r.performance = p;
  const nlohmann::json j = to_json(r);
  CHECK(j["performance"]["stop"] == "time_budget");
  CHECK(j["performance"]["converged"] == false);
  evaluation_result back = evaluation_result_from_json(nlohmann::json::parse(j.dump()));
  REQUIRE(back.performance.has_value());
  CHECK(back.performance->stop == sampling_stop::time_budget);
  CHECK_FALSE(back.performance->converged);
  CHECK(back.performance->candidate_noise == doctest::Approx(0.012));
  CHECK(back.performance->candidate_sample_ms == p.candidate_sample_ms);  // floats exactly
  CHECK(back.performance->baseline_sample_ms == p.baseline_sample_ms);
}

TEST_CASE("a result from before the sampling fields reads as unrecorded") {
  nlohmann::json j = to_json(evaluation_result{});
  j["performance"] = {{"candidate_ms", 1.0}, {"speedup", 0.9}};
  evaluation_result back = evaluation_result_from_json(j);
  REQUIRE(back.performance.has_value());
  CHECK(back.performance->stop == sampling_stop::unrecorded);
  CHECK_FALSE(back.performance->converged);
  CHECK(back.performance->candidate_sample_ms.empty());
  j["performance"]["stop"] = "gave_up";  // a name this evaluator does not know
  CHECK(evaluation_result_from_json(j).performance->stop == sampling_stop::unrecorded);
}

TEST_CASE("raw samples read from JSON are bounded and typed") {
  nlohmann::json j = to_json(evaluation_result{});
  j["performance"] = {{"candidate_sample_ms", std::vector<double>(performance_report::k_kept_samples + 50, 1.0)}};
  evaluation_result back = evaluation_result_from_json(j);
  CHECK(back.performance->candidate_sample_ms.size() == performance_report::k_kept_samples);
  j["performance"]["candidate_sample_ms"] = {1.0, "two"};
  CHECK_THROWS_AS(evaluation_result_from_json(j), input_error);
}
