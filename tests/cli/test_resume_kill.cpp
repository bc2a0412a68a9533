// A run killed with SIGKILL at any moment resumes with no turn lost or duplicated.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "agent/store/store.hpp"
#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

// Every stored turn as (task, sample, round) -> reply, plus sanity checks.
std::map<std::tuple<std::string, int, int>, std::string> snapshot(const fs::path& db, int* evaluated) {
  std::map<std::tuple<std::string, int, int>, std::string> turns;
  auto store = run_store::open(db, true);
  *evaluated = 0;
  for (const auto& e : store->experiments())
    for (const auto& tr : store->trajectories(e.id)) {
      auto tv = store->turns(tr.id);
      for (size_t i = 0; i < tv.size(); ++i) {
        CHECK(tv[i].turn.round == static_cast<int>(i));  // contiguous, no duplicate rounds
        CHECK(tv[i].candidate.has_value());              // a turn never lacks its candidate
        if (tv[i].evaluation) ++*evaluated;
        turns[{tr.task_id, tr.sample, tv[i].turn.round}] = tv[i].turn.reply;
      }
    }
  return turns;
}

// How long a whole run takes uninterrupted, into a database of its own: the
// kills below fall at a tenth to a quarter of it, so that three of them land
// before the run is done on a fast machine as on a loaded one.
int full_run_ms(const fs::path& dir, const std::string& probe_config) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = test::run_ptxbench({"run", "--config", probe_config, "--quiet"}, dir);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
}

// What was stored before a kill is still there, unchanged; `now` becomes
// what the next kill is checked against.
template <class Snapshot>
void keep_if_nothing_lost(Snapshot& seen, Snapshot now) {
  for (const auto& [key, reply] : seen) {
    REQUIRE(now.count(key));  // nothing stored before a kill is lost
    CHECK(now.at(key) == reply);
  }
  seen = std::move(now);
}

// Starts the run (resuming once its database exists) and kills it with
// SIGKILL at a random moment, again and again, until it has been killed four
// times or finished on its own; after each kill `check` looks at the database.
// Returns how many runs were killed.
template <class Check>
int kill_repeatedly(const fs::path& dir, const fs::path& db, int full_ms, Check check) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> delay_ms(std::max(20, full_ms / 10), std::max(40, full_ms / 4));
  int kills = 0;
  for (int attempt = 0; attempt < 8 && kills < 4; ++attempt) {
    std::vector<std::string> args{"run", "--config", (dir / "config.json").string(), "--quiet"};
    if (fs::exists(db)) args.push_back("--resume");
    auto log = dir / "run.log";
    pid_t pid = test::spawn_ptxbench(args, dir, log);
    const int wait = delay_ms(rng);
    // The random moment of the kill is what is tested, not a wait for a state.
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
    kill(pid, SIGKILL);
    auto r = test::wait_for(pid, log);
    INFO("attempt " << attempt << " killed after " << wait << " ms (a whole run: " << full_ms << " ms): " << r.output);
    if (fs::exists(db)) check();
    if (r.signal != SIGKILL) break;  // it finished first: nothing is left to kill
    ++kills;
  }
  MESSAGE(kills << " runs killed; a whole run took " << full_ms << " ms");
  return kills;
}

}  // namespace

TEST_CASE("SIGKILL at random moments - then --resume: no turn lost or duplicated") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_kill_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream(dir / "script.json") << R"({"latency_ms": 100, "tasks": {"*": [)"
                                       << R"([{"text": "r0", "ptx": ")" << (src / "configs/demo/naive_gemm_typo.ptx").string()
                                       << R"(", "manifest": ")" << (src / "configs/demo/naive_gemm.json").string() << R"("}],)"
                                       << R"([{"text": "r1", "ptx": ")" << (src / "configs/demo/naive_gemm.ptx").string()
                                       << R"(", "manifest": ")" << (src / "configs/demo/naive_gemm.json").string() << R"("}],)"
                                       << R"([{"text": "r2 without a manifest"}]]}})";
    for (const char* name : {"config", "probe"})
      std::ofstream(dir / (std::string(name) + ".json"))
          << R"({"name": "killme", "db": ")" << (dir / (std::string(name) + ".db")).string()
          << R"(", "tasks_dir": ")" << (src / "tasks").string() << R"(", "prompts_dir": ")"
          << (src / "prompts").string()
          << R"(", "tasks": ["gemm_bf16_mma_sync", "gemm_bf16_wgmma"], "samples": 4, "rounds": 3,)"
          << R"( "concurrency": 3, "gpu": "off", "llm": {"kind": "embedded"}, "endpoint_script": ")"
          << (dir / "script.json").string() << R"("})";
  }
  const int full_ms = full_run_ms(dir, (dir / "probe.json").string());
  std::map<std::tuple<std::string, int, int>, std::string> seen;
  const int kills = kill_repeatedly(dir, dir / "config.db", full_ms, [&] {
    int evaluated = 0;
    keep_if_nothing_lost(seen, snapshot(dir / "config.db", &evaluated));
  });
  CHECK(kills >= 3);
  auto final_run = test::run_ptxbench({"run", "--config", (dir / "config.json").string(), "--quiet", "--resume"}, dir);
  INFO(final_run.output);
  // Complete, but every scripted candidate fails a stage (typo, no mma.sync, no
  // manifest): the job found failures, so exit 1 (0 would say a kernel was fine).
  CHECK(final_run.exit_code == 1);
  CHECK(final_run.output.find("no trajectory has a candidate that failed no stage") != std::string::npos);
  int evaluated = 0;
  auto all = snapshot(dir / "config.db", &evaluated);
  CHECK(all.size() == 2 * 4 * 3);  // every trajectory ran its three rounds exactly once
  CHECK(evaluated == 2 * 4 * 3);
  for (const auto& [key, reply] : seen) CHECK(all.at(key) == reply);
  auto store = run_store::open(dir / "config.db", true);
  auto exp = store->find_experiment("killme");
  REQUIRE(exp);
  CHECK(exp->status == "done");
  for (const auto& tr : store->trajectories(exp->id)) CHECK(tr.status == "done");
  fs::remove_all(dir);
}

namespace {

// Every stored sibling as (task, sample, round, branch) -> reply, with the
// invariants of a branched run checked on the way: a round with a turn has
// exactly `branch` judged siblings, one chosen, the turn's reply.
std::map<std::tuple<std::string, int, int, int>, std::string> sibling_snapshot(const fs::path& db, int branch,
                                                                             bool complete) {
  std::map<std::tuple<std::string, int, int, int>, std::string> out;
  auto store = run_store::open(db, true);
  for (const auto& e : store->experiments())
    for (const auto& tr : store->trajectories(e.id)) {
      auto turns = store->turns(tr.id);
      std::map<int, std::vector<branch_reply_row>> by_round;
      for (auto& b : store->branch_replies(tr.id)) {
        out[{tr.task_id, tr.sample, b.turn.round, b.branch}] = b.turn.reply;
        CHECK(b.turn.round >= 1);
        CHECK(b.branch < branch);
        by_round[b.turn.round].push_back(std::move(b));
      }
      for (const auto& tv : turns) {
        if (tv.turn.round == 0) continue;
        INFO(tr.task_id << " sample " << tr.sample << " round " << tv.turn.round);
        const auto& siblings = by_round[tv.turn.round];
        CHECK(siblings.size() == static_cast<size_t>(branch));
        int chosen = 0;
        for (const auto& b : siblings) {
          CHECK(b.evaluation.has_value());
          if (b.chosen) {
            ++chosen;
            CHECK(b.turn.reply == tv.turn.reply);
          }
        }
        CHECK(chosen == 1);
      }
      // Siblings only ahead of the turns by the one round in progress.
      for (const auto& [round, siblings] : by_round) {
        CHECK(round <= static_cast<int>(turns.size()));
        if (complete) CHECK(round < static_cast<int>(turns.size()));
      }
    }
  return out;
}

}  // namespace

TEST_CASE("SIGKILL at random moments of a branched run - then --resume: no sibling lost or asked twice") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_kill_branch_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string typo = (src / "configs/demo/naive_gemm_typo.ptx").string();
  const std::string fixed = (src / "configs/demo/naive_gemm.ptx").string();
  const std::string manifest = (src / "configs/demo/naive_gemm.json").string();
  {
    std::ofstream(dir / "script.json") << R"({"latency_ms": 100, "tasks": {"*": [)"
                                       << R"([{"text": "r0", "ptx": ")" << typo << R"(", "manifest": ")" << manifest << R"("}],)"
                                       << R"([{"text": "r1 fixed", "ptx": ")" << fixed << R"(", "manifest": ")" << manifest << R"("},)"
                                       << R"( {"text": "r1 still wrong", "ptx": ")" << typo << R"(", "manifest": ")" << manifest << R"("}],)"
                                       << R"([{"text": "r2 without a manifest"}, {"text": "r2 again", "ptx": ")" << fixed
                                       << R"(", "manifest": ")" << manifest << R"("}]]}})";
    for (const char* name : {"config", "probe"})
      std::ofstream(dir / (std::string(name) + ".json"))
          << R"({"name": "killbranch", "db": ")" << (dir / (std::string(name) + ".db")).string()
          << R"(", "tasks_dir": ")" << (src / "tasks").string() << R"(", "prompts_dir": ")"
          << (src / "prompts").string()
          << R"(", "tasks": ["gemm_bf16_mma_sync", "gemm_bf16_wgmma"], "samples": 3, "rounds": 3,)"
          << R"( "branch": 2, "stop": "all_rounds", "concurrency": 3, "gpu": "off", "llm": {"kind": "embedded"},)"
          << R"( "endpoint_script": ")" << (dir / "script.json").string() << R"("})";
  }
  const int full_ms = full_run_ms(dir, (dir / "probe.json").string());
  std::map<std::tuple<std::string, int, int, int>, std::string> seen;
  const int kills = kill_repeatedly(dir, dir / "config.db", full_ms, [&] {
    keep_if_nothing_lost(seen, sibling_snapshot(dir / "config.db", 2, false));
  });
  CHECK(kills >= 3);
  auto final_run = test::run_ptxbench({"run", "--config", (dir / "config.json").string(), "--quiet", "--resume"}, dir);
  INFO(final_run.output);
  // Complete; no scripted kernel fails no stage (typo, no mma.sync, no manifest): exit 1.
  CHECK(final_run.exit_code == 1);
  CHECK(final_run.output.find("no trajectory has a candidate that failed no stage") != std::string::npos);
  auto all = sibling_snapshot(dir / "config.db", 2, true);
  CHECK(all.size() == 2 * 3 * 2 * 2);  // 6 trajectories x rounds 1 and 2 x 2 siblings, each once
  for (const auto& [key, reply] : seen) CHECK(all.at(key) == reply);
  auto store = run_store::open(dir / "config.db", true);
  auto exp = store->find_experiment("killbranch");
  REQUIRE(exp);
  CHECK(exp->status == "done");
  for (const auto& tr : store->trajectories(exp->id)) {
    CHECK(tr.status == "done");
    CHECK(store->turns(tr.id).size() == 3);
  }
  fs::remove_all(dir);
}

namespace {

// The stored verdict of every turn, by (task, sample, round), and of every
// trajectory, by (task, sample, -1), of the only experiment in `db`.
std::map<std::tuple<std::string, int, int>, std::string> verdicts_in(const fs::path& db) {
  std::map<std::tuple<std::string, int, int>, std::string> out;
  auto store = run_store::open(db, true);
  for (const auto& e : store->experiments())
    for (const auto& tr : store->trajectories(e.id)) {
      out[{tr.task_id, tr.sample, -1}] = tr.final_verdict;
      for (const auto& tv : store->turns(tr.id))
        out[{tr.task_id, tr.sample, tv.turn.round}] = tv.evaluation ? tv.evaluation->verdict : "unjudged";
    }
  return out;
}

// Turns stored without a verdict: their judging is under way.
int judgings_under_way(const fs::path& db) {
  if (!fs::exists(db)) return 0;
  try {
    int n = 0;
    auto store = run_store::open(db, true);
    for (const auto& e : store->experiments())
      for (const auto& tr : store->trajectories(e.id))
        for (const auto& tv : store->turns(tr.id)) n += !tv.evaluation;
    return n;
  } catch (const std::exception&) {
    return 0;  // the run is creating the file
  }
}

std::string real_ptxas() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

}  // namespace

TEST_CASE("SIGKILL ten times while candidates are judged - no candidate is charged: the run's verdicts are a replay's") {
  const std::string ptxas = real_ptxas();
  if (ptxas.empty()) {
    MESSAGE("skipped: no ptxas to slow down");
    return;
  }
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_kill_judging_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Every judging compiles with a ptxas that first sleeps 2 s: a kill a few
  // hundred ms after a turn is stored lands in the middle of its judging.
  std::ofstream(dir / "slow_ptxas") << "#!/bin/sh\nsleep 2\nexec " << ptxas << " \"$@\"\n";
  fs::permissions(dir / "slow_ptxas", fs::perms::owner_all);
  const std::string typo = (src / "configs/demo/naive_gemm_typo.ptx").string();
  const std::string naive = (src / "configs/demo/naive_gemm.ptx").string();
  const std::string manifest = (src / "configs/demo/naive_gemm.json").string();
  std::ofstream(dir / "script.json") << R"({"tasks": {"*": [)"
                                     << R"([{"text": "r0", "ptx": ")" << typo << R"(", "manifest": ")" << manifest << R"("}],)"
                                     << R"([{"text": "r1", "ptx": ")" << naive << R"(", "manifest": ")" << manifest
                                     << R"("}]]}})";
  std::ofstream(dir / "config.json") << R"({"name": "killjudge", "db": ")" << (dir / "run.db").string()
                                     << R"(", "tasks_dir": ")" << (src / "tasks").string() << R"(", "prompts_dir": ")"
                                     << (src / "prompts").string()
                                     << R"(", "tasks": ["gemm_bf16_mma_sync", "gemm_bf16_wgmma"], "samples": 3,)"
                                     << R"( "rounds": 2, "stop": "all_rounds", "concurrency": 6, "gpu": "off",)"
                                     << R"( "llm": {"kind": "embedded"}, "endpoint_script": ")"
                                     << (dir / "script.json").string() << R"("})";
  ::setenv("PTXBENCH_PTXAS", (dir / "slow_ptxas").c_str(), 1);
  int kills_in_judging = 0;
  for (int attempt = 0; attempt < 20 && kills_in_judging < 10; ++attempt) {
    std::vector<std::string> args{"run", "--config", (dir / "config.json").string(), "--quiet"};
    if (fs::exists(dir / "run.db")) args.push_back("--resume");
    const fs::path log = dir / "run.log";
    const pid_t pid = test::spawn_ptxbench(args, dir, log);
    // Wait until turns are stored without a verdict (the first process) or
    // are left so by the last kill (a resume judges them first), then kill
    // inside the 2 s their judging takes once the process has started.
    bool judging = false;
    for (int i = 0; i < 1000 && !judging; ++i) {
      judging = judgings_under_way(dir / "run.db") > 0;
      if (!judging) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (judging) std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::kill(pid, SIGKILL);
    auto r = test::wait_for(pid, log);
    INFO("attempt " << attempt << ": " << r.output);
    if (r.signal != SIGKILL) break;  // it finished first
    kills_in_judging += judging;
  }
  CHECK(kills_in_judging == 10);
  auto final_run = test::run_ptxbench({"run", "--config", (dir / "config.json").string(), "--quiet", "--resume"}, dir);
  INFO(final_run.output);
  CHECK(final_run.exit_code == 1);  // complete; every scripted candidate fails a stage
  // The same candidates judged again by a process nobody kills, with the real ptxas.
  ::setenv("PTXBENCH_PTXAS", ptxas.c_str(), 1);
  auto replay = test::run_ptxbench({"replay", "--db", (dir / "run.db").string(), "--experiment", "killjudge", "--out",
                                    (dir / "replayed.db").string(), "--tasks-dir", (src / "tasks").string(),
                                    "--gpu", "off"},
                                   dir);
  ::unsetenv("PTXBENCH_PTXAS");
  INFO(replay.output);
  CHECK(replay.exit_code == 0);
  CHECK(replay.output.find("12 verdicts unchanged, 0 changed") != std::string::npos);
  const auto run_verdicts = verdicts_in(dir / "run.db");
  const auto replay_verdicts = verdicts_in(dir / "replayed.db");
  CHECK(run_verdicts.size() == 6 * 3);  // 6 trajectories, 2 rounds each
  int differ = 0;
  for (const auto& [key, verdict] : run_verdicts) {
    INFO(std::get<0>(key) << " sample " << std::get<1>(key) << " round " << std::get<2>(key));
    CHECK(verdict != "error");
    CHECK(verdict != "unjudged");
    differ += replay_verdicts.count(key) == 0 || replay_verdicts.at(key) != verdict;
  }
  CHECK(differ == 0);
  fs::remove_all(dir);
}
