// The order of a main job's GPU work as the real worker reports it: whatever
// must not run beside another process's work (the timed samples, and the
// timing of the baseline library's plans that picks the one compared with)
// comes after the supervisor's go. A baseline plan chosen beside other work
// can be a slow one: on the H200 with 64 trajectories in flight, one
// attention-backward evaluation in 20 was compared with a cuDNN engine
// ~2.5x slower than the one chosen alone (speedup 1.85x against 0.72x).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "evaluator/common/files.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/pool/worker_process.hpp"
#include "gpu_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;
namespace fs = std::filesystem;

namespace {

std::string worker_path() {
  if (const char* e = std::getenv("PTXBENCH_WORKER"); e && *e) return e;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / "ptxbench-worker").string();
}

protocol::worker_job solution_job(const std::string& task_id) {
  const fs::path dir = source_dir() / "tasks/solutions" / task_id;
  protocol::worker_job job;
  job.id = 1;
  job.t = load_task(source_dir() / "tasks", task_id);
  job.m = parse_manifest_text(read_text_file(dir / "manifest.json"));
  compiled_module cm = compile_ptx(read_text_file(dir / "kernel.ptx"), job.t.arch);
  REQUIRE_MESSAGE(!cm.cubin.empty(), task_id << " did not compile: " << cm.report.log);
  job.cubin = cm.cubin;
  job.seeds = {1};
  job.hidden_seed = 2;
  job.timing_seed = 3;
  job.run_timing = true;
  job.timing_budget_ms = 300;
  return job;
}

size_t position(const std::vector<job_outcome::step>& trail, const std::string& prefix) {
  for (size_t i = 0; i < trail.size(); ++i)
    if (trail[i].what.rfind(prefix, 0) == 0) return i;
  return trail.size();
}

std::string joined(const std::vector<job_outcome::step>& trail) {
  std::string s;
  for (const auto& t : trail) s += (s.empty() ? "" : " | ") + t.what;
  return s;
}

}  // namespace

TEST_CASE("main job: the baseline plan is chosen and the samples are timed only after the go") {
  require_gpu();
  for (const char* id : {"gemm_bf16_wgmma_tma", "attention_bwd_bf16_wgmma"}) {
    CAPTURE(id);
    worker_process w(worker_path(), 0);
    const worker_start s = w.start(120000);
    REQUIRE_MESSAGE(s.ok, s.error);
    int asked = 0;
    const job_outcome out = w.run(solution_job(id), [&] { ++asked; });
    REQUIRE_MESSAGE(out.end == job_end::result, out.cause);
    INFO("trail: " << joined(out.trail));
    CHECK(asked == 1);
    const size_t go = position(out.trail, "go");
    const size_t choose = position(out.trail, "choosing the baseline's plan");
    const size_t timing = position(out.trail, "timing at");
    REQUIRE(go < out.trail.size());
    CHECK(choose < out.trail.size());
    CHECK(go < choose);
    CHECK(choose < timing);
    CHECK(timing < out.trail.size());
    const evaluation_result& r = out.result.partial;
    REQUIRE_MESSAGE(r.performance.has_value(), (r.stages.count(stage::performance) ? r.stages.at(stage::performance).reason : std::string("no performance stage")));
    CHECK_MESSAGE(r.performance->speedup > 0, (r.stages.count(stage::performance) ? r.stages.at(stage::performance).reason : std::string("no performance stage")));
  }
}

TEST_CASE("main job: a later evaluation on the same worker binds the kept baseline - same plan and no new choice") {
  require_gpu();
  for (const char* id : {"gemm_bf16_wgmma_tma", "attention_fwd_bf16_wgmma"}) {
    CAPTURE(id);
    worker_process w(worker_path(), 0);
    const worker_start s = w.start(120000);
    REQUIRE_MESSAGE(s.ok, s.error);
    const job_outcome first = w.run(solution_job(id), [] {});
    protocol::worker_job again = solution_job(id);
    again.id = 2;
    again.timing_seed = 4;
    const job_outcome second = w.run(again, [] {});
    REQUIRE_MESSAGE(first.end == job_end::result, first.cause);
    REQUIRE_MESSAGE(second.end == job_end::result, second.cause);
    INFO("first: " << joined(first.trail));
    INFO("second: " << joined(second.trail));
    CHECK(position(first.trail, "setting up the baseline") < first.trail.size());
    CHECK(position(second.trail, "binding the kept baseline") < second.trail.size());
    CHECK(position(second.trail, "setting up the baseline") == second.trail.size());
    CHECK(position(second.trail, "choosing the baseline's plan") == second.trail.size());
    const auto& p1 = first.result.partial.performance;
    const auto& p2 = second.result.partial.performance;
    REQUIRE(p1.has_value());
    REQUIRE(p2.has_value());
    CHECK(p1->baseline_name == p2->baseline_name);
    CHECK(p2->speedup > 0);
    CHECK(p2->baseline_ms == doctest::Approx(p1->baseline_ms).epsilon(0.05));
  }
}
