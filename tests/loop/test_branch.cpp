// Branching repair (config.branch = N): N siblings per repair round from the
// same prompt, all judged, the best continues; every sibling is an LLM call
// against the budget; a bad sibling is contained; a resume completes a round
// whose siblings were partly recorded without asking any of them again.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "agent/loop/orchestrator.hpp"
#include "evaluator/common/json_path.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

std::string reply(const std::string& verdict, const std::string& tag) {
  return "Attempt " + tag + "\n```ptx\n// verdict: " + verdict + "\n// " + tag +
         "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

// Scripted answers without HTTP: round r of any task gets the variants of
// script[r] in the order the calls arrive (per task, sample and round). Calls
// numbered in `fail_calls` (1-based, over the provider's life) fail.
class scripted_provider : public provider {
 public:
  explicit scripted_provider(std::vector<std::vector<std::string>> script) : m_script(std::move(script)) {}
  completion_outcome complete(const completion_request& request) override {
    std::lock_guard lock(m_mutex);
    completion_outcome o;
    const int call = ++m_calls;
    prompts[{request.key.task_id, request.key.sample, request.key.round}].insert(messages_text(request.messages));
    if (fail_calls.count(call)) {
      o.error = "scripted failure of call " + std::to_string(call);
      o.failures.push_back({1, 500, "HTTP 500", 1.0});
      return o;
    }
    const auto& variants = m_script[std::min<size_t>(request.key.round, m_script.size() - 1)];
    int& n = m_served[{request.key.task_id, request.key.sample, request.key.round}];
    o.ok = true;
    o.result.text = variants[n++ % variants.size()];
    o.result.finish_reason = "stop";
    o.result.completion_tokens = 7;
    return o;
  }
  std::string describe() const override { return "scripted"; }
  int calls() const { return m_calls.load(); }

  std::set<int> fail_calls;
  // The distinct prompts each (task, sample, round) was sent.
  std::map<std::tuple<std::string, int, int>, std::set<std::string>> prompts;

 private:
  static std::string messages_text(const std::vector<chat_message>& m) {
    std::string s;
    for (const auto& x : m) s += x.role + ":" + x.content + "\n";
    return s;
  }
  std::vector<std::vector<std::string>> m_script;
  std::mutex m_mutex;
  std::atomic<int> m_calls{0};
  std::map<std::tuple<std::string, int, int>, int> m_served;
};

using test::throwing_evaluator;

using test::crashing_evaluator;

struct fixture {
  fs::path dir;
  std::unique_ptr<run_store> store;
  std::vector<task> tasks;
  prompt_library prompts{std::string(PTXBENCH_SOURCE_DIR) + "/prompts"};
  terminal_progress progress{stderr, false, true};
  experiment_config config;

  fixture() {
    dir = fs::temp_directory_path() / ("ptxbench_branch_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
    fs::create_directories(dir);
    store = run_store::open(dir / "run.db");
    for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
      if (t.id == "gemm_bf16_mma_sync") tasks.push_back(t);
    config.name = "b";
    config.samples = 2;
    config.rounds = 3;
    config.concurrency = 2;
    config.branch = 3;
    config.stop = stop_policy::first_pass;
    config.llm.kind = provider_kind::openai;
    config.llm.model = "scripted";
  }
  ~fixture() { fs::remove_all(dir); }

  run_summary run(provider& llm, evaluator& eval, bool resume = false) {
    orchestrator o(config, tasks, llm, eval, *store, prompts, progress);
    return o.run(resume);
  }
  std::vector<trajectory_row> trajectories() { return store->trajectories(store->find_experiment(config.name)->id); }
};

// Round 0 fails to compile; round 1 offers compile, correctness and a faster
// or slower pass... every sibling of round 1 is different.
std::vector<std::vector<std::string>> repair_script() {
  return {{reply("compile", "r0")},
          {reply("compile", "r1a"), reply("correctness", "r1b"), reply("instructions", "r1c")},
          {reply("passed", "r2a"), reply("performance", "r2b"), reply("compile", "r2c")}};
}

// Every round's siblings, by (round, branch).
std::map<std::pair<int, int>, branch_reply_row> siblings_of(run_store& store, int64_t trajectory) {
  std::map<std::pair<int, int>, branch_reply_row> out;
  for (auto& b : store.branch_replies(trajectory)) out[{b.turn.round, b.branch}] = b;
  return out;
}

// Each branched round has its siblings, one of them chosen, equal to the round's turn.
void check_consistent(run_store& store, const trajectory_row& tr, int branch) {
  auto turns = store.turns(tr.id);
  auto siblings = store.branch_replies(tr.id);
  std::map<int, std::vector<branch_reply_row>> by_round;
  for (auto& b : siblings) by_round[b.turn.round].push_back(b);
  CHECK(by_round.count(0) == 0);  // round 0 is not branched
  for (const auto& tv : turns) {
    if (tv.turn.round == 0) continue;
    INFO("trajectory " << tr.id << " round " << tv.turn.round);
    const auto& round = by_round[tv.turn.round];
    CHECK(round.size() == static_cast<size_t>(branch));
    int chosen = 0;
    for (const auto& b : round) {
      REQUIRE(b.evaluation);
      if (!b.chosen) continue;
      ++chosen;
      CHECK(b.turn.reply == tv.turn.reply);
      CHECK(b.turn.messages == tv.turn.messages);
      CHECK(b.candidate.ptx == tv.candidate->ptx);
      CHECK(b.evaluation->verdict == tv.evaluation->verdict);
    }
    CHECK(chosen == 1);
    // Siblings of one round were sent the identical prompt.
    for (const auto& b : round) CHECK(b.turn.messages == round.front().turn.messages);
  }
  // No sibling of a round that has no turn... unless the trajectory is pending.
  for (const auto& [r, list] : by_round)
    if (tr.status == "done") CHECK(r < static_cast<int>(turns.size()));
}

}  // namespace

TEST_CASE("branch 3: every repair round asks 3 siblings from one prompt - the best continues - round 0 once") {
  fixture f;
  scripted_provider llm(repair_script());
  test::fake_evaluator eval;
  auto summary = f.run(llm, eval);
  CHECK(summary.completed == 2);
  CHECK(summary.passed == 2);
  // Round 0 once, rounds 1 and 2 three times each: 7 calls per trajectory.
  CHECK(summary.turns_requested == 14);
  CHECK(llm.calls() == 14);
  CHECK(eval.calls() == 14);
  for (const auto& [key, prompts] : llm.prompts) CHECK(prompts.size() == 1);  // siblings share the prompt
  for (const auto& tr : f.trajectories()) {
    CHECK(tr.status == "done");
    CHECK(tr.passed);
    auto turns = f.store->turns(tr.id);
    REQUIRE(turns.size() == 3);
    // The best of compile / correctness / instructions got furthest: instructions.
    CHECK(turns[1].evaluation->verdict == "instructions");
    CHECK(turns[1].turn.reply.find("Attempt r1c") != std::string::npos);
    CHECK(turns[2].evaluation->verdict == "passed");
    // Round 2's prompt continues from the chosen reply and its feedback.
    CHECK(turns[2].turn.messages.dump().find("Attempt r1c") != std::string::npos);
    CHECK(turns[2].turn.messages.dump().find("Attempt r1a") == std::string::npos);
    check_consistent(*f.store, tr, 3);
    auto siblings = siblings_of(*f.store, tr.id);
    CHECK(siblings.size() == 6);
  }
  // The stage funnel and the other readers see the main line only: one turn per round.
  auto funnel = experiment_funnel(*f.store, summary.experiment_id, true);
  int verdicts = 0;
  for (const auto& row : funnel) verdicts += row.verdict;
  CHECK(verdicts == 6);
}

TEST_CASE("branch: ties keep the lower branch - errors never win") {
  fixture f;
  f.config.samples = 1;
  f.config.rounds = 2;
  f.config.branch = 2;
  SUBCASE("an evaluator error loses to any verdict") {
    scripted_provider llm({{reply("compile", "r0")}, {reply("throw", "r1a"), reply("format", "r1b")}});
    throwing_evaluator eval;
    auto summary = f.run(llm, eval);
    CHECK(summary.completed == 1);
    auto tr = f.trajectories().front();
    auto turns = f.store->turns(tr.id);
    REQUIRE(turns.size() == 2);
    CHECK(turns[1].evaluation->verdict == "format");
    auto siblings = siblings_of(*f.store, tr.id);
    int errors = 0;
    for (const auto& [key, b] : siblings) errors += b.evaluation->verdict == "error";
    CHECK(errors == 1);
    // Recorded as the agent's error, naming the branch.
    auto agent_errors = f.store->agent_errors(summary.experiment_id);
    REQUIRE(agent_errors.size() == 1);
    CHECK(agent_errors[0].round == 1);
    CHECK(agent_errors[0].message.find("branch ") == 0);
    check_consistent(*f.store, tr, 2);
  }
  SUBCASE("two equal verdicts: the lower branch is chosen") {
    scripted_provider llm({{reply("compile", "r0")}, {reply("correctness", "r1a"), reply("correctness", "r1b")}});
    test::fake_evaluator eval;
    f.run(llm, eval);
    auto tr = f.trajectories().front();
    auto siblings = siblings_of(*f.store, tr.id);
    CHECK(siblings.at({1, 0}).chosen);
    CHECK_FALSE(siblings.at({1, 1}).chosen);
  }
}

TEST_CASE("branch: the LLM-call budget counts every sibling - a round cut by it is chosen among those paid for") {
  fixture f;
  f.config.samples = 1;
  f.config.stop = stop_policy::all_rounds;
  SUBCASE("the budget ends after a whole round") {
    f.config.max_llm_calls = 4;  // round 0 and the 3 siblings of round 1
    scripted_provider llm(repair_script());
    test::fake_evaluator eval;
    auto summary = f.run(llm, eval);
    CHECK(summary.turns_requested == 4);
    CHECK(llm.calls() == 4);
    CHECK(summary.budget_stopped == 1);
    auto tr = f.trajectories().front();
    CHECK(tr.status == "done");
    CHECK(tr.rounds_done == 2);
    CHECK(f.store->turns(tr.id).size() == 2);
    CHECK(f.store->branch_replies(tr.id).size() == 3);
  }
  SUBCASE("the budget ends inside a round") {
    f.config.max_llm_calls = 3;  // round 0 and 2 of round 1's 3 siblings
    scripted_provider llm(repair_script());
    test::fake_evaluator eval;
    auto summary = f.run(llm, eval);
    CHECK(summary.turns_requested == 3);
    CHECK(llm.calls() == 3);
    CHECK(summary.budget_stopped == 1);
    auto tr = f.trajectories().front();
    CHECK(tr.status == "done");
    CHECK(tr.rounds_done == 2);
    auto turns = f.store->turns(tr.id);
    REQUIRE(turns.size() == 2);
    auto siblings = f.store->branch_replies(tr.id);
    REQUIRE(siblings.size() == 2);
    CHECK(siblings[0].chosen + siblings[1].chosen == 1);
    for (const auto& b : siblings)
      if (b.chosen) CHECK(b.turn.reply == turns[1].turn.reply);
  }
}

TEST_CASE("branch: a sibling whose call failed leaves the round pending - the resume asks only for it") {
  fixture f;
  f.config.samples = 1;
  f.config.stop = stop_policy::all_rounds;
  std::map<std::pair<int, int>, std::string> first_replies;
  {
    scripted_provider llm(repair_script());
    llm.fail_calls = {3};  // one of round 1's siblings
    test::fake_evaluator eval;
    auto summary = f.run(llm, eval);
    CHECK(summary.incomplete == 1);
    auto tr = f.trajectories().front();
    CHECK(tr.status == "pending");
    CHECK(f.store->turns(tr.id).size() == 1);  // round 1 not chosen
    auto siblings = f.store->branch_replies(tr.id);
    CHECK(siblings.size() == 2);
    for (const auto& b : siblings) {
      CHECK(b.evaluation);  // judged as soon as it arrived
      CHECK_FALSE(b.chosen);
      first_replies[{b.turn.round, b.branch}] = b.turn.reply;
    }
    CHECK(f.store->llm_failures(summary.experiment_id).size() == 1);
  }
  scripted_provider llm(repair_script());
  test::fake_evaluator eval;
  auto summary = f.run(llm, eval, true);
  CHECK(summary.completed == 1);
  // One call for the missing sibling of round 1, three for round 2.
  CHECK(llm.calls() == 4);
  CHECK(eval.calls() == 4);
  auto tr = f.trajectories().front();
  CHECK(tr.status == "done");
  check_consistent(*f.store, tr, 3);
  auto siblings = siblings_of(*f.store, tr.id);
  CHECK(siblings.size() == 6);
  for (const auto& [key, text] : first_replies) CHECK(siblings.at(key).turn.reply == text);  // kept, never re-asked
}

TEST_CASE("branch: a resume judges a recorded sibling without a verdict - and chooses a round judged but not chosen") {
  fixture f;
  f.config.samples = 1;
  f.config.rounds = 2;
  f.config.stop = stop_policy::all_rounds;
  {
    scripted_provider llm(repair_script());
    llm.fail_calls = {2, 3, 4};  // every sibling of round 1
    test::fake_evaluator eval;
    f.run(llm, eval);
  }
  auto tr = f.trajectories().front();
  REQUIRE(f.store->turns(tr.id).size() == 1);
  REQUIRE(f.store->branch_replies(tr.id).empty());
  // As a process killed at these moments leaves it: branch 0 judged, branch 1
  // recorded but not judged, branch 2 missing.
  const auto prompt = f.store->turns(tr.id).front().turn.messages;
  auto sibling = [&](int branch, const std::string& verdict) {
    branch_reply_row b;
    b.branch = branch;
    b.turn.trajectory_id = tr.id;
    b.turn.round = 1;
    b.turn.messages = prompt;
    b.turn.reply = reply(verdict, "stored" + std::to_string(branch));
    b.turn.author = "student";
    b.candidate.ptx = "// verdict: " + verdict + "\n.version 8.7\n";
    b.candidate.manifest = "{}";
    return b;
  };
  auto judged = sibling(0, "correctness");
  test::fake_evaluator judge;
  evaluation_request req;
  req.ptx = judged.candidate.ptx;
  judged.evaluation = evaluation_row_of(judge.evaluate(req), 0);
  f.store->record_branch_reply(judged);
  f.store->record_branch_reply(sibling(1, "instructions"));
  scripted_provider llm(repair_script());
  test::fake_evaluator eval;
  auto summary = f.run(llm, eval, true);
  CHECK(summary.completed == 1);
  CHECK(llm.calls() == 1);   // branch 2 only
  CHECK(eval.calls() == 2);  // branch 1 (recorded, not judged) and branch 2
  auto siblings = siblings_of(*f.store, tr.id);
  REQUIRE(siblings.size() == 3);
  // Judged once, without a crash: nothing counted against it.
  CHECK(f.store->judge_crashes({judge_subject::kind::branch_reply, siblings.at({1, 1}).id}) == 0);
  // r1a..r1c: the one asked now got "compile"; the stored branch 1 got furthest.
  CHECK(siblings.at({1, 1}).chosen);
  auto turns = f.store->turns(tr.id);
  REQUIRE(turns.size() == 2);
  CHECK(turns[1].turn.reply == siblings.at({1, 1}).turn.reply);
  CHECK(turns[1].evaluation->verdict == "instructions");
}

TEST_CASE("branch: a sibling whose judging crashes the process is judged at most 3 times - the others continue") {
  fixture f;
  f.config.samples = 1;
  f.config.rounds = 2;
  f.config.branch = 2;
  f.config.concurrency = 1;
  f.config.stop = stop_policy::all_rounds;
  f.store.reset();  // each child opens its own
  int crashes = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      try {
        f.store = run_store::open(f.dir / "run.db");
        // The first call of a round gets r1b: a resume that asks again for a
        // sibling that was not recorded before the crash gets r1b again.
        scripted_provider llm({{reply("compile", "r0")}, {reply("correctness", "r1b"), reply("crash", "r1a")}});
        test::crash_plainly();
        crashing_evaluator eval;
        auto s = f.run(llm, eval, attempt > 0);
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
  f.store = run_store::open(f.dir / "run.db");
  auto tr = f.trajectories().front();
  CHECK(tr.status == "done");
  auto siblings = f.store->branch_replies(tr.id);
  REQUIRE(siblings.size() == 2);  // never asked twice
  for (const auto& b : siblings) {
    REQUIRE(b.evaluation);
    if (b.turn.reply.find("r1a") != std::string::npos) {
      CHECK(b.evaluation->verdict == "error");
      CHECK(b.evaluation->result.dump().find("ended the process 3 times") != std::string::npos);
      CHECK_FALSE(b.chosen);
    } else {
      CHECK(b.evaluation->verdict == "correctness");
      CHECK(b.chosen);
    }
  }
}

TEST_CASE("the branch key: 1 to 16 - zero and negatives and more and non-integers are errors naming it") {
  const nlohmann::json base = {{"name", "x"}, {"llm", {{"kind", "openai"}, {"model", "m"}, {"base_url", "http://h/v1"}}}};
  auto parse = [&](nlohmann::json value) {
    nlohmann::json j = base;
    j["branch"] = value;
    return parse_experiment_config(j, "c.json");
  };
  CHECK(parse(2).branch == 2);
  CHECK(parse(16).branch == 16);
  CHECK(parse_experiment_config(base).branch == 1);
  for (nlohmann::json bad : {nlohmann::json(0), nlohmann::json(-1), nlohmann::json(17), nlohmann::json(2.5),
                             nlohmann::json("2"), nlohmann::json(true)}) {
    INFO(bad.dump());
    try {
      parse(bad);
      FAIL("accepted");
    } catch (const input_error& e) {
      const std::string what = e.what();
      CHECK(what.find("c.json: $.branch: ") == 0);
    }
  }
  // The stored config keeps it, so a resume branches alike.
  experiment_config c = parse(4);
  CHECK(parse_experiment_config(experiment_config_to_json(c)).branch == 4);
  // Checked on the values given by flags too; a replay has one answer per round.
  c.branch = 0;
  CHECK_THROWS_WITH_AS(validate_experiment_config(c), doctest::Contains("branch must be between 1 and 16"), input_error);
  c.branch = 2;
  c.llm.kind = provider_kind::replay;
  CHECK_THROWS_WITH_AS(validate_experiment_config(c), doctest::Contains("branch > 1"), input_error);
}
