// A reply whose manifest once crashed the process (INT64_MIN / -1 in a grid
// expression: SIGFPE): the run completes, with that turn marked, within a few
// resumes at most, and the next round still runs. Whether the evaluator
// rejects the expression itself or the crash-loop breaker marks the turn,
// nothing is replayed forever.
#include <doctest/doctest.h>

#include "agent/store/store.hpp"
#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

TEST_CASE("a manifest with (0-9223372036854775807-1)/(0-1) never takes the run down for good") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_fpe_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "fpe.json")
      << R"j({"launches": [{"kernel": "gemm_naive", "grid": ["(0-9223372036854775807-1)/(0-1)", "cdiv(M,16)", 1],)j"
      << R"( "block": [16, 16, 1], "params": [{"buffer": "A"}, {"buffer": "B"}, {"buffer": "C"}, {"size": "M"},)"
      << R"( {"size": "N"}, {"size": "K"}]}]})";
  const std::string ptx = (src / "configs/demo/naive_gemm.ptx").string();
  std::ofstream(dir / "script.json") << R"({"tasks": {"*": [[{"text": "r0", "ptx": ")" << ptx << R"(", "manifest": ")"
                                     << (dir / "fpe.json").string() << R"("}], [{"text": "r1", "ptx": ")" << ptx
                                     << R"(", "manifest": ")" << (src / "configs/demo/naive_gemm.json").string()
                                     << R"("}]]}})";
  std::ofstream(dir / "config.json") << R"({"name": "fpe", "db": ")" << (dir / "run.db").string()
                                     << R"(", "tasks_dir": ")" << (src / "tasks").string() << R"(", "prompts_dir": ")"
                                     << (src / "prompts").string()
                                     << R"(", "tasks": ["gemm_bf16_mma_sync"], "samples": 1, "rounds": 2,)"
                                     << R"( "stop": "all_rounds", "concurrency": 1, "gpu": "off",)"
                                     << R"( "llm": {"kind": "embedded"}, "endpoint_script": ")"
                                     << (dir / "script.json").string() << R"("})";
  test::process_result r;
  int runs = 0;
  for (; runs < 6; ++runs) {
    std::vector<std::string> args{"run", "--config", (dir / "config.json").string(), "--quiet"};
    if (fs::exists(dir / "run.db")) args.push_back("--resume");
    r = test::run_ptxbench(args, dir);
    if (r.signal == 0) break;
  }
  INFO(r.output);
  // The run completes: 1 is its verdict that no trajectory came through without a failure.
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  CHECK(runs <= 3);  // at most 3 crashed attempts before the turn is marked
  CHECK(runs == 0);  // and none at all: the expression parser reports INT64_MIN / -1 as an overflow
  auto store = run_store::open(dir / "run.db", true);
  auto exp = store->find_experiment("fpe");
  REQUIRE(exp);
  CHECK(exp->status == "done");
  auto turns = store->turns(store->trajectories(exp->id).front().id);
  REQUIRE(turns.size() == 2);
  REQUIRE(turns[0].evaluation);
  CHECK_FALSE(turns[0].evaluation->passed);
  CHECK_FALSE(turns[0].evaluation->result.value("headline", std::string()).empty());
  CHECK(turns[1].evaluation.has_value());
  fs::remove_all(dir);
}
