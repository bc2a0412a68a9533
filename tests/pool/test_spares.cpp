// Spare workers for the counting passes: they start side by side, the part of
// a start that leaves the GPU alone (exec, libraries, cuInit) runs while
// another job times, the part that makes a context never does, and the
// evaluator reports how its GPU was used.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/pool/worker_process.hpp"
#include "pool_support.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;
using ptxbench::test::scoped_env;

namespace {

// A candidate with the task's target instruction: after its main job, two
// counting passes (smallest and timed size) each take a spare.
evaluation_request counted_request(const std::string& mode) {
  return ptxbench::test::fixture_request("correct_mma_sync", "gemm_bf16_mma_sync", mode);
}

struct span {
  char kind;
  long long start, end;
};

std::vector<span> read_spans(const fs::path& file) {
  std::ifstream in(file);
  std::vector<span> out;
  span s{};
  while (in >> s.kind >> s.start >> s.end) out.push_back(s);
  return out;
}

bool overlap(const span& a, const span& b) { return a.start < b.end && b.start < a.end; }

fs::path temp_log(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ptxbench-" + name + "-" + std::to_string(::getpid()));
  fs::remove(p);
  return p;
}

// Judges `candidates` timed candidates at once on fake workers with `spares`
// spares and `mains` main workers, and returns the spans their workers logged.
std::vector<span> judge_timed(int spares, const fs::path& log, int candidates = 3, int mains = 1, bool hw_check = false) {
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.hw_check = hw_check ? 1 : 0;
  o.spare_workers = spares;
  o.main_workers = mains;
  auto ev = make_local_evaluator(o);
  std::vector<std::thread> threads;
  for (int i = 0; i < candidates; ++i)
    threads.emplace_back([&] { ev->evaluate(counted_request("timed:" + log.string())); });
  for (auto& t : threads) t.join();
  std::vector<span> spans = read_spans(log);
  fs::remove(log);
  return spans;
}

}  // namespace

TEST_CASE("spares start side by side - not one after another") {
  scoped_env env;
  const fs::path log = temp_log("spare-starts");
  env.set("PTXBENCH_FAKE_START_MS", "300");
  env.set("PTXBENCH_FAKE_START_LOG", log.string());
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 4;
  auto ev = make_local_evaluator(o);
  // The four spares' starts (600 ms each) begin together when they run side
  // by side; one after another the last would begin 1.8 s after the first.
  // The bound leaves room for a loaded 2-core machine (300 ms was exceeded
  // once under ctest -j2).
  std::vector<span> starts;
  ptxbench::test::wait_until([&] {
    starts.clear();
    for (const span& s : read_spans(log))
      if (s.kind == 'P') starts.push_back(s);
    return starts.size() >= 4;
  }, std::chrono::seconds(10), std::chrono::milliseconds(20));
  REQUIRE(starts.size() >= 4);
  long long first = starts[0].start, last = starts[0].start;
  for (const span& s : starts) {
    first = std::min(first, s.start);
    last = std::max(last, s.start);
  }
  CHECK_MESSAGE(last - first < 900000, "the spares' starts began " << (last - first) / 1000 << " ms apart");
  // The counter moves when a start has ended (its context part included),
  // after the span above was logged: wait for it rather than read it once.
  ptxbench::test::wait_until([&] { return ev->usage().at(0).spare_starts >= 4; }, std::chrono::seconds(10),
                             std::chrono::milliseconds(20));
  CHECK(ev->usage().at(0).spare_starts >= 4);
  fs::remove(log);
}

TEST_CASE("a spare's start overlaps timing only in the part that leaves the GPU alone") {
  scoped_env env;
  const fs::path log = temp_log("gated-starts");
  env.set("PTXBENCH_FAKE_START_MS", "300");
  env.set("PTXBENCH_FAKE_START_LOG", log.string());
  env.set("PTXBENCH_FAKE_TIMED_MS", "600");
  // Candidate A's counting passes take both spares as soon as its main job
  // ends, while B's main job, queued behind A's, begins a 600 ms timing
  // window: the replacements' library part runs inside that window, their
  // context part after it.
  const std::vector<span> spans = judge_timed(2, log);
  int timed = 0, gpu_parts = 0, cpu_parts_while_timing = 0;
  for (const span& t : spans) {
    if (t.kind != 'T') continue;
    ++timed;
    for (const span& s : spans) {
      if (s.kind == 'S') CHECK_MESSAGE(!overlap(t, s), "a spare made its context while a job was timing");
      if (s.kind == 'C' || s.kind == 'c') CHECK_MESSAGE(!overlap(t, s), "a counting pass ran while a job was timing");
      if (s.kind == 'P' && overlap(t, s)) ++cpu_parts_while_timing;
    }
  }
  for (const span& s : spans) gpu_parts += s.kind == 'S';
  CHECK(timed == 3);
  CHECK(gpu_parts >= 2 + 4);  // the first two spares and at least the replacements of A's and B's passes
  CHECK_MESSAGE(cpu_parts_while_timing >= 1, "no spare loaded its libraries while a job was timing");
}

TEST_CASE("a counting pass holds the GPU only for its GPU parts - its set-up runs while another job times") {
  scoped_env env;
  const fs::path log = temp_log("pass-parts");
  env.set("PTXBENCH_FAKE_PASS_SETUP_MS", "1500");  // longer than the spread of the candidates' compiles
  env.set("PTXBENCH_FAKE_TIMED_MS", "100");
  // One main worker: with two, the candidates' timing windows come back to
  // back and the passes' first GPU parts wait behind all of them.
  const std::vector<span> spans = judge_timed(4, log, 3, 1);
  int setups_while_timing = 0, parts = 0;
  for (const span& t : spans) {
    if (t.kind != 'T') continue;
    for (const span& s : spans) {
      if (s.kind == 'c' || s.kind == 'C') CHECK_MESSAGE(!overlap(t, s), "a counting pass's GPU part overlapped timing");
      if (s.kind == 'u' && overlap(t, s)) ++setups_while_timing;
    }
  }
  for (const span& s : spans) parts += s.kind == 'c' || s.kind == 'C';
  CHECK(parts == 3 * 2 * 2);  // three candidates, two passes each, two parts each
  std::string listing;
  for (const span& s : spans)
    listing += std::string(1, s.kind) + " " + std::to_string(s.start / 1000 % 100000) + "-" + std::to_string(s.end / 1000 % 100000) + "; ";
  CHECK_MESSAGE(setups_while_timing >= 1, "no pass's set-up ran while a job was timing: " << listing);
}

TEST_CASE("the hardware cross-check's GPU parts hold the GPU alone - its counters would count other jobs' kernels") {
  scoped_env env;
  const fs::path log = temp_log("hw-alone");
  env.set("PTXBENCH_FAKE_TIMED_MS", "100");
  env.set("PTXBENCH_FAKE_CHECK_MS", "50");
  const std::vector<span> spans = judge_timed(6, log, 3, 2, true);
  int hw_parts = 0, count_parts = 0;
  std::string listing;
  for (const span& s : spans)
    listing += std::string(1, s.kind) + " " + std::to_string(s.start / 1000 % 100000) + "-" + std::to_string(s.end / 1000 % 100000) + "; ";
  for (const span& h : spans) {
    count_parts += h.kind == 'c' || h.kind == 'C';
    if (h.kind != 'h' && h.kind != 'H') continue;
    ++hw_parts;
    for (const span& s : spans)
      if (&s != &h && s.kind != 'u')  // another pass's set-up is off the GPU
        CHECK_MESSAGE(!overlap(h, s), "a " << s.kind << " span ran beside a cross-check part: " << listing);
  }
  CHECK(hw_parts == 3 * 2);  // three candidates, one cross-check each, two GPU parts each
  CHECK(count_parts == 3 * 2 * 2);
}

// By default the cross-check runs only where a kernel can time itself: the
// clock_detect fixture reads %clock64, correct_mma_sync reads no timer.
TEST_CASE("by default the cross-check runs for a kernel that reads a clock - and for no other") {
  scoped_env env;
  env.set("PTXBENCH_HW_CHECK", std::nullopt);
  env.set("PTXBENCH_FAKE_TIMED_MS", "20");
  const auto judged = [](const std::string& fixture) {
    const fs::path log = temp_log("hw-default-" + fixture);
    local_evaluator_options o;
    o.worker_path = PTXBENCH_FAKE_WORKER;
    o.spare_workers = 3;
    auto ev = make_local_evaluator(o);
    const evaluation_result r =
        ev->evaluate(ptxbench::test::fixture_request(fixture, "gemm_bf16_mma_sync", "timed:" + log.string()));
    int hw_parts = 0;
    for (const span& s : read_spans(log)) hw_parts += s.kind == 'h' || s.kind == 'H';
    fs::remove(log);
    return std::pair{hw_parts, r.instructions.hardware};
  };
  const auto [clock_parts, clock_hardware] = judged("clock_detect");
  CHECK(clock_parts == 2);  // one cross-check, two GPU parts
  CHECK_MESSAGE(clock_hardware != "off", clock_hardware);
  const auto [plain_parts, plain_hardware] = judged("correct_mma_sync");
  CHECK(plain_parts == 0);
  CHECK(plain_hardware == "off");
}

TEST_CASE("two main workers check side by side - each timing window still has the GPU alone") {
  scoped_env env;
  const fs::path log = temp_log("two-mains");
  env.set("PTXBENCH_FAKE_BEFORE_TIMING_MS", "300");
  env.set("PTXBENCH_FAKE_TIMED_MS", "100");
  env.set("PTXBENCH_FAKE_CHECK_MS", "50");
  const std::vector<span> spans = judge_timed(4, log, 4, 2);
  int timed = 0, checks_side_by_side = 0;
  for (const span& t : spans) {
    if (t.kind == 'T') {
      ++timed;
      for (const span& s : spans) {
        if (&s == &t) continue;
        CHECK_MESSAGE(!overlap(t, s), "a " << s.kind << " span overlapped a timing window");
      }
    }
    if (t.kind == 'B')
      for (const span& s : spans)
        if (&s < &t && s.kind == 'B' && overlap(t, s)) ++checks_side_by_side;
  }
  CHECK(timed == 4);
  CHECK_MESSAGE(checks_side_by_side >= 1, "the two main workers never checked at the same time");
}

TEST_CASE("one main worker checks one candidate at a time") {
  scoped_env env;
  const fs::path log = temp_log("one-main");
  env.set("PTXBENCH_FAKE_BEFORE_TIMING_MS", "200");
  env.set("PTXBENCH_FAKE_TIMED_MS", "50");
  const std::vector<span> spans = judge_timed(4, log, 3, 1);
  int checks = 0;
  for (const span& t : spans) {
    if (t.kind != 'B') continue;
    ++checks;
    for (const span& s : spans)
      if (&s != &t && (s.kind == 'B' || s.kind == 'T')) CHECK_MESSAGE(!overlap(t, s), "one main worker ran two jobs at once");
  }
  CHECK(checks == 3);
}

TEST_CASE("the checks after the timed samples share the GPU - a counting pass may run during them") {
  scoped_env env;
  const fs::path log = temp_log("after-timing");
  env.set("PTXBENCH_FAKE_TIMED_MS", "100");
  env.set("PTXBENCH_FAKE_CHECK_MS", "800");
  env.set("PTXBENCH_FAKE_PASS_SETUP_MS", "150");
  // A's passes begin when A's main job ends, as B's main job begins: their
  // second GPU part comes ~150 ms later, inside B's 800 ms of checks.
  const std::vector<span> spans = judge_timed(4, log);
  int parts_during_checks = 0, checks = 0;
  for (const span& k : spans) {
    if (k.kind == 'T')
      for (const span& s : spans)
        if (s.kind == 'c' || s.kind == 'C') CHECK_MESSAGE(!overlap(k, s), "a counting pass's GPU part overlapped timing");
    if (k.kind != 'K') continue;
    ++checks;
    for (const span& s : spans) parts_during_checks += (s.kind == 'c' || s.kind == 'C') && overlap(k, s);
  }
  CHECK(checks == 3);
  CHECK_MESSAGE(parts_during_checks >= 1, "no counting pass ran during a main job's checks after its timed samples");
}

TEST_CASE("a main job whose counting passes ran beside it times before their spares' replacements make contexts") {
  scoped_env env;
  const fs::path starts = temp_log("held-starts"), timed = temp_log("held-timing");
  // Replacements load libraries for 400 ms, then would make their contexts
  // (400 ms) from 400 ms on; the main job asks for the GPU at 500 ms.
  env.set("PTXBENCH_FAKE_START_MS", "400");
  env.set("PTXBENCH_FAKE_START_LOG", starts.string());
  env.set("PTXBENCH_FAKE_BEFORE_TIMING_MS", "500");
  env.set("PTXBENCH_FAKE_TIMED_MS", "50");
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 2;
  o.speculative_counting = 1;
  auto ev = make_local_evaluator(o);
  REQUIRE(ptxbench::test::wait_until([&] { return ev->usage().at(0).spare_starts >= 2; }, std::chrono::seconds(10)));
  const size_t first_starts = read_spans(starts).size();
  const evaluation_result r = ev->evaluate(counted_request("timed:" + timed.string()));
  bool beside = false;
  double asked = -1, go = -1;
  for (const auto& step : r.timeline) {
    beside |= step.what == "counting passes started beside the main job";
    if (step.what == "main: waiting for the GPU") asked = step.at_ms;
    if (step.what == "main: go") go = step.at_ms;
  }
  CHECK(beside);
  REQUIRE(asked >= 0);
  CHECK_MESSAGE(go - asked < 200, "the main job waited " << go - asked << " ms for the GPU");
  // Let the replacements of the two spares the passes took finish (each logs
  // its start when done), then compare: their contexts came after the timing.
  const auto replaced = [&] {
    const std::vector<span> all = read_spans(starts);
    return std::count_if(all.begin() + std::ptrdiff_t(std::min(first_starts, all.size())), all.end(),
                         [](const span& x) { return x.kind == 'S'; });
  };
  CHECK(ptxbench::test::wait_until([&] { return replaced() >= 2; }, std::chrono::seconds(10)));
  const std::vector<span> t = read_spans(timed), s = read_spans(starts);
  const auto timing = std::find_if(t.begin(), t.end(), [](const span& x) { return x.kind == 'T'; });
  REQUIRE(timing != t.end());
  int replacements = 0;
  for (size_t i = first_starts; i < s.size(); ++i)
    if (s[i].kind == 'S') {
      ++replacements;
      CHECK_MESSAGE(s[i].start >= timing->end, "a replacement made its context before the main job timed");
    }
  CHECK(replacements >= 1);
  fs::remove(starts);
  fs::remove(timed);
}

TEST_CASE("the evaluator reports how its GPU was used - busy time and jobs and passes and spare starts") {
  scoped_env env;
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 2;
  o.main_workers = 1;  // the three jobs one after another (two main workers overlap them)
  auto ev = make_local_evaluator(o);
  REQUIRE(ev->usage().size() == 1);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back([&] { ev->evaluate(counted_request("sleep:200")); });
  for (auto& t : threads) t.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const gpu_usage u = ev->usage().at(0);
  CHECK(u.device == 0);
  CHECK(u.jobs == 3);
  CHECK(u.passes == 6);  // the smallest and the timed size, one launch each
  CHECK(u.main_s >= 0.6);  // three jobs of 200 ms, one after another on the main worker
  CHECK(u.busy_s >= u.main_s - 1e-6);
  CHECK(u.busy_s <= wall_s);
  CHECK(u.counting_s > 0);
  CHECK(u.counting_s < 6 * 0.5);  // only the parts that hold the GPU (1 ms each, here)
  CHECK(u.spare_starts >= 2);
  CHECK(u.restarts == 0);
  // Without a GPU there is nothing to report.
  local_evaluator_options off;
  off.gpu_mode = "off";
  CHECK(make_local_evaluator(off)->usage().empty());
}

TEST_CASE("a job's trail adds up by kind of step - sizes and launch numbers folded") {
  const std::vector<job_outcome::step> trail = {{"sending the job", 0},
                                                {"allocating buffers at size M=384 N=256", 5},
                                                {"allocating buffers at size M=4096 N=4096", 15},
                                                {"launch 0 (gemm) at size M=4096", 20},
                                                {"launch 1 (fixup) at size M=4096", 22},
                                                {"waiting for the GPU", 30},
                                                {"go", 80},
                                                {"result", 100}};
  const std::map<std::string, double> p = trail_phases(trail, 100);
  CHECK(p.at("sending the job") == doctest::Approx(5));
  CHECK(p.at("allocating buffers") == doctest::Approx(15));
  CHECK(p.at("launch #") == doctest::Approx(10));
  CHECK(p.at("waiting for the GPU") == doctest::Approx(50));
  CHECK(p.at("go") == doctest::Approx(20));
  CHECK(p.at("result") == doctest::Approx(0));
  CHECK(p.size() == 6);
}

TEST_CASE("spares make their contexts with one connection - main workers keep the environment's") {
  // The driver makes contexts one at a time and one with a single connection
  // is about half as long: a spare (one stream) holds the GPU for less.
  scoped_env env;
  const fs::path log = temp_log("spare-env");
  env.set("PTXBENCH_FAKE_ENV_LOG", log.string());
  env.set("CUDA_DEVICE_MAX_CONNECTIONS", "8");
  const auto lines = [&](int connections) {
    fs::remove(log);
    local_evaluator_options o;
    o.worker_path = PTXBENCH_FAKE_WORKER;
    o.spare_workers = 1;
    o.spare_connections = connections;
    {
      auto ev = make_local_evaluator(o);
      ev->evaluate(counted_request("ok"));
    }
    std::ifstream in(log);
    std::vector<std::pair<std::string, std::string>> out;
    std::string who, value;
    while (in >> who >> value) out.emplace_back(who, value);
    fs::remove(log);
    return out;
  };
  const auto count = [](const auto& v, const std::string& who, const std::string& value) {
    return std::count(v.begin(), v.end(), std::make_pair(who, value));
  };
  const auto by_default = lines(-1);
  CHECK(count(by_default, "main", "8") == 1);
  CHECK(count(by_default, "spare", "1") >= 2);  // the two passes' spares (and their replacements)
  CHECK(count(by_default, "spare", "8") == 0);
  const auto inherited = lines(0);
  CHECK(count(inherited, "spare", "8") >= 2);
  CHECK(count(inherited, "spare", "1") == 0);
  env.set("PTXBENCH_SPARE_CONNECTIONS", "4");
  const auto from_env = lines(-1);
  CHECK(count(from_env, "spare", "4") >= 2);
  CHECK(count(from_env, "main", "8") == 1);
}

namespace {

// Both profiling parts of a candidate that reached the performance stage, on
// fake workers: the pids that ran them, in order, and the profile.
std::pair<std::vector<std::pair<std::string, long>>, std::optional<profile_report>> profile_parts(const std::string& mode) {
  const fs::path log = temp_log("profile-parts");
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 1;
  auto ev = make_local_evaluator(o);
  evaluation_request req = counted_request(mode + ":" + log.string());
  req.profile = true;
  const evaluation_result r = ev->evaluate(req);
  std::vector<std::pair<std::string, long>> parts;
  std::ifstream in(log);
  std::string part;
  long pid = 0;
  while (in >> part >> pid) parts.emplace_back(part, pid);
  fs::remove(log);
  return {parts, r.profile};
}

}  // namespace

TEST_CASE("a profile's counters and sampling share one spare - a fresh one only when sampling found nothing") {
  auto [parts, profile] = profile_parts("profiled");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].first == "counters");
  CHECK(parts[1].first == "sampling");
  CHECK(parts[0].second == parts[1].second);
  REQUIRE(profile);
  for (const char* phase : {"counters", "sampling", "line_info_compile", "worker_counters", "worker_sampling"})
    CHECK_MESSAGE(profile->phase_ms.count(phase) == 1, phase);
  CHECK(profile->phase_ms.count("sampling_fresh_spare") == 0);

  auto [again, retried] = profile_parts("profiled_empty");
  REQUIRE(again.size() == 3);
  CHECK(again[0].second == again[1].second);
  CHECK(again[2].first == "sampling");
  CHECK(again[2].second != again[1].second);
  REQUIRE(retried);
  CHECK(retried->phase_ms.count("sampling_fresh_spare") == 1);
}

