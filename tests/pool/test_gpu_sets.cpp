// One worker set per GPU with a shared queue (work stealing), on fake GPUs:
// every candidate is judged, each worker sees only its GPU, a crash costs only
// its candidate (through the local evaluator), a long job never holds up others
// while a GPU is idle, and throughput grows with the number of GPUs (through
// the slots and their queue, where the compile's CPU time does not blur the figures).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/pool/gpu_slot.hpp"
#include "evaluator/pool/slot_queue.hpp"
#include "pool_support.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using ptxbench::test::scoped_env;
using ptxbench::test::source_dir;

namespace {



evaluation_request request(const std::string& mode) {
  static const task t = load_task(source_dir() / "tasks", "gemm_bf16_mma_sync");
  // A small kernel: its compile (CPU) stays short next to the fake GPU work,
  // and it lacks the target instruction, so no counting passes run.
  static const std::string ptx = read_text_file(source_dir() / "configs/demo/naive_gemm.ptx");
  static const std::string man = read_text_file(source_dir() / "configs/demo/naive_gemm.json");
  evaluation_request r;
  r.t = t;
  r.t.notes = "fake:" + mode;
  r.ptx = ptx;
  r.manifest_text = man;
  r.run_timing = false;
  return r;
}

std::unique_ptr<evaluator> fake_gpus(scoped_env& env, int gpus, const std::optional<std::string>& visible = {}) {
  env.set("PTXBENCH_FAKE_GPUS", std::to_string(gpus));
  env.set("CUDA_VISIBLE_DEVICES", visible);
  local_evaluator_options o;
  o.worker_path = PTXBENCH_FAKE_WORKER;
  o.spare_workers = 1;
  return make_local_evaluator(o);
}

struct timed_result {
  evaluation_result r;
  double end_ms = 0;  // since the start of the batch
};

std::vector<timed_result> evaluate_all(evaluator& ev, const std::vector<evaluation_request>& reqs) {
  auto t0 = clock_type::now();
  std::vector<std::future<timed_result>> f;
  for (size_t i = 0; i < reqs.size(); ++i) {
    f.push_back(std::async(std::launch::async, [&, i] {
      timed_result t{ev.evaluate(reqs[i])};
      t.end_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
      return t;
    }));
  }
  std::vector<timed_result> out;
  for (auto& x : f) out.push_back(x.get());
  return out;
}

std::string gpu_of(const evaluation_result& r) {
  const std::string& reason = r.stages.at(stage::correctness).reason;
  auto at = reason.rfind(" on ");
  return at == std::string::npos ? "?" : reason.substr(at + 4);
}

}  // namespace

TEST_CASE("one worker set per GPU - each worker sees only its own GPU") {
  scoped_env env;
  auto ev = fake_gpus(env, 4);
  CHECK(ev->gpu_description().rfind("4x ", 0) == 0);
  std::vector<evaluation_request> reqs(8, request("sleep:150"));
  std::set<std::string> gpus;
  for (auto& t : evaluate_all(*ev, reqs)) {
    CHECK(t.r.stages.at(stage::correctness).status == stage_status::passed);
    gpus.insert(gpu_of(t.r));
  }
  CHECK(gpus == std::set<std::string>{"0", "1", "2", "3"});

  // An allocation's own list (Slurm sets CUDA_VISIBLE_DEVICES) is split among the slots.
  auto listed = fake_gpus(env, 1, std::string("3,7"));
  CHECK(listed->gpu_description().rfind("2x ", 0) == 0);
  std::set<std::string> seen;
  for (auto& t : evaluate_all(*listed, std::vector<evaluation_request>(4, request("sleep:150"))))
    seen.insert(gpu_of(t.r));
  CHECK(seen == std::set<std::string>{"3", "7"});
}

TEST_CASE("a crash on one GPU costs only its candidate - every other candidate is judged") {
  scoped_env env;
  auto ev = fake_gpus(env, 3);
  std::vector<evaluation_request> reqs(6, request("sleep:100"));
  reqs[2] = request("crash");
  auto results = evaluate_all(*ev, reqs);
  REQUIRE(results.size() == 6);
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i].r;
    if (i == 2) {
      CHECK(r.stages.at(stage::runtime).status == stage_status::failed);
      CHECK(r.stages.at(stage::runtime).reason.find("signal") != std::string::npos);
    } else {
      CHECK(r.stages.at(stage::runtime).status == stage_status::passed);
      CHECK(r.stages.at(stage::correctness).status == stage_status::passed);
    }
  }
}

// The dispatch of the local evaluator (a slot_queue lease, then the slot's main
// worker) without the compile in front, so the figures are the fake GPUs' alone.
struct fake_gpu_set {
  std::vector<std::unique_ptr<gpu_slot>> slots;
  slot_queue queue;
  std::atomic<uint64_t> ids{0};
  explicit fake_gpu_set(int n) : queue(size_t(n)) {
    for (int d = 0; d < n; ++d) {
      slots.push_back(std::make_unique<gpu_slot>(PTXBENCH_FAKE_WORKER, d, 0, std::to_string(d)));
      REQUIRE(slots.back()->start(20000).ok);
    }
  }
  job_outcome run(const std::string& mode) {
    protocol::worker_job job;
    job.id = ++ids;
    job.t = request(mode).t;
    job.m = parse_manifest_text(read_text_file(source_dir() / "configs/demo/naive_gemm.json"));
    job.seeds = {1};
    job.hidden_seed = 3;
    slot_queue::lease held(queue);
    std::string error;
    return slots[held.slot()]->run(job, error);
  }
};

// With `first_alone`, the others are sent once the first job holds its GPU.
std::vector<std::pair<job_outcome, double>> run_all(fake_gpu_set& set, const std::vector<std::string>& modes,
                                                    bool first_alone = false) {
  auto t0 = clock_type::now();
  std::vector<std::future<std::pair<job_outcome, double>>> f;
  for (size_t i = 0; i < modes.size(); ++i) {
    f.push_back(std::async(std::launch::async, [&, i] {
      auto out = set.run(modes[i]);
      return std::make_pair(out, std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    }));
    if (i == 0 && first_alone) REQUIRE(ptxbench::test::wait_until([&] { return set.queue.busy() == 1; }));
  }
  std::vector<std::pair<job_outcome, double>> out;
  for (auto& x : f) out.push_back(x.get());
  return out;
}

TEST_CASE("work stealing: short jobs never wait behind a long one while another GPU is idle") {
  fake_gpu_set set(2);
  std::vector<std::string> modes{"sleep:3000"};
  for (int i = 0; i < 5; ++i) modes.push_back("sleep:100");
  auto results = run_all(set, modes, true);  // the long job takes its GPU first
  const double long_end = results[0].second;
  CHECK(long_end >= 3000);
  for (size_t i = 1; i < results.size(); ++i) {
    CHECK(results[i].first.end == job_end::result);
    CHECK_MESSAGE(results[i].second < long_end, "short job " << i << " ended at " << results[i].second
                                                              << " ms, the long one at " << long_end << " ms");
  }
}

TEST_CASE("throughput grows with the number of fake GPUs") {
  std::map<int, double> wall_ms;
  for (int gpus : {1, 4}) {
    fake_gpu_set set(gpus);
    auto t0 = clock_type::now();
    auto results = run_all(set, std::vector<std::string>(8, "sleep:500"));
    wall_ms[gpus] = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    for (auto& r : results) CHECK(r.first.end == job_end::result);
  }
  MESSAGE("8 jobs of 500 ms: 1 GPU " << wall_ms[1] << " ms, 4 GPUs " << wall_ms[4] << " ms");
  CHECK(wall_ms[1] >= 8 * 500);
  CHECK(wall_ms[4] * 2 < wall_ms[1]);
}
