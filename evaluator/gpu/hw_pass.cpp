#include "evaluator/gpu/hw_pass.hpp"

#include <algorithm>
#include <chrono>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/correctness.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/module_globals.hpp"
#ifdef PTXBENCH_HAVE_PROFILE
#include "evaluator/profile/hw_counter.hpp"
#endif

namespace ptxbench::gpu {
namespace {

#ifdef PTXBENCH_HAVE_PROFILE
struct unload_at_exit {
  CUmodule module = nullptr;
  ~unload_at_exit() {
    if (module) cuModuleUnload(module);
  }
};

// Every launch of `run` once, each inside a range when `marks` is given.
// Returns "" or the launch that failed. Progress names a launch only while it runs.
std::string run_all(worker_state& w, const protocol::worker_job& job, size_run& run,
                    const std::vector<global_section>& globals, const hw_range_marks* marks) {
  const double limit_ms = protocol::pass_allowance_ms(job);
  prepare_buffers(w, job.t, job.m, run, globals);
  PTXB_CU(cuStreamSynchronize(w.stream));
  for (size_t i = 0; i < run.plan.launches.size(); ++i) {
    w.report("launch " + std::to_string(i) + " under the hardware counters at " + run.size_name, limit_ms, int(i),
             run.size_name);
    if (marks) marks->push("launch " + std::to_string(i));
    CUresult e = enqueue(run.plan.launches[i], w.stream);
    if (e == CUDA_SUCCESS) e = cuStreamSynchronize(w.stream);
    if (marks) marks->pop();
    // After a failed launch the progress keeps naming it (what breaks after is its doing).
    if (e != CUDA_SUCCESS) return "launch " + std::to_string(i) + ": " + describe(e);
    w.report("between launches under the hardware counters at " + run.size_name, limit_ms, -1, run.size_name);
  }
  return "";
}

void counted_hardware(worker_state& w, reference_cache& refs, const protocol::worker_job& job,
                      protocol::dynamic_counts& d) {
  const task& t = job.t;
  const size_point& s = t.sizes.at(size_t(job.count_size));
  if (w.await_go) w.await_go();
  unload_at_exit mod;
  if (CUresult e = cuModuleLoadData(&mod.module, job.cubin.data()); e != CUDA_SUCCESS) {
    mod.module = nullptr;
    d.error = "the cubin could not be loaded: " + describe(e);
    return;
  }
  std::vector<global_section> globals;
  find_global_sections(job.cubin, mod.module, globals);
  auto run = make_size_run(w, mod.module, t, job.m, s);
  if (!run->plan.refusal.empty()) {
    d.error = "launch refused: " + run->plan.refusal;
    return;
  }
  std::shared_ptr<const reference_set> ref = refs.prepare(t, s, job.count_seed, run->addresses, false);
  if (std::string f = run_all(w, job, *run, globals, nullptr); !f.empty()) {
    d.candidate_failure = f + " (the run before the one the hardware counted)";
    d.error = "the run before the hardware counters failed: " + f;
    return;
  }
  w.report("setting up the hardware counters at " + run->size_name, protocol::pass_allowance_ms(job), -1,
           run->size_name);
  CUcontext context = nullptr;
  PTXB_CU(cuCtxGetCurrent(&context));
  std::string failure;
  hw_count_result hw = count_hardware(context, protocol::hw_check_metrics(), run->plan.launches.size(), 8,
                                      [&](const hw_range_marks& marks) {
                                        if (failure.empty()) failure = run_all(w, job, *run, globals, &marks);
                                      });
  d.phase_ms = {{"hw_setup", hw.setup_ms}, {"hw_run", hw.run_ms}, {"hw_decode", hw.decode_ms}};
  d.hw_passes = hw.passes;
  if (!failure.empty()) {
    d.candidate_failure = failure + " (under the hardware counters)";
    d.error = "the run under the hardware counters failed: " + failure;
    return;
  }
  if (!hw.ok) {
    d.error = "the hardware counters could not be read: " + hw.error;
    d.hw_unavailable = hw.unavailable;
    return;
  }
  correctness_report report;
  if (!check_outputs(w, refs, t, *run, *ref, job.count_seed, true, report)) {
    for (const auto& c : report.outputs)
      if (!c.passed && d.output_error.empty())
        d.output_error = c.tensor + " was wrong in the run the hardware counted, at " + c.size +
                         " (max abs error " + std::to_string(c.max_abs_error) + ")";
    if (d.output_error.empty()) d.output_error = "the run the hardware counted was wrong: " + report.note;
  }
  d.hw_metrics = hw.metrics;
  d.hw_values = hw.values;
  d.ran = true;
}
#endif

}  // namespace

protocol::dynamic_counts hw_pass(worker_state& w, reference_cache& refs, const protocol::worker_job& job) {
  protocol::dynamic_counts d;
  d.size_index = job.count_size;
  d.launch = 0;
  const size_point& s = job.t.sizes.at(size_t(job.count_size));
  d.size = size_label(job.t, s);
  d.task_flops = task_flops(job.t, s);
  const auto t0 = std::chrono::steady_clock::now();
#ifdef PTXBENCH_HAVE_PROFILE
  counted_hardware(w, refs, job, d);
#else
  (void)w;
  (void)refs;
  d.error = "hardware counters are not built into this worker (no CUPTI profile library)";
  d.hw_unavailable = true;
#endif
  d.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return d;
}

}  // namespace ptxbench::gpu
