// Re-running a conversation from recorded replies (llm.kind = replay).
#include <doctest/doctest.h>

#include <map>

#include "agent/store/store.hpp"
#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {
std::map<std::tuple<std::string, int, int>, std::pair<std::string, std::string>> replies(const fs::path& db,
                                                                                          const std::string& name) {
  std::map<std::tuple<std::string, int, int>, std::pair<std::string, std::string>> out;
  auto store = run_store::open(db, true);
  auto exp = store->find_experiment(name);
  REQUIRE(exp);
  for (const auto& tr : store->trajectories(exp->id))
    for (const auto& tv : store->turns(tr.id))
      out[{tr.task_id, tr.sample, tv.turn.round}] = {tv.turn.reply, tv.evaluation ? tv.evaluation->verdict : ""};
  return out;
}
}  // namespace

TEST_CASE("a recorded run replays turn for turn from its database - with today's prompts and evaluator") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_replay_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto r = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", (dir / "a.db").string(), "--name",
                               "original", "--gpu", "off", "--latency-ms", "0", "--quiet"},
                              src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ofstream(dir / "replay.json") << R"({"name": "replayed", "db": ")" << (dir / "b.db").string()
                                     << R"(", "tasks": ["gemm_bf16_mma_sync", "gemm_bf16_wgmma_tma"], "samples": 2, "rounds": 3,)"
                                     << R"( "gpu": "off", "llm": {"kind": "replay", "replay_db": ")" << (dir / "a.db").string()
                                     << R"(", "replay_experiment": "original"}})";
  r = test::run_ptxbench({"run", "--config", (dir / "replay.json").string(), "--quiet"}, src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto a = replies(dir / "a.db", "original");
  auto b = replies(dir / "b.db", "replayed");
  CHECK(a.size() >= 8);
  CHECK(a == b);
  // A replay of an experiment that is not there is an input error.
  std::ofstream(dir / "bad.json") << R"({"name": "x", "db": ")" << (dir / "c.db").string()
                                  << R"(", "llm": {"kind": "replay", "replay_db": ")" << (dir / "a.db").string()
                                  << R"(", "replay_experiment": "nope"}})";
  r = test::run_ptxbench({"run", "--config", (dir / "bad.json").string(), "--quiet"}, src);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("no experiment 'nope'") != std::string::npos);
  fs::remove_all(dir);
}
