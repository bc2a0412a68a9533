// The hardware cross-check of the instructions stage without a GPU: the
// tensor-pipe counts of an uninstrumented run (as the worker's range profiler
// returns them) against the patched counts of the same launches.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "evaluator/common/json_path.hpp"
#include "evaluator/pool/hw_cross_check.hpp"
#include "evaluator/pool/local_options.hpp"
#include "evaluator/pool/verdict.hpp"
#include "pool_support.hpp"
#include "proof_support.hpp"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {

// The hardware's figures for one launch: gmma, hmma, imma, dmma. On Hopper the
// hmma counter counts HGMMA and QGMMA too, so an honest wgmma kernel reads its
// GMMA count in both.
hw_counts hardware(double gmma, double hmma = 0, double imma = 0, double dmma = 0) {
  return {protocol::hw_check_metrics(), {{gmma, hmma, imma, dmma}}};
}

double counted(const size_counts& sc, uint64_t pc) {
  for (const auto& c : sc.counts[0])
    if (c.pc_offset == pc) return double(c.executed);
  return 0;
}

// An honest candidate at the timed size judged with `hw`: the stage and the record.
evaluation_result judged(const hw_outcome& hw) {
  evaluation_result r;
  r.stages[stage::runtime] = {stage_status::passed, "", 0.0};
  r.stages[stage::correctness] = {stage_status::passed, "", 0.0};
  r.instructions = static_report();
  decide_instructions(r, listing(), tma_task(), {honest(384, 256, 1024), honest(4096, 4096, 4096)}, "", "", hw);
  return r;
}

}  // namespace

TEST_CASE("the same tensor-pipe work uninstrumented as counted agrees - within 1% + 64") {
  const size_counts sc = honest(4096, 4096, 4096);
  const double hgmma = counted(sc, 0x20);
  REQUIRE(hgmma > 1e5);
  std::string summary;
  CHECK(compare_hw_counts(listing(), sc, hardware(hgmma, hgmma), summary).empty());
  CHECK(summary.find("gmma") != std::string::npos);
  CHECK(compare_hw_counts(listing(), sc, hardware(hgmma * 1.009, hgmma * 1.009), summary).empty());
  CHECK_FALSE(compare_hw_counts(listing(), sc, hardware(hgmma * 1.02, hgmma), summary).empty());
  CHECK_FALSE(compare_hw_counts(listing(), sc, hardware(hgmma * 0.98, hgmma), summary).empty());
}

TEST_CASE("a kernel that takes mma.sync when not counted and wgmma when counted disagrees - naming the kind") {
  const size_counts sc = honest(4096, 4096, 4096);
  std::string summary;
  const std::string why = compare_hw_counts(listing(), sc, hardware(0, 4 * counted(sc, 0x20)), summary);
  CHECK(why.find("launch 0 executed 0 gmma instructions when not instrumented") == 0);
  CHECK(why.find("when counted") != std::string::npos);
  // The verdict: instructions failed, the reason says what differed.
  hw_outcome hw{true, true, "", hardware(0, 4 * counted(sc, 0x20))};
  const evaluation_result r = judged(hw);
  CHECK(r.stages.at(stage::instructions).status == stage_status::failed);
  CHECK(r.stages.at(stage::instructions).reason.find("the kernel behaves differently when counted") == 0);
  CHECK(r.instructions.hardware.find("disagreed") == 0);
}

TEST_CASE("hmma agrees whether or not the counter also counts HFMA2.MMA") {
  sass_listing l = listing();
  l.instructions.push_back({"k", 0x70, "HMMA", "HMMA.16816.F32.BF16 R4, R8, R12, R4 ;"});
  l.instructions.push_back({"k", 0x80, "HFMA2", "HFMA2.MMA R5, -RZ, RZ, 0, 0 ;"});
  size_counts sc = honest(384, 256, 1024);
  sc.counts[0].push_back({"k", 0x70, 10000});
  sc.counts[0].push_back({"k", 0x80, 5000});
  const double hgmma = counted(sc, 0x20);
  std::string summary;
  CHECK(compare_hw_counts(l, sc, hardware(hgmma, hgmma + 10000), summary).empty());
  CHECK(compare_hw_counts(l, sc, hardware(hgmma, hgmma + 15000), summary).empty());
  CHECK_FALSE(compare_hw_counts(l, sc, hardware(hgmma, hgmma + 30000), summary).empty());
  CHECK_FALSE(compare_hw_counts(l, sc, hardware(hgmma, hgmma + 2000), summary).empty());
}

TEST_CASE("DMMA that only the uninstrumented run executes disagrees") {
  const size_counts sc = honest(384, 256, 1024);
  std::string summary;
  const double hgmma = counted(sc, 0x20);
  CHECK(compare_hw_counts(listing(), sc, hardware(hgmma, hgmma, 0, 50000), summary).find("dmma") != std::string::npos);
}

TEST_CASE("the Hopper hmma counter counts HGMMA and QGMMA beside HMMA - honest wgmma kernels agree") {
  // As measured on an H100 (CUPTI 13.0): a 4096^3 wgmma GEMM, bf16 or fp8, read
  // 1.05M in both sm__inst_executed_pipe_tensor_op_gmma and _hmma, with no HMMA
  // in its SASS. Comparing hmma with HMMA alone failed every wgmma solution.
  size_counts sc = honest(4096, 4096, 4096);
  sc.counts[0].push_back({"k", 0x30, 250000});  // QGMMA beside the HGMMA
  const double gmma = counted(sc, 0x20) + counted(sc, 0x30);
  std::string summary;
  CHECK(compare_hw_counts(listing(), sc, hardware(gmma, gmma), summary).empty());
  INFO(summary);
  CHECK(summary.find("hmma") != std::string::npos);
  // An hmma counter that saw only part of the GMMA work, or none, disagrees.
  CHECK(compare_hw_counts(listing(), sc, hardware(gmma, 0), summary).find("hmma") != std::string::npos);
  CHECK_FALSE(compare_hw_counts(listing(), sc, hardware(gmma, gmma * 0.9), summary).empty());
}

TEST_CASE("counts that lack a metric or a launch are no agreement") {
  const size_counts sc = honest(384, 256, 1024);
  std::string summary;
  hw_counts partial = hardware(counted(sc, 0x20));
  partial.metrics.pop_back();
  CHECK(compare_hw_counts(listing(), sc, partial, summary).find("lack") != std::string::npos);
  hw_counts two = hardware(counted(sc, 0x20));
  two.values.push_back(two.values[0]);
  CHECK(compare_hw_counts(listing(), sc, two, summary).find("launches") != std::string::npos);
}

TEST_CASE("a cross-check the machine cannot run leaves a passing stage unverified - off leaves it as it was") {
  const size_counts sc = honest(4096, 4096, 4096);
  evaluation_result off = judged(hw_outcome{});
  CHECK(off.stages.at(stage::instructions).status == stage_status::passed);
  CHECK(off.instructions.hardware == "off");
  const double hgmma = counted(sc, 0x20);
  evaluation_result agreed = judged(hw_outcome{true, true, "", hardware(hgmma, hgmma)});
  CHECK(agreed.stages.at(stage::instructions).status == stage_status::passed);
  CHECK(agreed.instructions.hardware.find("agreed") == 0);
  const std::string why = "the hardware counters could not be read: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  evaluation_result unavailable = judged(hw_outcome{true, false, why, {}});
  CHECK(unavailable.stages.at(stage::instructions).status == stage_status::unverified);
  CHECK(unavailable.stages.at(stage::instructions).reason.find("not the kernel's failure") != std::string::npos);
  CHECK_FALSE(unavailable.evaluator_error());
}

TEST_CASE("the cross-check's policy - off or every candidate or by default the kernels that read a timer") {
  scoped_env env;
  env.set("PTXBENCH_HW_CHECK", std::nullopt);
  local_evaluator_options o;
  CHECK(hw_check(o) == hw_check_policy::timer_readers);
  for (const auto& [value, policy] : std::vector<std::pair<std::string, hw_check_policy>>{
           {"0", hw_check_policy::off}, {"1", hw_check_policy::every_candidate}, {"timers", hw_check_policy::timer_readers}}) {
    env.set("PTXBENCH_HW_CHECK", value);
    CHECK(hw_check(o) == policy);
  }
  env.set("PTXBENCH_HW_CHECK", "yes");
  CHECK_THROWS_WITH_AS(hw_check(o), doctest::Contains("PTXBENCH_HW_CHECK must be 0 (off), 1"), input_error);
  o.hw_check = 0;  // the option before the environment
  CHECK(hw_check(o) == hw_check_policy::off);
  o.hw_check = 7;
  CHECK_THROWS_AS(hw_check(o), input_error);
  const std::string plain = ".visible .entry k() {\n.reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;\nret; }\n";
  const std::string timed = ".visible .entry k() {\n.reg .b64 %rd<2>;\nmov.u64 %rd1, %clock64;\nret; }\n";
  CHECK_FALSE(wants_hw_check(hw_check_policy::timer_readers, plain));
  CHECK(wants_hw_check(hw_check_policy::timer_readers, timed));
  CHECK(wants_hw_check(hw_check_policy::every_candidate, plain));
  CHECK_FALSE(wants_hw_check(hw_check_policy::off, timed));
}
