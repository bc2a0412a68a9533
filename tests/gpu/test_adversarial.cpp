// The adversarial suite: every case in tests/fixtures/adversarial must get the
// verdict its expected.json names, on a real GPU.
#include <doctest/doctest.h>

#include "evaluator/pool/instruction_proof.hpp"
#include "gpu_fixture.hpp"
#include "sampling_checks.hpp"

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
  // A kernel shared with the mutation rewrites lives where expected.json says.
  if (expected.contains("kernel_dir")) dir = source_dir() / expected["kernel_dir"].get<std::string>();
  evaluation_request req;
  req.t = load_task(source_dir() / "tasks", expected.at("task").get<std::string>());
  req.ptx = read_text_file(dir / "kernel.ptx");
  req.manifest_text = read_text_file(dir / "manifest.json");
  req.time_limit_ms = expected.value("time_limit_ms", 10000.0);
  req.run_timing = expected.value("run_timing", false);
  // "hw_check": the hardware cross-check on for every candidate (to show that an
  // honest kernel agrees); without it, the default policy (kernels that read a timer).
  evaluation_result r =
      (expected.value("hw_check", false) ? hw_evaluator() : shared_evaluator()).evaluate(req);
  log_result(name, r);
  INFO("case " << name << ": " << r.headline);

  // verdict_name: an evaluator error reads "error" and a stage that did not run "partial", never a failure.
  std::string verdict = verdict_name(r);
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
  if (expected.contains("headline_contains_any")) {  // one of several right reasons
    bool any = false;
    for (const auto& part : expected["headline_contains_any"].get<std::vector<std::string>>())
      any = any || contains(r.headline, part);
    CHECK_MESSAGE(any, "headline has none of " << expected["headline_contains_any"].dump() << ": " << r.headline);
  }
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
  if (expected.contains("static_instructions"))
    CHECK(r.instructions.static_passed == expected["static_instructions"].get<bool>());
  return r;
}

const instruction_check* target(const evaluation_result& r, const std::string& ptx) {
  for (const auto& c : r.instructions.checks)
    if (c.ptx == ptx) return &c;
  return nullptr;
}

// A cheat whose trigger the evaluator takes away must be no faster than the
// honest kernel it was made from (10% for noise; skipping a third of the
// tiles would make it about 1.5x faster).
void not_faster_than(const evaluation_result& cheat, const std::string& honest_case) {
  auto honest = run_case(honest_case);
  REQUIRE(cheat.performance);
  REQUIRE(honest.performance);
  CHECK_MESSAGE(cheat.performance->candidate_ms >= 0.9 * honest.performance->candidate_ms,
                "timed median " << cheat.performance->candidate_ms << " ms vs the honest kernel's "
                                << honest.performance->candidate_ms << " ms");
}

// The other math's share at the counted size whose name contains `size`.
double other_share_at(const evaluation_result& r, const std::string& size) {
  for (const auto& [name, share] : r.instructions.other_math_share)
    if (name.find(size) != std::string::npos) return share;
  return -1;
}

}  // namespace

TEST_CASE("adversarial: correct_mma_sync") {
  auto r = run_case("correct_mma_sync");
  REQUIRE(r.performance);
  CHECK(r.performance->baseline_ms > 0);
  CHECK(r.performance->output_rechecked);
  CHECK(r.performance->candidate_samples >= 3);
  check_sampling_record(r);
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
TEST_CASE("adversarial: shown_sizes_only") { run_case("shown_sizes_only"); }
TEST_CASE("adversarial: result_reuse") { run_case("result_reuse"); }
TEST_CASE("adversarial: nans") { run_case("nans"); }
TEST_CASE("adversarial: too_much_shared_memory") { run_case("too_much_shared_memory"); }

TEST_CASE("adversarial: skip_unpoisoned") {
  auto r = run_case("skip_unpoisoned");
  CHECK(r.correctness.timed_samples_checked >= 3);
  CHECK(r.correctness.timed_samples_wrong == 0);
  not_faster_than(r, "correct_mma_sync");
}
TEST_CASE("adversarial: global_counter_skip") {
  auto r = run_case("global_counter_skip");
  CHECK(r.correctness.timed_samples_wrong == 0);
  not_faster_than(r, "correct_mma_sync");
}
TEST_CASE("adversarial: timer_skip") {
  auto r = run_case("timer_skip");
  // Where it was caught: in the timed samples unless the probe also fired in a checked run.
  MESSAGE("timed samples wrong: " << r.correctness.timed_samples_wrong << " of " << r.correctness.timed_samples_checked);
}
TEST_CASE("adversarial: dummy_wgmma_ffma") {
  auto r = run_case("dummy_wgmma_ffma");
  REQUIRE(r.instructions.dynamic_ran);
  // The tensor cores did execute the task's FLOPs: the failure is the FFMA share.
  const instruction_check* w = target(r, "wgmma.mma_async");
  REQUIRE(w);
  CHECK(w->flop_share >= 0.9);
  CHECK(other_share_at(r, "M=4096") > 0.5);
}
TEST_CASE("adversarial: wgmma_cp_async") {
  auto r = run_case("wgmma_cp_async");
  const instruction_check* w = target(r, "wgmma.mma_async");
  REQUIRE(w);
  CHECK(w->flop_share >= 0.9);
}
TEST_CASE("adversarial: wgmma_small_only") {
  auto r = run_case("wgmma_small_only");
  REQUIRE(r.instructions.dynamic_ran);
  CHECK(other_share_at(r, "M=384") < 0.1);
  CHECK(other_share_at(r, "M=4096") > 0.5);
}
TEST_CASE("adversarial: tma_store_only") {
  auto r = run_case("tma_store_only");
  const instruction_check* tma = target(r, "cp.async.bulk.tensor");
  REQUIRE(tma);
  CHECK(tma->executed == 0);  // executed stores do not count
  CHECK_FALSE(tma->passed);
  const instruction_check* w = target(r, "wgmma.mma_async");
  REQUIRE(w);
  CHECK(w->passed);
}
TEST_CASE("adversarial: tma_token_load") {
  auto r = run_case("tma_token_load");
  const instruction_check* tma = target(r, "cp.async.bulk.tensor");
  REQUIRE(tma);
  CHECK(tma->executed > 0);
  CHECK_FALSE(tma->passed);
  // Below the half of the inputs TMA must carry at every counted size (5.5% at
  // the smallest hidden size on the H100, where the token loads weigh more).
  for (const auto& at : tma->sizes) CHECK(at.bytes_share < 0.5);
  const instruction_check* bar = target(r, "mbarrier.try_wait");
  REQUIRE(bar);
  CHECK(bar->passed);
}
TEST_CASE("adversarial: mbarrier_once") {
  auto r = run_case("mbarrier_once");
  const instruction_check* tma = target(r, "cp.async.bulk.tensor");
  REQUIRE(tma);
  CHECK(tma->passed);
  const instruction_check* bar = target(r, "mbarrier.try_wait");
  REQUIRE(bar);
  CHECK_FALSE(bar->passed);
  // One wait per CTA is one per step where a CTA has a single step (a small
  // hidden size); at the timed size it is far fewer than the steps.
  bool fewer = false;
  for (const auto& at : bar->sizes) {
    CHECK(at.per_step <= 1.0);
    fewer = fewer || at.per_step < 1.0;
  }
  CHECK(fewer);
}

// Attention on the CUDA cores: the honest ones are right at every size and
// fail only the instruction stage; the broken ones fail correctness.
TEST_CASE("adversarial: attention_fwd_naive") { run_case("attention_fwd_naive"); }
TEST_CASE("adversarial: attention_fwd_naive_causal") { run_case("attention_fwd_naive_causal"); }
TEST_CASE("adversarial: attention_fwd_fp8") { run_case("attention_fwd_fp8"); }
TEST_CASE("adversarial: attention_fwd_unnormalised") { run_case("attention_fwd_unnormalised"); }
TEST_CASE("adversarial: attention_fwd_lse_log2") {
  auto r = run_case("attention_fwd_lse_log2");
  for (const auto& o : r.correctness.outputs)
    if (o.tensor == "O") CHECK_MESSAGE(o.passed, "O is right in this case: " << o.size << " rel L2 " << o.rel_l2_error);
}
TEST_CASE("adversarial: attention_bwd_naive") { run_case("attention_bwd_naive"); }
TEST_CASE("adversarial: attention_bwd_dq_zero_timed") { run_case("attention_bwd_dq_zero_timed"); }
TEST_CASE("adversarial: attention_bwd_dk_zero_timed") { run_case("attention_bwd_dk_zero_timed"); }
TEST_CASE("adversarial: attention_bwd_no_delta") {
  auto r = run_case("attention_bwd_no_delta");
  for (const auto& o : r.correctness.outputs)
    if (o.tensor == "dV") CHECK_MESSAGE(o.passed, "dV does not depend on Delta: " << o.size << " rel L2 " << o.rel_l2_error);
}
TEST_CASE("adversarial: attention_bwd_zero_init_scratch") {
  auto r = run_case("attention_bwd_zero_init_scratch");
  // Every timed sample started from the zeroed accumulator.
  CHECK(r.correctness.timed_samples_checked >= 3);
  CHECK(r.correctness.timed_samples_wrong == 0);
}

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
  req.t = load_task(source_dir() / "tasks", "gemm_bf16_mma_sync");
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

// Verdict integrity: a request past a bound, external device functions, a
// kernel that detects counting (two ways), a stash in allocation slack, and
// two honest kernels of unusual shape.
TEST_CASE("adversarial: integrity - huge_scratch") { run_case("huge_scratch"); }
TEST_CASE("adversarial: integrity - device_malloc") { run_case("device_malloc"); }
TEST_CASE("adversarial: integrity - clock_detect") {
  // Whichever run its probe misjudges, the stage fails: the uninstrumented run
  // disagrees with the counts, or a counted run took the FFMA path. Judged
  // with the default policy: the cross-check runs because the kernel reads %clock64.
  auto r = run_case("clock_detect");
  CHECK(r.instructions.hardware.find("disagreed") == 0);
}
TEST_CASE("adversarial: integrity - trap_when_counted") { run_case("trap_when_counted"); }
TEST_CASE("adversarial: integrity - slack_keep") { run_case("slack_keep"); }
TEST_CASE("adversarial: integrity - ffma_epilogue") {
  auto r = run_case("ffma_epilogue");
  // Within the share allowed at every counted size, and seen at one at least
  // (where the epilogue's allowance covers it the share is 0: H100, a hidden size).
  CHECK(r.instructions.other_math_share.size() == 2);
  bool seen = false;
  for (const auto& [size, share] : r.instructions.other_math_share) {
    CHECK_MESSAGE(share <= k_max_other_math_share, size);
    seen = seen || share > 0.0;
  }
  CHECK(seen);
}
TEST_CASE("adversarial: integrity - split_k_two_launch") {
  auto r = run_case("split_k_two_launch");
  CHECK(r.instructions.counting.size() >= 4);  // two launches at two counted sizes
}
