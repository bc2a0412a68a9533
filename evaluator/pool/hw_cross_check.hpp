#pragma once
// The hardware cross-check of the instructions stage: the patched counting
// pass slows every instruction about tenfold, so a kernel could time itself
// and take the target path only when it is counted. The hardware's own
// counters (CUPTI's range profiler, evaluator/profile/hw_counter.hpp) read
// the same launches at the timed size in a run that is not instrumented and
// runs at full speed: the second of two runs on the same inputs, so a kernel
// that copies a result it kept from the first computes nothing in it. Each
// launch's tensor-pipe instructions per kind must then match the patched
// counts of that launch at the timed size:
//   gmma (HGMMA, QGMMA, IGMMA, BGMMA), imma (IMMA), dmma (DMMA): within the tolerance;
//   hmma: between HMMA and HMMA + HFMA2.MMA (whether the counter also counts
//         HFMA2.MMA on the tensor pipe is the hardware's business), each bound
//         widened by the tolerance.
// Tolerance: 1% of the larger count + 64 warp instructions. The counts of a
// kernel that does the same work in both runs are equal (tensor instructions
// do not spin); the margin absorbs nothing else by design.
#include <string>
#include <vector>

#include "evaluator/compile/compile.hpp"
#include "evaluator/pool/instruction_proof.hpp"

namespace ptxbench {

inline constexpr double k_hw_relative_tolerance = 0.01;
inline constexpr double k_hw_absolute_tolerance = 64;

// What the hardware counted per launch of the timed size: values[launch][metric]
// (protocol::hw_check_metrics()).
struct hw_counts {
  std::vector<std::string> metrics;
  std::vector<std::vector<double>> values;
};

// The cross-check as the supervisor collects it from its spare job.
struct hw_outcome {
  bool asked = false;    // the check was on for this candidate
  bool ran = false;      // counts came back
  std::string missing;   // why none came back (the machine's: the stage is unverified)
  hw_counts counts;
};

// "" when every launch's counts agree with `timed` (the patched counts of the
// timed size, every launch), else the disagreement in words, e.g.
// "launch 0: 0 gmma instructions when not instrumented, 1.05M when counted".
// `summary` gets the compared figures either way.
std::string compare_hw_counts(const sass_listing& sass, const size_counts& timed, const hw_counts& hw,
                              std::string& summary);

}  // namespace ptxbench
