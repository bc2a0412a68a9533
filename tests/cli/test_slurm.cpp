// The Slurm templates (scripts/slurm): they parse (bash -n), and an array of
// 4 shards of the demo experiment followed by the merge job, run the way Slurm
// runs them (the scripts under bash with Slurm's variables set, the shards at
// once), leaves one database with every trajectory exactly once.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "agent/store/store.hpp"
#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

// bash `script` in `cwd` with `env` added; stdout and stderr to `log`.
pid_t spawn_bash(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                 const fs::path& cwd, const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>("bash")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp("bash", argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

TEST_CASE("slurm templates pass bash -n") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  int n = 0;
  for (const auto& f : fs::directory_iterator(src / "scripts/slurm")) {
    auto log = fs::temp_directory_path() / ("ptxbench_bash_n_" + std::to_string(::getpid()) + ".log");
    auto r = test::wait_for(spawn_bash({"-n", f.path().string()}, {}, src, log), log);
    CHECK_MESSAGE(r.exit_code == 0, f.path().string() << ": " << r.output);
    fs::remove(log);
    ++n;
  }
  CHECK(n >= 4);  // array, merge, evald, submit
}

TEST_CASE("slurm array of 4 shards and the dependent merge: every trajectory once in the merged database") {
  const fs::path src = PTXBENCH_SOURCE_DIR;
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_slurm_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::map<std::string, std::string> env = {{"PTXBENCH_BIN", PTXBENCH_EXE},
                                            {"RUN_CONFIG", "configs/demo.json"},
                                            {"RUN_NAME", "sim"},
                                            {"RUN_DIR", (dir / "sim").string()},
                                            {"RUN_ARGS", "--gpu off --samples 3"},
                                            {"SLURM_ARRAY_JOB_ID", "4242"},
                                            {"SLURM_ARRAY_TASK_COUNT", "4"},
                                            {"SLURM_ARRAY_TASK_MIN", "1"}};
  std::vector<std::pair<pid_t, fs::path>> shards;
  for (int task = 1; task <= 4; ++task) {  // --array=1-4: shard index = task id - 1
    auto e = env;
    e["SLURM_ARRAY_TASK_ID"] = std::to_string(task);
    auto log = dir / ("shard-" + std::to_string(task) + ".log");
    shards.push_back({spawn_bash({"scripts/slurm/array.sbatch"}, e, src, log), log});
  }
  for (auto& [pid, log] : shards) {
    auto r = test::wait_for(pid, log);
    CHECK_MESSAGE(r.exit_code == 0, r.output);
  }
  auto merge_log = dir / "merge.log";
  auto merged = test::wait_for(spawn_bash({"scripts/slurm/merge.sbatch"}, env, src, merge_log), merge_log);
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
  CHECK(merged.output.find("merged 4 input databases") != std::string::npos);

  auto store = run_store::open(dir / "sim/merged.db", true);
  auto exps = store->experiments();
  REQUIRE(exps.size() == 1);
  CHECK(exps[0].name == "sim");
  std::set<std::pair<std::string, int>> seen;
  int rows = 0;
  for (const auto& tr : store->trajectories(exps[0].id)) {
    ++rows;
    CHECK(tr.status == "done");
    CHECK_MESSAGE(seen.insert({tr.task_id, tr.sample}).second, tr.task_id << " sample " << tr.sample);
  }
  CHECK(rows == 6);  // 2 demo tasks x 3 samples, each once
  for (const char* task : {"gemm_bf16_mma_sync", "gemm_bf16_wgmma_tma"})
    for (int s = 0; s < 3; ++s) CHECK(seen.count({task, s}) == 1);
  // Each shard ran only its part of the grid.
  for (int i = 0; i < 4; ++i) {
    auto shard = run_store::open(dir / "sim" / ("shard-" + std::to_string(i) + ".db"), true);
    auto e = shard->experiments();
    REQUIRE(e.size() == 1);
    CHECK(shard->trajectories(e[0].id).size() < 6);
  }
  fs::remove_all(dir);
}
