#pragma once
// The deterministic workload of store_writer, shared with the crash test so
// the test can check that what survived a SIGKILL is exactly what was written.
#include <string>

#include "agent/store/store.hpp"

namespace ptxbench::store_test {

inline const char* k_crash_experiment = "crash-resume";

inline std::string task_name(int trajectory) { return "task_" + std::to_string(trajectory); }

// PTX-like text of 8–24 KiB, different for each (trajectory, round).
inline std::string workload_ptx(int trajectory, int round) {
  std::string ptx = ".version 8.8\n.target sm_90a\n// trajectory " + std::to_string(trajectory) + " round " +
                    std::to_string(round) + "\n";
  const int lines = 300 + (trajectory * 7 + round * 13) % 600;
  for (int i = 0; i < lines; ++i) ptx += "  add.s32 %r" + std::to_string(i) + ", %r" + std::to_string(i + 1) + ", 1;\n";
  return ptx;
}

inline turn_row workload_turn(int64_t trajectory_id, int trajectory, int round) {
  turn_row t;
  t.trajectory_id = trajectory_id;
  t.round = round;
  t.messages = nlohmann::json::array({{{"role", "system"}, {"content", "write PTX"}},
                                      {{"role", "user"}, {"content", "Aufgabe " + task_name(trajectory) + " — ✓"}}});
  t.feedback = round == 0 ? "" : "round " + std::to_string(round - 1) + " failed to compile";
  t.feedback_detail = "stage";
  t.reply = "```ptx\n" + workload_ptx(trajectory, round) + "```";
  t.model = "fake-model";
  t.finish_reason = "stop";
  t.prompt_tokens = 100 + round;
  t.completion_tokens = 200 + trajectory;
  return t;
}

inline candidate_row workload_candidate(int trajectory, int round) {
  candidate_row c;
  c.ptx = workload_ptx(trajectory, round);
  c.manifest = R"({"kernel":"k","grid":[1,1,1]})";
  return c;
}

inline evaluation_row workload_evaluation(int64_t candidate_id, int round, int rounds) {
  evaluation_row e;
  e.candidate_id = candidate_id;
  e.evaluator_version = "test";
  e.gpu = "none";
  e.passed = round == rounds - 1;
  e.verdict = e.passed ? "passed" : "compile";
  e.result = {{"round", round}};
  return e;
}

}  // namespace ptxbench::store_test
