#pragma once
// ptxbench mutate as a library: break each verified solution with the
// catalogue's operators, judge every mutant with the real evaluator, and store
// the mutants whose verdict is the stage their operator aims at as two-round
// trajectories (round 0: the mutant and the feedback it really got, round 1:
// the verified solution), source "mutation", so `export --kind correction`
// turns them into data like any model's repair.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "agent/judge/judge.hpp"
#include "agent/llm/provider.hpp"
#include "agent/mutate/mutation.hpp"
#include "agent/prompt/prompt.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/solutions.hpp"

namespace ptxbench::mutate {

struct task_solution {
  task t;
  solution s;
};

// The tasks of `tasks` that have a solution (kernel.ptx and manifest.json in
// solution_dir(id, roots): checked in or generated), each with the rewrites in
// <roots.checked_in>/<task id>/rewrites/<name>/ (the cuda_core_rewrite
// operator's mutants); `wanted` (task ids) empty means all of them. Throws
// input_error for a wanted task without a solution.
std::vector<task_solution> load_solutions(const std::vector<task>& tasks, const solution_roots& roots,
                                          const std::vector<std::string>& wanted);

struct mutate_options {
  int per_solution = 10;             // mutants judged per solution (fewer when the operators run out)
  uint64_t seed = 1;
  std::vector<std::string> operators;  // empty: every operator
  std::string experiment_name;         // the experiment the kept mutants go to
  // Seeds, GPU (run_gpu false: format, compile and static checks only), time
  // limit and timing budget of every judging, stored in the experiment's
  // config as a run stores them (so replay judges with the same).
  judge_settings judging;
  feedback_detail feedback = feedback_detail::full;
  // Rationale mode: this endpoint is shown each kept mutant, its feedback and
  // the fix, and its answer is stored as the fix's reasoning (nullptr: none).
  provider* rationale_teacher = nullptr;
  std::string rationale_model;  // stored with the fix when the server names none
};

// What the evaluator made of one mutant.
//  kept:        the verdict is the operator's target stage (stored)
//  other_stage: it failed elsewhere (verdict says where)
//  not_run:     the target stage could not be judged here (no GPU, another architecture)
//  passed:      no stage failed (the mutation did not break what it aimed at)
//  error:       the evaluator failed; says nothing about the mutant
enum class mutant_outcome { kept, other_stage, not_run, passed, error };
const char* to_string(mutant_outcome o);
mutant_outcome classify(const evaluation_result& r, stage target);
// The order mutants are drawn in: the operators taken one target stage at a
// time in turn, so the first six judged cover every stage that has one.
std::vector<const mutation_operator*> interleave_by_stage(const std::vector<const mutation_operator*>& ops);

struct mutant_record {
  std::string task_id;
  std::string op;
  stage target = stage::format;
  std::string change;
  mutant_outcome outcome = mutant_outcome::error;
  std::string verdict;   // verdict_name (evaluator/api/verdict.hpp): the failed stage, partial, passed or error
  std::string headline;
  // Profile feedback judged on the mutant (judging with profile on, a
  // performance operator, a profile with lines): its hottest PTX line, whether
  // that line is in the mutated region, and whether its dominant stall is one
  // the operator causes (mutation_operator::stalls).
  struct localisation {
    int top_line = 0;
    double top_share = 0;
    std::string stall;
    bool in_region = false;
    bool stall_matches = false;
    double profile_ms = 0;
    bool in_top5 = false;  // one of the five lines the feedback shows is in the region
    int region_first = 0, region_last = 0;  // the mutated lines' span (1-based)
    std::string next_lines;                 // the next hottest lines, for a miss ("412 barrier 21%; ...")
    // What the feedback leads with: "line" (the hottest) or "local memory"
    // (the lines waiting on it outweigh the hottest; top_line is the one that waits most).
    std::string lead = "line";
    // The mutant's time against its solution's (the solution's speedup over
    // the mutant's; 0 when either has none): a mutation that left the run
    // time unchanged made no bottleneck for the profile to find.
    double slowdown = 0;
  };
  std::optional<localisation> located;
  std::string profile_note;  // why there is no localisation where one was asked for
};

struct mutate_summary {
  int64_t experiment_id = 0;
  std::vector<mutant_record> mutants;
  std::vector<std::pair<std::string, std::string>> not_applicable;  // (task, operator)
  std::vector<std::string> skipped_tasks;  // the reference solution itself failed a stage: "task: headline"
  double judge_s = 0.0;                    // time spent judging mutants
  int rationales = 0;                      // kept mutants whose fix got a teacher's reasoning
  int rationale_failures = 0;              // teacher calls that gave up (the fix is stored without one)
  std::string gpu;
  int kept() const;
};

using mutate_progress = std::function<void(const mutant_record&)>;

// Creates the experiment (throws input_error when the name exists) and runs.
mutate_summary run_mutation(const std::vector<task_solution>& solutions, evaluator& eval, run_store& store,
                            const prompt_library& prompts, const mutate_options& options,
                            const mutate_progress& progress = {});

// Operator x target stage x (judged, kept, other stage, not run, passed), and
// mutants judged per minute.
std::string format_mutation_table(const mutate_summary& summary);

// Mutants slowed at least this much against their solution are the ones whose
// bottleneck the profile is asked to find (the table's second tally).
inline constexpr double k_localisation_min_slowdown = 1.10;

// The localisation of `r`'s profile for a mutant of `op` whose mutated lines
// are `region` (nullopt with `why` when there is nothing to judge).
std::optional<mutant_record::localisation> localise(const mutation_operator& op, const std::vector<int>& region,
                                                    const evaluation_result& r, std::string& why);

// Per performance mutant: task, operator, hottest line and its share, the
// region, the stall; then the share localised (top line in the region) and
// the share whose stall matches, per operator and overall. Empty without any.
std::string format_localisation_table(const mutate_summary& summary);

}  // namespace ptxbench::mutate
