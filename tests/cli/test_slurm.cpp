// The Slurm templates (scripts/slurm): they parse (bash -n); arrays of the demo
// experiment followed by the merge job, run the way Slurm runs them (the
// scripts under bash with Slurm's variables set, the shards at once), leave
// one database with every trajectory exactly once; a shard that ran and found
// no passing trajectory is a success of its array task, and the merge checks
// the shards' status itself. scripts/slurm/prove_on_slurm.sh runs the same on
// a real one-node Slurm (docs/scale.md).
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "agent/store/store.hpp"
#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

using env_map = std::map<std::string, std::string>;

// bash `script` in `cwd` with `env` added; stdout and stderr to `log`.
pid_t spawn_bash(const std::vector<std::string>& args, const env_map& env, const fs::path& cwd, const fs::path& log) {
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

fs::path fresh_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("ptxbench_slurm_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

env_map shard_env(const fs::path& dir, const std::string& run_args) {
  return {{"PTXBENCH_BIN", PTXBENCH_EXE}, {"RUN_CONFIG", "configs/demo.json"}, {"RUN_NAME", "sim"},
          {"RUN_DIR", (dir / "sim").string()}, {"RUN_ARGS", run_args}, {"SLURM_ARRAY_JOB_ID", "4242"}};
}

// Array tasks `tasks` at once, as Slurm starts them; their results in order.
std::vector<test::process_result> run_array(const env_map& env, const std::vector<int>& tasks, const fs::path& dir) {
  std::vector<std::pair<pid_t, fs::path>> running;
  for (int task : tasks) {
    auto e = env;
    e["SLURM_ARRAY_TASK_ID"] = std::to_string(task);
    auto log = dir / ("task-" + std::to_string(task) + ".log");
    running.push_back({spawn_bash({"scripts/slurm/array.sbatch"}, e, PTXBENCH_SOURCE_DIR, log), log});
  }
  std::vector<test::process_result> out;
  for (auto& [pid, log] : running) out.push_back(test::wait_for(pid, log));
  return out;
}

test::process_result run_merge(const env_map& env, const fs::path& dir) {
  auto log = dir / "merge.log";
  return test::wait_for(spawn_bash({"scripts/slurm/merge.sbatch"}, env, PTXBENCH_SOURCE_DIR, log), log);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// (task, sample) of every trajectory of the database's one experiment; each must be there once.
std::set<std::pair<std::string, int>> trajectories_once(const fs::path& db) {
  auto store = run_store::open(db, true);
  auto exps = store->experiments();
  REQUIRE(exps.size() == 1);
  CHECK(exps[0].name == "sim");
  std::set<std::pair<std::string, int>> seen;
  for (const auto& tr : store->trajectories(exps[0].id)) {
    CHECK(tr.status == "done");
    CHECK_MESSAGE(seen.insert({tr.task_id, tr.sample}).second, tr.task_id << " sample " << tr.sample);
  }
  return seen;
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
  const auto dir = fresh_dir("grid");
  auto env = shard_env(dir, "--gpu off --samples 3");
  env["SLURM_ARRAY_TASK_COUNT"] = "4";
  env["SLURM_ARRAY_TASK_MIN"] = "1";
  for (const auto& r : run_array(env, {1, 2, 3, 4}, dir)) CHECK_MESSAGE(r.exit_code == 0, r.output);  // --array=1-4
  for (int i = 0; i < 4; ++i)
    CHECK(read_file(dir / "sim" / ("shard-" + std::to_string(i) + ".status")) ==
          "shard " + std::to_string(i) + "/4 exit 0\n");
  auto merged = run_merge(env, dir);
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
  CHECK(merged.output.find("shards that ran: 4 of 4") != std::string::npos);
  CHECK(merged.output.find("merged 4 input databases") != std::string::npos);
  auto seen = trajectories_once(dir / "sim/merged.db");
  CHECK(seen.size() == 6);  // 2 demo tasks x 3 samples, each once
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

TEST_CASE("slurm: shards that ran and found no passing trajectory (empty ones too) succeed and are merged") {
  // One round: every demo trajectory ends on its first reply, a ptxas error, so
  // `run` exits 1 in every shard; 2 tasks x 1 sample over 4 shards leaves two empty.
  const auto dir = fresh_dir("weak");
  auto env = shard_env(dir, "--gpu off --samples 1 --rounds 1");
  env["RUN_SHARDS"] = "4";
  for (const auto& r : run_array(env, {0, 1, 2, 3}, dir)) CHECK_MESSAGE(r.exit_code == 0, r.output);
  for (int i = 0; i < 4; ++i)
    CHECK(read_file(dir / "sim" / ("shard-" + std::to_string(i) + ".status")) ==
          "shard " + std::to_string(i) + "/4 exit 1\n");
  auto merged = run_merge(env, dir);
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
  CHECK(trajectories_once(dir / "sim/merged.db").size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("slurm: the merge names shards that failed or never finished and merges nothing or the rest on request") {
  const auto dir = fresh_dir("failed");
  auto env = shard_env(dir, "--gpu off --samples 2");
  env["RUN_SHARDS"] = "4";
  for (const auto& r : run_array(env, {0, 1}, dir)) CHECK_MESSAGE(r.exit_code == 0, r.output);
  auto bad = env;
  bad["RUN_CONFIG"] = (dir / "missing.json").string();  // an input error: run exits 2
  auto failed = run_array(bad, {2}, dir);
  CHECK(failed[0].exit_code == 2);  // an error stays the array task's exit code
  CHECK(read_file(dir / "sim/shard-2.status") == "shard 2/4 exit 2\n");
  // Shard 3 never ran (killed, preempted): no status file.
  auto merged = run_merge(env, dir);
  CHECK(merged.exit_code == 1);
  CHECK(merged.output.find("shard 2/4: run exited 2") != std::string::npos);
  CHECK(merged.output.find("shard 3/4: no status file") != std::string::npos);
  CHECK(merged.output.find("sbatch --array=2,3 --export=ALL,RUN_NAME=sim,RUN_SHARDS=4") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "sim/merged.db"));
  env["MERGE_PARTIAL"] = "1";
  auto partial = run_merge(env, dir);
  CHECK_MESSAGE(partial.exit_code == 1, partial.output);
  CHECK(partial.output.find("merged 2 input databases") != std::string::npos);
  CHECK(trajectories_once(dir / "sim/merged.db").size() == 2);  // shards 0 and 1 of 4 trajectories
  fs::remove_all(dir);
}

TEST_CASE("slurm: submit.sh makes the merge wait for the whole array (afterany) and not for its success") {
  // A stand-in sbatch on PATH records its arguments and answers a job id.
  const auto dir = fresh_dir("submit");
  {
    std::ofstream fake(dir / "sbatch");
    fake << "#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> '" << (dir / "calls").string()
         << "'\necho $((1000 + $(wc -l < '" << (dir / "calls").string() << "')))\n";
  }
  fs::permissions(dir / "sbatch", fs::perms::owner_all);
  env_map env = {{"PATH", dir.string() + ":" + std::getenv("PATH")}};
  auto log = dir / "submit.log";
  auto r = test::wait_for(
      spawn_bash({"scripts/slurm/submit.sh", "8", "sweep", "configs/demo.json", "--", "--gpu", "off"}, env,
                 PTXBENCH_SOURCE_DIR, log),
      log);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  std::istringstream calls(read_file(dir / "calls"));
  std::string array, merge;
  std::getline(calls, array);
  std::getline(calls, merge);
  CHECK(array.find("--array=0-7") != std::string::npos);
  CHECK(array.find("RUN_SHARDS=8") != std::string::npos);
  CHECK(array.find("RUN_ARGS=--gpu off") != std::string::npos);
  CHECK(merge.find("--dependency=afterany:1001") != std::string::npos);
  CHECK(merge.find("RUN_SHARDS=8") != std::string::npos);
  CHECK(r.output.find("array job 1001 (8 shards), merge job 1002") != std::string::npos);
  fs::remove_all(dir);
}
