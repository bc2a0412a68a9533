#include "evaluator/gpu/job.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/common/clock.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/correctness.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/hw_pass.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/module_globals.hpp"
#include "evaluator/gpu/profile_job.hpp"
#include "evaluator/gpu/timing.hpp"
#ifdef PTXBENCH_HAVE_PROFILE
#include "evaluator/profile/sass_counter.hpp"
#endif

namespace ptxbench::gpu {
namespace {

// A loaded module with its .global sections located (see module_globals.hpp).
struct loaded_module {
  CUmodule module = nullptr;
  std::vector<global_section> globals;
  std::string globals_problem;  // non-empty: some section cannot be reset between runs
  ~loaded_module() {
    if (module) cuModuleUnload(module);
  }
};

// Loads the cubin; returns "" or the reason it cannot run (then the module, if
// any, is unloaded by the destructor). `sticky` tells a lost context.
std::string load(const std::vector<char>& cubin, loaded_module& out, bool& sticky) {
  sticky = false;
  CUresult e = cuModuleLoadData(&out.module, cubin.data());
  if (e != CUDA_SUCCESS) {
    out.module = nullptr;
    sticky = is_sticky(e);
    return "the cubin could not be loaded: " + describe(e);
  }
  // A section that cannot be located is run without resets rather than
  // refused: every run's output is still verified; the report says so.
  out.globals_problem = find_global_sections(cubin, out.module, out.globals);
  return "";
}

#ifdef PTXBENCH_HAVE_PROFILE
// One instrumented run at the job's counting size: inputs of the counting
// seed, then launches 0..target-1 from a module loaded outside the pass
// (never instrumented), launch `target` from a fresh load inside it, the later
// launches uninstrumented again, and the outputs compared with the reference.
// Returns "" or why nothing was counted; `output_error` says when the counted
// run computed a wrong result (a kernel that behaves differently when counted)
// and `candidate` when a launch of the candidate failed in it (its failure:
// the supervisor retries once, then fails the stage). Progress names the
// launch only while a launch of the candidate runs, so that a worker lost
// then is the candidate's and one lost in CUPTI's set-up is not.
std::string counted_run(worker_state& w, reference_cache& refs, const protocol::worker_job& job,
                        sass_count_result& counted, std::string& output_error, std::string& candidate,
                        std::map<std::string, double>& phase) {
  const task& t = job.t;
  const size_point& s = t.sizes.at(size_t(job.count_size));
  auto mark = std::chrono::steady_clock::now();
  const auto lap = [&](const char* name) {
    phase[name] += ms_since(mark);
    mark = std::chrono::steady_clock::now();
  };
  // The GPU is ours (shared with other passes, never with timing) from here
  // to the end of the launches before the counted one, and again from the
  // counted launch on; CUPTI's set-up in between leaves the GPU alone.
  if (w.await_go) w.await_go();
  loaded_module before;
  bool sticky = false;
  if (std::string why = load(job.cubin, before, sticky); !why.empty()) return "module load before the pass: " + why;
  auto run = make_size_run(w, before.module, t, job.m, s);
  if (!run->plan.refusal.empty()) return "launch refused: " + run->plan.refusal;
  lap("load");
  std::shared_ptr<const reference_set> ref = refs.prepare(t, s, job.count_seed, run->addresses, false);
  lap("reference");
  prepare_buffers(w, t, job.m, *run, before.globals);
  PTXB_CU(cuStreamSynchronize(w.stream));
  lap("inputs");
  const size_t target = size_t(job.count_launch);
  const double limit_ms = protocol::pass_allowance_ms(job);
  auto run_uninstrumented = [&](launch_plan& plan, size_t from, size_t to) -> std::string {
    for (size_t i = from; i < to && i < plan.launches.size(); ++i) {
      w.report("launch " + std::to_string(i) + " beside the counted one at " + run->size_name, limit_ms, int(i),
               run->size_name);
      CUresult e = enqueue(plan.launches[i], w.stream);
      if (e == CUDA_SUCCESS) e = cuStreamSynchronize(w.stream);
      if (e != CUDA_SUCCESS) return "launch " + std::to_string(i) + ": " + describe(e);
    }
    return "";
  };
  if (std::string e = run_uninstrumented(run->plan, 0, target); !e.empty()) {
    candidate = e + " (before the counted launch)";
    return "instrumented run failed: " + e;
  }
  w.report("setting up the counting pass at " + run->size_name, limit_ms, -1, run->size_name);
  lap("launches_before");
  // No copy of the cubin stays loaded while the pass is on (as in the flow
  // measured to record on the H200): the counted launch and the ones after it
  // come from the module loaded inside the pass, which stays loaded until
  // the counts are flushed (unloading it inside the pass would drop its
  // patched-instruction records).
  run->plan = launch_plan{};
  cuModuleUnload(before.module);
  before.module = nullptr;
  PTXB_CU(cuCtxSynchronize());
  if (w.gpu_idle) w.gpu_idle();
  CUmodule module = nullptr;
  launch_plan plan;
  std::string inner;
  counted = count_executed_sass(w.context, [&] {
    const auto asked = std::chrono::steady_clock::now();
    if (w.await_go) w.await_go();
    phase["pass_wait"] = ms_since(asked);
    CUresult e = cuModuleLoadData(&module, job.cubin.data());
    if (e != CUDA_SUCCESS) {
      inner = "module load under instrumentation: " + describe(e);
      return;
    }
    plan = prepare_launches(module, job.m, t, s, run->addresses, w.limits);
    if (!plan.refusal.empty()) inner = plan.refusal;
    if (inner.empty() && target >= plan.launches.size()) inner = "no launch " + std::to_string(target);
    if (inner.empty()) {
      w.report("launch " + std::to_string(target) + " under counting at " + run->size_name, limit_ms, int(target),
               run->size_name);
      e = enqueue(plan.launches[target], w.stream);
      if (e == CUDA_SUCCESS) e = cuStreamSynchronize(w.stream);
      // After a failed launch the progress keeps naming it: CUPTI failing or
      // hanging on the context the candidate broke is the candidate's doing.
      if (e != CUDA_SUCCESS) {
        inner = "launch " + std::to_string(target) + ": " + describe(e);
        candidate = inner + " (the counted launch)";
      } else {
        w.report("collecting the counts at " + run->size_name, limit_ms, -1, run->size_name);
      }
    }
  });
  lap("pass");
  phase["pass_setup"] = counted.setup_ms;
  phase["pass_work"] = counted.work_ms - phase["pass_wait"];  // the wait for the GPU is inside the work
  phase["pass_flush"] = counted.flush_ms;
  std::string after;
  if (counted.ok && inner.empty()) after = run_uninstrumented(plan, target + 1, plan.launches.size());
  plan = launch_plan{};
  if (module) cuModuleUnload(module);
  lap("launches_after");
  if (!candidate.empty()) return "instrumented run failed: " + inner;
  if (!counted.ok) return "CUPTI SASS counting failed: " + counted.error;
  if (!inner.empty()) return "instrumented run failed: " + inner;
  if (!after.empty()) {
    candidate = after + " (after the counted launch)";
    return "run after the instrumented launch failed: " + after;
  }
  correctness_report report;
  const bool outputs_ok = check_outputs(w, refs, t, *run, *ref, job.count_seed, true, report);
  lap("check");
  if (!outputs_ok) {
    for (const auto& c : report.outputs)
      if (!c.passed) {
        output_error = c.tensor + " was wrong in the run whose instructions were counted, at " + c.size +
                       " (max abs error " + std::to_string(c.max_abs_error) + ")";
        break;
      }
    if (output_error.empty()) output_error = "the run whose instructions were counted was wrong: " + report.note;
  }
  return "";
}
#endif

// The counting job: one pass, one (size, launch).
protocol::dynamic_counts count_pass(worker_state& w, reference_cache& refs, const protocol::worker_job& job) {
  protocol::dynamic_counts d;
  d.size_index = job.count_size;
  d.launch = job.count_launch;
  const size_point& s = job.t.sizes.at(size_t(job.count_size));
  d.size = size_label(job.t, s);
  d.task_flops = task_flops(job.t, s);
#ifdef PTXBENCH_HAVE_PROFILE
  w.report("counting executed instructions of launch " + std::to_string(job.count_launch) + " at " + d.size,
           protocol::pass_allowance_ms(job), -1, d.size);
  sass_count_result counted;
  d.error = counted_run(w, refs, job, counted, d.output_error, d.candidate_failure, d.phase_ms);
  d.ran = d.error.empty();
  if (d.ran)
    for (const auto& c : counted.counts) d.counts.push_back({c.function, c.pc_offset, c.executed});
#else
  (void)w;
  (void)refs;
  d.error = "executed-instruction counting is not built into this worker (no CUPTI profile library)";
#endif
  return d;
}

void not_reached(evaluation_result& r, stage s, const std::string& why) {
  r.stages[s] = {stage_status::not_run, why, 0.0};
}

}  // namespace

protocol::worker_result run_job(worker_state& w, reference_cache& refs, const protocol::worker_job& job) {
  protocol::worker_result res;
  res.id = job.id;
  evaluation_result& r = res.partial;
  if (!job.profile_part.empty()) {
    res.profile = run_profile_job(w, refs, job);
    // CUPTI's profilers are set up once per process: the sampling part ends
    // it; the counters part leaves it for the sampling part to follow (the
    // range profiler, once disabled, lets PC sampling start: the probe's
    // hw_then_pc scenario).
    res.recycle = job.profile_part != "counters";
    return res;
  }
  if (job.count_only && job.hw_check) {
    res.dynamic = hw_pass(w, refs, job);
    res.recycle = true;
    return res;
  }
  if (job.count_only) {
    auto t0 = std::chrono::steady_clock::now();
    res.dynamic = count_pass(w, refs, job);
    res.recycle = true;
    res.dynamic.time_ms = ms_since(t0);
    return res;
  }

  w.report("loading the cubin", 60000);
  loaded_module mod;
  bool sticky = false;
  if (std::string why = load(job.cubin, mod, sticky); !why.empty()) {
    r.runtime = runtime_report{why, -1, "", sticky};
    r.stages[stage::runtime] = {stage_status::failed, why, 0.0};
    not_reached(r, stage::correctness, "not reached: runtime failed");
    not_reached(r, stage::performance, "not reached: runtime failed");
    res.context_lost = sticky;
    return res;
  }
  correctness_outcome c = run_correctness(w, refs, mod.module, mod.globals, job);
  r.stages[stage::runtime] = c.runtime_stage;
  r.stages[stage::correctness] = c.correctness_stage;
  r.runtime = c.runtime;
  r.correctness = c.report;
  if (!mod.globals_problem.empty())
    r.correctness.note += (r.correctness.note.empty() ? "" : "; ") + mod.globals_problem;
  if (c.runtime && c.runtime->context_lost) {
    res.context_lost = true;
    not_reached(r, stage::performance, "not reached: runtime failed");
    mod.module = nullptr;  // the context is gone: no cleanup possible
    return res;
  }
  if (c.runtime_stage.status != stage_status::passed || c.correctness_stage.status != stage_status::passed) {
    not_reached(r, stage::performance,
                std::string("not reached: ") +
                    (c.runtime_stage.status != stage_status::passed ? "runtime" : "correctness") + " failed");
    return res;
  }
  if (!job.run_timing) {
    not_reached(r, stage::performance, "timing not requested");
    return res;
  }
  timing_outcome tm = run_timing(w, refs, job, *c.timed, mod.globals);
  if (tm.runtime) {
    r.runtime = tm.runtime;
    r.stages[stage::runtime] = {stage_status::failed, tm.runtime->error, 0.0};
    not_reached(r, stage::performance, "not reached: runtime failed");
    res.context_lost = tm.runtime->context_lost;
    if (res.context_lost) mod.module = nullptr;
    return res;
  }
  r.performance = tm.report;
  r.correctness.timed_samples_checked = tm.samples_checked;
  r.correctness.timed_samples_wrong = tm.samples_wrong;
  for (auto& oc : tm.timed_checks) r.correctness.outputs.push_back(oc);
  if (!tm.correctness_failure.empty()) {
    r.stages[stage::correctness] = {stage_status::failed, tm.correctness_failure, r.stages[stage::correctness].time_ms};
    r.correctness.stable_across_calls = false;
    r.correctness.note += (r.correctness.note.empty() ? "" : "; ") + tm.correctness_failure;
    not_reached(r, stage::performance, "not reached: the timed runs were wrong");
  } else {
    r.stages[stage::performance] = tm.stage;
  }
  return res;
}

}  // namespace ptxbench::gpu
