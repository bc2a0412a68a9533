#include "agent/store/store_rows.hpp"

namespace ptxbench::store_detail {
namespace {

// A JSON column that does not parse means the file was changed behind the
// store's back: infrastructure, so store_error naming the table, column and row.
nlohmann::json json_at(const connection& db, const statement& s, int column, const char* where, int64_t id) {
  const std::string text = s.text_at(column);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw store_error(describe(db.file(), std::string(where) + " of row " + std::to_string(id) +
                                              " is not valid JSON: " + e.what()));
  }
}

}  // namespace

std::string or_now(const std::string& timestamp) { return timestamp.empty() ? utc_now_iso8601() : timestamp; }

bool table_exists(connection& db, const char* name) {
  statement s = db.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, std::string(name));
  return s.step() && s.int64_at(0) > 0;
}

experiment_row read_experiment(const connection& db, const statement& s, int first) {
  experiment_row e;
  e.id = s.int64_at(first + 0);
  e.name = s.text_at(first + 1);
  e.kind = s.text_at(first + 2);
  e.config = json_at(db, s, first + 3, "experiments.config", e.id);
  e.evaluator_version = s.text_at(first + 4);
  e.host = s.text_at(first + 5);
  e.gpu = s.text_at(first + 6);
  e.model = s.text_at(first + 7);
  e.provider = s.text_at(first + 8);
  e.status = s.text_at(first + 9);
  e.created_at = s.text_at(first + 10);
  e.finished_at = s.text_at(first + 11);
  e.parent_experiment_id = s.optional_int64_at(first + 12);
  e.parent_database = s.text_at(first + 13);
  return e;
}

trajectory_row read_trajectory(const statement& s, int first) {
  trajectory_row r;
  r.id = s.int64_at(first + 0);
  r.experiment_id = s.int64_at(first + 1);
  r.task_id = s.text_at(first + 2);
  r.family = s.text_at(first + 3);
  r.sample = s.int_at(first + 4);
  r.status = s.text_at(first + 5);
  r.rounds_done = s.int_at(first + 6);
  r.final_verdict = s.text_at(first + 7);
  r.passed = s.bool_at(first + 8);
  r.source = s.text_at(first + 9);
  r.mutation_operator = s.text_at(first + 10);
  return r;
}

turn_row read_turn(const connection& db, const statement& s, int first) {
  turn_row t;
  t.id = s.int64_at(first + 0);
  t.trajectory_id = s.int64_at(first + 1);
  t.round = s.int_at(first + 2);
  t.messages = json_at(db, s, first + 3, "turns.messages", t.id);
  t.feedback = s.text_at(first + 4);
  t.feedback_detail = s.text_at(first + 5);
  t.reply = s.text_at(first + 6);
  t.reasoning = s.text_at(first + 7);
  t.finish_reason = s.text_at(first + 8);
  t.model = s.text_at(first + 9);
  t.prompt_tokens = s.int_at(first + 10);
  t.completion_tokens = s.int_at(first + 11);
  t.reasoning_tokens = s.int_at(first + 12);
  t.latency_ms = s.double_at(first + 13);
  t.created_at = s.text_at(first + 14);
  t.author = s.text_at(first + 15);
  return t;
}

candidate_row read_candidate(const statement& s, int first) {
  candidate_row c;
  c.id = s.int64_at(first + 0);
  c.turn_id = s.int64_at(first + 1);
  c.ptx = s.text_at(first + 2);
  c.manifest = s.text_at(first + 3);
  c.format_problem = s.text_at(first + 4);
  c.normalised_hash = s.text_at(first + 5);
  c.duplicate_of = s.optional_int64_at(first + 6);
  return c;
}

evaluation_row read_evaluation(const connection& db, const statement& s, int first) {
  evaluation_row e;
  e.id = s.int64_at(first + 0);
  e.candidate_id = s.int64_at(first + 1);
  e.evaluator_version = s.text_at(first + 2);
  e.gpu = s.text_at(first + 3);
  e.verdict = s.text_at(first + 4);
  e.passed = s.bool_at(first + 5);
  e.correct = s.bool_at(first + 6);
  e.instructions_ok = s.bool_at(first + 7);
  e.speedup = s.optional_double_at(first + 8);
  e.result = json_at(db, s, first + 9, "evaluations.result", e.id);
  e.origin_evaluation_id = s.optional_int64_at(first + 10);
  e.created_at = s.text_at(first + 11);
  return e;
}

llm_failure_row read_llm_failure(const statement& s, int first) {
  llm_failure_row f;
  f.id = s.int64_at(first + 0);
  f.trajectory_id = s.int64_at(first + 1);
  f.round = s.int_at(first + 2);
  f.attempt = s.int_at(first + 3);
  f.http_status = s.int_at(first + 4);
  f.cause = s.text_at(first + 5);
  f.elapsed_ms = s.double_at(first + 6);
  f.final = s.bool_at(first + 7);
  f.created_at = s.text_at(first + 8);
  return f;
}

}  // namespace ptxbench::store_detail
