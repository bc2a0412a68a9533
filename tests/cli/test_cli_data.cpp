// The data commands as a user runs them: export to a dataset directory, empty
// exports, report --json, config paths and exit codes of run.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

fs::path fresh(const std::string& label) {
  auto dir = fs::temp_directory_path() / ("ptxbench_cli_" + label + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the demo run exports a dataset directory and report json and an empty export exits 1 writing nothing") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  auto dir = fresh("data");
  const auto db = (dir / "demo.db").string();
  auto r = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", db, "--gpu", "off", "--latency-ms", "0",
                               "--quiet"},
                              src);
  INFO(r.output);
  // Without a GPU the reference kernels fail no stage that ran: a success.
  CHECK(r.exit_code == 0);

  r = test::run_ptxbench({"export", "--db", db, "--kind", "correction", "--out", (dir / "corr").string()}, src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto card = slurp(dir / "corr" / "README.md");
  CHECK(card.find("configs:") != std::string::npos);
  CHECK(card.find("- name: completion") != std::string::npos);
  std::istringstream lines(slurp(dir / "corr" / "data" / "train.jsonl"));
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    CHECK(j["completion"].size() == 1);
    CHECK(j["provenance"]["feedback"] == "full");
    ++rows;
  }
  CHECK(rows > 0);

  // A flag from the environment: PTXBENCH_BALANCE=yes is --balance.
  ::setenv("PTXBENCH_BALANCE", "yes", 1);
  r = test::run_ptxbench({"export", "--db", db, "--kind", "correction", "--out", (dir / "b.jsonl").string()}, src);
  ::unsetenv("PTXBENCH_BALANCE");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("(balanced: at most") != std::string::npos);

  // Nothing matches: exit 1, a message, and no file.
  r = test::run_ptxbench({"export", "--db", db, "--kind", "sft", "--min-speedup", "1000", "--out",
                          (dir / "none.jsonl").string()},
                         src);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("no sft records matched; nothing written") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "none.jsonl"));
  r = test::run_ptxbench({"export", "--db", db, "--kind", "preference", "--format", "messages"}, src);
  CHECK(r.exit_code == 2);

  r = test::run_ptxbench({"report", "--db", db, "--json", (dir / "m.json").string()}, src);
  REQUIRE(r.exit_code == 0);
  auto metrics = nlohmann::json::parse(slurp(dir / "m.json"));
  REQUIRE(metrics["groups"].size() == 2);
  CHECK(metrics["groups"][0]["rates"]["correct"].is_null());  // no GPU: not run, not 0
  CHECK(metrics["groups"][0]["counts"]["trajectories"] == 2);
  fs::remove_all(dir);
}

TEST_CASE("run checks config paths before creating the database and reads flags from PTXBENCH_ variables") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  auto dir = fresh("paths");
  std::ofstream(dir / "c.json") << R"({"name": "p", "db": "p.db", "tasks_dir": "no-such-tasks",)"
                                << R"( "llm": {"kind": "embedded"}, "endpoint_script": "s.json"})";
  auto r = test::run_ptxbench({"run", "--config", (dir / "c.json").string(), "--quiet"}, src);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("tasks_dir " + (dir / "no-such-tasks").string()) != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "p.db"));

  ::setenv("PTXBENCH_QUIET", "maybe", 1);
  r = test::run_ptxbench({"run", "--config", (dir / "c.json").string()}, src);
  ::unsetenv("PTXBENCH_QUIET");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("PTXBENCH_QUIET='maybe'") != std::string::npos);
  fs::remove_all(dir);
}
