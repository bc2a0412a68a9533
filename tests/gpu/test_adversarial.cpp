// The adversarial suite: every case in tests/fixtures/adversarial must get the
// verdict its expected.json names, on a real GPU.
#include <doctest/doctest.h>

#include "gpu_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> strings(const nlohmann::json& j) {
  if (j.is_string()) return {j.get<std::string>()};
  return j.get<std::vector<std::string>>();
}

evaluation_result run_case(const std::string& name) {
  require_gpu();
  auto dir = source_dir() / "tests/fixtures/adversarial" / name;
  auto expected = nlohmann::json::parse(read_text_file(dir / "expected.json"));
  evaluation_request req;
  req.t = load_task_file(source_dir() / "tasks" / (expected.at("task").get<std::string>() + ".json"));
  req.ptx = read_text_file(dir / "kernel.ptx");
  req.manifest_text = read_text_file(dir / "manifest.json");
  req.time_limit_ms = expected.value("time_limit_ms", 10000.0);
  req.run_timing = expected.value("run_timing", false);
  evaluation_result r = shared_evaluator().evaluate(req);
  log_result(name, r);
  INFO("case " << name << ": " << r.headline);

  std::string verdict = r.passed ? "passed" : to_string(r.verdict);
  auto allowed = strings(expected.at("verdict"));
  CHECK_MESSAGE(std::find(allowed.begin(), allowed.end(), verdict) != allowed.end(), "verdict " << verdict);
  if (expected.contains("stages"))
    for (auto it = expected["stages"].begin(); it != expected["stages"].end(); ++it) {
      auto st = r.stages[parse_stage(it.key())];
      CHECK_MESSAGE(to_string(st.status) == it.value().get<std::string>(),
                    it.key() << " is " << to_string(st.status) << ": " << st.reason);
    }
  for (const auto& part : expected.value("headline_contains", std::vector<std::string>{}))
    CHECK_MESSAGE(contains(r.headline, part), "headline lacks '" << part << "'");
  if (expected.contains("checks")) {
    const auto& c = expected["checks"];
    if (c.contains("context_lost")) {
      REQUIRE(r.runtime);
      CHECK(r.runtime->context_lost == c["context_lost"].get<bool>());
    }
    if (c.contains("guards_intact")) CHECK(r.correctness.guards_intact == c["guards_intact"].get<bool>());
    if (c.contains("inputs_unchanged")) CHECK(r.correctness.inputs_unchanged == c["inputs_unchanged"].get<bool>());
    if (c.contains("stable_across_calls"))
      CHECK(r.correctness.stable_across_calls == c["stable_across_calls"].get<bool>());
    int64_t untouched = 0, nans = 0;
    for (const auto& o : r.correctness.outputs) {
      untouched += o.untouched_count;
      nans += o.nan_count;
    }
    if (c.contains("untouched")) CHECK((untouched > 0) == c["untouched"].get<bool>());
    if (c.contains("nans")) CHECK((nans > 0) == c["nans"].get<bool>());
  }
  return r;
}

}  // namespace

TEST_CASE("adversarial: correct_mma_sync") {
  auto r = run_case("correct_mma_sync");
  REQUIRE(r.performance);
  CHECK(r.performance->baseline_ms > 0);
  CHECK(r.performance->output_rechecked);
  CHECK(r.performance->candidate_samples >= 3);
}
TEST_CASE("adversarial: ffma_correct") { run_case("ffma_correct"); }
TEST_CASE("adversarial: cold_wgmma") {
  auto r = run_case("cold_wgmma");
  CHECK(r.instructions.dynamic_ran);
  CHECK(r.instructions.executed_by_opcode.count("FFMA") == 1);
}
TEST_CASE("adversarial: illegal_address") { run_case("illegal_address"); }
TEST_CASE("adversarial: trap") { run_case("trap"); }
TEST_CASE("adversarial: infinite_loop") { run_case("infinite_loop"); }
TEST_CASE("adversarial: out_of_bounds_write") { run_case("out_of_bounds_write"); }
TEST_CASE("adversarial: partial_output") { run_case("partial_output"); }
TEST_CASE("adversarial: input_modified") { run_case("input_modified"); }
TEST_CASE("adversarial: timed_size_only") { run_case("timed_size_only"); }
TEST_CASE("adversarial: result_reuse") { run_case("result_reuse"); }
TEST_CASE("adversarial: nans") { run_case("nans"); }
TEST_CASE("adversarial: too_much_shared_memory") { run_case("too_much_shared_memory"); }

TEST_CASE("after a lost context the next candidate runs on a fresh worker") {
  run_case("illegal_address");
  auto r = run_case("ffma_correct");
  CHECK(r.stages[stage::correctness].status == stage_status::passed);
}

// The instructions stage's proof needs CUPTI to count the candidate's SASS.
// The same correct kernel compiled for plain sm_90 (not the arch-specific
// sm_90a of the tasks) tells a CUPTI limitation on sm_90a cubins apart from a
// problem of the pass itself.
TEST_CASE("diagnostic: executed instructions are counted for an sm_90 cubin of the mma.sync kernel") {
  require_gpu();
  auto dir = source_dir() / "tests/fixtures/adversarial/correct_mma_sync";
  evaluation_request req;
  req.t = load_task_file(source_dir() / "tasks/gemm_bf16_mma_sync.json");
  req.t.arch = "sm_90";
  req.ptx = read_text_file(dir / "kernel.ptx");
  auto pos = req.ptx.find(".target sm_90a");
  REQUIRE(pos != std::string::npos);
  req.ptx.replace(pos, 14, ".target sm_90");
  req.manifest_text = read_text_file(dir / "manifest.json");
  req.run_timing = false;
  auto r = shared_evaluator().evaluate(req);
  log_result("diagnostic sm_90 mma.sync", r);
  INFO(r.stages[stage::instructions].reason);
  CHECK(r.stages[stage::correctness].status == stage_status::passed);
  CHECK(r.instructions.dynamic_ran);
}
