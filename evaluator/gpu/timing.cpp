#include "evaluator/gpu/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/kernels.hpp"
#ifdef PTXBENCH_HAVE_BASELINES
#include "evaluator/baselines/baselines.hpp"
#endif

namespace ptxbench::gpu {
namespace {

constexpr int k_min_samples = 10;
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

timing_outcome run_timing(worker_state& w, const protocol::worker_job& job, size_run& timed,
                          const reference_set& refs) {
  timing_outcome out;
  const task& t = job.t;
  performance_report& p = out.report;
  p.size = timed.size_name;
  p.threshold = t.speedup_threshold;
  // The measured peak is bf16's; Hopper's fp8 tensor-core rate is twice it.
  bool fp8 = false;
  for (const auto& ts : t.tensors) fp8 |= ts.role == tensor_role::input && ts.type == dtype::fp8_e4m3;
  p.peak_tflops = w.hello.peak_tflops * (fp8 ? 2.0 : 1.0);

  // The baseline reads the candidate's inputs and writes outputs of its own.
  std::vector<device_memory> baseline_outputs;
  std::function<void()> baseline_run;
  std::string baseline_missing = "no baseline library in this worker build";
#ifdef PTXBENCH_HAVE_BASELINES
  try {
    baseline_buffers bb;
    for (const auto& ts : t.tensors) {
      if (ts.role == tensor_role::input) {
        bb.tensors[ts.name] = timed.addresses.at(ts.name);
      } else {
        baseline_outputs.emplace_back(timed.buffers.at(ts.name)->bytes());
        bb.tensors[ts.name] = baseline_outputs.back().ptr();
      }
    }
    w.report("setting up the baseline at " + timed.size_name, 120000);
    std::shared_ptr<baseline> b = make_baseline(t, timed.size, bb, w.stream);
    if (b && b->available()) {
      p.baseline_name = b->name();
      baseline_run = [b, &w] { b->run(w.stream); };
    } else {
      baseline_missing = b ? b->why_not() : "no baseline for " + t.baseline;
    }
  } catch (const cuda_error& e) {
    if (e.sticky) throw;
    baseline_missing = std::string("baseline failed: ") + e.what();
  } catch (const std::exception& e) {
    baseline_missing = std::string("baseline failed: ") + e.what();
  }
#endif

  event_pair ev;
  size_t flush_words = w.l2_flush.bytes() / 4;
  unsigned flush_value = 0;
  auto sample = [&](const std::function<CUresult()>& work, CUresult& err) -> double {
    PTXB_CU(cuMemsetD32Async(w.l2_flush.ptr(), ++flush_value, flush_words, w.stream));
    PTXB_CU(cuEventRecord(ev.start(), w.stream));
    err = work();
    PTXB_CU(cuEventRecord(ev.stop(), w.stream));
    CUresult s = cuEventSynchronize(ev.stop());
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
    baseline_run();
    return CUDA_SUCCESS;
  };

  w.report("timing at " + timed.size_name, job.timing_budget_ms + 2 * job.time_limit_ms + 5000, 0, timed.size_name);
  std::vector<double> cand, base;
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  for (int i = -1;; ++i) {  // i == -1: warm-up
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
    double b = baseline_run ? sample(baseline, err) : 0.0;
    if (err != CUDA_SUCCESS) throw cuda_error("baseline failed while timing: " + describe(err), err, is_sticky(err));
    if (i < 0) continue;
    cand.push_back(c);
    if (baseline_run) base.push_back(b);
    auto cs = summarize_samples(cand), bs = summarize_samples(base);
    bool enough = int(cand.size()) >= k_min_samples && cs.robust_spread < k_target_rel_stddev &&
                  (!baseline_run || bs.robust_spread < k_target_rel_stddev);
    double spent = elapsed_ms();
    if (enough || (spent > job.timing_budget_ms && cand.size() >= 3) || spent > 2 * job.timing_budget_ms) break;
  }
  double time_ms = elapsed_ms();
  auto cs = summarize_samples(cand), bs = summarize_samples(base);
  p.candidate_ms = cs.median;
  p.candidate_rel_spread = cs.rel_stddev;
  p.candidate_samples = cs.count;
  double flops = task_flops(t, timed.size);
  p.candidate_tflops = cs.median > 0 ? flops / (cs.median * 1e9) : 0.0;
  p.pct_of_peak = p.peak_tflops > 0 ? 100.0 * p.candidate_tflops / p.peak_tflops : 0.0;
  if (baseline_run) {
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

  // The output must still be right after all the timed calls.
  w.report("re-checking outputs after timing", 60000);
  p.output_rechecked = true;
  for (const auto& ts : t.tensors) {
    if (ts.role != tensor_role::output) continue;
    output_check c = compare_with_reference(w, t, ts.name, timed, refs.outputs.at(ts.name).as<float>());
    if (!c.passed) {
      p.output_rechecked = false;
      out.recheck_failure = ts.name + " is wrong after the timed runs at " + timed.size_name +
                            " (it was right after the first call): " + c.where;
    }
  }

  char buf[320];
  if (p.below_floor) {
    std::snprintf(buf, sizeof buf,
                  "%.4f ms is below the physical floor of %.4f ms (bytes / measured bandwidth, FLOPs / measured peak): "
                  "the timing cannot be trusted",
                  p.candidate_ms, p.floor_ms);
    out.stage = {stage_status::failed, buf, time_ms};
  } else if (!baseline_run) {
    std::snprintf(buf, sizeof buf, "%.4f ms (%.0f TFLOP/s, %.0f%% of measured peak); no speedup: %s", p.candidate_ms,
                  p.candidate_tflops, p.pct_of_peak, baseline_missing.c_str());
    out.stage = {stage_status::unverified, buf, time_ms};
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
