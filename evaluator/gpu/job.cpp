#include "evaluator/gpu/job.hpp"

#include <algorithm>
#include <chrono>

#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/correctness.hpp"
#include "evaluator/api/expression.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/timing.hpp"
#ifdef PTXBENCH_HAVE_PROFILE
#include "evaluator/profile/sass_counter.hpp"
#endif

namespace ptxbench::gpu {
namespace {

const size_point& smallest_size(const task& t) {
  const size_point* best = &t.sizes.front();
  auto volume = [&](const size_point& s) {
    int64_t n = 0;
    for (const auto& ts : t.tensors) n += tensor_elements(ts, s);
    return n;
  };
  for (const auto& s : t.sizes)
    if (volume(s) < volume(*best)) best = &s;
  return *best;
}

#ifdef PTXBENCH_HAVE_PROFILE
// One instrumented run in context `ctx` (made current by the caller) on
// `stream`: buffers of its own with seeded inputs (values do not matter for
// the counts), then, with SASS counters on, a fresh load of the cubin and
// the launches in order. Returns "" or why nothing was counted.
std::string counted_run(worker_state& w, CUcontext ctx, CUstream stream, const protocol::worker_job& job,
                        const size_point& s, sass_count_result& counted) {
  const task& t = job.t;
  std::map<std::string, std::unique_ptr<guarded_buffer>> buffers;
  std::map<std::string, CUdeviceptr> addresses;
  for (size_t i = 0; i < t.tensors.size(); ++i) {
    const tensor_spec& ts = t.tensors[i];
    int64_t n = tensor_elements(ts, s);
    buffers[ts.name] = std::make_unique<guarded_buffer>(size_t(n) * size_t(dtype_bytes(ts.type)));
    if (ts.role == tensor_role::input) fill_uniform(buffers[ts.name]->ptr(), to_elem(ts.type), n, 7, i + 1, stream);
    else PTXB_CU(cuMemsetD8Async(buffers[ts.name]->ptr(), 0xFF, buffers[ts.name]->bytes(), stream));
  }
  for (const auto& sc : job.m.scratch) {
    int64_t bytes = std::max<int64_t>(0, eval_int(sc.bytes, s.values));
    buffers[sc.name] = std::make_unique<guarded_buffer>(size_t(bytes));
    PTXB_CU(cuMemsetD8Async(buffers[sc.name]->ptr(), sc.init == "poison" ? 0xFF : 0, size_t(bytes), stream));
  }
  for (const auto& [name, b] : buffers) addresses[name] = b->ptr();
  PTXB_CU(cuStreamSynchronize(stream));
  std::string inner;
  const size_t target = size_t(std::max(0, job.count_launch));
  // The launches before the counted one run first, from a module loaded
  // outside the pass (never instrumented), so the counted launch finds the
  // state it depends on (e.g. a preprocessing kernel's scratch output).
  CUmodule before = nullptr;
  if (target > 0) {
    CUresult e = cuModuleLoadData(&before, job.cubin.data());
    if (e != CUDA_SUCCESS) return "module load before the instrumented launch: " + describe(e);
    launch_plan plan = prepare_launches(before, job.m, t, s, addresses, w.limits);
    if (!plan.refusal.empty()) inner = plan.refusal;
    for (size_t i = 0; inner.empty() && i < target && i < plan.launches.size(); ++i) {
      e = enqueue(plan.launches[i], stream);
      if (e == CUDA_SUCCESS) e = cuStreamSynchronize(stream);
      if (e != CUDA_SUCCESS) inner = "launch " + std::to_string(i) + ": " + describe(e);
    }
    if (!inner.empty()) {
      cuModuleUnload(before);
      return "instrumented run failed: " + inner;
    }
  }
  // The module stays loaded until the counts are flushed: unloading it inside
  // the pass would drop its patched-instruction records.
  CUmodule module = nullptr;
  counted = count_executed_sass(ctx, [&] {
    CUresult e = cuModuleLoadData(&module, job.cubin.data());
    if (e != CUDA_SUCCESS) {
      inner = "module load under instrumentation: " + describe(e);
      return;
    }
    launch_plan plan = prepare_launches(module, job.m, t, s, addresses, w.limits);
    if (!plan.refusal.empty()) inner = plan.refusal;
    if (inner.empty() && target >= plan.launches.size()) inner = "no launch " + std::to_string(target);
    if (inner.empty()) {
      e = enqueue(plan.launches[target], stream);
      if (e == CUDA_SUCCESS) e = cuStreamSynchronize(stream);
      if (e != CUDA_SUCCESS) inner = "launch " + std::to_string(target) + ": " + describe(e);
    }
  });
  if (module) cuModuleUnload(module);
  if (before) cuModuleUnload(before);
  if (!counted.ok) return "CUPTI SASS counting failed: " + counted.error;
  if (!inner.empty()) return "instrumented run failed: " + inner;
  return "";
}
#endif

// The instrumented pass at the smallest size, after timing and after the
// job's own module is unloaded, on a fresh load of the cubin.
protocol::dynamic_counts count_pass(worker_state& w, const protocol::worker_job& job) {
  protocol::dynamic_counts d;
#ifdef PTXBENCH_HAVE_PROFILE
  const task& t = job.t;
  const size_point& s = smallest_size(t);
  d.size = size_text(s);
  d.task_flops = task_flops(t, s);
  w.report("counting executed instructions at " + d.size, std::max(60000.0, 20 * job.time_limit_ms), 0, d.size);
  sass_count_result counted;
  d.error = counted_run(w, w.context, w.stream, job, s, counted);
  d.ran = d.error.empty();
  if (d.ran)
    for (const auto& c : counted.counts) d.counts.push_back({c.function, c.pc_offset, c.executed});
#else
  (void)w;
  (void)job;
  d.error = "executed-instruction counting is not built into this worker (no CUPTI profile library)";
#endif
  return d;
}

}  // namespace

protocol::worker_result run_job(worker_state& w, reference_cache& refs, const protocol::worker_job& job) {
  protocol::worker_result res;
  res.id = job.id;
  evaluation_result& r = res.partial;
  auto not_reached = [&](stage s, const std::string& why) { r.stages[s] = {stage_status::not_run, why, 0.0}; };
  if (job.count_only) {  // a follow-up counting pass for one later launch
    auto t0 = std::chrono::steady_clock::now();
    res.dynamic = count_pass(w, job);
    res.recycle = true;
    res.dynamic.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return res;
  }

  w.report("loading the cubin", 60000);
  CUmodule module = nullptr;
  CUresult e = cuModuleLoadData(&module, job.cubin.data());
  if (e != CUDA_SUCCESS) {
    r.runtime = runtime_report{"the cubin could not be loaded: " + describe(e), -1, "", is_sticky(e)};
    r.stages[stage::runtime] = {stage_status::failed, r.runtime->error, 0.0};
    not_reached(stage::correctness, "not reached: runtime failed");
    not_reached(stage::performance, "not reached: runtime failed");
    res.context_lost = is_sticky(e);
    return res;
  }
  correctness_outcome c = run_correctness(w, refs, module, job);
  r.stages[stage::runtime] = c.runtime_stage;
  r.stages[stage::correctness] = c.correctness_stage;
  r.runtime = c.runtime;
  r.correctness = c.report;
  if (c.runtime && c.runtime->context_lost) {
    res.context_lost = true;
    res.dynamic.error = "not reached: runtime failed";
    not_reached(stage::performance, "not reached: runtime failed");
    return res;  // the context is gone: no cleanup possible
  }
  if (c.runtime_stage.status != stage_status::passed || c.correctness_stage.status != stage_status::passed) {
    std::string why = std::string("not reached: ") +
                      (c.runtime_stage.status != stage_status::passed ? "runtime" : "correctness") + " failed";
    res.dynamic.error = why;
    not_reached(stage::performance, why);
    c.timed.reset();
    cuModuleUnload(module);
    return res;
  }

  if (!job.run_timing) {
    not_reached(stage::performance, "timing not requested");
  } else {
    timing_outcome tm = run_timing(w, job, *c.timed, *c.timed_refs);
    if (tm.runtime) {
      r.runtime = tm.runtime;
      r.stages[stage::runtime] = {stage_status::failed, tm.runtime->error, 0.0};
      not_reached(stage::performance, "not reached: runtime failed");
      res.context_lost = tm.runtime->context_lost;
      if (res.context_lost) return res;
    } else {
      r.performance = tm.report;
      r.stages[stage::performance] = tm.stage;
      if (!tm.recheck_failure.empty()) {
        r.stages[stage::correctness] = {stage_status::failed, tm.recheck_failure, r.stages[stage::correctness].time_ms};
        r.correctness.stable_across_calls = false;
        r.correctness.note += (r.correctness.note.empty() ? "" : "; ") + tm.recheck_failure;
      }
    }
  }
  c.timed.reset();
  cuModuleUnload(module);
  if (job.run_dynamic) {
    auto t0 = std::chrono::steady_clock::now();
    res.dynamic = count_pass(w, job);
    res.recycle = true;
    res.dynamic.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } else {
    res.dynamic.error = "not requested: a target instruction is missing from the PTX or the SASS";
  }
  return res;
}

}  // namespace ptxbench::gpu
