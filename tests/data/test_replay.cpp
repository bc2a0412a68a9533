#include <doctest/doctest.h>

#include <atomic>

#include "agent/data/replay.hpp"
#include "agent/data/run_data.hpp"
#include "evaluator/common/json_path.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;
using namespace ptxbench::data;

namespace {

// Today's evaluator in the test: every candidate now fails to compile, except
// round 2 of trajectory A, which still passes.
class fake_evaluator : public evaluator {
 public:
  evaluation_result evaluate(const evaluation_request& request) override {
    ++m_calls;
    auto r = request.ptx.find("ptx A2") != std::string::npos ? testing::make_result("passed", 1.1)
                                                             : testing::make_result("compile", std::nullopt,
                                                                                    "compile: new ptxas rejects it");
    r.evaluator_version = version();
    return r;
  }
  std::string version() const override { return "9.9.9"; }
  std::string gpu_description() const override { return "none"; }
  std::atomic<int> m_calls{0};
};

std::optional<task> any_task(const std::string& id) {
  task t;
  t.id = id;
  t.family = "gemm";
  t.arch = "sm_90a";
  return t;
}

}  // namespace

TEST_CASE("replay re-evaluates every candidate into a new database and lists the verdicts that changed") {
  auto f = testing::make_fixture_db("replay");
  auto target = run_store::open(f.dir / "replayed.db");
  fake_evaluator judge;
  replay_options o;
  o.experiment = "exp1";
  o.jobs = 3;
  auto s = replay_experiment(*f.store, *target, judge, any_task, o);

  CHECK(s.candidates == 9);
  CHECK(s.evaluated == 9);
  CHECK(judge.m_calls == 8);  // D round 0 held no PTX: its format failure is repeated, not re-run
  CHECK(s.problems.empty());
  // Changed: A1 correctness, B2 runtime, C0 passed, D1 performance -> compile.
  REQUIRE(s.changes.size() == 4);
  CHECK(s.unchanged == 5);
  const auto& c0 = s.changes[0];
  CHECK(c0.task == "attention_fwd_bf16_wgmma");
  CHECK(c0.old_verdict == "passed");
  CHECK(c0.new_verdict == "compile");
  CHECK(c0.old_headline == "passed: headline");
  CHECK(c0.new_headline == "compile: new ptxas rejects it");
  CHECK(s.transitions.at({"correctness", "compile"}) == 1);
  CHECK(s.transitions.at({"passed", "passed"}) == 1);
  auto text = format_replay_summary(s);
  CHECK(text.find("correctness -> compile") != std::string::npos);
  CHECK(text.find("now: compile: new ptxas rejects it") != std::string::npos);

  auto e = target->find_experiment("exp1-replay");
  REQUIRE(e);
  CHECK(e->kind == "replay");
  CHECK(e->parent_experiment_id == f.experiment_id);
  CHECK(e->parent_database == std::filesystem::absolute(f.store->path()).string());
  CHECK(e->evaluator_version == "9.9.9");
  CHECK(e->status == "done");

  // Turns and candidates are copied; each evaluation points at the one it re-does.
  auto original = load_experiment(*f.store, *f.store->find_experiment("exp1"));
  auto replayed = load_experiment(*target, *e);
  REQUIRE(replayed.trajectories.size() == original.trajectories.size());
  for (size_t t = 0; t < original.trajectories.size(); ++t) {
    const auto& ot = original.trajectories[t];
    const auto& rt = replayed.trajectories[t];
    CHECK(rt.trajectory.task_id == ot.trajectory.task_id);
    REQUIRE(rt.turns.size() == ot.turns.size());
    for (size_t i = 0; i < ot.turns.size(); ++i) {
      CHECK(rt.turns[i].turn.reply == ot.turns[i].turn.reply);
      CHECK(rt.turns[i].turn.messages == ot.turns[i].turn.messages);
      REQUIRE(rt.turns[i].candidate);
      CHECK(rt.turns[i].candidate->ptx == ot.turns[i].candidate->ptx);
      REQUIRE(rt.turns[i].evaluation);
      CHECK(rt.turns[i].evaluation->origin_evaluation_id == ot.turns[i].evaluation->id);
      CHECK(rt.turns[i].evaluation->evaluator_version == "9.9.9");
    }
  }
  auto a = std::find_if(replayed.trajectories.begin(), replayed.trajectories.end(),
                        [](const trajectory_data& t) { return t.trajectory.task_id == "gemm_bf16_wgmma" && t.trajectory.sample == 0; });
  REQUIRE(a != replayed.trajectories.end());
  CHECK(a->trajectory.passed);

  // A second replay under the same name is refused rather than mixed in.
  CHECK_THROWS_AS(replay_experiment(*f.store, *target, judge, any_task, o), input_error);
}

TEST_CASE("replay lists candidates it could not re-evaluate and keeps going") {
  auto f = testing::make_fixture_db("replay-missing");
  auto target = run_store::open(f.dir / "replayed.db");
  fake_evaluator judge;
  replay_options o;
  o.experiment = "exp1";
  auto only_gemm = [](const std::string& id) -> std::optional<task> {
    return id == "gemm_bf16_wgmma" ? any_task(id) : std::nullopt;
  };
  auto s = replay_experiment(*f.store, *target, judge, only_gemm, o);
  CHECK(s.problems.size() == 2);  // C0 and D1; D0 is a format failure and needs no task
  CHECK(s.evaluated == 7);
  CHECK(s.problems[0].find("unknown task 'attention_fwd_bf16_wgmma'") != std::string::npos);
  CHECK_THROWS_AS(replay_experiment(*f.store, *target, judge, only_gemm, replay_options{"nope"}), input_error);
}

TEST_CASE("replay judges with the seeds the candidate was judged on and the run's limits") {
  auto dir = testing::fresh_dir("replay-seeds");
  auto source = run_store::open(dir / "a.db");
  experiment_row e;
  e.name = "seeded";
  e.config = {{"seeds", {7, 8}}, {"time_limit_ms", 1234.0}, {"timing_budget_ms", 55.0}, {"gpu", "auto"}};
  int64_t eid = source->create_experiment(e);
  int64_t tid = source->ensure_trajectory(eid, "gemm_bf16_wgmma", "gemm", 0);
  turn_row t;
  t.trajectory_id = tid;
  t.messages = testing::prompt_for("gemm_bf16_wgmma", 0, "");
  t.reply = "reply";
  candidate_row c;
  c.ptx = "// ptx S0";
  source->record_turn(t, c);
  auto r = testing::make_result("correctness");
  r.seeds.public_seeds = {7, 8};
  r.seeds.hidden = 99;
  r.seeds.timing = 77;
  source->record_evaluation(evaluation_row_of(r, *source->candidate_id(source->turns(tid).back().turn.id)));

  struct recording : evaluator {
    evaluation_result evaluate(const evaluation_request& request) override {
      seen.push_back(request);
      return testing::make_result("correctness");
    }
    std::string version() const override { return "9.9.9"; }
    std::string gpu_description() const override { return "none"; }
    std::vector<evaluation_request> seen;
  } judge;
  auto target = run_store::open(dir / "b.db");
  replay_options o;
  o.experiment = "seeded";
  o.run_timing = false;
  replay_experiment(*source, *target, judge, any_task, o);
  REQUIRE(judge.seen.size() == 1);
  const auto& req = judge.seen[0];
  CHECK(req.seeds == std::vector<uint64_t>{7, 8});
  CHECK(req.hidden_seed == 99);
  CHECK(req.timing_seed == 77);
  CHECK(req.time_limit_ms == 1234.0);
  CHECK(req.timing_budget_ms == 55.0);
  CHECK(req.run_gpu);
  CHECK_FALSE(req.run_timing);
}
