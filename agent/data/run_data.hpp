#pragma once
// An experiment's trajectories and turns loaded from a run database, and the
// order of verdicts every data product ranks candidates by.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/store/store.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench::data {

// A sibling of a branched repair round (`branch` > 1), as a turn: its turn
// and candidate ids are 0 (it is no row of turns or candidates), its
// evaluation is nullopt until judged. The chosen one has the same content as
// the round's turn.
struct sibling_data {
  int branch = 0;
  bool chosen = false;
  turn_view view;
};

struct trajectory_data {
  trajectory_row trajectory;
  std::vector<turn_view> turns;  // in round order
  // The siblings of each branched round, in branch order; empty without branching.
  std::map<int, std::vector<sibling_data>> siblings;
};

struct experiment_data {
  experiment_row experiment;
  std::vector<trajectory_data> trajectories;  // ordered by (task, sample, id)
};

// Experiments named in `names` (all experiments, by id, when empty), with their
// trajectories and turns. Throws input_error naming the first unknown experiment.
std::vector<experiment_data> load_experiments(run_store& store, const std::vector<std::string>& names);
experiment_data load_experiment(run_store& store, const experiment_row& experiment);

// Verdicts in judging order: format=0 ... performance=5, passed=6.
// Returns -1 for an empty or unknown verdict (a turn never evaluated).
int verdict_rank(const std::string& verdict);
constexpr int passed_rank = 6;
// "format" ... "performance", "passed"; "none" for -1.
std::string verdict_name(int rank);
// Parses a stage name or "passed" given by a user; throws input_error otherwise.
int parse_verdict_rank(const std::string& name);

// How far a turn's candidate got, read from its stored evaluation: the stage
// statuses of its result JSON, or, for a row without them, its verdict column.
// Ranked by the policy of evaluator/api/verdict.hpp (an evaluator error never
// beats a verdict; stages compared in table order, then the speedup).
// `reached` counts the stages passed in order before the first that did not
// (passed_rank: every stage passed); "reached S" means every stage before S passed.
struct candidate_quality {
  standing st;                 // what the ranking reads
  verdict_kind kind = verdict_kind::none;
  // Verdict rank: the failed stage (0..5) or passed_rank; for a partial
  // verdict the first stage not passed (never a failure of it: see `kind`);
  // -1 without a verdict (unevaluated, or an evaluator error).
  int verdict = -1;
  int reached = -1;   // stages passed in order; -1 without a verdict
  std::array<int, 6> stage_score{};  // per stage: stage_score of its status
  std::array<bool, 6> stage_passed{};
  std::optional<double> speedup;
};
candidate_quality quality_of(const turn_view& turn);
candidate_quality quality_of(const evaluation_row& evaluation);
// evaluator/api's got_further and better on the candidates' standings.
bool got_further(const candidate_quality& a, const candidate_quality& b);
bool better(const candidate_quality& a, const candidate_quality& b);

// The model that wrote the turn: the turn's own model, else the experiment's.
std::string model_of(const turn_view& turn, const experiment_row& experiment);
// Compiled: the compile stage passed.
bool compiled(const turn_view& turn);

// 64-bit FNV-1a: a stable hash for deterministic selections.
uint64_t stable_hash(const std::string& text);

}  // namespace ptxbench::data
