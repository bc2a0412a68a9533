#pragma once
// Mapping between the store's row structs and SQL result columns (private).
// Each k_*_columns list is the SELECT list that the matching read_* function
// expects, starting at column `first`; keep the two in step.
#include "agent/store/sqlite_handle.hpp"
#include "agent/store/store.hpp"
#include "evaluator/common/json_path.hpp"  // json_text for JSON columns

namespace ptxbench::store_detail {

#define PTXBENCH_EXPERIMENT_COLUMNS                                                            \
  "x.id, x.name, x.kind, x.config, x.evaluator_version, x.host, x.gpu, x.model, x.provider, " \
  "x.status, x.created_at, x.finished_at, x.parent_experiment_id, x.parent_database"
#define PTXBENCH_TRAJECTORY_COLUMNS                                                          \
  "r.id, r.experiment_id, r.task_id, r.family, r.sample, r.status, r.rounds_done, "         \
  "r.final_verdict, r.passed, r.source, r.mutation_operator"
#define PTXBENCH_TURN_COLUMNS                                                                \
  "t.id, t.trajectory_id, t.round, t.messages, t.feedback, t.feedback_detail, t.reply, "    \
  "t.reasoning, t.finish_reason, t.model, t.prompt_tokens, t.completion_tokens, "           \
  "t.reasoning_tokens, t.latency_ms, t.created_at, t.author"
#define PTXBENCH_CANDIDATE_COLUMNS \
  "c.id, c.turn_id, c.ptx, c.manifest, c.format_problem, c.normalised_hash, c.duplicate_of"
#define PTXBENCH_EVALUATION_COLUMNS                                                          \
  "e.id, e.candidate_id, e.evaluator_version, e.gpu, e.verdict, e.passed, e.correct, "      \
  "e.instructions_ok, e.speedup, e.result, e.origin_evaluation_id, e.created_at"
#define PTXBENCH_LLM_FAILURE_COLUMNS                                                         \
  "f.id, f.trajectory_id, f.round, f.attempt, f.http_status, f.cause, f.elapsed_ms, "       \
  "f.final, f.created_at"

// Column counts of the lists above, to find where the next table's columns start.
constexpr int k_turn_column_count = 16;
constexpr int k_candidate_column_count = 7;

experiment_row read_experiment(const connection& db, const statement& s, int first = 0);
trajectory_row read_trajectory(const statement& s, int first = 0);
turn_row read_turn(const connection& db, const statement& s, int first = 0);
candidate_row read_candidate(const statement& s, int first = 0);
evaluation_row read_evaluation(const connection& db, const statement& s, int first = 0);
llm_failure_row read_llm_failure(const statement& s, int first = 0);

// `timestamp`, or the current UTC time when it is empty (rows leave created_at to the store).
std::string or_now(const std::string& timestamp);
// Whether the database has a table of that name (an older file may lack an added one).
bool table_exists(connection& db, const char* name);

}  // namespace ptxbench::store_detail
