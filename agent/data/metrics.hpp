#pragma once
// Benchmark figures per experiment x model x task (docs/design.md, "Report").
//
// A trajectory counts as compiled / correct / instructions-ok / passed after
// round r when any of its candidates of rounds 0..r was (best so far), so the
// per-round curves never fall and the last round is the trajectory's result.
// fast_p is the fraction of trajectories with a correct candidate whose speedup
// over the frontier library is > p (KernelBench's fast_p, best so far).
// pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k) over the n samples
// (trajectories) of the task, c of which passed every stage.
// A stage that did not run (no GPU) or could not be verified is "not run":
// it is never counted as failed, and a rate whose stage never ran is shown
// as "not run", not as 0%.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/data/run_data.hpp"
#include "agent/data/task_catalogue.hpp"

namespace ptxbench::data {

inline const std::vector<double> fast_p_thresholds{0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
constexpr size_t fast_1_index = 3;  // fast_p_thresholds[3] == 1.0
inline const std::vector<int> pass_k_values{1, 5, 10};

struct rates {
  int trajectories = 0;
  double compiled = 0.0;      // fractions in [0, 1]
  double correct = 0.0;
  double instructions = 0.0;
  double passed = 0.0;
  std::vector<double> fast_p;  // one per fast_p_thresholds
};

// Candidates of a group by the status of one stage.
struct stage_counts {
  int passed = 0;
  int failed = 0;
  int not_run = 0;  // not run or unverified
  // Trajectories with a candidate that passed / with one where the stage ran.
  int trajectories_passed = 0;
  int trajectories_ran = 0;
};

struct group_metrics {
  std::string experiment;
  std::string model;
  std::string task;
  std::string family;
  // From the task catalogue (annotate_tasks): 0 and {} when it does not know the task.
  int level = 0;
  std::map<std::string, std::string> variant;
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
  std::array<stage_counts, 6> stages{};
  // Geometric means of the speedup: over every correct candidate with one, and
  // over each trajectory's best correct candidate (`speedups`); nullopt: none.
  std::optional<double> geomean_correct;
  std::optional<double> geomean_best;
  // The task's speedup threshold as the evaluator reported it (performance ran).
  std::optional<double> speedup_threshold;
};

// Whether any candidate of the group ran stage s (it passed or failed there).
bool stage_ran(const group_metrics& g, int s);
// The stage a rate of `rates` is about: compiled -> compile, correct ->
// correctness, instructions -> instructions, passed and fast_p -> performance.
enum class rate_kind { compiled, correct, instructions, passed };
int stage_of(rate_kind r);

// 1 - C(n-c,k)/C(n,k), computed as a product so large n do not overflow.
// Requires 0 <= c <= n and 1 <= k <= n.
double pass_at_k(int n, int c, int k);

// Groups by (experiment, model, task), ordered by experiment (as given), model, task.
std::vector<group_metrics> compute_metrics(const std::vector<experiment_data>& experiments);
// Sets each group's level and variant from the catalogue.
void annotate_tasks(std::vector<group_metrics>& groups, const task_catalogue& catalogue);

// Experiments at equal LLM calls (branch 1 against branch N, docs in README
// "Branching"). A trajectory's LLM calls are its stored replies in the order
// they were asked: round 0, then each round's siblings in branch order (a
// round without siblings is one call); turns not written by a model (mutation,
// reference) are no call, failed HTTP attempts are not counted. After c calls a
// trajectory has its best so far over the candidates of its first c calls; one
// that made fewer keeps its last state. Point c-1 of a curve holds the rates
// over the experiment's trajectories after c calls, for c = 1 .. the most
// calls one of its trajectories made.
struct calls_point {
  int calls = 0;
  rates at;                     // compiled, correct, instructions, passed, fast_p (best so far)
  double no_failed_stage = 0.0;  // share with a candidate that failed no stage (as `run` counts them)
};
struct calls_curve {
  std::string experiment;
  int branch = 1;       // from the experiment's config (1: no branching)
  int rounds = 0;       // from the config; 0 when it has none
  int trajectories = 0;
  int llm_calls = 0;    // every trajectory's calls, summed
  std::array<bool, 6> stage_ran{};  // any reply (siblings included) passed or failed the stage
  std::vector<calls_point> points;
};
std::vector<calls_curve> compute_calls_curves(const std::vector<experiment_data>& experiments);
// Whether the curve's replies ran the stage a rate is about (a rate that never ran reads "not run").
bool curve_ran(const calls_curve& c, rate_kind kind);

// Median of a sorted, non-empty vector.
double median_sorted(const std::vector<double>& sorted);

}  // namespace ptxbench::data
