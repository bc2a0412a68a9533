#pragma once
// Benchmark figures per model x task (DESIGN.md, "Report").
//
// A trajectory counts as compiled / correct / instructions-ok / passed after
// round r when any of its candidates of rounds 0..r was (best so far), so the
// per-round curves never fall and the last round is the trajectory's result.
// fast_p is the fraction of trajectories with a correct candidate whose speedup
// over the frontier library is > p (KernelBench's fast_p, best so far).
// pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k) over the n samples
// (trajectories) of the task, c of which passed every stage.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "agent/data/run_data.hpp"

namespace ptxbench::data {

inline const std::vector<double> fast_p_thresholds{0.0, 0.5, 0.8, 1.0};
inline const std::vector<int> pass_k_values{1, 5, 10};

struct rates {
  int trajectories = 0;
  double compiled = 0.0;      // fractions in [0, 1]
  double correct = 0.0;
  double instructions = 0.0;
  double passed = 0.0;
  std::vector<double> fast_p;  // one per fast_p_thresholds
};

struct group_metrics {
  std::string model;
  std::string task;
  std::string family;
  int trajectories = 0;
  int candidates = 0;
  int passed_trajectories = 0;     // c of pass@k
  rates final;                     // after every round
  std::vector<rates> per_round;    // index r: after round r
  std::map<int, double> pass_at_k; // k -> value, for k <= trajectories
  std::vector<double> speedups;    // per trajectory with a correct candidate: its best speedup, sorted
  // Candidates by verdict: index 0..5 the failing stage, 6 passed; unevaluated apart.
  std::array<int, 7> verdicts{};
  int unevaluated = 0;
  std::array<int, 6> stage_passed{};  // candidates whose stage s passed: the funnel
};

// 1 - C(n-c,k)/C(n,k), computed as a product so large n do not overflow.
// Requires 0 <= c <= n and 1 <= k <= n.
double pass_at_k(int n, int c, int k);

// Groups by (model, task), ordered by model then task.
std::vector<group_metrics> compute_metrics(const std::vector<experiment_data>& experiments);

// Median of a sorted, non-empty vector.
double median_sorted(const std::vector<double>& sorted);

}  // namespace ptxbench::data
