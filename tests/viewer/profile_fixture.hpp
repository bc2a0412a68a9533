#pragma once
// A trajectory whose evaluations carry profiles (evaluator/api/profile.hpp),
// written through run_store as the fixture database's are:
//   round 0: the profiler could not run (both parts say why), its PTX plain;
//   round 1: kernel figures of the candidate and the library, the roofline,
//            and three hot lines (10, 8, 9) of its 12-line PTX. The function
//            name and line 9 are a model's <script>.
#include <cmath>
#include <limits>
#include <string>

#include "../data/fixture_db.hpp"

namespace ptxbench::testing {

inline const std::string profile_evil = "<script>document.title='pwned'</script>";
inline const std::string profiled_task = "gemm_bf16_wgmma_profiled";

inline const std::string profiled_ptx =
    "// ptx P1\n"                                                        // 1
    ".version 8.5\n"                                                     // 2
    ".target sm_90a\n"                                                   // 3
    ".visible .entry gemm(\n"                                            // 4
    ")\n"                                                                // 5
    "{\n"                                                                // 6
    "  ld.global.v4.u32 {%r1,%r2,%r3,%r4}, [%rd1];\n"                    // 7
    "  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r5], %r6;\n"      // 8
    "  // " + profile_evil + "\n"                                        // 9
    "  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"  // 10
    "  ret;\n"                                                           // 11
    "}\n";                                                               // 12

inline profile_report unavailable_profile() {
  profile_report p;
  p.size = "M=4096 N=4096 K=4096";
  p.kernels_error = "the machine cannot profile: ERR_NVGPUCTRPERM (counters need admin rights)";
  p.lines_error = "PC sampling: another profiler holds the device";
  return p;
}

inline profile_report full_profile() {
  profile_report p;
  p.ran = true;
  p.size = "M=4096 N=4096 K=4096";
  p.fingerprint = "abc123";
  // The library's range first: the viewer puts the candidate's columns first all the same.
  profile_kernel lib;
  lib.name = "cuBLASLt";
  lib.baseline = true;
  lib.duration_us = 640.0;
  lib.sm_throughput_pct = 93.2;
  lib.tensor_pipe_pct = std::numeric_limits<double>::quiet_NaN();  // stored as null
  lib.dram_throughput_pct = 20.4;
  lib.l2_throughput_pct = 35.0;
  lib.l2_hit_rate_pct = 91.0;
  lib.achieved_occupancy_pct = 24.6;
  lib.smem_bank_conflicts = 0;
  lib.dram_bytes = 1.0e8;
  profile_kernel yours;
  yours.name = "yours: launch 0 (" + profile_evil + ")";
  yours.duration_us = 812.44;
  yours.sm_throughput_pct = 71.6;
  yours.tensor_pipe_pct = 65.0;
  yours.dram_throughput_pct = 12.0;
  yours.l2_throughput_pct = 30.0;
  yours.l2_hit_rate_pct = 88.0;
  yours.achieved_occupancy_pct = 12.4;
  yours.smem_bank_conflicts = 1024;
  yours.dram_bytes = 1.2e8;
  yours.registers_per_thread = 168;
  yours.shared_bytes_per_cta = 197632;
  p.kernels = {lib, yours};
  p.lines = {
      {10, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd2, %rd3, 1, 1, 1, 0, 0;", 0.42, 4200,
       "math_pipe_throttle", "math pipe busy", 0.9},
      {8, "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r5], %r6;", 0.31, 3100, "barrier",
       "waiting at a CTA barrier (bar.sync)", 0.8},
      {9, "// " + profile_evil, 0.05, 500, "long_scoreboard", "waiting on a global/local memory load", 0.6},
  };
  p.samples = 10000;
  p.unmapped_share = 0.02;
  p.roofline = {1.374e11, 1.0e8, 1374, 169.1, 989.0, 123.1, 147.7, 3350.0, "compute"};
  p.time_ms = 5400;
  return p;
}

// Adds the profiled trajectory to the experiment; returns its id.
inline int64_t add_profiled_trajectory(run_store& store, int64_t experiment_id) {
  int64_t tid = store.ensure_trajectory(experiment_id, profiled_task, "gemm", 0);
  const profile_report profiles[] = {unavailable_profile(), full_profile()};
  for (int round = 0; round < 2; ++round) {
    turn_row turn;
    turn.trajectory_id = tid;
    turn.round = round;
    turn.messages = prompt_for(profiled_task, round, "");
    turn.reply = "reply P" + std::to_string(round);
    turn.model = "m1";
    turn.finish_reason = "stop";
    candidate_row candidate;
    candidate.ptx = round == 0 ? "// ptx P0\n.version 8.5\n.target sm_90a\nline P0\n" : profiled_ptx;
    candidate.manifest = "{\"launches\": []}";
    int64_t turn_id = store.record_turn(turn, candidate);
    auto result = make_result("passed", 0.8);
    result.profile = profiles[round];
    store.record_evaluation(data::evaluation_row_of(result, store.candidate_id(turn_id).value()));
  }
  store.finish_trajectory(tid, "passed", true, 2);
  return tid;
}

}  // namespace ptxbench::testing
