// Bad numbers, files and databases on the command line: each is an input error
// (exit 2) with a message naming it, and none leaves a database behind.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_cli_inputs_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
}  // namespace

TEST_CASE("sample counts past int or past the bound are input errors that leave no database") {
  const fs::path dir = fresh_dir("samples");
  const std::string db = (dir / "r.db").string();
  // std::stoi threw out_of_range here: exit 3.
  auto r = test::run_ptxbench({"run", "--db", db, "--samples", "99999999999", "--quiet"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--samples: 99999999999 is out of range (1 to 100000)") != std::string::npos);
  // Used to allocate the grid and die of bad_alloc after creating the experiment row.
  r = test::run_ptxbench({"run", "--db", db, "--samples", "300000000", "--quiet"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--samples: 300000000 is out of range") != std::string::npos);
  r = test::run_ptxbench({"run", "--db", db, "--rounds", "3x", "--quiet"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--rounds: not an integer: '3x'") != std::string::npos);
  CHECK_FALSE(fs::exists(db));
  // In a config: 4294967297 became 1 through static_cast<int>.
  std::ofstream(dir / "c.json") << R"({"name": "x", "samples": 4294967297})";
  r = test::run_ptxbench({"run", "--config", (dir / "c.json").string(), "--db", db}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("$.samples: 4294967297 is out of range (1 to 100000)") != std::string::npos);
  CHECK_FALSE(fs::exists(db));
  fs::remove_all(dir);
}

TEST_CASE("a directory or an endless device as --ptx or --manifest is an input error") {
  const std::vector<std::string> base = {"eval", "--task", "gemm_bf16_mma_sync", "--gpu", "off"};
  auto with = [&](const std::string& ptx, const std::string& manifest) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--ptx", ptx, "--manifest", manifest});
    return test::run_ptxbench(args, PTXBENCH_SOURCE_DIR);
  };
  auto r = with("configs", "configs/demo/naive_gemm.json");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("configs: is a directory, not a file PTX") != std::string::npos);
  r = with("configs/demo/naive_gemm.ptx", "configs/demo");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("is a directory, not a file manifest") != std::string::npos);
  // Read without end before.
  r = with("/dev/zero", "configs/demo/naive_gemm.json");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("/dev/zero: larger than") != std::string::npos);
}

TEST_CASE("a file that is not a run database is an input error for run - export - report and merge alike") {
  const fs::path dir = fresh_dir("notadb");
  const std::string junk = (dir / "junk.db").string();
  {
    std::ofstream f(junk);
    f << "this is a text file, not SQLite\n" << std::string(4096, 'x');
  }
  auto r = test::run_ptxbench({"export", "--db", junk, "--kind", "sft", "--out", (dir / "o.jsonl").string()},
                              PTXBENCH_SOURCE_DIR);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("junk.db") != std::string::npos);
  r = test::run_ptxbench({"report", "--db", junk}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  r = test::run_ptxbench({"run", "--db", junk, "--samples", "1", "--quiet"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("not a database") != std::string::npos);
  r = test::run_ptxbench({"report", "--db", dir.string()}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("is a directory") != std::string::npos);
  // merge: same exit code, and the failed merge leaves no empty output behind.
  const fs::path out = dir / "merged.db";
  r = test::run_ptxbench({"merge", "--out", out.string(), junk}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(out.string() + "-wal"));
  fs::remove_all(dir);
}

TEST_CASE("an invalid branch on the command line - in PTXBENCH_BRANCH or in a config is an input error naming it") {
  const fs::path dir = fresh_dir("branch");
  const auto db = (dir / "b.db").string();
  for (const std::string bad : {"0", "-1", "17", "2.5", "two"}) {
    auto r = test::run_ptxbench({"run", "--db", db, "--branch", bad, "--quiet"}, PTXBENCH_SOURCE_DIR);
    INFO(bad << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--branch: ") != std::string::npos);
    CHECK_FALSE(fs::exists(db));
  }
  ::setenv("PTXBENCH_BRANCH", "99", 1);
  auto r = test::run_ptxbench({"run", "--db", db, "--quiet"}, PTXBENCH_SOURCE_DIR);
  ::unsetenv("PTXBENCH_BRANCH");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("PTXBENCH_BRANCH: 99 is out of range (1 to 16)") != std::string::npos);
  for (const std::string bad : {"0", "-3", "17", "1.5", "\"2\""}) {
    std::ofstream(dir / "c.json") << R"({"name": "x", "branch": )" << bad << "}";
    r = test::run_ptxbench({"run", "--config", (dir / "c.json").string(), "--db", db, "--quiet"}, PTXBENCH_SOURCE_DIR);
    INFO(bad << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("c.json: $.branch: ") != std::string::npos);
    CHECK_FALSE(fs::exists(db));
  }
  fs::remove_all(dir);
}

TEST_CASE("an unknown suite is an input error naming the known ones - before any database exists") {
  const fs::path dir = fresh_dir("suite");
  const std::string db = (dir / "r.db").string();
  auto r = test::run_ptxbench({"run", "--db", db, "--suite", "quick", "--quiet"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("unknown suite 'quick' (known: core, full)") != std::string::npos);
  r = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", db, "--suite", "core", "--tasks",
                          "gemm_bf16_llm_up", "--quiet"},
                         PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("unknown task 'gemm_bf16_llm_up' in suite 'core'") != std::string::npos);
  CHECK_FALSE(fs::exists(db));
  r = test::run_ptxbench({"tasks", "list", "--suite", "core", "--json"}, PTXBENCH_SOURCE_DIR);
  REQUIRE(r.exit_code == 0);
  auto listed = nlohmann::json::parse(r.output);
  CHECK(listed.size() == 8);
  for (const auto& t : listed) CHECK(t.at("suites").dump().find("core") != std::string::npos);
  r = test::run_ptxbench({"tasks", "list", "--suite", "nope"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  fs::remove_all(dir);
}
