// A real process, a real SIGKILL: store_writer is killed at random moments
// while it writes, the database is checked after every kill, and a resumed
// writer must finish with every turn stored exactly once.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "tests/store/store_test_util.hpp"
#include "tests/store/writer_workload.hpp"

using namespace ptxbench;
using namespace ptxbench::store_test;

namespace {

constexpr int k_trajectories = 240;
constexpr int k_rounds = 6;

struct writer_process {
  pid_t pid = -1;
  int out = -1;  // the read end of the writer's stdout
};

writer_process start_writer(const std::filesystem::path& file, const char* mode) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const std::string trajectories = std::to_string(k_trajectories);
  const std::string rounds = std::to_string(k_rounds);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(PTXBENCH_STORE_WRITER, PTXBENCH_STORE_WRITER, file.c_str(), mode, trajectories.c_str(), rounds.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Reads up to and including the next newline; "" at end of file.
std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (read(fd, &c, 1) == 1) {
    line += c;
    if (c == '\n') break;
  }
  return line;
}

int wait_for(writer_process& w) {
  int status = 0;
  REQUIRE(waitpid(w.pid, &status, 0) == w.pid);
  close(w.out);
  return status;
}

// The promises of the store that must hold after a kill at any moment.
void check_consistent(const std::filesystem::path& file) {
  CHECK(sql_text(file, "PRAGMA integrity_check") == "ok");
  CHECK(sql_text(file, "PRAGMA foreign_key_check").empty());
  CHECK(sql_count(file, "SELECT count(*) FROM turns t"
                        " WHERE (SELECT count(*) FROM candidates c WHERE c.turn_id = t.id) != 1") == 0);
  CHECK(sql_count(file, "SELECT count(*) FROM (SELECT 1 FROM turns GROUP BY trajectory_id, round"
                        " HAVING count(*) > 1)") == 0);
  CHECK(sql_count(file, "SELECT count(*) FROM (SELECT count(*) AS n, min(round) AS lo, max(round) AS hi"
                        " FROM turns GROUP BY trajectory_id) WHERE lo != 0 OR hi != n - 1") == 0);
  CHECK(sql_count(file, "SELECT count(*) FROM candidates c"
                        " WHERE (SELECT count(*) FROM evaluations e WHERE e.candidate_id = c.id) > 1") == 0);
}

long long turn_count(const std::filesystem::path& file) {
  return std::filesystem::exists(file) ? sql_count(file, "SELECT count(*) FROM turns") : 0;
}

}  // namespace

TEST_CASE("a writer killed with SIGKILL at random moments resumes with no turn lost or duplicated") {
  temp_folder dir;
  const auto file = dir / "crash.db";
  std::random_device seed_source;
  const unsigned seed = seed_source();
  MESSAGE("kill schedule seed " << seed);
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(50, 300);

  int kills_mid_run = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    writer_process w = start_writer(file, attempt == 0 ? "fresh" : "resume");
    REQUIRE(read_line(w.out) == "ready\n");
    if (attempt == 0) {
      // Another process reads the database while this one writes.
      auto reader = run_store::open(file, true);
      const auto experiment = reader->find_experiment(k_crash_experiment);
      REQUIRE(experiment);
      for (const auto& t : reader->trajectories(experiment->id)) CHECK(reader->turns(t.id).size() <= k_rounds);
    }
    // The first kill comes early so that it lands mid-run even on a fast machine.
    const int delay = attempt == 0 ? std::min(delay_ms(random), 120) : delay_ms(random);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));  // the random moment is what is tested
    kill(w.pid, SIGKILL);
    const int status = wait_for(w);
    if (WIFSIGNALED(status)) {
      CHECK(WTERMSIG(status) == SIGKILL);
      ++kills_mid_run;
    } else {
      CHECK(WEXITSTATUS(status) == 0);  // finished before the kill came
    }
    MESSAGE("kill " << attempt << " after " << delay << " ms: " << turn_count(file) << " turns stored");
    check_consistent(file);
  }
  CHECK(kills_mid_run >= 1);

  writer_process w = start_writer(file, "resume");
  std::string output;
  for (std::string line = read_line(w.out); !line.empty(); line = read_line(w.out)) output += line;
  const int status = wait_for(w);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(output.find("trajectory " + std::to_string(k_trajectories - 1) + " done") != std::string::npos);

  check_consistent(file);
  constexpr long long k_turns = static_cast<long long>(k_trajectories) * k_rounds;
  CHECK(sql_count(file, "SELECT count(*) FROM turns") == k_turns);
  CHECK(sql_count(file, "SELECT count(*) FROM candidates") == k_turns);
  CHECK(sql_count(file, "SELECT count(*) FROM evaluations") == k_turns);
  CHECK(sql_count(file, "SELECT count(*) FROM trajectories WHERE status = 'done'") == k_trajectories);
  CHECK(sql_count(file, "SELECT count(*) FROM experiments") == 1);

  // What survived is what was written, turn by turn.
  auto store = run_store::open(file, true);
  const auto experiment = store->find_experiment(k_crash_experiment);
  REQUIRE(experiment);
  CHECK(experiment->status == "done");
  int mismatches = 0;
  for (const auto& t : store->trajectories(experiment->id)) {
    const int trajectory = std::stoi(t.task_id.substr(5));
    for (const auto& view : store->turns(t.id)) {
      const turn_row expected = workload_turn(t.id, trajectory, view.turn.round);
      if (view.turn.reply != expected.reply || view.turn.messages != expected.messages || !view.candidate ||
          view.candidate->ptx != workload_ptx(trajectory, view.turn.round) || !view.evaluation)
        ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}
