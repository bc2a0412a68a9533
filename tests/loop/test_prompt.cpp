#include <doctest/doctest.h>

#include "agent/prompt/prompt.hpp"
#include "evaluator/common/json_path.hpp"

using namespace ptxbench;

namespace {
task gemm() { return load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_wgmma_tma"); }
prompt_library library() { return prompt_library(std::string(PTXBENCH_SOURCE_DIR) + "/prompts"); }
}  // namespace

TEST_CASE("the task prompt states the task - its sizes - targets and the task id line the endpoint reads") {
  auto p = library().task_prompt(gemm());
  CHECK(p.find("Task id: gemm_bf16_wgmma_tma") != std::string::npos);
  CHECK(p.find("K=4096 M=4096 N=4096 (timed)") != std::string::npos);
  CHECK(p.find("wgmma.mma_async, cp.async.bulk.tensor, mbarrier.try_wait") != std::string::npos);
  CHECK(p.find("{{") == std::string::npos);
  CHECK(library().system_prompt(gemm()).find(".target sm_90a") != std::string::npos);
}

TEST_CASE("templates name a missing placeholder") {
  CHECK_THROWS_WITH_AS(prompt_library::render("x", "a {{nope}} b", {}), doctest::Contains("no value for {{nope}}"),
                       input_error);
  CHECK(prompt_library::render("x", "a {{ k }} b", {{"k", "v"}}) == "a v b");
}

TEST_CASE("compile feedback quotes the ptxas diagnostics") {
  evaluation_result r;
  r.verdict = stage::compile;
  r.headline = "compile: 1 ptxas error";
  r.stages[stage::format] = {stage_status::passed, "", 0};
  r.stages[stage::compile] = {stage_status::failed, "ptxas error", 0};
  r.compile.diagnostics.push_back({42, "error", "Unknown modifier '.f33'", "  41 | mov.u32 %r1, 0;\n> 42 | fma.rn.f33 %f1;"});
  auto fb = library().feedback(gemm(), r, 0, feedback_detail::full);
  CHECK(fb.find("Feedback on round 0: compile") != std::string::npos);
  CHECK(fb.find("error at line 42: Unknown modifier '.f33'") != std::string::npos);
  CHECK(fb.find("> 42 | fma.rn.f33") != std::string::npos);
}

TEST_CASE("correctness feedback withholds the figures of the hidden seed") {
  evaluation_result r;
  r.verdict = stage::correctness;
  r.stages[stage::correctness] = {stage_status::failed, "wrong", 0};
  output_check shown;
  shown.tensor = "C";
  shown.size = "M=1024";
  shown.seed = 7;
  shown.max_abs_error = 3.5;
  shown.where = "rows 896-1023";
  output_check hidden = shown;
  hidden.hidden_seed = true;
  hidden.max_abs_error = 12345.0;
  r.correctness.outputs = {shown, hidden};
  auto fb = library().feedback(gemm(), r, 1, feedback_detail::full);
  CHECK(fb.find("seed 7") != std::string::npos);
  CHECK(fb.find("rows 896-1023") != std::string::npos);
  CHECK(fb.find("hidden seed (figures withheld)") != std::string::npos);
  CHECK(fb.find("12345") == std::string::npos);
}

TEST_CASE("GPU stages that did not run are said plainly - not reported as a failure") {
  evaluation_result r;
  r.verdict = stage::runtime;
  r.headline = "runtime: not run (no GPU on this machine)";
  r.stages[stage::runtime] = {stage_status::not_run, "no GPU on this machine", 0};
  auto fb = library().feedback(gemm(), r, 0, feedback_detail::full);
  CHECK(fb.find("not fully judged") != std::string::npos);
  CHECK(fb.find("runtime: not_run (no GPU on this machine)") != std::string::npos);
}
