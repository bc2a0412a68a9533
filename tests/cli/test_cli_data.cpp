// The data commands as a user runs them: export to a dataset directory, empty
// exports, report --json, config paths and exit codes of run.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

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

TEST_CASE("run --branch 2 on the demo yields preference rows of round 1 and later - report compares it with branch 1 - merge keeps its siblings") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  auto dir = fresh("branch");
  const auto db = (dir / "demo.db").string();
  auto r = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", db, "--gpu", "off", "--latency-ms", "0",
                               "--name", "plain", "--quiet"},
                              src);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  ::setenv("PTXBENCH_BRANCH", "2", 1);  // the flag from the environment, as every option
  r = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", db, "--gpu", "off", "--latency-ms", "0",
                          "--name", "br", "--quiet"},
                         src);
  ::unsetenv("PTXBENCH_BRANCH");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  // Round 0 once and 2 siblings in each of rounds 1 and 2, for 4 trajectories.
  CHECK(r.output.find("20 LLM calls") != std::string::npos);

  r = test::run_ptxbench({"export", "--db", db, "--experiment", "br", "--kind", "preference", "--out",
                          (dir / "pref").string()},
                         src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(slurp(dir / "pref" / "data" / "train.jsonl"));
  std::string line;
  int repair_rows = 0;
  std::set<std::string> keys;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    std::string row_keys;
    for (const auto& [k, v] : j["provenance"].items()) row_keys += k + ",";
    keys.insert(row_keys);  // every row has every column
    CHECK(j["chosen"].size() == 1);
    CHECK(j["rejected"].size() == 1);
    CHECK(j["chosen"] != j["rejected"]);
    const auto& p = j["provenance"];
    if (p["round"].get<int>() < 1) continue;
    ++repair_rows;
    // Siblings of one round: the same trajectory and round, the prompt holds round 0's attempt.
    CHECK(p["pair"] == "siblings");
    CHECK(p["rejected_trajectory"] == p["trajectory"]);
    CHECK(p["rejected_round"] == p["round"]);
    CHECK(p["branch"].is_number_integer());
    CHECK(p["rejected_branch"].is_number_integer());
    CHECK(p["branch"] != p["rejected_branch"]);
    CHECK(p["decided_by"] == "stage");
    CHECK(j["prompt"].size() >= 4);
  }
  CHECK(repair_rows >= 1);
  CHECK(keys.size() == 1);
  auto card = slurp(dir / "pref" / "README.md");
  CHECK(card.find("- name: rejected_branch") != std::string::npos);

  r = test::run_ptxbench({"report", "--db", db, "--experiment", "plain", "--experiment", "br", "--json",
                          (dir / "m.json").string()},
                         src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("by LLM calls per trajectory") != std::string::npos);
  auto metrics = nlohmann::json::parse(slurp(dir / "m.json"));
  const auto& curves = metrics["by_llm_calls"];
  REQUIRE(curves.size() == 2);
  CHECK(curves[0]["experiment"] == "plain");
  CHECK(curves[0]["branch"] == 1);
  CHECK(curves[0]["llm_calls"] == 12);
  CHECK(curves[0]["points"].size() == 3);
  CHECK(curves[1]["branch"] == 2);
  CHECK(curves[1]["llm_calls"] == 20);
  CHECK(curves[1]["points"].size() == 5);
  CHECK(curves[1]["points"][0]["passed"].is_null());  // no GPU: not run, not 0

  // merge copies the siblings: the export of the merged database is the same.
  r = test::run_ptxbench({"merge", "--out", (dir / "merged.db").string(), db}, src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("siblings") != std::string::npos);
  r = test::run_ptxbench({"export", "--db", (dir / "merged.db").string(), "--experiment", "br", "--kind",
                          "preference", "--out", (dir / "merged.jsonl").string()},
                         src);
  REQUIRE(r.exit_code == 0);
  std::istringstream a(slurp(dir / "pref" / "data" / "train.jsonl"));
  std::istringstream b(slurp(dir / "merged.jsonl"));
  std::string la, lb;
  int compared = 0;
  while (std::getline(a, la) && std::getline(b, lb)) {
    auto x = nlohmann::json::parse(la);
    auto y = nlohmann::json::parse(lb);
    CHECK(x["chosen"] == y["chosen"]);
    CHECK(x["rejected"] == y["rejected"]);
    CHECK(x["provenance"]["branch"] == y["provenance"]["branch"]);
    ++compared;
  }
  CHECK(compared == repair_rows + 1);  // and the one round-0 pair
  fs::remove_all(dir);
}

TEST_CASE("export --kind prompts writes the suite's prompts and export counts tokens and refuses options that do not apply") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  auto dir = fresh("prompts");
  auto r = test::run_ptxbench({"export", "--kind", "prompts", "--out", (dir / "prompts.jsonl").string()}, src);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("coverage (family x level)") != std::string::npos);
  std::istringstream lines(slurp(dir / "prompts.jsonl"));
  std::string line;
  std::set<std::string> ids;
  while (std::getline(lines, line)) {
    auto row = nlohmann::json::parse(line);
    CHECK(row["prompt"].size() == 2);
    CHECK(row["suite"] == "full");
    ids.insert(row["task_id"].get<std::string>());
  }
  CHECK(ids.count("gemm_bf16_wgmma_tma") == 1);
  r = test::run_ptxbench({"export", "--kind", "prompts", "--db", "runs/x.db"}, src);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--db does not apply to --kind prompts") != std::string::npos);
  r = test::run_ptxbench({"export", "--kind", "prompts", "--suite", "no-such-suite"}, src);
  CHECK(r.exit_code == 2);
  // Token counts need the tokenizer; with it, --max-tokens leaves longer prompts out.
  r = test::run_ptxbench({"export", "--kind", "prompts", "--max-tokens", "100"}, src);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--max-tokens needs --tokenizer") != std::string::npos);
  r = test::run_ptxbench({"export", "--kind", "prompts", "--tokenizer", "tests/fixtures/tokenizers/llama3.json",
                          "--max-tokens", "100", "--out", (dir / "none.jsonl").string()},
                         src);
  CHECK(r.exit_code == 1);  // every prompt is longer than 100 tokens: nothing written
  CHECK(r.output.find("records longer than --max-tokens left out") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "none.jsonl"));
  fs::remove_all(dir);
}
