#pragma once
// Re-evaluation replay (docs/design.md, "Replay"): every logged candidate of one
// experiment is judged again by today's evaluator and written to a new database
// (experiment, trajectories, turns and candidates copied; each new evaluation
// linked to the one it re-does through origin_evaluation_id), and the verdicts
// that changed are listed with the old and new headline. The siblings of
// branched rounds (run --branch) are copied with the run's choice: the chosen
// one takes its turn's new verdict, the others are judged again.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/judge/judge.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::data {

struct replay_options {
  std::string experiment;  // name in the source database
  std::string new_name;    // name in the target database; empty: "<experiment>-replay"
  bool run_gpu = true;
  bool run_timing = true;
  int jobs = 1;            // evaluations in flight at once
};

struct verdict_change {
  std::string task;
  int sample = 0;
  int round = 0;
  int64_t origin_evaluation_id = 0;  // 0 when the candidate had no evaluation
  int64_t evaluation_id = 0;         // in the target database
  std::string old_verdict;           // "none" when never evaluated
  std::string new_verdict;
  std::string old_headline;
  std::string new_headline;
  int branch = -1;  // a sibling of a branched round that was not chosen (its evaluation_id is 0); -1: a turn
};

struct replay_summary {
  int64_t experiment_id = 0;  // in the target database
  std::string experiment_name;
  int candidates = 0;
  int evaluated = 0;
  int unchanged = 0;
  std::vector<verdict_change> changes;            // ordered by task, sample, round
  std::vector<std::string> problems;              // candidates that could not be re-evaluated, and why
  std::map<std::pair<std::string, std::string>, int> transitions;  // (old, new) -> count
};

// Returns the task with this id, or nullopt when unknown.
using task_lookup = std::function<std::optional<task>(const std::string& task_id)>;

// Copies the experiment and re-evaluates each candidate through agent/judge, the
// loop's own path: with the seeds its evaluation recorded (public, hidden,
// timing) and the run's stored time limit and timing budget; GPU and timing as
// `options` say. A candidate that held no PTX (format failure) is not sent to
// the evaluator: its new evaluation repeats the format failure; an evaluator
// that throws gives an error-status evaluation, as in the loop. An unknown
// task is listed in `problems` and leaves that turn without a new evaluation.
// Throws input_error for an unknown experiment or a name taken in `target`;
// store_error from either database.
replay_summary replay_experiment(run_store& source, run_store& target, evaluator& judge, const task_lookup& tasks,
                                 const replay_options& options);

// agent/judge's, also reachable here where the data products' users look for it.
using ptxbench::evaluation_row_of;

// "changed verdicts: ..." then one line per change and the transition counts.
std::string format_replay_summary(const replay_summary& summary);

}  // namespace ptxbench::data
