// Containment: whatever fails while one candidate is handled is recorded on
// its turn (or trajectory) as an error of the agent and the run goes on; a
// candidate whose judging takes the process down is not judged forever.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "evaluator/common/json_path.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

std::string reply(const std::string& verdict) {
  return "```ptx\n// verdict: " + verdict + "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

using test::throwing_evaluator;

using test::crashing_evaluator;

struct fixture {
  fs::path dir;
  std::vector<task> tasks;
  terminal_progress progress{stderr, false, true};
  experiment_config config;

  fixture() {
    dir = fs::temp_directory_path() / ("ptxbench_contain_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
    fs::create_directories(dir);
    for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
      if (t.id == "gemm_bf16_mma_sync") tasks.push_back(t);
    config.name = "c";
    config.samples = 1;
    config.rounds = 2;
    config.concurrency = 1;
    config.stop = stop_policy::all_rounds;
    config.llm.kind = provider_kind::openai;
    config.llm.model = "scripted";
    config.llm.max_retries = 0;
  }
  ~fixture() { fs::remove_all(dir); }

  run_summary run(const endpoint_script& script, evaluator& eval, bool resume = false,
                  const fs::path& prompts_dir = fs::path(PTXBENCH_SOURCE_DIR) / "prompts") {
    auto store = run_store::open(dir / "run.db");
    prompt_library prompts(prompts_dir);
    embedded_endpoint ep(script);
    provider_config pc = config.llm;
    pc.base_url = ep.base_url();
    auto llm = make_http_provider(pc);
    orchestrator o(config, tasks, *llm, eval, *store, prompts, progress);
    return o.run(resume);
  }
};

endpoint_script two_rounds(const std::string& first, const std::string& second) {
  endpoint_script s;
  s.tasks["*"] = {{{reply(first)}}, {{reply(second)}}};
  return s;
}

}  // namespace

TEST_CASE("an evaluator that throws marks the turn as an error - the run goes on - feedback blames no one") {
  for (const std::string kind : {"throw", "throw_int"}) {
    fixture f;
    throwing_evaluator eval;
    auto summary = f.run(two_rounds(kind, "passed"), eval);
    CHECK(summary.completed == 1);
    CHECK(summary.passed == 1);
    auto store = run_store::open(f.dir / "run.db", true);
    auto exp = store->find_experiment("c");
    CHECK(exp->status == "done");
    auto turns = store->turns(store->trajectories(exp->id).front().id);
    REQUIRE(turns.size() == 2);
    REQUIRE(turns[0].evaluation);
    CHECK(turns[0].evaluation->verdict == "error");
    CHECK(evaluation_result_from_json(turns[0].evaluation->result).evaluator_error());
    if (kind == "throw") CHECK(turns[0].evaluation->result.dump().find("harness exploded") != std::string::npos);
    CHECK(turns[1].turn.feedback.find("not in your answer") != std::string::npos);
    CHECK(turns[1].turn.feedback.find("harness exploded") == std::string::npos);
    CHECK_FALSE(store->agent_errors(exp->id).empty());
  }
}

TEST_CASE("a prompt template that fails ends its trajectory with an error - resume does not replay it") {
  fixture f;
  fs::copy(fs::path(PTXBENCH_SOURCE_DIR) / "prompts", f.dir / "prompts");
  std::ofstream(f.dir / "prompts" / "task.md", std::ios::app) << "\n{{no_such_value}}\n";
  test::fake_evaluator eval;
  auto s1 = f.run(two_rounds("passed", "passed"), eval, false, f.dir / "prompts");
  CHECK(s1.completed == 1);
  auto s2 = f.run(two_rounds("passed", "passed"), eval, true, f.dir / "prompts");
  CHECK(s2.completed == 1);
  CHECK(s2.turns_requested == 0);
  auto store = run_store::open(f.dir / "run.db", true);
  auto exp = store->find_experiment("c");
  CHECK(exp->status == "done");
  auto tr = store->trajectories(exp->id).front();
  CHECK(tr.status == "done");
  CHECK(tr.final_verdict == "error");
  auto errors = store->agent_errors(exp->id);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].step == "trajectory");
  CHECK(errors[0].message.find("no_such_value") != std::string::npos);
}

TEST_CASE("a candidate whose judging crashes the process is judged at most 3 times - then marked") {
  fixture f;
  f.config.rounds = 1;
  int crashes = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      test::crash_plainly();
      crashing_evaluator eval;
      try {
        auto s = f.run(two_rounds("crash", "passed"), eval, attempt > 0);
        _exit(s.completed == 1 ? 0 : 1);
      } catch (...) {
        _exit(2);
      }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
      ++crashes;
      continue;
    }
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    break;
  }
  CHECK(crashes == 3);
  auto store = run_store::open(f.dir / "run.db", true);
  auto exp = store->find_experiment("c");
  CHECK(exp->status == "done");
  auto turns = store->turns(store->trajectories(exp->id).front().id);
  REQUIRE(turns.size() == 1);
  REQUIRE(turns[0].evaluation);
  CHECK(turns[0].evaluation->verdict == "error");
  CHECK(turns[0].evaluation->result.dump().find("ended the process 3 times") != std::string::npos);
}

TEST_CASE("an unavailable evaluator leaves the candidate for a resume - stops the run - charges nothing") {
  fixture f;
  f.config.rounds = 2;
  f.config.samples = 2;
  test::unavailable_evaluator down(1000);
  auto first = f.run(two_rounds("compile", "passed"), down);
  orchestrator::clear_stop_request();
  CHECK(first.evaluator_unavailable.find("no evaluation service") != std::string::npos);
  CHECK(first.completed == 0);
  {
    auto store = run_store::open(f.dir / "run.db", true);
    auto exp = store->find_experiment("c");
    CHECK(exp->status == "interrupted");
    for (const auto& tr : store->trajectories(exp->id)) {
      CHECK(tr.status == "pending");
      for (const auto& tv : store->turns(tr.id)) {
        CHECK(tv.candidate);
        CHECK_FALSE(tv.evaluation);  // no error verdict recorded: it was never judged
      }
    }
    CHECK_FALSE(store->agent_errors(exp->id).empty());
  }
  // Resumed more often than a crashing candidate is allowed: the attempts
  // that found no evaluator are not counted against it.
  for (int i = 0; i < 4; ++i) {
    test::unavailable_evaluator still_down(1000);
    f.run(two_rounds("compile", "passed"), still_down, true);
    orchestrator::clear_stop_request();
  }
  test::fake_evaluator back;
  auto resumed = f.run(two_rounds("compile", "passed"), back, true);
  CHECK(resumed.evaluator_unavailable.empty());
  CHECK(resumed.completed == 2);
  CHECK(resumed.passed == 2);
  auto store = run_store::open(f.dir / "run.db", true);
  auto exp = store->find_experiment("c");
  CHECK(exp->status == "done");
  for (const auto& tr : store->trajectories(exp->id)) {
    auto turns = store->turns(tr.id);
    REQUIRE(turns.size() == 2);
    REQUIRE(turns[0].evaluation);
    CHECK(turns[0].evaluation->verdict == "compile");  // judged on the resume, not an error
    REQUIRE(turns[1].evaluation);
    CHECK(turns[1].evaluation->verdict == "passed");
  }
}

TEST_CASE("a resume counts the trajectories an earlier process finished once") {
  fixture f;
  f.config.rounds = 1;
  f.config.samples = 3;
  test::fake_evaluator eval;
  f.run(two_rounds("compile", "passed"), eval);
  std::FILE* out = std::tmpfile();
  {
    auto store = run_store::open(f.dir / "run.db");
    prompt_library prompts(fs::path(PTXBENCH_SOURCE_DIR) / "prompts");
    embedded_endpoint ep(two_rounds("compile", "passed"));
    provider_config pc = f.config.llm;
    pc.base_url = ep.base_url();
    auto llm = make_http_provider(pc);
    terminal_progress progress(out, false, false);
    orchestrator o(f.config, f.tasks, *llm, eval, *store, prompts, progress);
    CHECK(o.run(true).completed == 3);
  }
  std::rewind(out);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, out)) text += buf;
  std::fclose(out);
  CAPTURE(text);
  CHECK(text.find("3 trajectories (3 already done)") != std::string::npos);
  CHECK(text.find("3/3 trajectories done") != std::string::npos);
  CHECK(text.find("6/3") == std::string::npos);
}

TEST_CASE("a resume with another evaluator version is refused naming both") {
  fixture f;
  f.config.rounds = 1;
  test::fake_evaluator eval;
  f.run(two_rounds("compile", "passed"), eval);
  struct other_version final : test::fake_evaluator {
    std::string version() const override { return "fake-2"; }
  } other;
  try {
    f.run(two_rounds("compile", "passed"), other, true);
    FAIL("the resume was accepted");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("fake-1") != std::string::npos);
    CHECK(std::string(e.what()).find("fake-2") != std::string::npos);
  }
}

namespace {
// Answers every call with a reply cut off by the token limit.
class cut_off_provider : public provider {
 public:
  completion_outcome complete(const completion_request&) override {
    completion_outcome o;
    o.ok = true;
    o.result.text = "```ptx\n// verdict: compile\n.version 8.7\n";
    o.result.finish_reason = "length";
    return o;
  }
  std::string describe() const override { return "cut off"; }
};
}  // namespace

TEST_CASE("a reply cut by the token limit gets feedback that says so") {
  fixture f;
  f.config.llm.max_tokens = 777;
  auto store = run_store::open(f.dir / "run.db");
  prompt_library prompts(fs::path(PTXBENCH_SOURCE_DIR) / "prompts");
  cut_off_provider llm;
  test::fake_evaluator eval;
  orchestrator(f.config, f.tasks, llm, eval, *store, prompts, f.progress).run(false);
  auto turns = store->turns(store->trajectories(store->find_experiment("c")->id).front().id);
  REQUIRE(turns.size() == 2);
  CHECK(turns[0].turn.finish_reason == "length");
  CHECK(turns[1].turn.feedback.find("cut off: it reached the token limit (777 tokens)") != std::string::npos);
}

TEST_CASE("progress counts a trajectory that stopped early as incomplete - not done") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  terminal_progress p(out, false);
  p.on_start(2, 0);
  p.on_trajectory_started();
  p.on_trajectory_started();
  p.on_trajectory_done(false, false);
  p.on_turn("t", 1, 0, "passed", "");
  std::rewind(out);
  char buf[512] = {0};
  std::string text(buf, std::fread(buf, 1, sizeof buf - 1, out));
  std::fclose(out);
  CHECK(text.find("[0/2 done, 1 in flight, 1 incomplete, ") != std::string::npos);
}

namespace {

// Whether the run database shows a stored turn that has no evaluation yet:
// its judging has started (the turn is judged right after it is stored).
bool judging_under_way(const fs::path& db) {
  if (!fs::exists(db)) return false;
  try {
    auto store = run_store::open(db, true);
    for (const auto& e : store->experiments())
      for (const auto& tr : store->trajectories(e.id))
        for (const auto& tv : store->turns(tr.id))
          if (!tv.evaluation) return true;
  } catch (const std::exception&) {
    // the writer is creating the file: not yet
  }
  return false;
}

}  // namespace

TEST_CASE("a judging interrupted by SIGKILL is never charged to its candidate - however often") {
  fixture f;
  f.config.rounds = 1;
  // Killed five times while its candidate is being judged (an evaluation that
  // takes a minute): more often than a crashing candidate is allowed.
  for (int kill_no = 0; kill_no < 5; ++kill_no) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      test::fake_evaluator slow(60000);
      try {
        f.run(two_rounds("passed", "passed"), slow, kill_no > 0);
      } catch (...) {
      }
      _exit(3);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!judging_under_way(f.dir / "run.db") && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // well inside the minute of judging
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
  }
  test::fake_evaluator quick;
  auto last = f.run(two_rounds("passed", "passed"), quick, true);
  CHECK(last.completed == 1);
  CHECK(last.passed == 1);
  CHECK(quick.calls() == 1);
  auto store = run_store::open(f.dir / "run.db", true);
  auto exp = store->find_experiment("c");
  auto turns = store->turns(store->trajectories(exp->id).front().id);
  REQUIRE(turns.size() == 1);
  REQUIRE(turns[0].evaluation);
  CHECK(turns[0].evaluation->verdict == "passed");  // its real verdict, not an error
  CHECK(store->judge_crashes({judge_subject::kind::candidate, turns[0].candidate->id}) == 0);
  CHECK(store->agent_errors(exp->id).empty());
}

TEST_CASE("a crash is charged to the judging that crashed - never to the judgings beside it") {
  fixture f;
  f.config.rounds = 1;
  f.config.samples = 2;
  f.config.concurrency = 2;
  // One sample gets the crashing reply, the other a good one whose judging
  // (800 ms) is under way when the first crashes (after 200 ms).
  endpoint_script script;
  script.tasks["*"] = {{{reply("crash")}, {reply("passed")}}};
  int crashes = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      test::crash_plainly();
      test::crashing_evaluator eval(800, 200);
      try {
        auto s = f.run(script, eval, attempt > 0);
        _exit(s.completed == 2 ? 0 : 1);
      } catch (...) {
        _exit(2);
      }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
      ++crashes;
      continue;
    }
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    break;
  }
  CHECK(crashes == 3);
  auto store = run_store::open(f.dir / "run.db", true);
  auto exp = store->find_experiment("c");
  int marked = 0, passed = 0;
  for (const auto& tr : store->trajectories(exp->id)) {
    auto turns = store->turns(tr.id);
    REQUIRE(turns.size() == 1);
    REQUIRE(turns[0].evaluation);
    const judge_subject subject{judge_subject::kind::candidate, turns[0].candidate->id};
    if (turns[0].candidate->ptx.find("verdict: crash") != std::string::npos) {
      CHECK(turns[0].evaluation->verdict == "error");
      CHECK(store->judge_crashes(subject) == 3);
      ++marked;
    } else {
      CHECK(turns[0].evaluation->verdict == "passed");  // judged beside the crashes, never charged
      CHECK(store->judge_crashes(subject) == 0);
      ++passed;
    }
  }
  CHECK(marked == 1);
  CHECK(passed == 1);
}
