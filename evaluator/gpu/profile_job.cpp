// Counters: the range profiler (hw_counter.hpp) around each candidate launch
// and the baseline's run, replayed by re-poisoning the outputs before each
// pass. Sampling: PC sampling (pc_sampling.hpp) of the candidate's launches,
// from a module loaded while sampling is on (it records nothing otherwise).
#include "evaluator/gpu/profile_job.hpp"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "evaluator/common/clock.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/module_globals.hpp"
#ifdef PTXBENCH_HAVE_BASELINES
#include "evaluator/baselines/baselines.hpp"
#endif
#ifdef PTXBENCH_HAVE_PROFILE
#include "evaluator/profile/hw_counter.hpp"
#include "evaluator/profile/pc_sampling.hpp"
#endif

namespace ptxbench::gpu {
namespace {

struct module_holder {
  CUmodule module = nullptr;
  ~module_holder() {
    if (module) cuModuleUnload(module);
  }
};

// The candidate at the profiled size, inputs of the job's seed, outputs poisoned.
struct profiled_run {
  module_holder mod;
  std::vector<global_section> globals;
  std::unique_ptr<size_run> run;
};

std::string set_up(worker_state& w, reference_cache& refs, const protocol::worker_job& job, profiled_run& p) {
  CUresult e = cuModuleLoadData(&p.mod.module, job.cubin.data());
  if (e != CUDA_SUCCESS) {
    p.mod.module = nullptr;
    return "the line-info cubin could not be loaded: " + describe(e);
  }
  find_global_sections(job.cubin, p.mod.module, p.globals);
  const size_point& s = job.t.sizes.at(size_t(job.count_size));
  p.run = make_size_run(w, p.mod.module, job.t, job.m, s);
  if (!p.run->plan.refusal.empty()) return "launch refused: " + p.run->plan.refusal;
  refs.prepare(job.t, s, job.count_seed, p.run->addresses, false);
  prepare_buffers(w, job.t, job.m, *p.run, p.globals);
  PTXB_CU(cuStreamSynchronize(w.stream));
  return "";
}

void launch_all(worker_state& w, size_run& run, const std::function<void(const std::string&)>& push,
                const std::function<void()>& pop) {
  for (size_t i = 0; i < run.plan.launches.size(); ++i) {
    if (push) push("launch " + std::to_string(i) + " (" + run.plan.launches[i].kernel + ")");
    CUresult e = enqueue(run.plan.launches[i], w.stream);
    if (e == CUDA_SUCCESS) e = cuStreamSynchronize(w.stream);
    if (pop) pop();
    if (e != CUDA_SUCCESS) throw std::runtime_error("launch " + std::to_string(i) + " failed: " + describe(e));
  }
}

#ifdef PTXBENCH_HAVE_PROFILE
void counters(worker_state& w, reference_cache& refs, const protocol::worker_job& job, protocol::profile_raw& out) {
  profiled_run p;
  if ((out.error = set_up(w, refs, job, p)); !out.error.empty()) return;
  for (const prepared_launch& l : p.run->plan.launches) {
    int regs = -1, shared = -1;
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, l.function);
    cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l.function);
    out.registers.push_back(regs);
    out.shared_bytes.push_back(shared < 0 ? -1 : shared + int(l.shared_bytes));
  }
  std::function<void()> baseline_run;
  std::string baseline_name;
#ifdef PTXBENCH_HAVE_BASELINES
  std::vector<device_memory> baseline_outputs;
  std::unique_ptr<baseline> library;
  try {
    baseline_buffers bb;
    for (const auto& ts : job.t.tensors) {
      if (ts.role == tensor_role::input) {
        bb.tensors[ts.name] = p.run->addresses.at(ts.name);
      } else {
        baseline_outputs.emplace_back(p.run->buffers.at(ts.name)->bytes());
        bb.tensors[ts.name] = baseline_outputs.back().ptr();
      }
    }
    library = make_baseline(job.t, p.run->size, bb, w.stream, baseline_choice::now);
    if (library && library->available()) {
      baseline_name = library->name();
      baseline_run = [&] { library->run(w.stream); };
    }
  } catch (const std::exception&) {
    baseline_run = nullptr;  // the candidate's figures still come; the baseline's row is missing
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  hw_count_result hw = count_hardware(w.context, protocol::profile_counter_metrics(), p.run->plan.launches.size() + 1,
                                      16, [&](const hw_range_marks& marks) {
                                        prepare_buffers(w, job.t, job.m, *p.run, p.globals);
                                        PTXB_CU(cuStreamSynchronize(w.stream));
                                        launch_all(w, *p.run, marks.push, marks.pop);
                                        if (baseline_run) {
                                          marks.push("baseline: " + baseline_name);
                                          baseline_run();
                                          PTXB_CU(cuStreamSynchronize(w.stream));
                                          marks.pop();
                                        }
                                      });
  out.phase_ms["counters"] = ms_since(t0);
  out.ran = hw.ok;
  out.error = hw.error;
  out.unavailable = hw.unavailable;
  out.metrics = hw.metrics;
  out.ranges = hw.range_names;
  out.values = hw.values;
  out.passes = hw.passes;
}

void sampling(worker_state& w, reference_cache& refs, const protocol::worker_job& job, protocol::profile_raw& out) {
  uint32_t period = 8;
  if (const char* v = std::getenv("PTXBENCH_PC_SAMPLING_PERIOD"); v && std::atoi(v) >= 5 && std::atoi(v) <= 31)
    period = uint32_t(std::atoi(v));
  profiled_run p;
  std::string setup_error;
  pc_sampling_result r = sample_pcs(
      w.context, period, 20000, [&] { setup_error = set_up(w, refs, job, p); },
      [&] {
        if (setup_error.empty()) launch_all(w, *p.run, nullptr, nullptr);
      });
  out.phase_ms["sampling_setup"] = r.setup_ms;
  out.phase_ms["sampling_work"] = r.work_ms;
  out.phase_ms["sampling_collect"] = r.collect_ms;
  out.ran = r.ok && setup_error.empty();
  out.error = !setup_error.empty() ? setup_error : r.error;
  out.unavailable = r.unavailable;
  out.total_samples = r.total_samples;
  out.dropped_samples = r.dropped_samples;
  for (auto& pc : r.pcs) out.pcs.push_back({pc.function, pc.pc_offset, std::move(pc.stalls)});
}
#endif

}  // namespace

protocol::profile_raw run_profile_job(worker_state& w, reference_cache& refs, const protocol::worker_job& job) {
  protocol::profile_raw out;
  out.part = job.profile_part;
  const auto t0 = std::chrono::steady_clock::now();
  w.report("profiling (" + job.profile_part + ")", protocol::pass_allowance_ms(job));
  if (w.await_go) w.await_go();
#ifdef PTXBENCH_HAVE_PROFILE
  try {
    if (job.profile_part == "counters") counters(w, refs, job, out);
    if (job.profile_part == "sampling") sampling(w, refs, job, out);
  } catch (const cuda_error& e) {
    if (e.sticky) throw;
    out.ran = false;
    out.error = std::string("profiling failed: ") + e.what();
  } catch (const std::exception& e) {
    out.ran = false;
    out.error = std::string("profiling failed: ") + e.what();
  }
#else
  (void)refs;
  out.error = "profiling is not built into this worker (no CUPTI profile library)";
  out.unavailable = true;
#endif
  out.time_ms = ms_since(t0);
  return out;
}

}  // namespace ptxbench::gpu
