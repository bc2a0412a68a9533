// The evaluator of this host (make_local_evaluator): format, compile and
// static checks in the calling thread; runtime, correctness, the executed-
// instruction count and timing in the worker process of the least busy GPU.
#include "evaluator/api/local.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>

#include "evaluator/api/json_path.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/pool/gpu_slot.hpp"
#include "evaluator/pool/instruction_proof.hpp"
#include "evaluator/pool/verdict.hpp"
#include "ptxbench/version.hpp"

namespace ptxbench {
namespace {

using clock_type = std::chrono::steady_clock;
constexpr int k_start_timeout_ms = 120000;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::string find_worker(const local_evaluator_options& o) {
  if (!o.worker_path.empty()) return o.worker_path;
  if (const char* env = std::getenv("PTXBENCH_WORKER"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "ptxbench-worker";
    if (std::filesystem::exists(beside)) return beside.string();
  }
#ifdef PTXBENCH_DEFAULT_WORKER
  if (std::filesystem::exists(PTXBENCH_DEFAULT_WORKER)) return PTXBENCH_DEFAULT_WORKER;
#endif
  return ec ? std::string("ptxbench-worker") : (self.parent_path() / "ptxbench-worker").string();
}

// "sm_90a" runs on an sm_90 device only; plain "sm_90" on sm_90 and newer of
// the family is not needed by this suite, so the rule is exact.
std::string device_arch_of(const std::string& task_arch) {
  std::string a = task_arch;
  if (!a.empty() && a.back() == 'a') a.pop_back();
  return a;
}

std::string no_gpu_reason(const std::string& error) {
  if (error.find("libcuda") != std::string::npos || error.find("NO_DEVICE") != std::string::npos ||
      error.find("no CUDA-capable") != std::string::npos || error.find("NO_DRIVER") != std::string::npos)
    return "no GPU on this machine (" + error + ")";
  return "GPU worker unavailable: " + error;
}

struct static_part {
  sass_listing sass;
  instruction_report report;
  double ms = 0.0;
};

class local_evaluator final : public evaluator {
 public:
  explicit local_evaluator(const local_evaluator_options& o) {
    // A worker that dies while we write to it must not kill the supervisor.
    ::signal(SIGPIPE, SIG_IGN);
    if (o.gpu_mode == "off") {
      m_no_gpu_reason = "GPU stages switched off (gpu mode off)";
      return;
    }
    std::string exe = find_worker(o);
    auto first = std::make_unique<gpu_slot>(exe, 0);
    worker_start s = first->start(k_start_timeout_ms);
    if (!s.ok) {
      m_no_gpu_reason = no_gpu_reason(s.error);
      return;
    }
    int count = s.hello.device_count;
    if (o.max_gpus > 0 && count > o.max_gpus) count = o.max_gpus;
    m_slots.push_back(std::move(first));
    std::vector<std::future<void>> starting;
    std::mutex lock;
    for (int d = 1; d < count; ++d)
      starting.push_back(std::async(std::launch::async, [&, d] {
        auto slot = std::make_unique<gpu_slot>(exe, d);
        if (slot->start(k_start_timeout_ms).ok) {
          std::lock_guard g(lock);
          m_slots.push_back(std::move(slot));
        }
      }));
    for (auto& f : starting) f.get();
  }

  std::string version() const override { return evaluator_version; }

  std::string gpu_description() const override {
    if (m_slots.empty()) return "none";
    auto h = m_slots.front()->hello();
    std::string d = h.name + " (" + h.arch + ")";
    if (m_slots.size() > 1) d = std::to_string(m_slots.size()) + "x " + d;
    return d;
  }

  evaluation_result evaluate(const evaluation_request& req) override {
    auto t0 = clock_type::now();
    evaluation_result r;
    r.evaluator_version = evaluator_version;
    r.gpu = gpu_description();
    for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = stage_outcome{stage_status::not_run, "", 0.0};
    try {
      run_stages(req, r);
    } catch (const std::exception& e) {
      // Infrastructure failure inside this evaluation: reported, not a verdict on the candidate.
      r.stages[stage::runtime] = {stage_status::not_run, std::string("evaluator error: ") + e.what(), 0.0};
    }
    finish_verdict(r);
    r.total_ms = ms_since(t0);
    return r;
  }

 private:
  void run_stages(const evaluation_request& req, evaluation_result& r) {
    auto t0 = clock_type::now();
    manifest m;
    std::string problem;
    try {
      m = parse_manifest_text(req.manifest_text);
    } catch (const input_error& e) {
      problem = std::string("manifest: ") + e.what();
    } catch (const std::exception& e) {
      problem = std::string("manifest: ") + e.what();
    }
    std::vector<std::string> problems;
    if (problem.empty()) {
      problems = check_manifest_against_task(m, req.t);
      if (problems.empty()) {
        auto entries = parse_ptx_entries(req.ptx);
        if (entries.empty()) problems.push_back("the PTX has no .entry kernel");
        else problems = check_manifest_against_ptx(m, entries, req.t);
      }
      for (const auto& p : problems) problem += (problem.empty() ? "" : "; ") + p;
    }
    r.stages[stage::format] = {problem.empty() ? stage_status::passed : stage_status::failed, problem, ms_since(t0)};
    if (!problem.empty()) return;

    compiled_module cm = compile_ptx(req.ptx, req.t.arch);
    r.compile = cm.report;
    r.stages[stage::compile] = {cm.ok ? stage_status::passed : stage_status::failed,
                                cm.ok ? "" : compile_headline(cm.report), cm.time_ms};
    if (!cm.ok) return;

    // The static check (nvdisasm: a few hundred ms) runs while the GPU works.
    std::future<static_part> static_check = std::async(std::launch::async, [&] {
      auto t = clock_type::now();
      static_part p;
      p.sass = disassemble(cm.cubin);
      p.report = static_instruction_check(req.t, req.ptx, p.sass);
      p.ms = ms_since(t);
      return p;
    });
    std::string why_not = gpu_unavailable_reason(req);
    if (!why_not.empty()) {
      static_part p = static_check.get();
      r.instructions = p.report;
      for (stage s : {stage::runtime, stage::correctness, stage::performance})
        r.stages[s] = {stage_status::not_run, why_not, 0.0};
      r.stages[stage::instructions] = instruction_outcome(r.instructions, why_not);
      r.stages[stage::instructions].time_ms = p.ms;
      return;
    }
    run_on_gpu(req, m, cm, static_check, r);
  }

  std::string gpu_unavailable_reason(const evaluation_request& req) const {
    if (!req.run_gpu) return "GPU stages not requested (compile and static checks only)";
    if (!req.t.runs_on_hopper) return req.t.arch + " task: not runnable on this Hopper GPU (compile and static checks only)";
    if (m_slots.empty()) return m_no_gpu_reason;
    std::string dev = m_slots.front()->hello().arch;
    if (!dev.empty() && device_arch_of(req.t.arch) != dev)
      return req.t.arch + " task: not runnable on this GPU (" + dev + "); compile and static checks only";
    return "";
  }

  // The first job's counting pass saw only launch 0 (see worker_job::count_launch):
  // each later launch is counted by a follow-up job on a fresh worker, and
  // the counts are added. A follow-up that fails makes the proof incomplete.
  void count_later_launches(gpu_slot& slot, const protocol::worker_job& first, protocol::worker_result& result) {
    if (!result.dynamic.ran || first.m.launches.size() < 2) return;
    for (size_t i = 1; i < first.m.launches.size(); ++i) {
      protocol::worker_job job = first;
      job.id = ++m_job_ids;
      job.count_only = true;
      job.count_launch = int(i);
      std::string restart_error;
      job_outcome out = slot.run(job, restart_error);
      std::string error = !restart_error.empty()          ? restart_error
                          : out.end != job_end::result    ? out.cause
                          : !out.result.dynamic.ran       ? out.result.dynamic.error
                                                          : "";
      if (!error.empty()) {
        result.dynamic.ran = false;
        result.dynamic.error = "counting launch " + std::to_string(i) + " (" + first.m.launches[i].kernel + "): " + error;
        result.dynamic.counts.clear();
        return;
      }
      for (const auto& c : out.result.dynamic.counts) result.dynamic.counts.push_back(c);
      result.dynamic.time_ms += out.result.dynamic.time_ms;
    }
  }

  gpu_slot& least_busy() {
    gpu_slot* best = m_slots.front().get();
    for (auto& s : m_slots)
      if (s->queued() < best->queued()) best = s.get();
    return *best;
  }

  void run_on_gpu(const evaluation_request& req, const manifest& m, const compiled_module& cm,
                  std::future<static_part>& static_check, evaluation_result& r) {
    protocol::worker_job job;
    job.id = ++m_job_ids;
    job.t = req.t;
    job.m = m;
    job.cubin = cm.cubin;
    job.seeds = req.seeds;
    job.hidden_seed = req.hidden_seed;
    job.run_timing = req.run_timing;
    job.run_dynamic = !req.t.target_instructions.empty();
    job.time_limit_ms = req.time_limit_ms;
    job.timing_budget_ms = req.timing_budget_ms;

    gpu_slot& slot = least_busy();
    std::string restart_error;
    job_outcome out = slot.run(job, restart_error);
    r.gpu = gpu_description();
    static_part p = static_check.get();
    r.instructions = p.report;
    if (!restart_error.empty()) {
      for (stage s : {stage::runtime, stage::correctness, stage::performance})
        r.stages[s] = {stage_status::not_run, restart_error, 0.0};
      r.stages[stage::instructions] = instruction_outcome(r.instructions, restart_error);
    } else if (out.end != job_end::result) {
      runtime_report rt;
      rt.error = out.cause;
      rt.launch_index = out.last.launch;
      rt.size = out.last.size;
      rt.context_lost = true;
      protocol::worker_result died;
      died.partial.runtime = rt;
      died.partial.stages[stage::runtime] = {stage_status::failed, out.cause, 0.0};
      died.partial.stages[stage::correctness] = {stage_status::not_run, "not reached: runtime failed", 0.0};
      died.partial.stages[stage::performance] = {stage_status::not_run, "not reached: runtime failed", 0.0};
      merge_worker_result(died, p.sass, r);
    } else {
      count_later_launches(slot, job, out.result);
      merge_worker_result(out.result, p.sass, r);
    }
    r.stages[stage::instructions].time_ms += p.ms;
  }

  std::vector<std::unique_ptr<gpu_slot>> m_slots;
  std::string m_no_gpu_reason;
  std::atomic<uint64_t> m_job_ids{0};
};

}  // namespace

std::unique_ptr<evaluator> make_local_evaluator(const local_evaluator_options& options) {
  return std::make_unique<local_evaluator>(options);
}

}  // namespace ptxbench
