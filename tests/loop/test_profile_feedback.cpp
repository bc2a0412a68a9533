// The `profile` feedback level: the performance and passed templates carry the
// kernel table and the five hottest lines; a profile that could not run says why.
#include <doctest/doctest.h>

#include "agent/prompt/prompt.hpp"

using namespace ptxbench;

namespace {

task gemm() { return load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_wgmma_tma"); }
prompt_library library() { return prompt_library(std::string(PTXBENCH_SOURCE_DIR) + "/prompts"); }

evaluation_result slow_with_profile() {
  evaluation_result r;
  r.verdict = stage::performance;
  r.headline = "performance: speedup 0.41 below 0.9";
  for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = {stage_status::passed, "", 0};
  r.stages[stage::performance] = {stage_status::failed, "speedup 0.41", 0};
  r.performance = performance_report{};
  profile_report p;
  p.ran = true;
  p.size = "M=4096 N=4096 K=4096";
  profile_kernel yours{"yours: launch 0 (gemm)", false, 1200, 60, 41, 20, 30, 80, 25, 0, 1e8, 168, 197632};
  profile_kernel lib{"cuBLASLt", true, 500, 90, 84, 40, 50, 85, 20, 0, 1e8, -1, -1};
  p.kernels = {yours, lib};
  for (int i = 0; i < 7; ++i)
    p.lines.push_back({412 + i, "mbarrier.try_wait.parity.shared::cta.b64 p, [%r1], %r2;", 0.38 - 0.05 * i, 100,
                       "long_scoreboard", "waiting on a global/local memory load (L1TEX)", 0.9});
  r.profile = p;
  return r;
}

}  // namespace

TEST_CASE("profile feedback carries the kernel table beside the library and the five hottest lines") {
  CHECK(parse_feedback_detail("profile") == feedback_detail::profile);
  CHECK(std::string(to_string(feedback_detail::profile)) == "profile");
  const std::string fb = library().feedback(gemm(), slow_with_profile(), 1, feedback_detail::profile);
  CHECK(fb.find("| yours: launch 0 (gemm) | 1200.0 | 60% | 41% |") != std::string::npos);
  CHECK(fb.find("| cuBLASLt | 500.0 | 90% | 84% |") != std::string::npos);
  CHECK(fb.find("- line 412 `mbarrier.try_wait.parity") != std::string::npos);
  CHECK(fb.find("38% of samples") != std::string::npos);
  CHECK(fb.find("line 416") != std::string::npos);
  CHECK(fb.find("line 417") == std::string::npos);  // five lines only
  CHECK(fb.find("Local memory:") == std::string::npos);  // no spills: no line about them
  CHECK(fb.find("of them are the waits at line") == std::string::npos);  // nothing charged through a barrier

  // A producer line charged with the consumers' waits says so.
  evaluation_result blamed = slow_with_profile();
  blamed.profile->lines[0].blamed = 75;
  blamed.profile->lines[0].blamed_from = {165, 292};
  const std::string with_blame = library().feedback(gemm(), blamed, 1, feedback_detail::profile);
  CHECK(with_blame.find("(90% of its samples); 75% of them are the waits at lines 165, 292 for the mbarriers this code's TMA "
                        "loads fill (charged to the code they wait for)") != std::string::npos);

  evaluation_result spilled = slow_with_profile();
  spilled.profile->local_wait_share = 0.35;
  spilled.profile->local_wait_lines = 128;
  const std::string with_spills = library().feedback(gemm(), spilled, 1, feedback_detail::profile);
  CHECK(with_spills.find("Local memory: 35% of samples wait on local-memory loads, over 128 lines") != std::string::npos);
  // Under the hottest line's share (38%) it follows the lines.
  CHECK(with_spills.find("Local memory:") > with_spills.find("- line 412"));

  // Above it, it leads, naming the lines that wait most.
  spilled.profile->local_wait_share = 0.45;
  spilled.profile->local_wait_top = {{880, "ld.local.f32 %f7, [%rd3+16];", 0.09, 90, "long_scoreboard", "", 1},
                                     {884, "ld.local.f32 %f8, [%rd3+20];", 0.08, 80, "long_scoreboard", "", 1}};
  const std::string led = library().feedback(gemm(), spilled, 1, feedback_detail::profile);
  const size_t local = led.find("Local memory: 45% of samples wait on local-memory loads, over 128 lines");
  REQUIRE(local != std::string::npos);
  CHECK(local < led.find("- line 412"));
  CHECK(led.find("most at line 880 `ld.local.f32 %f7, [%rd3+16];` (9%), line 884 `ld.local.f32 %f8, [%rd3+20];` (8%)") !=
        std::string::npos);
}

TEST_CASE("a profile that could not run says why and the verdict text is unchanged") {
  evaluation_result r = slow_with_profile();
  const std::string without = library().feedback(gemm(), [&] {
    evaluation_result x = r;
    x.profile.reset();
    return x;
  }(), 1, feedback_detail::full);
  profile_report p;
  p.kernels_error = "cuptiProfilerInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (GPU performance counters are "
                    "restricted to admin users on this machine: NVreg_RestrictProfilingToAdminUsers)";
  p.lines_error = "PC sampling did not run";
  r.profile = p;
  const std::string fb = library().feedback(gemm(), r, 1, feedback_detail::profile);
  CHECK(fb.find("Kernel counters: not available (cuptiProfilerInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES") !=
        std::string::npos);
  CHECK(fb.find("Stall reasons per line: not available (PC sampling did not run)") != std::string::npos);
  CHECK(fb.find(r.headline) != std::string::npos);
  CHECK(without.find("Profile at") == std::string::npos);
}
