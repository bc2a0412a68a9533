#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "evaluator/common/json_path.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;

namespace {

std::string reply(const std::string& verdict, const std::string& tag = "") {
  return "Attempt " + tag + "\n```ptx\n// verdict: " + verdict + "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

struct fixture {
  std::filesystem::path dir;
  std::unique_ptr<run_store> store;
  std::vector<task> tasks;
  prompt_library prompts{std::string(PTXBENCH_SOURCE_DIR) + "/prompts"};
  terminal_progress progress{stderr, false, true};
  experiment_config config;

  fixture() {
    dir = std::filesystem::temp_directory_path() / ("ptxbench_loop_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(std::rand()));
    std::filesystem::create_directories(dir);
    store = run_store::open(dir / "run.db");
    for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
      if (t.id == "gemm_bf16_mma_sync" || t.id == "attention_fwd_bf16_wgmma") tasks.push_back(t);
    config.name = "t";
    config.samples = 2;
    config.rounds = 3;
    config.concurrency = 4;
    config.llm.kind = provider_kind::openai;
    config.llm.model = "scripted";
    config.llm.max_retries = 0;
  }
  ~fixture() { std::filesystem::remove_all(dir); }

  run_summary run(endpoint_script script, evaluator& eval, bool resume = false) {
    embedded_endpoint ep(script);
    provider_config pc = config.llm;
    pc.base_url = ep.base_url();
    auto llm = make_http_provider(pc);
    orchestrator o(config, tasks, *llm, eval, *store, prompts, progress);
    return o.run(resume);
  }
};

endpoint_script three_round_script() {
  endpoint_script s;
  s.tasks["*"] = {{{reply("compile", "r0")}}, {{reply("correctness", "r1")}}, {{reply("passed", "r2")}}};
  return s;
}

}  // namespace

TEST_CASE("trajectories repair through rounds - storing prompts - replies - feedback and evaluations") {
  fixture f;
  test::fake_evaluator eval;
  auto summary = f.run(three_round_script(), eval);
  CHECK(summary.trajectories == 4);
  CHECK(summary.completed == 4);
  CHECK(summary.passed == 4);
  CHECK(eval.calls() == 12);
  auto exp = f.store->find_experiment("t");
  REQUIRE(exp);
  CHECK(exp->status == "done");
  CHECK(exp->evaluator_version == "fake-1");
  auto trajs = f.store->trajectories(exp->id);
  REQUIRE(trajs.size() == 4);
  for (const auto& tr : trajs) {
    CHECK(tr.status == "done");
    CHECK(tr.passed);
    auto turns = f.store->turns(tr.id);
    REQUIRE(turns.size() == 3);
    CHECK(turns[0].turn.feedback.empty());
    CHECK(turns[0].turn.messages.size() == 2);
    CHECK(turns[0].evaluation->verdict == "compile");
    // Round 1's prompt holds round 0's reply and the compile feedback it got.
    CHECK(turns[1].turn.messages.size() == 4);
    CHECK(turns[1].turn.messages[2]["content"].get<std::string>().find("Attempt r0") != std::string::npos);
    CHECK(turns[1].turn.feedback.find("Feedback on round 0: compile") != std::string::npos);
    CHECK(turns[1].evaluation->verdict == "correctness");
    CHECK(turns[2].turn.feedback.find("output is wrong") != std::string::npos);
    CHECK(turns[2].evaluation->verdict == "passed");
    CHECK(turns[2].candidate->ptx.find("verdict: passed") != std::string::npos);
  }
}

TEST_CASE("stop policy: first_pass stops at the pass - all_rounds keeps optimising") {
  endpoint_script s;
  s.tasks["*"] = {{{reply("passed", "r0")}}, {{reply("performance", "r1")}}};
  {
    fixture f;
    test::fake_evaluator eval;
    f.run(s, eval);
    CHECK(eval.calls() == 4);
  }
  {
    fixture f;
    f.config.stop = stop_policy::all_rounds;
    test::fake_evaluator eval;
    f.run(s, eval);
    CHECK(eval.calls() == 12);
    auto exp = f.store->find_experiment("t");
    auto tr = f.store->trajectories(exp->id).front();
    // The best candidate decides the trajectory's verdict.
    CHECK(tr.passed);
    CHECK(tr.final_verdict == "passed");
    auto turns = f.store->turns(tr.id);
    CHECK(turns[1].turn.feedback.find("passed every stage") != std::string::npos);
  }
}

TEST_CASE("history last_k keeps only the last k exchanges in the prompt") {
  fixture f;
  f.config.history = history_policy::last_k;
  f.config.history_k = 1;
  f.config.rounds = 3;
  endpoint_script s;
  s.tasks["*"] = {{{reply("compile", "r0")}}, {{reply("compile", "r1")}}, {{reply("compile", "r2")}}};
  test::fake_evaluator eval;
  f.run(s, eval);
  auto exp = f.store->find_experiment("t");
  auto turns = f.store->turns(f.store->trajectories(exp->id).front().id);
  REQUIRE(turns.size() == 3);
  CHECK(turns[2].turn.messages.size() == 4);  // system, task, last reply, last feedback
  CHECK(turns[2].turn.messages[2]["content"].get<std::string>().find("Attempt r1") != std::string::npos);
}

TEST_CASE("feedback detail none and stage withhold the details") {
  for (auto detail : {feedback_detail::none, feedback_detail::stage}) {
    fixture f;
    f.config.feedback = detail;
    f.config.rounds = 2;
    test::fake_evaluator eval;
    f.run(three_round_script(), eval);
    auto exp = f.store->find_experiment("t");
    auto turns = f.store->turns(f.store->trajectories(exp->id).front().id);
    const auto& fb = turns[1].turn.feedback;
    CHECK(turns[1].turn.feedback_detail == to_string(detail));
    if (detail == feedback_detail::none) CHECK(fb.find("compile") == std::string::npos);
    else CHECK(fb.find("failed at the **compile** stage") != std::string::npos);
  }
}

TEST_CASE("a reply without a candidate is a format failure - fed back and logged") {
  fixture f;
  f.config.rounds = 2;
  endpoint_script s;
  s.tasks["*"] = {{{std::string("I think the kernel should tile by 128.")}}, {{reply("passed")}}};
  test::fake_evaluator eval;
  f.run(s, eval);
  CHECK(eval.calls() == 4);  // format failures never reach the evaluator
  auto exp = f.store->find_experiment("t");
  auto turns = f.store->turns(f.store->trajectories(exp->id).front().id);
  CHECK(turns[0].evaluation->verdict == "format");
  CHECK(turns[0].candidate->format_problem.find("no ```ptx block") != std::string::npos);
  CHECK(turns[1].turn.feedback.find("could not be judged") != std::string::npos);
}

TEST_CASE("an LLM endpoint that fails leaves the trajectory pending - and a resume completes it") {
  fixture f;
  f.config.samples = 1;
  test::fake_evaluator eval;
  endpoint_script none;  // no script for these tasks: the endpoint answers 404
  none.tasks["other_task"] = {{{reply("passed")}}};
  auto s1 = f.run(none, eval);
  CHECK(s1.incomplete == 2);
  auto exp = f.store->find_experiment("t");
  CHECK(exp->status == "interrupted");
  CHECK_FALSE(f.store->llm_failures(exp->id).empty());
  CHECK_THROWS_AS(f.run(three_round_script(), eval), input_error);  // exists: needs resume
  auto s2 = f.run(three_round_script(), eval, true);
  CHECK(s2.completed == 2);
  CHECK(s2.passed == 2);
  CHECK(f.store->find_experiment("t")->status == "done");
}

TEST_CASE("overlap: trajectories wait on the model in parallel - never one at a time") {
  fixture f;
  f.config.samples = 8;  // 16 trajectories
  f.config.concurrency = 16;
  f.config.rounds = 2;
  endpoint_script s;
  s.latency_ms = 150;
  s.tasks["*"] = {{{reply("compile")}}, {{reply("passed")}}};
  test::fake_evaluator eval;
  embedded_endpoint ep(s);
  provider_config pc = f.config.llm;
  pc.base_url = ep.base_url();
  auto llm = make_http_provider(pc);
  orchestrator o(f.config, f.tasks, *llm, eval, *f.store, f.prompts, f.progress);
  auto summary = o.run(false);
  CHECK(summary.passed == 16);
  // Requests overlapped: many were held by the endpoint at the same moment.
  CHECK(ep.max_in_flight() >= 8);
}

TEST_CASE("shards split the task x sample grid without overlap or gaps") {
  std::set<std::pair<std::string, int>> all;
  for (int shard = 0; shard < 3; ++shard) {
    fixture f;
    f.config.samples = 5;  // 10 trajectories over 3 shards
    f.config.rounds = 1;
    f.config.shard_index = shard;
    f.config.shard_count = 3;
    test::fake_evaluator eval;
    auto summary = f.run(three_round_script(), eval);
    CHECK(summary.trajectories == (shard == 0 ? 4 : 3));
    for (const auto& tr : f.store->trajectories(f.store->find_experiment("t")->id))
      CHECK(all.insert({tr.task_id, tr.sample}).second);
  }
  CHECK(all.size() == 10);
}

TEST_CASE("the funnel counts each stage's outcomes and where candidates end") {
  fixture f;
  test::fake_evaluator eval;
  f.run(three_round_script(), eval);  // compile, correctness, passed per trajectory
  auto rows = experiment_funnel(*f.store, f.store->find_experiment("t")->id, true);
  REQUIRE(rows.size() == 8);  // the stages, all passed, none failed (partial)
  CHECK(rows[0].passed == 12);                        // format
  CHECK(rows[1].failed == 4);                         // compile
  CHECK(rows[1].verdict == 4);
  CHECK(rows[3].failed == 4);                         // correctness
  CHECK(rows[3].passed == 4);
  CHECK(rows[2].not_run == 4);                        // runtime after the compile failures
  CHECK(rows[6].verdict == 4);                        // all passed
  CHECK(rows[7].verdict == 0);                        // partial: every stage ran here
  auto finals = experiment_funnel(*f.store, f.store->find_experiment("t")->id, false);
  CHECK(finals[6].verdict == 4);
  CHECK(format_funnel(rows, "x").find("all passed") != std::string::npos);
}
