// Options, exit codes and files as a user meets them: a value the command
// line, PTXBENCH_* or a config gives is checked the same way everywhere; a
// resume refuses what it would ignore; a damaged database is bad input; a full
// disk is a clear infrastructure error that leaves no partial file.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <optional>

#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_cli_options_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool has(const std::string& output, const std::string& text) { return output.find(text) != std::string::npos; }
bool has(const test::process_result& r, const std::string& text) { return has(r.output, text); }

// A quick experiment: one task, embedded replies with no candidate, no GPU.
fs::path write_config(const fs::path& dir, const std::string& extra = "") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  std::ofstream(dir / "script.json") << R"({"tasks": {"*": [[{"text": "no candidate here"}]]}})";
  std::ofstream(dir / "config.json") << R"({"name": "x", "db": ")" << (dir / "run.db").string()
                                     << R"(", "tasks_dir": ")" << (src / "tasks").string() << R"(", "prompts_dir": ")"
                                     << (src / "prompts").string()
                                     << R"(", "tasks": ["gemm_bf16_mma_sync"], "samples": 1, "rounds": 1,)"
                                     << R"( "gpu": "off", "llm": {"kind": "embedded", "model": "m1"},)" << extra
                                     << R"( "endpoint_script": ")" << (dir / "script.json").string() << R"("})";
  return dir / "config.json";
}

// Runs `script` (sh) in a private mount namespace where `dir` is a fresh tmpfs
// of `size`: a small disk that fills for real. The namespace ends with the
// shell, so the script lists what it wants checked. Empty when user
// namespaces are not available here.
std::optional<test::process_result> on_small_disk(const fs::path& dir, const std::string& size,
                                                  const std::string& script) {
  const std::string mount = "mount -t tmpfs -o size=" + size + " tmpfs '" + dir.string() + "'";
  auto probe = test::run_command({"unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount}, dir);
  if (probe.exit_code != 0) return std::nullopt;
  return test::run_command({"unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            mount + " && B='" PTXBENCH_EXE "' && " + script},
                           dir.parent_path());
}

}  // namespace

TEST_CASE("run --gpu and PTXBENCH_GPU take auto or off only - checked before a database exists") {
  const fs::path dir = fresh_dir("gpu");
  const auto config = write_config(dir).string();
  // `--gpu none` ran the GPU stages.
  auto r = test::run_ptxbench({"run", "--config", config, "--gpu", "none", "--quiet"}, dir);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--gpu: expected auto or off, not 'none'"));
  CHECK_FALSE(fs::exists(dir / "run.db"));
  ::setenv("PTXBENCH_GPU", "none", 1);
  r = test::run_ptxbench({"run", "--config", config, "--quiet"}, dir);
  ::unsetenv("PTXBENCH_GPU");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r, "PTXBENCH_GPU: expected auto or off, not 'none'"));
  CHECK_FALSE(fs::exists(dir / "run.db"));
  fs::remove_all(dir);
}

TEST_CASE("an empty task or evaluator list and a negative latency are usage errors") {
  const fs::path dir = fresh_dir("lists");
  const auto config = write_config(dir).string();
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", "--config", config, "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_ptxbench(args, dir);
  };
  // Each of these ran every task, judged in-process or waited -1 ms.
  auto r = run({"--tasks", ",,,"});
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--tasks: an empty item in ',,,'"));
  r = run({"--evaluator-url", ",,,"});
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--evaluator-url: an empty item in ',,,'"));
  r = run({"--evaluator-url", "gpu-a:8477"});
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--evaluator-url: expected an http:// or https:// address, not 'gpu-a:8477'"));
  r = run({"--latency-ms", "-1"});
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--latency-ms: -1 is out of range (0 to 3600000)"));
  CHECK_FALSE(fs::exists(dir / "run.db"));
  for (const std::string& bad : {R"("tasks": [],)", R"("evaluator": {"url": []},)", R"("endpoint_latency_ms": -5,)"}) {
    r = test::run_ptxbench({"run", "--config", write_config(dir, bad).string(), "--quiet"}, dir);
    INFO(bad << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r, "config.json: $."));
    CHECK_FALSE(fs::exists(dir / "run.db"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a resume refuses an option that differs from the stored experiment - naming the stored value") {
  const fs::path dir = fresh_dir("resume");
  const auto config = write_config(dir).string();
  auto r = test::run_ptxbench({"run", "--config", config, "--quiet"}, dir);
  REQUIRE(r.exit_code == 1);  // ran: its only trajectory has no candidate
  // Both were ignored: the resume went on with rounds 1 and model m1.
  r = test::run_ptxbench({"run", "--config", config, "--quiet", "--resume", "--rounds", "4"}, dir);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--rounds 4: experiment 'x' was run with rounds 1"));
  r = test::run_ptxbench({"run", "--config", config, "--quiet", "--resume", "--model", "m2"}, dir);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r, "--model m2: experiment 'x' was run with llm.model \"m1\""));
  ::setenv("PTXBENCH_ROUNDS", "2", 1);
  r = test::run_ptxbench({"run", "--config", config, "--quiet", "--resume"}, dir);
  ::unsetenv("PTXBENCH_ROUNDS");
  CHECK(r.exit_code == 2);
  CHECK(has(r, "PTXBENCH_ROUNDS=2: experiment 'x' was run with rounds 1"));
  // The same values, and what may change between runs, are accepted.
  r = test::run_ptxbench({"run", "--config", config, "--quiet", "--resume", "--rounds", "1", "--model", "m1",
                          "--concurrency", "3"},
                         dir);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  fs::remove_all(dir);
}

TEST_CASE("a truncated database and one of a newer schema are input errors that say why") {
  const fs::path dir = fresh_dir("damaged");
  const auto config = write_config(dir).string();
  REQUIRE(test::run_ptxbench({"run", "--config", config, "--quiet"}, dir).exit_code == 1);
  const auto db = dir / "run.db";
  {
    std::ifstream in(db, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 16384);
    std::ofstream(dir / "truncated.db", std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  }
  fs::copy_file(db, dir / "newer.db");
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open((dir / "newer.db").c_str(), &handle) == SQLITE_OK);
  REQUIRE(sqlite3_exec(handle, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  sqlite3_close(handle);
  for (const std::string name : {"truncated.db", "newer.db"}) {
    const std::string file = (dir / name).string();
    const std::string reason = name == "newer.db" ? "schema version 99 is newer than this ptxbench reads"
                                                  : "damaged or truncated";
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"report", "--db", file},
             {"export", "--db", file, "--out", (dir / "o.jsonl").string()},
             {"run", "--config", config, "--db", file, "--quiet"},
             {"merge", "--out", (dir / "m.db").string(), file}}) {
      auto r = test::run_ptxbench(args, dir);
      INFO(args[0] << " " << name << ": " << r.output);
      CHECK(r.exit_code == 2);
      CHECK(has(r, reason));
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("an invalid PTXBENCH_ flag value is refused by every command that takes the flag") {
  const fs::path dir = fresh_dir("env");
  // mutate read --quiet from the command line only: the variable was ignored.
  ::setenv("PTXBENCH_QUIET", "maybe", 1);
  auto r = test::run_ptxbench({"mutate", "--task", "gemm_bf16_mma_sync", "--per-solution", "1", "--db",
                               (dir / "m.db").string(), "--gpu", "off"},
                              PTXBENCH_SOURCE_DIR);
  ::unsetenv("PTXBENCH_QUIET");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r, "PTXBENCH_QUIET: expected 1, true, yes, on, 0, false, no or off, not 'maybe'"));
  CHECK_FALSE(fs::exists(dir / "m.db"));
  fs::remove_all(dir);
}

TEST_CASE("a full disk stops run with exit 3 and a message even under --quiet") {
  const fs::path dir = fresh_dir("fullrun");
  const fs::path disk = dir / "disk";
  fs::create_directories(disk);
  // Every reply (1.5 MB) is larger than the disk (1 MiB); the experiment's rows fit.
  std::ofstream(dir / "script.json") << R"({"tasks": {"*": [[{"text": ")" << std::string(1500000, 'x') << R"("}]]}})";
  const fs::path src = PTXBENCH_SOURCE_DIR;
  std::ofstream(dir / "config.json") << R"({"name": "full", "db": ")" << (disk / "run.db").string()
                                     << R"(", "tasks_dir": ")" << (src / "tasks").string() << R"(", "prompts_dir": ")"
                                     << (src / "prompts").string()
                                     << R"(", "tasks": ["gemm_bf16_mma_sync"], "samples": 2, "rounds": 1, "gpu": "off",)"
                                     << R"( "llm": {"kind": "embedded"}, "endpoint_script": ")"
                                     << (dir / "script.json").string() << R"("})";
  for (const std::string quiet : {"--quiet", ""}) {
    auto r = on_small_disk(disk, "1m", "\"$B\" run --config '" + (dir / "config.json").string() + "' " + quiet);
    if (!r) {
      MESSAGE("SKIP: no user namespace here to mount a small tmpfs (unshare --user --mount failed)");
      break;
    }
    INFO(quiet << ": " << r->output);
    // Was 1 and silent with --quiet ("some trajectories are incomplete").
    CHECK(r->exit_code == 3);
    CHECK(has(r->output, "database or disk is full"));
    CHECK(has(r->output, "--resume"));
  }
  fs::remove_all(dir);
}

TEST_CASE("export to a full disk leaves no partial file and keeps the file it would replace") {
  const fs::path dir = fresh_dir("fullexport");
  // Records to export: the demo's repairs, judged without a GPU (4 correction records, 280 KB).
  auto made = test::run_ptxbench({"run", "--config", "configs/demo.json", "--db", (dir / "m.db").string(), "--gpu",
                                  "off", "--quiet"},
                                 PTXBENCH_SOURCE_DIR);
  REQUIRE((made.exit_code == 0 || made.exit_code == 1));
  const fs::path disk = dir / "disk";
  fs::create_directories(disk);
  const std::string d = disk.string();
  auto r = on_small_disk(disk, "16k",
                         "printf old > '" + d + "/c.jsonl' && \"$B\" export --db '" + (dir / "m.db").string() +
                             "' --out '" + d + "/c.jsonl'; rc=$?; \"$B\" export --db '" + (dir / "m.db").string() +
                             "' --out '" + d + "/set'; rc2=$?; echo; echo \"== rc $rc $rc2\"; echo \"== old $(cat '" +
                             d + "/c.jsonl')\"; find '" + d + "' -type f | sed 's/^/== file /'");
  if (!r) {
    MESSAGE("SKIP: no user namespace here to mount a small tmpfs (unshare --user --mount failed)");
    return;
  }
  INFO(r->output);
  CHECK(has(r->output, "== rc 3 3"));
  CHECK(has(r->output, "No space left on device"));
  CHECK(has(r->output, "== old old"));                        // was a partial export
  // The only file: set/data/train.jsonl.partial was left behind.
  CHECK(has(r->output, "== file " + d + "/c.jsonl\n"));
  CHECK(r->output.find("== file ") == r->output.rfind("== file "));
  fs::remove_all(dir);
}
