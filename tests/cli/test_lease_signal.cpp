// One writer per experiment and Ctrl-C, with real processes on one SQLite
// file: a second `run --resume` of a live experiment is refused naming the
// holder; SIGINT with 30 s replies in flight exits 130 within 2 s; a resume
// then completes with nothing lost; a holder killed with SIGKILL is taken over.
#include <doctest/doctest.h>

#include "agent/store/store.hpp"
#include "cli_test_util.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

struct slow_run {
  fs::path dir;
  fs::path config;

  explicit slow_run(const std::string& label) {
    const fs::path src = PTXBENCH_SOURCE_DIR;
    dir = fs::temp_directory_path() / ("ptxbench_" + label + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    set_latency_ms(30000);
    config = dir / "config.json";
    std::ofstream(config) << R"({"name": "slow", "db": ")" << (dir / "run.db").string() << R"(", "tasks_dir": ")"
                          << (src / "tasks").string() << R"(", "prompts_dir": ")" << (src / "prompts").string()
                          << R"(", "tasks": ["gemm_bf16_mma_sync"], "samples": 2, "rounds": 1, "concurrency": 2,)"
                          << R"( "gpu": "off", "llm": {"kind": "embedded"}, "endpoint_script": ")"
                          << (dir / "script.json").string() << R"("})";
  }
  ~slow_run() { fs::remove_all(dir); }

  // The script is read by each run, so a resume can answer at once.
  void set_latency_ms(int ms) {
    std::ofstream(dir / "script.json") << R"({"latency_ms": )" << ms
                                       << R"(, "tasks": {"*": [[{"text": "no candidate here"}]]}})";
  }

  std::vector<std::string> args(bool resume) const {
    std::vector<std::string> a{"run", "--config", config.string(), "--quiet"};
    if (resume) a.push_back("--resume");
    return a;
  }

  // Waits until the experiment's lease is held by `pid` and both of its
  // trajectories have started (each row is written just before its first
  // LLM call, which then waits 30 s for its reply).
  bool wait_until_running(pid_t pid) {
    return test::wait_until([&] {
      try {
        if (!fs::exists(dir / "run.db")) return false;
        auto store = run_store::open(dir / "run.db", true);
        auto exp = store->find_experiment("slow");
        if (!exp) return false;
        auto lease = store->lease(exp->id);
        return lease && lease->pid == pid && store->trajectories(exp->id).size() == 2;
      } catch (const std::exception&) {
        return false;  // the file is being created
      }
    }, std::chrono::seconds(10), std::chrono::milliseconds(20));
  }

  void check_complete() {
    auto store = run_store::open(dir / "run.db", true);
    auto exp = store->find_experiment("slow");
    REQUIRE(exp);
    CHECK(exp->status == "done");
    auto trs = store->trajectories(exp->id);
    CHECK(trs.size() == 2);
    for (const auto& tr : trs) {
      CHECK(tr.status == "done");
      auto turns = store->turns(tr.id);
      CHECK(turns.size() == 1);  // asked once: nothing lost, nothing twice
      if (!turns.empty()) CHECK(turns[0].evaluation.has_value());
    }
    CHECK_FALSE(store->lease(exp->id).has_value());  // released on exit
  }
};

}  // namespace

TEST_CASE("a second run --resume of a live experiment exits 2 naming the holder - SIGINT exits 130 within 2 s") {
  slow_run r("lease_sigint");
  auto log = r.dir / "a.log";
  pid_t a = test::spawn_ptxbench(r.args(false), r.dir, log);
  REQUIRE(r.wait_until_running(a));

  auto second = test::run_ptxbench(r.args(true), r.dir);
  INFO(second.output);
  CHECK(second.exit_code == 2);
  CHECK(second.output.find("PID " + std::to_string(a)) != std::string::npos);

  auto start = std::chrono::steady_clock::now();
  kill(a, SIGINT);
  auto first = test::wait_for(a, log);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(first.output);
  CHECK(first.exit_code == 130);
  CHECK(s <= 2.0);
  MESSAGE("SIGINT to exit: " << s << " s");

  r.set_latency_ms(0);
  auto resumed = test::run_ptxbench(r.args(true), r.dir);
  INFO(resumed.output);
  // The run completes: 1 is its verdict that no trajectory came through without a failure.
  CHECK((resumed.exit_code == 0 || resumed.exit_code == 1));
  r.check_complete();
}

TEST_CASE("a second Ctrl-C exits at once") {
  slow_run r("double_sigint");
  auto log = r.dir / "a.log";
  pid_t a = test::spawn_ptxbench(r.args(false), r.dir, log);
  REQUIRE(r.wait_until_running(a));
  auto start = std::chrono::steady_clock::now();
  kill(a, SIGINT);
  kill(a, SIGINT);
  auto first = test::wait_for(a, log);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(first.exit_code == 130);
  CHECK(s <= 2.0);
}

TEST_CASE("the lease of a holder killed with SIGKILL is taken over by the next resume") {
  slow_run r("lease_kill");
  auto log = r.dir / "a.log";
  pid_t a = test::spawn_ptxbench(r.args(false), r.dir, log);
  REQUIRE(r.wait_until_running(a));
  kill(a, SIGKILL);
  auto killed = test::wait_for(a, log);
  CHECK(killed.signal == SIGKILL);
  r.set_latency_ms(0);
  auto resumed = test::run_ptxbench(r.args(true), r.dir);
  INFO(resumed.output);
  // The run completes: 1 is its verdict that no trajectory came through without a failure.
  CHECK((resumed.exit_code == 0 || resumed.exit_code == 1));
  r.check_complete();
}
