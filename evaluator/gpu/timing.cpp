// The performance stage in nvbench's steps (timing_steps.hpp): prepare,
// sample rounds until the stopping rule says finished, check, summarise.
#include "evaluator/gpu/timing.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/timing_rule.hpp"
#include "evaluator/gpu/timing_steps.hpp"

namespace ptxbench::gpu {
namespace {

class event_pair {
 public:
  event_pair() {
    PTXB_CU(cuEventCreate(&m_start, CU_EVENT_DEFAULT));
    PTXB_CU(cuEventCreate(&m_stop, CU_EVENT_DEFAULT));
  }
  ~event_pair() {
    cuEventDestroy(m_start);
    cuEventDestroy(m_stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  CUevent start() const { return m_start; }
  CUevent stop() const { return m_stop; }

 private:
  CUevent m_start = nullptr, m_stop = nullptr;
};

// If enqueueing one sample takes longer than this, the hold lets go and the
// sample is counted in unheld_samples (it then includes enqueueing time).
constexpr uint64_t k_hold_timeout_ns = 2000000000ull;

// Two ints of mapped host memory: [0] releases the hold, [1] says it timed out.
struct host_flags {
  int* host = nullptr;
  CUdeviceptr device = 0;
  host_flags() {
    void* p = nullptr;
    PTXB_CU(cuMemHostAlloc(&p, 2 * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    host = static_cast<int*>(p);
    host[0] = host[1] = 0;
    PTXB_CU(cuMemHostGetDevicePointer(&device, p, 0));
  }
  ~host_flags() {
    if (host) cuMemFreeHost(host);
  }
  host_flags(const host_flags&) = delete;
  host_flags& operator=(const host_flags&) = delete;
  const int* device_release() const { return reinterpret_cast<const int*>(device); }
  int* device_timed_out() const { return reinterpret_cast<int*>(device) + 1; }
};

// Times work enqueued on the worker's stream with CUDA events. The work is
// enqueued behind a kernel that holds the stream until the host has enqueued
// all of it (and the stop event): the events then time the GPU alone, not the
// host's enqueueing of a baseline of several cuDNN kernels on a busy machine.
class sampler {
 public:
  explicit sampler(worker_state& w) : m_w(w) {}
  // The work's time (ms); `err` is the work's or the synchronisation's error
  // (then the time is 0). A sample whose hold timed out counts in `unheld`.
  double time(const std::function<CUresult()>& work, CUresult& err, int& unheld) {
    m_flags.host[0] = 0;
    m_flags.host[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    hold_stream(m_flags.device_release(), k_hold_timeout_ns, m_flags.device_timed_out(), m_w.stream);
    PTXB_CU(cuEventRecord(m_ev.start(), m_w.stream));
    err = work();
    PTXB_CU(cuEventRecord(m_ev.stop(), m_w.stream));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    static_cast<volatile int*>(m_flags.host)[0] = 1;
    CUresult s = cuEventSynchronize(m_ev.stop());
    if (static_cast<volatile int*>(m_flags.host)[1] != 0) ++unheld;
    if (err == CUDA_SUCCESS) err = s;
    float ms = 0.f;
    if (err == CUDA_SUCCESS) PTXB_CU(cuEventElapsedTime(&ms, m_ev.start(), m_ev.stop()));
    return double(ms);
  }

 private:
  worker_state& m_w;
  event_pair m_ev;
  host_flags m_flags;
};

// Prepare: the timing seed's inputs and references (before the go: the GPU
// may be shared), the baseline set up, room for every round's comparison
// totals, the inputs' checksums.
void prepare(measurement& m) {
  const task& t = m.job.t;
  m.w.report("inputs and references of the timing seed at " + m.timed.size_name, 120000);
  m.ref = m.refs.prepare(t, m.timed.size, m.job.timing_seed, m.timed.addresses, false);
  m.base_lib = setup_baseline(m.w, m.refs, t, m.timed);
  for (const auto& ts : t.tensors)
    if (ts.role == tensor_role::output) m.outputs.push_back(ts.name);
  m.totals = device_memory(sizeof(compare_totals) * m.outputs.size() * k_max_checked_samples);
  m.inputs_before = input_checksums(m.w, t, m.timed);
}

// What a candidate's failure while timed is: a runtime failure of the stage
// before it (the performance stage is then not reached).
runtime_report timed_failure(const measurement& m, CUresult err) {
  runtime_report rt;
  rt.launch_index = 0;
  rt.size = m.timed.size_name;
  rt.context_lost = is_sticky(err) || cuCtxSynchronize() != CUDA_SUCCESS;
  rt.error = describe(err) + " while timing at " + m.timed.size_name +
             (rt.context_lost ? "; the CUDA context is lost, so the worker is replaced" : "");
  return rt;
}

// The baseline's sample of a round. A failure of the library ends its timing
// (an evaluator error, not the candidate's); a sticky error ends the worker.
double sample_baseline(measurement& m, sampler& s, int& unheld) {
  make_l2_cold(m.w, m.timed);
  CUresult err = CUDA_SUCCESS;
  double b = 0.0;
  try {
    b = s.time([&] { m.base_lib.run(); return CUDA_SUCCESS; }, err, unheld);
  } catch (const std::exception& e) {
    err = CUDA_ERROR_UNKNOWN;
    m.base_lib.missing = std::string("baseline failed while timing: ") + e.what();
  }
  if (err == CUDA_SUCCESS) return b;
  if (is_sticky(err)) throw cuda_error("baseline failed while timing: " + describe(err), err, true);
  m.base_lib.failed = true;
  m.refs.forget(m.base_lib.key);
  if (m.base_lib.missing.empty()) m.base_lib.missing = "baseline failed while timing: " + describe(err);
  m.base_lib.run = nullptr;
  m.baseline.clear();
  return 0.0;
}

// Sample: one round, the candidate then the baseline, each on buffers
// prepared as for a checked run and a cold L2; the candidate's output is
// compared on the device (totals judged in the check step). Returns the
// candidate's failure, if any. The warm-up round's times are not kept.
std::optional<runtime_report> sample_round(measurement& m, sampler& s, bool warm_up) {
  prepare_buffers(m.w, m.job.t, m.job.m, m.timed, m.globals);
  make_l2_cold(m.w, m.timed);
  CUresult err = CUDA_SUCCESS;
  auto candidate = [&]() -> CUresult {
    for (auto& l : m.timed.plan.launches)
      if (CUresult e = enqueue(l, m.w.stream); e != CUDA_SUCCESS) return e;
    return CUDA_SUCCESS;
  };
  double c = s.time(candidate, err, m.unheld);
  if (err != CUDA_SUCCESS) return timed_failure(m, err);
  for (size_t k = 0; k < m.outputs.size(); ++k)
    enqueue_compare_totals(m.w, m.job.t, m.outputs[k], m.timed.size, m.timed.addresses.at(m.outputs[k]),
                           m.ref->outputs.at(m.outputs[k]).as<float>(), m.slot(m.checked, k));
  ++m.checked;
  double b = m.base_lib.run ? sample_baseline(m, s, m.unheld) : 0.0;
  if (warm_up) return std::nullopt;
  m.candidate.push_back(c);
  if (m.base_lib.run) m.baseline.push_back(b);
  return std::nullopt;
}

}  // namespace

timing_outcome run_timing(worker_state& w, reference_cache& refs, const protocol::worker_job& job, size_run& timed,
                          const std::vector<global_section>& globals) {
  timing_outcome out;
  performance_report& p = out.report;
  p.size = timed.size_name;
  p.threshold = job.t.speedup_threshold;
  // The measured peak is bf16's; Hopper's fp8 tensor-core rate is twice it.
  bool fp8 = false;
  for (const auto& ts : job.t.tensors) fp8 |= ts.role == tensor_role::input && ts.type == dtype::fp8_e4m3;
  p.peak_tflops = w.hello.peak_tflops * (fp8 ? 2.0 : 1.0);

  measurement m(w, refs, job, timed, globals);
  prepare(m);
  sampler s(w);
  if (w.await_go) w.await_go();
  choose_baseline(w, refs, m.base_lib, timed.size_name);
  w.report("timing at " + timed.size_name, job.timing_budget_ms + 2 * job.time_limit_ms + 5000, 0, timed.size_name);
  stopping_rule rule;
  rule.budget_ms = job.timing_budget_ms;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  std::optional<sampling_stop> stop;
  for (bool warm_up = true; !stop; warm_up = false) {
    if (auto rt = sample_round(m, s, warm_up)) {
      out.runtime = rt;
      out.stage = {stage_status::not_run, "not reached: runtime failed", 0.0};
      return out;
    }
    if (!warm_up) stop = is_finished(rule, m.candidate, m.base_lib.run ? &m.baseline : nullptr, elapsed_ms(), m.checked);
  }
  const double time_ms = elapsed_ms();
  // The samples are over (the last one was waited for): the checks need the
  // GPU but not the GPU alone, so other processes may go on.
  if (w.gpu_idle) w.gpu_idle();

  check_timed_runs(m, out);
  p.unheld_samples = m.unheld;
  if (m.base_lib.run) p.baseline_name = m.base_lib.name;
  timed_work work;
  work.flops = task_flops(job.t, timed.size);
  for (const auto& ts : job.t.tensors) work.bytes += double(tensor_elements(ts, timed.size)) * dtype_bytes(ts.type);
  work.copy_gbps = w.hello.copy_gbps;
  work.roofline = job.t.baseline == "roofline";
  summarise_samples(p, m.candidate, m.base_lib.run ? &m.baseline : nullptr, *stop, work);
  out.stage = performance_stage(p, bool(m.base_lib.run), m.base_lib.failed, m.base_lib.missing, time_ms);
  return out;
}

}  // namespace ptxbench::gpu
