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

// How far a turn's candidate got. The verdict names the first stage that failed,
// but stages do not always run in table order (the static instruction check
// fails before runtime; without a GPU, runtime is not run while the static
// check passes), so candidates are compared stage by stage in table order:
// passed beats not run / unverified beats failed, and the first stage where two
// candidates differ decides: the rule of got_further in evaluator/api, applied
// to stored rows (which may lack the stage statuses or an evaluation). `reached` counts the stages passed in order before
// the first that did not (6: every stage passed); "reached S" means every stage
// before S passed.
struct candidate_quality {
  int verdict = -1;   // verdict rank; -1 unevaluated
  int reached = -1;   // stages passed in order; -1 unevaluated
  std::array<int, 6> stage_score{};  // per stage: 2 passed, 1 not run or unverified, 0 failed
  std::array<bool, 6> stage_passed{};
  std::optional<double> speedup;
};
// Reads the stage statuses from the evaluation's result JSON; without them
// falls back to the verdict column.
candidate_quality quality_of(const turn_view& turn);
// True when `a` got strictly further (see candidate_quality); an evaluated
// candidate beats an unevaluated one. Speedup is not considered.
bool got_further(const candidate_quality& a, const candidate_quality& b);
// got_further, then a higher speedup (a measured speedup beats none).
bool better(const candidate_quality& a, const candidate_quality& b);

// The model that wrote the turn: the turn's own model, else the experiment's.
std::string model_of(const turn_view& turn, const experiment_row& experiment);
// Compiled: the compile stage passed.
bool compiled(const turn_view& turn);

// 64-bit FNV-1a: a stable hash for deterministic selections.
uint64_t stable_hash(const std::string& text);

}  // namespace ptxbench::data
