// The one verdict-and-ranking policy (evaluator/api/verdict.hpp): what a
// result is called and which of two results is better.
#include <doctest/doctest.h>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/verdict.hpp"

using namespace ptxbench;

namespace {

evaluation_result result(std::initializer_list<std::pair<stage, stage_status>> s, std::optional<double> speedup) {
  evaluation_result r;
  for (auto [k, v] : s) r.stages[k] = {v, "", 0};
  if (speedup) {
    performance_report p;
    p.speedup = *speedup;
    r.performance = p;
  }
  return r;
}

evaluation_result all(stage_status s) {
  evaluation_result r;
  for (int i = 0; i < stage_count; ++i) r.stages[static_cast<stage>(i)] = {s, "", 0};
  r.passed = s == stage_status::passed;
  return r;
}

}  // namespace

TEST_CASE("candidates rank stage by stage in table order - then by speedup") {
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

TEST_CASE("a verdict is named by the stage statuses - the first failed stage - then error - partial - passed") {
  using enum stage_status;
  CHECK(verdict_name(all(passed)) == "passed");
  CHECK(verdict_name(result({{stage::format, passed}, {stage::compile, failed}}, std::nullopt)) == "compile");
  // The static instruction check fails without a GPU while runtime is not run: instructions failed.
  CHECK(verdict_name(result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, not_run},
                             {stage::instructions, failed}}, std::nullopt)) == "instructions");
  // Nothing failed, the GPU stages did not run: partial, never "runtime".
  auto cpu_only = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, not_run},
                          {stage::correctness, not_run}, {stage::instructions, passed}, {stage::performance, not_run}},
                         std::nullopt);
  CHECK(verdict_name(cpu_only) == "partial");
  CHECK(verdict_of(cpu_only).at == stage::runtime);
  CHECK(verdict_name(result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, passed},
                             {stage::correctness, passed}, {stage::instructions, unverified},
                             {stage::performance, passed}}, 1.2)) == "partial");
  // A failed stage beside an evaluator failure is the verdict: the error cannot hide it.
  auto broken = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, error},
                        {stage::instructions, failed}}, std::nullopt);
  CHECK(verdict_name(broken) == "instructions");
  CHECK(verdict_of(broken).at == stage::instructions);
  // No stage failed: the evaluator's error.
  broken.stages[stage::instructions].status = unverified;
  CHECK(verdict_name(broken) == "error");
  CHECK(verdict_of(broken).at == stage::runtime);
  CHECK(verdict_name(verdict{}) == "none");
  for (const char* name : {"none", "error", "partial", "passed", "format", "performance"})
    CHECK(verdict_name(*parse_verdict_name(name)) == name);
  CHECK_FALSE(parse_verdict_name("runtime not run").has_value());
}

TEST_CASE("a result's JSON carries its verdict name - a partial or error one reads back with its stage") {
  using enum stage_status;
  auto cpu_only = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, not_run}}, std::nullopt);
  cpu_only.verdict = stage::runtime;
  auto j = to_json(cpu_only);
  CHECK(j["verdict"] == "partial");
  CHECK(j["verdict_stage"] == "runtime");
  CHECK(evaluation_result_from_json(j).verdict == stage::runtime);
  auto broken = result({{stage::format, not_run}, {stage::runtime, error}}, std::nullopt);
  broken.verdict = stage::runtime;
  j = to_json(broken);
  CHECK(j["verdict"] == "error");
  CHECK(j["error_stage"] == "runtime");
  CHECK(evaluation_result_from_json(j).verdict == stage::runtime);
}

TEST_CASE("an evaluator error never beats a verdict - not even a format failure") {
  using enum stage_status;
  evaluation_result format_failure = all(not_run);
  format_failure.stages[stage::format].status = failed;
  evaluation_result evaluator_failure = all(not_run);
  evaluator_failure.stages[stage::format].status = not_run;
  evaluator_failure.stages[stage::runtime].status = error;
  CHECK(better(format_failure, evaluator_failure));
  CHECK_FALSE(better(evaluator_failure, format_failure));
  CHECK(got_further(format_failure, evaluator_failure));
  // An error with a fast speedup is still no verdict.
  auto fast_error = result({{stage::format, passed}, {stage::compile, passed}, {stage::runtime, error}}, 3.0);
  CHECK(better(format_failure, fast_error));
  // Two without a verdict are equal; a judged verdict beats an unjudged standing.
  CHECK_FALSE(better(evaluator_failure, fast_error));
  CHECK_FALSE(better(fast_error, evaluator_failure));
  CHECK(better(standing_of(format_failure), standing{}));
  CHECK_FALSE(better(standing{}, standing_of(evaluator_failure)));
  CHECK_FALSE(better(standing_of(evaluator_failure), standing{}));
}
