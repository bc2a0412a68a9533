// A counting pass the candidate breaks (a crash, a trap or a hang in its own
// launch under counting) is retried once on a fresh spare; if it persists
// while the checked runs were clean, the instructions stage fails with the
// reason. A pass the evaluator breaks (CUPTI's set-up) stays unverified.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "evaluator/api/local.hpp"
#include "pool_support.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

evaluation_result judge(const std::string& mode) {
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 2;
  return make_local_evaluator(o)->evaluate(test::fixture_request("correct_mma_sync", "gemm_bf16_mma_sync", mode));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a worker lost in the candidate's launch under counting twice fails instructions - not unverified") {
  evaluation_result r = judge("count_crash");
  CHECK(r.stages[stage::correctness].status == stage_status::passed);
  CHECK(r.stages[stage::instructions].status == stage_status::failed);
  CHECK(contains(r.stages[stage::instructions].reason, "fails when its instructions are counted"));
  CHECK(contains(r.stages[stage::instructions].reason, "launch 0"));
  CHECK_FALSE(r.evaluator_error());
  CHECK_FALSE(r.passed);
}

TEST_CASE("a counted launch that traps twice fails instructions with the launch's error") {
  evaluation_result r = judge("count_trap");
  CHECK(r.stages[stage::instructions].status == stage_status::failed);
  CHECK(contains(r.stages[stage::instructions].reason, "CUDA_ERROR_LAUNCH_FAILED"));
  CHECK(contains(r.stages[stage::instructions].reason, "again on a fresh worker"));
}

TEST_CASE("a counting pass broken once is retried on a fresh spare - the retry's answer counts") {
  fs::path marker = fs::temp_directory_path() / ("ptxbench-count-once-" + std::to_string(::getpid()));
  fs::remove(marker);
  evaluation_result r = judge("count_crash_once:" + marker.string());
  CHECK(fs::exists(marker));
  fs::remove(marker);
  // The retry ran and answered like an ordinary fake pass: nothing counted.
  CHECK(r.stages[stage::instructions].status == stage_status::unverified);
  CHECK(contains(r.stages[stage::instructions].reason, "fake worker: no counters"));
}

TEST_CASE("a worker lost in CUPTI's set-up (no launch of the candidate running) leaves instructions unverified") {
  evaluation_result r = judge("count_setup_lost");
  CHECK(r.stages[stage::instructions].status == stage_status::unverified);
  CHECK_FALSE(contains(r.stages[stage::instructions].reason, "fails when its instructions are counted"));
}

TEST_CASE("a candidate that hangs in its checked runs stops its speculative counting passes at once") {
  // The passes ran beside the main job; the candidate's launch hangs in both,
  // and a counting pass's watchdog allows 60 s (instrumented launches are slow).
  // The main job's watchdog ends the candidate after its limit; the passes'
  // counts are then of no use, so they are stopped, not waited for (and not
  // retried on fresh spares): the evaluation ended after 120 s before this.
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 2;
  o.speculative_counting = 1;
  auto ev = make_local_evaluator(o);
  REQUIRE(test::wait_until([&] { return ev->usage().at(0).spare_starts >= 2; }, std::chrono::seconds(10)));
  evaluation_request req = test::fixture_request("correct_mma_sync", "gemm_bf16_mma_sync", "hang");
  req.time_limit_ms = 300;
  const auto t0 = std::chrono::steady_clock::now();
  evaluation_result r = ev->evaluate(req);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool beside = false;
  for (const auto& step : r.timeline) beside |= step.what == "counting passes started beside the main job";
  REQUIRE(beside);
  CHECK(r.stages[stage::runtime].status == stage_status::failed);
  CHECK(contains(r.stages[stage::runtime].reason, "timeout after 300 ms"));
  CHECK_FALSE(r.evaluator_error());
  CHECK_MESSAGE(s < 10, "the evaluation took " << s << " s");
  // The stopped passes' spares are replaced, and the next evaluation runs.
  evaluation_result next = ev->evaluate(test::fixture_request("correct_mma_sync", "gemm_bf16_mma_sync"));
  CHECK(next.stages[stage::correctness].status == stage_status::passed);
}
