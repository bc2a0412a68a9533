#pragma once
// Merging shard databases into one (docs/design.md, "Scale"). Past one host the
// task x sample grid runs as shards (`ptxbench run --shard i/n`), each writing
// its own database; merge_run_databases unites them through the run_store API.
//
// Rules:
// - Experiments with one name across inputs become one experiment. Their configs
//   must agree except for shard_index/shard_count, db and llm.base_url (each node
//   may serve the model itself); kind, model and evaluator_version must agree too.
//   The merged config has no shard fields, db = the output, and
//   "merged_from_shards": {"databases": [input paths], "shards": ["0/3", ...]}.
//   Hosts, GPUs and provider descriptions that differ are joined ("node-0,
//   node-1"). The merged status is "done" only if
//   every input's experiment is done; else "running" if one is, else "interrupted".
// - A trajectory (experiment, task, sample) found in two inputs must be identical
//   there (turns, candidates, latest evaluations, siblings, finish state, LLM failures):
//   identical copies are merged once, different ones are an overlap error.
// - Against what the output already holds: an identical trajectory is skipped
//   (merging twice adds nothing); a pending one whose turns are a prefix of the
//   input's is completed (a merge taken while shards still ran, or one that was
//   killed halfway); anything else is an error.
// - Everything is checked before the first write, so an error leaves the output
//   as it was. A process killed while writing leaves whole turns (every store
//   write is one transaction); merging again completes the work.
// Copied: trajectories, turns with their candidates (timestamps kept), the latest
// evaluation of each candidate (the API reads no older ones), the siblings of
// branched rounds (branch_replies, with their verdicts and chosen flags), LLM
// failures, trajectory finish state. Trajectory created/finished times become the merge's.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/store/store.hpp"

namespace ptxbench {

// Bad input: a missing or unreadable input file, the output among the inputs,
// conflicting configs, overlapping shards. The message names the files and the
// experiment, trajectory or config key concerned. Nothing was written.
struct merge_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct merge_options {
  std::vector<std::string> experiments;  // names to merge; empty = every experiment
};

// What one experiment's merge did. Counts are rows written to the output.
struct merged_experiment {
  std::string name;
  bool created = false;          // false: it existed in the output already
  int databases = 0;             // inputs that hold it
  std::string status;            // the merged status
  int trajectories_copied = 0;   // new to the output
  int trajectories_completed = 0;  // present but pending with fewer turns
  int trajectories_skipped = 0;  // identical copies (in the output or another input)
  int turns = 0;
  int evaluations = 0;
  int llm_failures = 0;
  int branch_replies = 0;  // siblings of branched rounds written or completed
};

struct merge_result {
  int inputs = 0;
  std::vector<merged_experiment> experiments;  // in order of first appearance
  std::vector<std::string> warnings;           // e.g. shards missing from the inputs

  int total_trajectories() const;  // copied + completed
  int total_turns() const;
  int total_evaluations() const;
  int total_llm_failures() const;
  int total_branch_replies() const;
};

// Merges `inputs` (opened read-only) into `out`. Throws merge_error on bad input
// (before writing anything) and store_error on infrastructure failures.
merge_result merge_run_databases(const std::vector<std::filesystem::path>& inputs, run_store& out,
                                 const merge_options& options = {});

}  // namespace ptxbench
