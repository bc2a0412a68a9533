#include <atomic>
#include "evaluator/gpu/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/kernels.hpp"
#ifdef PTXBENCH_HAVE_BASELINES
#include "evaluator/baselines/baselines.hpp"
#endif

namespace ptxbench::gpu {
namespace {

constexpr int k_min_samples = 10;
// Every sample's comparison totals stay on the device until the loop ends.
constexpr int k_max_samples = 1000;
constexpr double k_target_rel_stddev = 0.005;
// The measured peaks are what a library GEMM and a device copy reach, not the
// silicon's limits; only a time well below them (25%) is physically suspect.
constexpr double k_floor_margin = 0.75;

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
  CUevent start() const { return m_start; }
  CUevent stop() const { return m_stop; }

 private:
  CUevent m_start = nullptr, m_stop = nullptr;
};

}  // namespace

sample_stats summarize_samples(std::vector<double> v) {
  sample_stats s;
  s.count = int(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  double mean = 0.0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  double var = 0.0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= double(v.size() > 1 ? v.size() - 1 : 1);
  s.rel_stddev = mean > 0 ? std::sqrt(var) / mean : 0.0;
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - s.median));
  std::sort(dev.begin(), dev.end());
  double mad = dev.size() % 2 ? dev[dev.size() / 2] : 0.5 * (dev[dev.size() / 2 - 1] + dev[dev.size() / 2]);
  s.robust_spread = s.median > 0 ? 1.4826 * mad / s.median : 0.0;
  return s;
}

namespace {

// The frontier library on the timed inputs, writing outputs of its own. It is
// kept by the worker (in `refs`, so a candidate's stray write drops it) per
// task and size, with its chosen plan: later evaluations bind it to their
// buffers instead of building it again (~90 ms of host work per evaluation
// under load, on the H200) and are compared with the same plan.
struct kept_baseline {
  std::shared_ptr<baseline> library;
  std::vector<std::pair<std::string, device_memory>> outputs;
  bool chosen = false;
};

struct baseline_setup {
  std::shared_ptr<kept_baseline> kept;  // the library and its outputs (null when there is none)
  std::string key;                      // where it is kept
  std::function<void()> run;            // empty when there is none
  std::string name;
  std::string missing;                  // why there is none ("" when there is one)
  bool failed = false;                  // the library failed: an evaluator error, not the candidate's
  bool reused = false;                  // kept from an earlier evaluation
};

baseline_setup setup_baseline(worker_state& w, reference_cache& refs, const task& t, size_run& timed) {
  baseline_setup s;
  s.missing = "no baseline library in this worker build";
  if (t.baseline == "roofline") {
    s.missing = "no library covers this variant";  // the speedup is against the floor (run_timing)
    return s;
  }
#ifdef PTXBENCH_HAVE_BASELINES
  try {
    s.key = "baseline " + task_to_json(t).dump() + " " + timed.size_name;
    auto k = std::static_pointer_cast<kept_baseline>(refs.kept(s.key));
    baseline_buffers bb;
    if (!k) {
      k = std::make_shared<kept_baseline>();
      for (const auto& ts : t.tensors)
        if (ts.role != tensor_role::input)
          k->outputs.emplace_back(ts.name, device_memory(timed.buffers.at(ts.name)->bytes()));
    }
    for (const auto& ts : t.tensors)
      if (ts.role == tensor_role::input) bb.tensors[ts.name] = timed.addresses.at(ts.name);
    for (const auto& [name, mem] : k->outputs) bb.tensors[name] = mem.ptr();
    if (k->library && k->library->bind(bb)) {
      s.reused = true;
      w.report("binding the kept baseline at " + timed.size_name, 120000);
    } else {
      w.report("setting up the baseline at " + timed.size_name, 120000);
      k->library = make_baseline(t, timed.size, bb, w.stream, baseline_choice::later);
      k->chosen = false;
    }
    std::shared_ptr<baseline> b = k->library;
    if (b && b->available()) {
      s.kept = k;
      s.missing.clear();
      s.run = [b, &w] { b->run(w.stream); };
      refs.keep(s.key, k);
    } else {
      s.missing = b ? b->why_not() : "no baseline for " + t.baseline;
      refs.forget(s.key);
    }
  } catch (const cuda_error& e) {
    if (e.sticky) throw;
    refs.forget(s.key);
    s.failed = true;
    s.missing = std::string("baseline failed: ") + e.what();
  } catch (const std::exception& e) {
    refs.forget(s.key);
    s.failed = true;
    s.missing = std::string("baseline failed: ") + e.what();
  }
#else
  (void)w;
  (void)refs;
  (void)t;
  (void)timed;
#endif
  return s;
}

// Times the library's plans and keeps the fastest: with the GPU ours alone
// (after the go), or a plan timed beside another process's work may be kept.
// A kept baseline keeps the plan it chose.
void choose_baseline(worker_state& w, reference_cache& refs, baseline_setup& s, const std::string& size_name) {
#ifdef PTXBENCH_HAVE_BASELINES
  if (!s.kept || !s.run) return;
  if (s.kept->chosen) {
    s.name = s.kept->library->name();
    return;
  }
  w.report("choosing the baseline's plan at " + size_name, 120000);
  try {
    s.kept->library->choose(w.stream);
    s.kept->chosen = true;
    s.name = s.kept->library->name();
  } catch (const cuda_error& e) {
    if (e.sticky) throw;
    s.failed = true;
    s.missing = std::string("baseline failed choosing its plan: ") + e.what();
    s.run = nullptr;
  } catch (const std::exception& e) {
    s.failed = true;
    s.missing = std::string("baseline failed choosing its plan: ") + e.what();
    s.run = nullptr;
  }
  if (!s.run) refs.forget(s.key);
#else
  (void)w;
  (void)refs;
  (void)s;
  (void)size_name;
#endif
}

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

std::string sample_failure(const output_check& c, int index, int count) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s is wrong in timed run %d of %d at %s (the checked runs were right): %lld of %lld elements bad, "
                "%lld never written, max abs error %.3g, rel L2 %.3g; the timed runs must compute the same result",
                c.tensor.c_str(), index + 1, count, c.size.c_str(),
                (long long)(c.mismatch_fraction * double(c.elements) + 0.5), (long long)c.elements,
                (long long)c.untouched_count, c.max_abs_error, c.rel_l2_error);
  return buf;
}

}  // namespace

timing_outcome run_timing(worker_state& w, reference_cache& refs, const protocol::worker_job& job, size_run& timed,
                          const std::vector<global_section>& globals) {
  timing_outcome out;
  const task& t = job.t;
  performance_report& p = out.report;
  p.size = timed.size_name;
  p.threshold = t.speedup_threshold;
  // The measured peak is bf16's; Hopper's fp8 tensor-core rate is twice it.
  bool fp8 = false;
  for (const auto& ts : t.tensors) fp8 |= ts.role == tensor_role::input && ts.type == dtype::fp8_e4m3;
  p.peak_tflops = w.hello.peak_tflops * (fp8 ? 2.0 : 1.0);

  w.report("inputs and references of the timing seed at " + timed.size_name, 120000);
  std::shared_ptr<const reference_set> ref = refs.prepare(t, timed.size, job.timing_seed, timed.addresses, false);
  baseline_setup base_lib = setup_baseline(w, refs, t, timed);
  std::vector<std::string> outputs;
  for (const auto& ts : t.tensors)
    if (ts.role == tensor_role::output) outputs.push_back(ts.name);
  device_memory totals(sizeof(compare_totals) * outputs.size() * k_max_samples);
  auto slot = [&](int sample, size_t k) { return totals.as<compare_totals>() + size_t(sample) * outputs.size() + k; };
  auto inputs_before = input_checksums(w, t, timed);

  event_pair ev;
  // Each sample's work is enqueued behind a kernel that holds the stream
  // until the host has enqueued all of it (and the stop event): the events
  // then time the GPU alone, not the host's enqueueing of a baseline of
  // several cuDNN kernels on a busy machine.
  host_flags flags;
  auto sample = [&](const std::function<CUresult()>& work, CUresult& err) -> double {
    flags.host[0] = 0;
    flags.host[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    hold_stream(flags.device_release(), k_hold_timeout_ns, flags.device_timed_out(), w.stream);
    PTXB_CU(cuEventRecord(ev.start(), w.stream));
    err = work();
    PTXB_CU(cuEventRecord(ev.stop(), w.stream));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    static_cast<volatile int*>(flags.host)[0] = 1;
    CUresult s = cuEventSynchronize(ev.stop());
    if (static_cast<volatile int*>(flags.host)[1] != 0) ++p.unheld_samples;
    if (err == CUDA_SUCCESS) err = s;
    float ms = 0.f;
    if (err == CUDA_SUCCESS) PTXB_CU(cuEventElapsedTime(&ms, ev.start(), ev.stop()));
    return double(ms);
  };
  auto candidate = [&]() -> CUresult {
    for (auto& l : timed.plan.launches)
      if (CUresult e = enqueue(l, w.stream); e != CUDA_SUCCESS) return e;
    return CUDA_SUCCESS;
  };
  auto baseline = [&]() -> CUresult {
    base_lib.run();
    return CUDA_SUCCESS;
  };

  if (w.await_go) w.await_go();
  choose_baseline(w, refs, base_lib, timed.size_name);
  w.report("timing at " + timed.size_name, job.timing_budget_ms + 2 * job.time_limit_ms + 5000, 0, timed.size_name);
  std::vector<double> cand, base;
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  int checked = 0;  // samples whose outputs were compared (the warm-up's too)
  for (int i = -1;; ++i) {  // i == -1: warm-up
    prepare_buffers(w, t, job.m, timed, globals);
    make_l2_cold(w, timed);
    CUresult err = CUDA_SUCCESS;
    double c = sample(candidate, err);
    if (err != CUDA_SUCCESS) {
      runtime_report rt;
      rt.launch_index = 0;
      rt.size = timed.size_name;
      rt.context_lost = is_sticky(err) || cuCtxSynchronize() != CUDA_SUCCESS;
      rt.error = describe(err) + " while timing at " + timed.size_name +
                 (rt.context_lost ? "; the CUDA context is lost, so the worker is replaced" : "");
      out.runtime = rt;
      out.stage = {stage_status::not_run, "not reached: runtime failed", 0.0};
      return out;
    }
    for (size_t k = 0; k < outputs.size(); ++k)
      enqueue_compare_totals(w, t, outputs[k], timed.size, timed.addresses.at(outputs[k]),
                             ref->outputs.at(outputs[k]).as<float>(), slot(checked, k));
    ++checked;
    double b = 0.0;
    if (base_lib.run) {
      make_l2_cold(w, timed);
      try {
        b = sample(baseline, err);
      } catch (const std::exception& e) {
        err = CUDA_ERROR_UNKNOWN;
        base_lib.missing = std::string("baseline failed while timing: ") + e.what();
      }
      if (err != CUDA_SUCCESS) {
        if (is_sticky(err)) throw cuda_error("baseline failed while timing: " + describe(err), err, true);
        base_lib.failed = true;
        refs.forget(base_lib.key);
        if (base_lib.missing.empty()) base_lib.missing = "baseline failed while timing: " + describe(err);
        base_lib.run = nullptr;
        base.clear();
      }
    }
    if (i < 0) continue;
    cand.push_back(c);
    if (base_lib.run) base.push_back(b);
    auto cs = summarize_samples(cand), bs = summarize_samples(base);
    bool enough = int(cand.size()) >= k_min_samples && cs.robust_spread < k_target_rel_stddev &&
                  (!base_lib.run || bs.robust_spread < k_target_rel_stddev);
    double spent = elapsed_ms();
    if (enough || (spent > job.timing_budget_ms && cand.size() >= 3) || spent > 2 * job.timing_budget_ms ||
        checked >= k_max_samples)
      break;
  }
  double time_ms = elapsed_ms();
  // The samples are over (the last one was waited for): the checks below
  // need the GPU but not the GPU alone, so other processes may go on.
  if (w.gpu_idle) w.gpu_idle();

  // Every sample's output, judged now.
  w.report("checking the timed runs' outputs at " + timed.size_name, 60000);
  std::vector<compare_totals> host(outputs.size() * size_t(checked));
  PTXB_CU(cuMemcpyDtoHAsync(host.data(), totals.ptr(), host.size() * sizeof(compare_totals), w.stream));
  PTXB_CU(cuStreamSynchronize(w.stream));
  out.samples_checked = checked;
  for (int i = 0; i < checked; ++i) {
    bool wrong = false;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const tensor_spec& ts = *t.find_tensor(outputs[k]);
      output_check c = judge_totals(t, outputs[k], timed.size_name, tensor_elements(ts, timed.size),
                                    host[size_t(i) * outputs.size() + k]);
      if (c.passed) continue;
      if (out.correctness_failure.empty()) {
        out.correctness_failure = sample_failure(c, i, checked);
        c.timed_run = true;
        out.timed_checks.push_back(c);
      }
      wrong = true;
    }
    out.samples_wrong += wrong;
  }
  // The last sample in full (where the bad elements sit, if any).
  for (const auto& name : outputs) {
    output_check c = compare_with_reference(w, t, name, timed, ref->outputs.at(name).as<float>());
    c.timed_run = true;
    if (!c.passed && out.correctness_failure.empty())
      out.correctness_failure = sample_failure(c, checked - 1, checked) + (c.where.empty() ? "" : "; " + c.where);
    out.timed_checks.push_back(c);
  }
  if (input_checksums(w, t, timed) != inputs_before) {
    p.inputs_rechecked = false;
    out.correctness_failure += std::string(out.correctness_failure.empty() ? "" : "; ") +
                               "an input was modified during the timed runs at " + timed.size_name;
  } else {
    p.inputs_rechecked = true;
  }
  for (const auto& [name, buf] : timed.buffers)
    if (int64_t damaged = buf->damaged_guard_bytes(w.scratch8.as<unsigned long long>(), w.stream); damaged > 0) {
      refs.clear();
      out.correctness_failure += std::string(out.correctness_failure.empty() ? "" : "; ") + "out-of-bounds write: " +
                                 std::to_string(damaged) + " bytes changed in the guard regions around " + name +
                                 " during the timed runs";
    }
  if (!refs.intact(*ref)) {
    refs.clear();
    out.correctness_failure += std::string(out.correctness_failure.empty() ? "" : "; ") +
                               "the kernel wrote outside its buffers, into the evaluator's reference data, while timed";
  }
  p.output_rechecked = out.correctness_failure.empty();

  // The baseline's own error on these inputs: what an honest implementation reaches.
  if (base_lib.run) {
    device_memory one(sizeof(compare_totals));
    for (const auto& [name, mem] : base_lib.kept->outputs) {
      if (!ref->outputs.count(name)) continue;
      const tensor_spec& spec = *t.find_tensor(name);
      // In the type the library writes it in, if it writes it in the task's layout at all.
      std::optional<dtype> type = spec.type;
#ifdef PTXBENCH_HAVE_BASELINES
      type = base_lib.kept->library->output_type(name, spec.type);
#endif
      if (!type) continue;
      PTXB_CU(cuMemsetD8Async(one.ptr(), 0, sizeof(compare_totals), w.stream));
      PTXB_CU(cuMemsetD8Async(one.ptr() + offsetof(compare_totals, first_bad), 0xFF, 8, w.stream));
      const tolerance& tol = t.tolerance_for(name);
      compare_output(mem.ptr(), to_elem(*type), ref->outputs.at(name).as<float>(), tensor_elements(spec, timed.size),
                     1, float(tol.atol), float(tol.rtol), one.as<compare_totals>(), nullptr, nullptr, nullptr,
                     w.stream);
      compare_totals h{};
      PTXB_CU(cuMemcpyDtoHAsync(&h, one.ptr(), sizeof h, w.stream));
      PTXB_CU(cuStreamSynchronize(w.stream));
      const tensor_spec& ts = *t.find_tensor(name);
      output_check c = judge_totals(t, name, timed.size_name, tensor_elements(ts, timed.size), h);
      p.baseline_rel_l2[name] = c.rel_l2_error;
      p.baseline_max_err_to_scale[name] = c.max_err_to_scale;
    }
  }

  auto cs = summarize_samples(cand), bs = summarize_samples(base);
  p.candidate_ms = cs.median;
  p.candidate_rel_spread = cs.rel_stddev;
  p.candidate_samples = cs.count;
  double flops = task_flops(t, timed.size);
  p.candidate_tflops = cs.median > 0 ? flops / (cs.median * 1e9) : 0.0;
  p.pct_of_peak = p.peak_tflops > 0 ? 100.0 * p.candidate_tflops / p.peak_tflops : 0.0;
  if (base_lib.run) {
    p.baseline_name = base_lib.name;
    p.baseline_ms = bs.median;
    p.baseline_rel_spread = bs.rel_stddev;
    p.baseline_samples = bs.count;
    p.baseline_tflops = bs.median > 0 ? flops / (bs.median * 1e9) : 0.0;
    p.speedup = cs.median > 0 ? bs.median / cs.median : 0.0;
  }
  double bytes = 0;
  for (const auto& ts : t.tensors) bytes += double(tensor_elements(ts, timed.size)) * dtype_bytes(ts.type);
  double mem_floor = w.hello.copy_gbps > 0 ? bytes / (w.hello.copy_gbps * 1e9) * 1e3 : 0.0;
  double math_floor = p.peak_tflops > 0 ? flops / (p.peak_tflops * 1e12) * 1e3 : 0.0;
  p.floor_ms = std::max(mem_floor, math_floor);
  p.below_floor = p.candidate_ms < k_floor_margin * p.floor_ms;
  if (base_lib.run) p.baseline_kind = "library";
  const bool roofline = t.baseline == "roofline" && p.floor_ms > 0 && cs.median > 0;
  if (roofline) {
    char name[200];
    std::snprintf(name, sizeof name, "roofline floor (max of %.0f MB / %.0f GB/s and %.3g GFLOP / %.0f TFLOP/s)",
                  bytes / 1e6, w.hello.copy_gbps, flops / 1e9, p.peak_tflops);
    p.baseline_kind = "roofline";
    p.baseline_name = name;
    p.baseline_ms = p.floor_ms;
    p.speedup = p.floor_ms / cs.median;
  }

  char buf[320];
  if (p.below_floor) {
    std::snprintf(buf, sizeof buf,
                  "%.4f ms is below the physical floor of %.4f ms (bytes / measured bandwidth, FLOPs / measured peak): "
                  "the timing cannot be trusted",
                  p.candidate_ms, p.floor_ms);
    out.stage = {stage_status::failed, buf, time_ms};
  } else if (roofline) {
    bool ok = p.speedup >= p.threshold;
    std::snprintf(buf, sizeof buf, "%.4f ms vs the roofline floor %.4f ms (no library covers this variant): %.3fx %s "
                  "threshold %.2fx; %.0f TFLOP/s (%.0f%% of measured peak)",
                  p.candidate_ms, p.floor_ms, p.speedup, ok ? ">=" : "<", p.threshold, p.candidate_tflops,
                  p.pct_of_peak);
    out.stage = {ok ? stage_status::passed : stage_status::failed, buf, time_ms};
  } else if (!base_lib.run) {
    std::snprintf(buf, sizeof buf, "%.4f ms (%.0f TFLOP/s, %.0f%% of measured peak); no speedup: %s", p.candidate_ms,
                  p.candidate_tflops, p.pct_of_peak, base_lib.missing.c_str());
    // A library that failed is the evaluator's fault; one that is absent from the build is a plain gap.
    out.stage = {base_lib.failed ? stage_status::error : stage_status::unverified, buf, time_ms};
  } else {
    bool ok = p.speedup >= p.threshold;
    std::snprintf(buf, sizeof buf, "%.4f ms vs %s %.4f ms: speedup %.3fx %s threshold %.2fx; %.0f TFLOP/s (%.0f%% of measured peak)",
                  p.candidate_ms, p.baseline_name.c_str(), p.baseline_ms, p.speedup, ok ? ">=" : "<", p.threshold,
                  p.candidate_tflops, p.pct_of_peak);
    out.stage = {ok ? stage_status::passed : stage_status::failed, buf, time_ms};
  }
  return out;
}

}  // namespace ptxbench::gpu
