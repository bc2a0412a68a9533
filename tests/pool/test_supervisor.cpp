// The supervisor without a GPU: format and compile verdicts, GPU stages not
// run with their reason, and a fake worker that crashes or hangs to exercise
// the watchdog and the replacement of workers.
#include <doctest/doctest.h>

#include <future>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"
#include "pool_support.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

using test::source_dir;
evaluation_request request(const std::string& fixture, const std::string& task_id, const std::string& mode = "") {
  return test::fixture_request(fixture, task_id, mode);
}

std::unique_ptr<evaluator> fake_evaluator() {
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  return make_local_evaluator(o);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("gpu mode off: compile and static checks run - GPU stages are not run with the reason") {
  local_evaluator_options o;
  o.gpu_mode = "off";
  auto ev = make_local_evaluator(o);
  CHECK(ev->gpu_description() == "none");
  auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync"));
  CHECK(r.stages[stage::format].status == stage_status::passed);
  CHECK(r.stages[stage::compile].status == stage_status::passed);
  CHECK(r.compile.cubin_bytes > 0);
  CHECK(r.instructions.static_passed);
  CHECK(r.stages[stage::runtime].status == stage_status::not_run);
  CHECK(contains(r.stages[stage::runtime].reason, "gpu mode off"));
  CHECK(r.stages[stage::instructions].status == stage_status::unverified);
  CHECK_FALSE(r.passed);
  CHECK(r.verdict == stage::runtime);
  CHECK_FALSE(r.correct());
}

TEST_CASE("a malformed manifest fails format with the JSON path of the bad field") {
  local_evaluator_options o;
  o.gpu_mode = "off";
  auto ev = make_local_evaluator(o);
  auto req = request("correct_mma_sync", "gemm_bf16_mma_sync");
  req.manifest_text = R"({"launches":[{"kernel":"gemm_mma","grid":[1,1,1],"block":[128,1,1],"params":[{"bufer":"A"}]}]})";
  auto r = ev->evaluate(req);
  CHECK(r.verdict == stage::format);
  CHECK(contains(r.headline, "$.launches[0].params[0]"));
  CHECK(r.stages[stage::compile].status == stage_status::not_run);

  req.manifest_text = read_text_file(source_dir() / "tests/fixtures/adversarial/correct_mma_sync/manifest.json");
  req.ptx = "// no kernel here\n.version 8.0\n.target sm_90a\n.address_size 64\n";
  r = ev->evaluate(req);
  CHECK(r.verdict == stage::format);
}

TEST_CASE("a PTX syntax error fails compile with ptxas's message") {
  local_evaluator_options o;
  o.gpu_mode = "off";
  auto ev = make_local_evaluator(o);
  auto req = request("correct_mma_sync", "gemm_bf16_mma_sync");
  auto pos = req.ptx.find("mma.sync.aligned");
  REQUIRE(pos != std::string::npos);
  req.ptx.replace(pos, 16, "mma.snyc.aligned");
  auto r = ev->evaluate(req);
  CHECK(r.verdict == stage::compile);
  CHECK(r.stages[stage::compile].status == stage_status::failed);
  CHECK(contains(r.headline, "compile failed"));
  CHECK(r.stages[stage::runtime].status == stage_status::not_run);
}

TEST_CASE("a missing worker executable leaves the GPU stages not run - saying where it looked") {
  local_evaluator_options o;
  o.worker_path = "/nonexistent/ptxbench-worker";
  auto ev = make_local_evaluator(o);
  auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync"));
  CHECK(r.stages[stage::runtime].status == stage_status::not_run);
  CHECK(contains(r.stages[stage::runtime].reason, "/nonexistent/ptxbench-worker"));
}

TEST_CASE("a worker that cannot load the driver means: no GPU on this machine") {
  fs::path script = fs::temp_directory_path() / ("ptxbench-noworker-" + std::to_string(::getpid()) + ".sh");
  {
    std::ofstream s(script);
    s << "#!/bin/sh\necho 'ptxbench-worker: error while loading shared libraries: libcuda.so.1: cannot open shared "
         "object file: No such file or directory' >&2\nexit 127\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  local_evaluator_options o;
  o.worker_path = script.string();
  auto ev = make_local_evaluator(o);
  auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync"));
  fs::remove(script);
  CHECK(r.stages[stage::runtime].status == stage_status::not_run);
  CHECK(contains(r.stages[stage::runtime].reason, "no GPU on this machine"));
  CHECK(contains(r.stages[stage::runtime].reason, "libcuda.so.1"));
  CHECK(ev->gpu_description() == "none");
}

TEST_CASE("fake worker: results come back and the instructions stage stays unverified without counts") {
  auto ev = fake_evaluator();
  CHECK(ev->gpu_description() == "Fake GPU (sm_90)");
  auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  CHECK(r.stages[stage::runtime].status == stage_status::passed);
  CHECK(r.stages[stage::correctness].status == stage_status::passed);
  CHECK(r.stages[stage::instructions].status == stage_status::unverified);
  CHECK(contains(r.stages[stage::instructions].reason, "fake worker: no counters"));
  CHECK(r.gpu == "Fake GPU (sm_90)");
}

TEST_CASE("a crashed worker gives a runtime verdict with its signal - and the next job gets a fresh worker") {
  auto ev = fake_evaluator();
  auto first = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  auto crashed = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "crash"));
  CHECK(crashed.verdict == stage::runtime);
  CHECK(contains(crashed.headline, "worker died: signal 11"));
  CHECK(contains(crashed.headline, "launch 0 (gemm_mma)"));
  REQUIRE(crashed.runtime);
  CHECK(crashed.runtime->launch_index == 0);
  CHECK(crashed.runtime->context_lost);
  auto after = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  CHECK(after.stages[stage::correctness].status == stage_status::passed);
  std::string pid_before = first.stages[stage::correctness].reason.substr(0, first.stages[stage::correctness].reason.find(" job"));
  std::string pid_after = after.stages[stage::correctness].reason.substr(0, after.stages[stage::correctness].reason.find(" job"));
  CHECK(pid_before != pid_after);
}

TEST_CASE("the watchdog kills a hanging worker at the time limit and names the launch") {
  auto ev = fake_evaluator();
  auto req = request("correct_mma_sync", "gemm_bf16_mma_sync", "hang");
  req.time_limit_ms = 300;
  auto t0 = std::chrono::steady_clock::now();
  auto r = ev->evaluate(req);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.verdict == stage::runtime);
  CHECK(contains(r.headline, "timeout after 300 ms in launch 0 (gemm_mma) at size K=1024 M=384 N=256"));
  CHECK(ms < 5000);
  auto after = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  CHECK(after.stages[stage::correctness].status == stage_status::passed);
}

TEST_CASE("a sticky CUDA error reported by the worker is a runtime verdict - then the worker is replaced") {
  auto ev = fake_evaluator();
  auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "sticky"));
  CHECK(r.verdict == stage::runtime);
  CHECK(contains(r.headline, "ILLEGAL_ADDRESS"));
  auto after = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  CHECK(after.stages[stage::correctness].status == stage_status::passed);
}

TEST_CASE("an sm_100a task is compiled and checked statically but not run on a Hopper GPU") {
  auto ev = fake_evaluator();
  auto req = request("correct_mma_sync", "gemm_bf16_tcgen05", "ok");
  auto pos = req.ptx.find(".target sm_90a");
  REQUIRE(pos != std::string::npos);
  req.ptx.replace(pos, 14, ".target sm_100a");
  auto r = ev->evaluate(req);
  INFO(r.headline);
  REQUIRE(r.stages[stage::compile].status == stage_status::passed);
  CHECK(r.stages[stage::runtime].status == stage_status::not_run);
  CHECK(contains(r.stages[stage::runtime].reason, "sm_100a task: not runnable on this Hopper GPU"));
  CHECK(r.stages[stage::instructions].status == stage_status::failed);  // no tcgen05 in an mma.sync kernel
}

TEST_CASE("many threads evaluate at once - every job gets its own result") {
  auto ev = fake_evaluator();
  std::vector<std::thread> threads;
  std::vector<std::string> reasons(16);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
      reasons[size_t(i)] = r.stages[stage::correctness].reason;
    });
  for (auto& t : threads) t.join();
  std::set<std::string> distinct(reasons.begin(), reasons.end());
  CHECK(distinct.size() == 16);
  for (const auto& s : reasons) CHECK(contains(s, "job "));
}

TEST_CASE("an evaluator error is retried once on a fresh worker - and is not the candidate's if it persists") {
  auto ev = fake_evaluator();
  fs::path marker = fs::temp_directory_path() / ("ptxbench-error-once-" + std::to_string(::getpid()));
  fs::remove(marker);
  auto once = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "error_once:" + marker.string()));
  CHECK(fs::exists(marker));
  CHECK_FALSE(once.evaluator_error());  // the fresh worker's answer counts
  CHECK(once.stages[stage::correctness].status == stage_status::passed);
  fs::remove(marker);

  auto always = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "error"));
  CHECK(always.evaluator_error());
  CHECK(always.stages[stage::performance].status == stage_status::error);
  CHECK(contains(always.headline, "evaluator error"));
  CHECK(to_json(always)["verdict"] == "error");
}

TEST_CASE("a result the supervisor cannot read is an evaluator error - and the next evaluation still runs") {
  auto ev = fake_evaluator();
  auto bad = std::async(std::launch::async, [&] {
    return ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "bad_result"));
  });
  REQUIRE(bad.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  auto r = bad.get();
  CHECK(r.evaluator_error());
  // Before: the GPU slot's turn was never handed on after the exception, and
  // every later job on that GPU waited for ever.
  auto next = std::async(std::launch::async, [&] {
    return ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  });
  REQUIRE(next.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(next.get().stages[stage::correctness].status == stage_status::passed);
}

TEST_CASE("a worker lost outside the candidate's launches is an evaluator error and not a runtime failure") {
  auto ev = fake_evaluator();
  auto r = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "lost"));
  CHECK(r.stages[stage::runtime].status == stage_status::error);
  CHECK(r.evaluator_error());
  CHECK(contains(r.headline, "outside the candidate's launches"));
  auto after = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  CHECK(after.stages[stage::correctness].status == stage_status::passed);
}

TEST_CASE("while a worker times no counting pass or spare start of ours runs on its GPU") {
  auto ev = fake_evaluator();
  fs::path log = fs::temp_directory_path() / ("ptxbench-gate-" + std::to_string(::getpid()));
  fs::remove(log);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&] { ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "timed:" + log.string())); });
  for (auto& t : threads) t.join();
  std::ifstream in(log);
  std::vector<std::tuple<char, long long, long long>> spans;
  char kind;
  long long a, b;
  while (in >> kind >> a >> b) spans.emplace_back(kind, a, b);
  fs::remove(log);
  int timed = 0, counted = 0;
  for (auto& [k, s, e] : spans) timed += k == 'T', counted += k == 'C';
  CHECK(timed == 6);
  CHECK(counted == 6 * 2);  // the smallest and the timed size, one launch each
  for (auto& [k1, s1, e1] : spans)
    for (auto& [k2, s2, e2] : spans)
      if (k1 == 'T' && (k2 == 'C' || k2 == 'c'))
        CHECK_MESSAGE((e1 <= s2 || e2 <= s1), "a counting pass overlapped a timing window");
}

TEST_CASE("every evaluation draws its own hidden and timing and counting seeds - and records them") {
  auto ev = fake_evaluator();
  auto a = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  auto b = ev->evaluate(request("correct_mma_sync", "gemm_bf16_mma_sync", "ok"));
  CHECK(a.seeds.public_seeds == std::vector<uint64_t>{1, 2});
  CHECK(a.seeds.hidden != 0);
  CHECK(a.seeds.hidden != b.seeds.hidden);
  CHECK(a.seeds.timing != a.seeds.hidden);
  CHECK(a.seeds.counting != a.seeds.timing);
  auto back = evaluation_result_from_json(to_json(a));
  CHECK(back.seeds.hidden == a.seeds.hidden);
  CHECK(back.seeds.timing == a.seeds.timing);
  auto req = request("correct_mma_sync", "gemm_bf16_mma_sync", "ok");
  req.hidden_seed = 1234;
  CHECK(ev->evaluate(req).seeds.hidden == 1234);
}

namespace {

// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
bool process_ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t close = line.rfind(')');
  return close == std::string::npos || line.compare(close + 1, 3, " Z ") == 0 || line.compare(close + 1, 3, " X ") == 0;
}

}  // namespace

TEST_CASE("a worker whose supervisor is killed exits by itself - a hung kernel cannot keep the GPU") {
  // A shell stands in for the supervisor: it starts the worker with a pipe
  // for its stdin that this test keeps open (so end of file cannot end it),
  // writes the worker's pid and becomes `sleep`. Killing it orphans the worker.
  int in[2];
  REQUIRE(::pipe(in) == 0);
  const fs::path pid_file = fs::temp_directory_path() / ("ptxbench-orphan-" + std::to_string(::getpid()));
  fs::remove(pid_file);
  const pid_t shell = ::fork();
  REQUIRE(shell >= 0);
  if (shell == 0) {
    ::dup2(in[0], 0);
    ::close(in[0]);
    ::close(in[1]);
    ::execl("/bin/sh", "sh", "-c", R"(exec 3<&0; "$1" <&3 3<&- >/dev/null & echo $! > "$2"; exec sleep 600)", "sh",
            PTXBENCH_FAKE_WORKER, pid_file.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  pid_t worker = 0;
  REQUIRE(test::wait_until([&] { return (std::ifstream(pid_file) >> worker) && worker > 0; }, std::chrono::seconds(10)));
  fs::remove(pid_file);
  // Alive while its supervisor is: its stdin is open and it waits for a job.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(process_ended(worker));
  ::kill(shell, SIGKILL);
  ::waitpid(shell, nullptr, 0);
  const bool ended = test::wait_until([&] { return process_ended(worker); }, std::chrono::seconds(5));
  if (!ended) ::kill(worker, SIGKILL);
  CHECK_MESSAGE(ended, "the orphaned worker " << worker << " kept running");
  ::close(in[1]);
}
