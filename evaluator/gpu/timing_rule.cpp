#include "evaluator/gpu/timing_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ptxbench::gpu {
namespace {

// The measured peaks are what a library GEMM and a device copy reach, not the
// silicon's limits; only a time well below them (25%) is physically suspect.
constexpr double k_floor_margin = 0.75;

double median_of_sorted(const std::vector<double>& v) {
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

sample_stats summarize_samples(std::vector<double> v) {
  sample_stats s;
  s.count = int(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = median_of_sorted(v);
  double mean = 0.0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  double var = 0.0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= double(v.size() > 1 ? v.size() - 1 : 1);
  s.rel_stddev = mean > 0 ? std::sqrt(var) / mean : 0.0;
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - s.median));
  std::sort(dev.begin(), dev.end());
  s.robust_spread = s.median > 0 ? 1.4826 * median_of_sorted(dev) / s.median : 0.0;
  return s;
}

std::optional<sampling_stop> is_finished(const stopping_rule& r, const std::vector<double>& candidate,
                                         const std::vector<double>* baseline, double elapsed_ms, int checked) {
  const int n = int(candidate.size());
  bool quiet = n >= r.min_samples && summarize_samples(candidate).robust_spread < r.max_noise &&
               (!baseline || summarize_samples(*baseline).robust_spread < r.max_noise);
  if (quiet) return sampling_stop::converged;
  if (elapsed_ms > r.budget_ms && n >= r.min_samples_at_budget) return sampling_stop::time_budget;
  if (elapsed_ms > r.limit_factor * r.budget_ms) return sampling_stop::time_limit;
  if (checked >= r.max_checked) return sampling_stop::sample_cap;
  return std::nullopt;
}

std::vector<float> kept_samples(const std::vector<double>& v, size_t cap) {
  std::vector<float> out;
  if (v.size() <= cap || cap < 2) {
    for (size_t i = 0; i < v.size() && i < cap; ++i) out.push_back(float(v[i]));
    return out;
  }
  // Index i of cap maps to round(i (n-1) / (cap-1)): 0 and n-1 at the ends,
  // strictly increasing since n > cap.
  const size_t last = v.size() - 1, steps = cap - 1;
  for (size_t i = 0; i < cap; ++i) out.push_back(float(v[(i * last + steps / 2) / steps]));
  return out;
}

void summarise_samples(performance_report& p, const std::vector<double>& candidate,
                       const std::vector<double>* baseline, sampling_stop stop, const timed_work& work) {
  const sample_stats cs = summarize_samples(candidate);
  p.candidate_ms = cs.median;
  p.candidate_rel_spread = cs.rel_stddev;
  p.candidate_noise = cs.robust_spread;
  p.candidate_samples = cs.count;
  p.candidate_sample_ms = kept_samples(candidate);
  p.candidate_tflops = cs.median > 0 ? work.flops / (cs.median * 1e9) : 0.0;
  p.pct_of_peak = p.peak_tflops > 0 ? 100.0 * p.candidate_tflops / p.peak_tflops : 0.0;
  if (baseline) {
    const sample_stats bs = summarize_samples(*baseline);
    p.baseline_ms = bs.median;
    p.baseline_rel_spread = bs.rel_stddev;
    p.baseline_noise = bs.robust_spread;
    p.baseline_samples = bs.count;
    p.baseline_sample_ms = kept_samples(*baseline);
    p.baseline_tflops = bs.median > 0 ? work.flops / (bs.median * 1e9) : 0.0;
    p.speedup = cs.median > 0 ? bs.median / cs.median : 0.0;
  }
  double mem_floor = work.copy_gbps > 0 ? work.bytes / (work.copy_gbps * 1e9) * 1e3 : 0.0;
  double math_floor = p.peak_tflops > 0 ? work.flops / (p.peak_tflops * 1e12) * 1e3 : 0.0;
  p.floor_ms = std::max(mem_floor, math_floor);
  p.below_floor = p.candidate_ms < k_floor_margin * p.floor_ms;
  if (baseline) p.baseline_kind = "library";
  if (work.roofline && p.floor_ms > 0 && cs.median > 0) {
    char name[200];
    std::snprintf(name, sizeof name, "roofline floor (max of %.0f MB / %.0f GB/s and %.3g GFLOP / %.0f TFLOP/s)",
                  work.bytes / 1e6, work.copy_gbps, work.flops / 1e9, p.peak_tflops);
    p.baseline_kind = "roofline";
    p.baseline_name = name;
    p.baseline_ms = p.floor_ms;
    p.speedup = p.floor_ms / cs.median;
  }
  p.stop = stop;
  p.converged = stop == sampling_stop::converged;
}

namespace {

// "" when sampling converged; otherwise why it ended, for the stage's reason.
std::string sampling_note(const performance_report& p) {
  if (p.converged || p.stop == sampling_stop::unrecorded) return "";
  const char* why = p.stop == sampling_stop::time_budget  ? "the timing budget ended it"
                    : p.stop == sampling_stop::time_limit ? "twice the timing budget ended it"
                                                          : "the sample cap ended it";
  const stopping_rule rule;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "; sampling did not converge: %s after %d samples (noise %.2f%%; converged is under %.2f%% with at "
                "least %d samples)",
                why, p.candidate_samples, 100.0 * std::max(p.candidate_noise, p.baseline_noise), 100.0 * rule.max_noise,
                rule.min_samples);
  return buf;
}

}  // namespace

stage_outcome performance_stage(const performance_report& p, bool baseline_timed, bool baseline_failed,
                                const std::string& missing, double time_ms) {
  char buf[400];
  if (p.below_floor) {
    std::snprintf(buf, sizeof buf,
                  "%.4f ms is below the physical floor of %.4f ms (bytes / measured bandwidth, FLOPs / measured peak): "
                  "the timing cannot be trusted",
                  p.candidate_ms, p.floor_ms);
    return {stage_status::failed, buf, time_ms};
  }
  if (p.baseline_kind == "roofline") {
    const bool ok = p.speedup >= p.threshold;
    std::snprintf(buf, sizeof buf,
                  "%.4f ms vs the roofline floor %.4f ms (no library covers this variant): %.3fx %s threshold %.2fx; "
                  "%.0f TFLOP/s (%.0f%% of measured peak)",
                  p.candidate_ms, p.floor_ms, p.speedup, ok ? ">=" : "<", p.threshold, p.candidate_tflops,
                  p.pct_of_peak);
    return {ok ? stage_status::passed : stage_status::failed, buf + sampling_note(p), time_ms};
  }
  if (!baseline_timed) {
    std::snprintf(buf, sizeof buf, "%.4f ms (%.0f TFLOP/s, %.0f%% of measured peak); no speedup: %s", p.candidate_ms,
                  p.candidate_tflops, p.pct_of_peak, missing.c_str());
    // A library that failed is the evaluator's fault; one that is absent from the build is a plain gap.
    return {baseline_failed ? stage_status::error : stage_status::unverified, buf + sampling_note(p), time_ms};
  }
  bool ok = p.speedup >= p.threshold;
  std::snprintf(buf, sizeof buf,
                "%.4f ms vs %s %.4f ms: speedup %.3fx %s threshold %.2fx; %.0f TFLOP/s (%.0f%% of measured peak)",
                p.candidate_ms, p.baseline_name.c_str(), p.baseline_ms, p.speedup, ok ? ">=" : "<", p.threshold,
                p.candidate_tflops, p.pct_of_peak);
  return {ok ? stage_status::passed : stage_status::failed, buf + sampling_note(p), time_ms};
}

}  // namespace ptxbench::gpu
