#pragma once
// The arithmetic of the performance stage, apart from the GPU so that it can
// be tested on any machine: the summary of a list of samples, the stopping
// rule that `run_timing` asks after every sample (nvbench's is_finished), and
// the summary of a finished measurement into the performance report and the
// stage's verdict. No CUDA here. docs/decisions.md says why the thresholds.
#include <optional>
#include <string>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::gpu {

// Samples whose comparison totals fit the worker's device buffer, the
// warm-up's included: the most a measurement takes.
constexpr int k_max_checked_samples = 1000;

// Median, spread and noise of samples (ms).
struct sample_stats {
  double median = 0.0;
  double rel_stddev = 0.0;     // standard deviation / mean (reported as the spread)
  double robust_spread = 0.0;  // 1.4826 x median absolute deviation / median (the rule's noise)
  int count = 0;
};
sample_stats summarize_samples(std::vector<double> v);

// When sampling ends. A measurement converges once both sides have
// min_samples and a noise under max_noise; otherwise the budget ends it (with
// at least min_samples_at_budget), or limit_factor x the budget whatever the
// count, or the sample cap.
struct stopping_rule {
  int min_samples = 10;
  double max_noise = 0.005;
  double budget_ms = 1500.0;
  int min_samples_at_budget = 3;
  double limit_factor = 2.0;
  int max_checked = k_max_checked_samples;
};

// Asked after each timed round: nullopt to take another, or why to stop.
// `baseline` is null when no baseline is being timed (absent, or it failed);
// `elapsed_ms` is the wall time since sampling began (the warm-up included);
// `checked` counts every round whose output was checked (the warm-up too).
std::optional<sampling_stop> is_finished(const stopping_rule& r, const std::vector<double>& candidate,
                                         const std::vector<double>* baseline, double elapsed_ms, int checked);

// At most `cap` of `v`, in order: all of them, or `cap` evenly spaced ones
// with the first and the last among them.
std::vector<float> kept_samples(const std::vector<double>& v,
                                size_t cap = performance_report::k_kept_samples);

// The task's work at the timed size and the worker's measured rates.
struct timed_work {
  double flops = 0.0;        // the task's FLOPs
  double bytes = 0.0;        // every tensor once
  double copy_gbps = 0.0;    // measured device copy bandwidth
  bool roofline = false;     // the task's baseline is the roofline floor (no library covers the variant)
};

// Fills the figures of `p` from the samples: medians, spreads, noise,
// counts, kept samples, TFLOP/s, % of `p.peak_tflops` (set before), the
// physical floor and whether the median is below it, how sampling ended,
// and the speedup when `baseline` (timed to the end) is given.
void summarise_samples(performance_report& p, const std::vector<double>& candidate,
                       const std::vector<double>* baseline, sampling_stop stop, const timed_work& work);

// The stage from a summarised report. Failed below the physical floor.
// With no baseline timed: an evaluator error when the library failed
// (`baseline_failed`), unverified when it is absent (`missing` says why).
// Otherwise passed when the speedup reaches the threshold. A measurement
// that did not converge says so in the reason (the model's feedback).
stage_outcome performance_stage(const performance_report& p, bool baseline_timed, bool baseline_failed,
                                const std::string& missing, double time_ms);

}  // namespace ptxbench::gpu
