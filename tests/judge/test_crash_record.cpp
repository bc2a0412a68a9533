// A crash while judging is recorded for the judging that crashed; a signal
// sent from outside (SIGKILL, kill -SEGV) is recorded for nobody. Each case
// crashes a forked child for real and reads what it left beside the database.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "agent/judge/crash_record.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

struct temp_db {
  fs::path dir;
  temp_db() {
    static int n = 0;
    dir = fs::temp_directory_path() / ("ptxbench_crash_" + std::to_string(::getpid()) + "_" + std::to_string(++n));
    fs::remove_all(dir);
    fs::create_directories(dir);
    run_store::open(path());  // the schema, before any child
  }
  ~temp_db() { fs::remove_all(dir); }
  fs::path path() const { return dir / "run.db"; }
};

// Runs `body` in a child that records crashes for the database; returns the
// child's wait status. The fatal signals are left at their default action
// (not the test runner's report) and no core file is written.
int in_child(const temp_db& db, const std::function<void(const crash_recorder&)>& body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) std::signal(sig, SIG_DFL);
    rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    auto store = run_store::open(db.path());
    crash_recorder recorder(*store);
    body(recorder);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// A thread that judges `subject` until the process ends.
void judge_forever(const crash_recorder& r, judge_subject subject, std::atomic<int>& started) {
  std::thread([&r, subject, &started] {
    judging_scope scope(&r, subject);
    ++started;
    for (;;) pause();
  }).detach();
}

void wait_for(std::atomic<int>& started, int n) {
  while (started.load() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int depth(volatile int* p, int n) {
  if (n > (1 << 30)) return 0;  // never: the stack ends first
  volatile char frame[512];
  frame[0] = static_cast<char>(n);
  return depth(p, n + 1) + frame[0] + *p;  // no tail call: every level keeps its frame
}

}  // namespace

TEST_CASE("a fault while judging is recorded for the crashing thread's judging - not for the others under way") {
  temp_db db;
  const int status = in_child(db, [](const crash_recorder& r) {
    std::atomic<int> started{0};
    judge_forever(r, {judge_subject::kind::candidate, 7}, started);
    wait_for(started, 1);
    judging_scope scope(&r, {judge_subject::kind::candidate, 5});
    volatile int* nowhere = nullptr;
    *nowhere = 1;
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);  // the process still dies of its fault
  auto records = take_crash_records(db.path());
  REQUIRE(records.size() == 1);
  CHECK(records[0].subject.what == judge_subject::kind::candidate);
  CHECK(records[0].subject.id == 5);
  CHECK(records[0].signal == "SIGSEGV");
  CHECK(take_crash_records(db.path()).empty());  // read and removed
}

TEST_CASE("a stack overflow while judging is recorded - on the judging thread's own signal stack") {
  temp_db db;
  const int status = in_child(db, [](const crash_recorder& r) {
    std::thread([&r] {
      judging_scope scope(&r, {judge_subject::kind::branch_reply, 11});
      int one = 1;
      depth(&one, 0);
    }).join();
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  auto records = take_crash_records(db.path());
  REQUIRE(records.size() == 1);
  CHECK(records[0].subject.what == judge_subject::kind::branch_reply);
  CHECK(records[0].subject.id == 11);
}

TEST_CASE("a crash on a thread that judges nothing is recorded for every judging under way") {
  temp_db db;
  const int status = in_child(db, [](const crash_recorder& r) {
    std::atomic<int> started{0};
    judge_forever(r, {judge_subject::kind::candidate, 3}, started);
    judge_forever(r, {judge_subject::kind::branch_reply, 4}, started);
    wait_for(started, 2);
    std::abort();  // a thread the evaluator started for one of them, say
  });
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  auto records = take_crash_records(db.path());
  REQUIRE(records.size() == 2);
  std::set<std::pair<int, int64_t>> named;
  for (const auto& c : records) named.insert({static_cast<int>(c.subject.what), c.subject.id});
  CHECK(named.count({static_cast<int>(judge_subject::kind::candidate), 3}) == 1);
  CHECK(named.count({static_cast<int>(judge_subject::kind::branch_reply), 4}) == 1);
}

TEST_CASE("a process killed from outside while judging is recorded for nobody - SIGKILL or a sent SIGSEGV") {
  for (int sig : {SIGKILL, SIGSEGV, SIGABRT}) {
    CAPTURE(sig);
    temp_db db;
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int s : {SIGSEGV, SIGABRT}) std::signal(s, SIG_DFL);
      rlimit none = {0, 0};
      setrlimit(RLIMIT_CORE, &none);
      auto store = run_store::open(db.path());
      crash_recorder recorder(*store);
      judging_scope scope(&recorder, {judge_subject::kind::candidate, 9});
      const char ready = 1;
      if (::write(pipe_fds[1], &ready, 1) != 1) _exit(3);
      for (;;) pause();
    }
    char ready = 0;
    REQUIRE(::read(pipe_fds[0], &ready, 1) == 1);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(take_crash_records(db.path()).empty());
  }
}

TEST_CASE("a crash outside any judging is recorded for nobody") {
  temp_db db;
  const int status = in_child(db, [](const crash_recorder&) { std::abort(); });
  REQUIRE(WIFSIGNALED(status));
  CHECK(take_crash_records(db.path()).empty());
}

TEST_CASE("a recorder reads the records dead processes left into the store - skipping lines it cannot read") {
  temp_db db;
  std::ofstream(db.dir / "run.db-judge-crash-123-456")
      << "candidate 12 SIGSEGV\nnonsense\nbranch_reply 3 SIGABRT\ncandidate -1 SIGSEGV\n";
  std::ofstream(db.dir / "other.db-judge-crash-1-2") << "candidate 99 SIGSEGV\n";  // another database's
  auto store = run_store::open(db.path());
  {
    crash_recorder recorder(*store);
    CHECK(recorder.slot() >= 0);
  }
  CHECK(store->judge_crashes({judge_subject::kind::candidate, 12}) == 1);
  CHECK(store->judge_crashes({judge_subject::kind::branch_reply, 3}) == 1);
  CHECK(store->judge_crashes({judge_subject::kind::candidate, 99}) == 0);
  CHECK_FALSE(fs::exists(db.dir / "run.db-judge-crash-123-456"));
  CHECK(fs::exists(db.dir / "other.db-judge-crash-1-2"));
}
