#pragma once
// The performance stage, nvbench's way: cold L2 before every sample (a write
// over twice the L2 size), CUDA events on the launch stream around the
// launches only, a warm-up, then samples of candidate and baseline
// interleaved until both have at least 10 and a relative standard deviation
// under 0.5% (judged on a robust spread, 1.4826 x median absolute deviation /
// median, so that a rare outlier sample does not keep the loop running until
// the budget ends), or the time budget ends. Medians are compared; the output is
// checked again afterwards; a time under the physical floor is flagged.
#include <optional>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/gpu/candidate_run.hpp"
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/pool/protocol.hpp"

namespace ptxbench::gpu {

struct timing_outcome {
  stage_outcome stage;
  performance_report report;
  std::optional<runtime_report> runtime;  // the candidate failed while being timed
  std::string recheck_failure;            // non-empty: output wrong after the timed runs
};

timing_outcome run_timing(worker_state& w, const protocol::worker_job& job, size_run& timed,
                          const reference_set& refs);

// Median and relative standard deviation of samples (ms).
struct sample_stats {
  double median = 0.0;
  double rel_stddev = 0.0;   // standard deviation / mean
  double robust_spread = 0.0;  // 1.4826 x median absolute deviation / median
  int count = 0;
};
sample_stats summarize_samples(std::vector<double> v);

}  // namespace ptxbench::gpu
