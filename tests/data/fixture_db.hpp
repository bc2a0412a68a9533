#pragma once
// A small run database built through run_store for the data and viewer tests.
//
// experiment "exp1" (model m1, evaluator 0.1.0), rounds per trajectory:
//   gemm_bf16_wgmma s0 (A):         compile -> correctness -> passed (speedup 1.2)
//   gemm_bf16_wgmma s1 (B):         compile -> compile -> runtime
//   attention_fwd_bf16_wgmma s0 (C): passed (speedup 0.7)
//   attention_fwd_bf16_wgmma s1 (D): format -> performance (correct, speedup 0.5)
// Round r's prompt is [system, task] plus, after round 0, the previous reply and
// a feedback message; replies are "reply <traj><round>" with PTX "ptx <traj><round>".
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "agent/data/replay.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::testing {

inline std::filesystem::path fresh_dir(const std::string& label) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("ptxbench-" + label + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A result that fails at `verdict` ("passed": every stage passed), with every
// earlier stage passed.
inline evaluation_result make_result(const std::string& verdict, std::optional<double> speedup = std::nullopt,
                                     const std::string& headline = "") {
  evaluation_result r;
  r.passed = verdict == "passed";
  int fail_at = r.passed ? stage_count : static_cast<int>(parse_stage(verdict));
  for (int s = 0; s < stage_count; ++s) {
    stage_status status = s < fail_at ? stage_status::passed : s == fail_at ? stage_status::failed : stage_status::not_run;
    r.stages[static_cast<stage>(s)] = {status, s == fail_at ? "failed here" : "", 1.0};
  }
  if (!r.passed) r.verdict = static_cast<stage>(fail_at);
  r.headline = headline.empty() ? verdict + ": headline" : headline;
  if (speedup) {
    performance_report p;
    p.size = "M=4096 N=4096 K=4096";
    p.candidate_ms = 1.0;
    p.baseline_ms = *speedup;
    p.speedup = *speedup;
    p.baseline_name = "cuBLASLt";
    r.performance = p;
  }
  r.evaluator_version = "0.1.0";
  r.gpu = "test GPU";
  return r;
}

inline nlohmann::json prompt_for(const std::string& task, int round, const std::string& previous_reply) {
  nlohmann::json m = nlohmann::json::array();
  m.push_back({{"role", "system"}, {"content", "SYS"}});
  m.push_back({{"role", "user"}, {"content", "TASK " + task}});
  if (round > 0) {
    m.push_back({{"role", "assistant"}, {"content", previous_reply}});
    m.push_back({{"role", "user"}, {"content", "FEEDBACK " + std::to_string(round) + " for " + task}});
  }
  return m;
}

struct fixture_turn {
  std::string verdict;  // "" for a turn never evaluated
  std::optional<double> speedup;
  std::string reply;    // default "reply <name><round>"
  std::string reasoning;
  std::string finish_reason = "stop";
};

// Adds one trajectory with the given rounds; returns its id.
inline int64_t add_trajectory(run_store& store, int64_t experiment_id, const std::string& task,
                              const std::string& family, int sample, const std::string& name,
                              const std::vector<fixture_turn>& rounds, const std::string& model = "m1") {
  int64_t tid = store.ensure_trajectory(experiment_id, task, family, sample);
  std::string previous;
  for (size_t r = 0; r < rounds.size(); ++r) {
    const auto& spec = rounds[r];
    turn_row turn;
    turn.trajectory_id = tid;
    turn.round = static_cast<int>(r);
    turn.messages = prompt_for(task, turn.round, previous);
    turn.feedback = r == 0 ? "" : "feedback text " + std::to_string(r);
    turn.feedback_detail = "full";
    turn.reply = spec.reply.empty() ? "reply " + name + std::to_string(r) : spec.reply;
    turn.reasoning = spec.reasoning;
    turn.finish_reason = spec.finish_reason;
    turn.model = model;
    turn.prompt_tokens = 100;
    turn.completion_tokens = 50;
    candidate_row candidate;
    if (spec.verdict == "format") {
      candidate.format_problem = "no ```ptx block";
    } else {
      // The name is in the code as well as the comment: candidates that differ
      // only in comments are near-duplicates, which exports drop.
      candidate.ptx = "// ptx " + name + std::to_string(r) + "\n.version 8.5\n.target sm_90a\nline " + name +
                      std::to_string(r) + "\n";
      candidate.manifest = "{\"launches\": []}";
    }
    store.record_turn(turn, candidate);
    previous = turn.reply;
    if (spec.verdict.empty()) continue;
    auto turns = store.turns(tid);
    int64_t candidate_id = 0;
    for (const auto& v : turns) {
      if (v.turn.round == turn.round && v.candidate) candidate_id = v.candidate->id;
    }
    store.record_evaluation(data::evaluation_row_of(make_result(spec.verdict, spec.speedup), candidate_id));
  }
  const auto& last = rounds.back();
  store.finish_trajectory(tid, last.verdict, last.verdict == "passed", static_cast<int>(rounds.size()));
  return tid;
}

struct fixture_db {
  std::filesystem::path dir;
  std::unique_ptr<run_store> store;
  int64_t experiment_id = 0;
  std::map<std::string, int64_t> trajectories;  // A, B, C, D
};

inline fixture_db make_fixture_db(const std::string& label, const std::string& model = "m1",
                                  const std::string& reply_c = "") {
  fixture_db f;
  f.dir = fresh_dir(label);
  f.store = run_store::open(f.dir / "runs.db");
  experiment_row e;
  e.name = "exp1";
  e.config = {{"rounds", 3}};
  e.evaluator_version = "0.1.0";
  e.host = "testhost";
  e.gpu = "test GPU";
  e.model = model;
  e.provider = "embedded";
  e.created_at = "2026-01-01T00:00:00Z";
  f.experiment_id = f.store->create_experiment(e);
  auto& s = *f.store;
  f.trajectories["A"] = add_trajectory(s, f.experiment_id, "gemm_bf16_wgmma", "gemm", 0, "A",
                                       {{"compile"}, {"correctness"}, {"passed", 1.2}}, model);
  f.trajectories["B"] = add_trajectory(s, f.experiment_id, "gemm_bf16_wgmma", "gemm", 1, "B",
                                       {{"compile"}, {"compile"}, {"runtime"}}, model);
  f.trajectories["C"] = add_trajectory(s, f.experiment_id, "attention_fwd_bf16_wgmma", "attention_fwd", 0, "C",
                                       {{"passed", 0.7, reply_c}}, model);
  f.trajectories["D"] = add_trajectory(s, f.experiment_id, "attention_fwd_bf16_wgmma", "attention_fwd", 1, "D",
                                       {{"format"}, {"performance", 0.5}}, model);
  s.set_experiment_status(f.experiment_id, "done");
  return f;
}

}  // namespace ptxbench::testing
