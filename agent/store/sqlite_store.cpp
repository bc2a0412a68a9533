// run_store::open and the writers. Each writer is one transaction: a process
// killed at any instruction leaves either all of a write or none of it.
#include "agent/store/sqlite_store.hpp"

#include <system_error>

#include "agent/store/ptx_fingerprint.hpp"
#include "agent/store/schema.hpp"
#include "agent/store/store_rows.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench {

std::unique_ptr<run_store> run_store::open(const std::filesystem::path& path, bool read_only) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw not_a_run_database(store_detail::describe(path.string(), "is a directory, not a database file"));
  if (read_only) {
    if (!std::filesystem::is_regular_file(path, ec))
      throw not_a_run_database(store_detail::describe(path.string(), "no such file"));
  } else if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      throw store_error(store_detail::describe(
          path.string(), "cannot create folder '" + path.parent_path().string() + "': " + ec.message()));
  }
  return std::make_unique<store_detail::sqlite_store>(path, read_only);
}

namespace store_detail {

sqlite_store::sqlite_store(const std::filesystem::path& path, bool read_only)
    : m_path(path), m_db(path, read_only) {
  if (read_only) check_schema(m_db);
  else apply_schema(m_db);
}

void sqlite_store::require_changed(const char* table, int64_t id) {
  if (m_db.changes() == 0)
    throw store_error(describe(m_db.file(), std::string("no row ") + std::to_string(id) + " in " + table));
}

int64_t sqlite_store::create_experiment(const experiment_row& e) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  {
    statement existing = m_db.query("SELECT id FROM experiments WHERE name = ?1");
    existing.bind(1, e.name);
    if (existing.step())
      throw store_error(describe(m_db.file(), "an experiment named '" + e.name + "' exists already"));
  }
  statement insert = m_db.query(
      "INSERT INTO experiments (name, kind, config, evaluator_version, host, gpu, model, provider,"
      " status, created_at, finished_at, parent_experiment_id, parent_database)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  insert.bind(1, e.name);
  insert.bind(2, e.kind);
  insert.bind(3, json_text(e.config));
  insert.bind(4, e.evaluator_version);
  insert.bind(5, e.host);
  insert.bind(6, e.gpu);
  insert.bind(7, e.model);
  insert.bind(8, e.provider);
  insert.bind(9, e.status);
  insert.bind(10, or_now(e.created_at));
  insert.bind_text_or_null(11, e.finished_at);
  insert.bind(12, e.parent_experiment_id);
  insert.bind(13, e.parent_database);
  insert.run();
  const int64_t id = m_db.last_insert_id();
  tx.commit();
  return id;
}

void sqlite_store::set_experiment_status(int64_t experiment_id, const std::string& status) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  // A resumed experiment is running again, so it has no finish time.
  statement update = m_db.query(
      "UPDATE experiments SET status = ?1, finished_at = CASE WHEN ?1 = 'running' THEN NULL ELSE ?2 END"
      " WHERE id = ?3");
  update.bind(1, status);
  update.bind(2, utc_now_iso8601());
  update.bind(3, experiment_id);
  update.run();
  require_changed("experiments", experiment_id);
  tx.commit();
}

int64_t sqlite_store::ensure_trajectory(int64_t experiment_id, const std::string& task_id,
                                        const std::string& family, int sample) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  {
    statement insert = m_db.query(
        "INSERT INTO trajectories (experiment_id, task_id, family, sample, created_at)"
        " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (experiment_id, task_id, sample) DO NOTHING");
    insert.bind(1, experiment_id);
    insert.bind(2, task_id);
    insert.bind(3, family);
    insert.bind(4, sample);
    insert.bind(5, utc_now_iso8601());
    insert.run();
  }
  int64_t id = 0;
  {
    // Scoped so the read is finished before COMMIT.
    statement select =
        m_db.query("SELECT id FROM trajectories WHERE experiment_id = ?1 AND task_id = ?2 AND sample = ?3");
    select.bind(1, experiment_id);
    select.bind(2, task_id);
    select.bind(3, sample);
    if (!select.step())
      throw store_error(describe(m_db.file(), "trajectory " + task_id + " sample " + std::to_string(sample) +
                                                  " missing right after its insert"));
    id = select.int64_at(0);
  }
  tx.commit();
  return id;
}

int64_t sqlite_store::insert_turn_locked(const turn_row& turn, const candidate_row& candidate, bool* inserted,
                                         int64_t* candidate_id) {
  *inserted = false;
  {
    statement existing = m_db.query("SELECT id FROM turns WHERE trajectory_id = ?1 AND round = ?2");
    existing.bind(1, turn.trajectory_id);
    existing.bind(2, turn.round);
    if (existing.step()) return existing.int64_at(0);
  }
  {
    statement insert = m_db.query(
        "INSERT INTO turns (trajectory_id, round, messages, feedback, feedback_detail, reply, reasoning,"
        " finish_reason, model, prompt_tokens, completion_tokens, reasoning_tokens, latency_ms, created_at, author)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    insert.bind(1, turn.trajectory_id);
    insert.bind(2, turn.round);
    insert.bind(3, json_text(turn.messages));
    insert.bind(4, turn.feedback);
    insert.bind(5, turn.feedback_detail);
    insert.bind(6, turn.reply);
    insert.bind(7, turn.reasoning);
    insert.bind(8, turn.finish_reason);
    insert.bind(9, turn.model);
    insert.bind(10, turn.prompt_tokens);
    insert.bind(11, turn.completion_tokens);
    insert.bind(12, turn.reasoning_tokens);
    insert.bind(13, turn.latency_ms);
    insert.bind(14, or_now(turn.created_at));
    insert.bind(15, turn.author);
    insert.run();
  }
  const int64_t turn_id = m_db.last_insert_id();
  const std::string hash = candidate_fingerprint(candidate.ptx, candidate.manifest);
  std::optional<int64_t> duplicate_of;
  if (!hash.empty()) {
    statement earlier = m_db.query(
        "SELECT min(c.id) FROM candidates c JOIN turns t ON t.id = c.turn_id"
        " JOIN trajectories r ON r.id = t.trajectory_id"
        " WHERE c.normalised_hash = ?1 AND r.task_id = (SELECT task_id FROM trajectories WHERE id = ?2)");
    earlier.bind(1, hash);
    earlier.bind(2, turn.trajectory_id);
    if (earlier.step()) duplicate_of = earlier.optional_int64_at(0);
  }
  statement insert = m_db.query(
      "INSERT INTO candidates (turn_id, ptx, manifest, format_problem, normalised_hash, duplicate_of)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  insert.bind(1, turn_id);
  insert.bind(2, candidate.ptx);
  insert.bind(3, candidate.manifest);
  insert.bind(4, candidate.format_problem);
  insert.bind(5, hash);
  insert.bind(6, duplicate_of);
  insert.run();
  *inserted = true;
  if (candidate_id) *candidate_id = m_db.last_insert_id();
  return turn_id;
}

int64_t sqlite_store::record_turn(const turn_row& turn, const candidate_row& candidate) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  bool inserted = false;
  const int64_t turn_id = insert_turn_locked(turn, candidate, &inserted, nullptr);
  if (inserted) tx.commit();  // else tx rolls back: nothing was written
  return turn_id;
}

int64_t sqlite_store::insert_evaluation_locked(const evaluation_row& e) {
  statement insert = m_db.query(
      "INSERT INTO evaluations (candidate_id, evaluator_version, gpu, verdict, passed, correct,"
      " instructions_ok, speedup, result, origin_evaluation_id, created_at)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  insert.bind(1, e.candidate_id);
  insert.bind(2, e.evaluator_version);
  insert.bind(3, e.gpu);
  insert.bind(4, e.verdict);
  insert.bind(5, e.passed);
  insert.bind(6, e.correct);
  insert.bind(7, e.instructions_ok);
  insert.bind(8, e.speedup);
  insert.bind(9, json_text(e.result));
  insert.bind(10, e.origin_evaluation_id);
  insert.bind(11, or_now(e.created_at));
  insert.run();
  return m_db.last_insert_id();
}

int64_t sqlite_store::record_evaluation(const evaluation_row& e) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  const int64_t id = insert_evaluation_locked(e);
  tx.commit();
  return id;
}

void sqlite_store::record_llm_failure(const llm_failure_row& f) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement insert = m_db.query(
      "INSERT INTO llm_failures (trajectory_id, round, attempt, http_status, cause, elapsed_ms, final,"
      " created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert.bind(1, f.trajectory_id);
  insert.bind(2, f.round);
  insert.bind(3, f.attempt);
  insert.bind(4, f.http_status);
  // A cause may quote a server's bytes: stored as valid UTF-8, or Python's
  // sqlite3 (and every reader decoding text) cannot read the row.
  insert.bind(5, utf8_repaired(f.cause));
  insert.bind(6, f.elapsed_ms);
  insert.bind(7, f.final);
  insert.bind(8, or_now(f.created_at));
  insert.run();
  tx.commit();
}

void sqlite_store::finish_trajectory(int64_t trajectory_id, const std::string& final_verdict, bool passed,
                                     int rounds_done) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement update = m_db.query(
      "UPDATE trajectories SET status = 'done', final_verdict = ?1, passed = ?2, rounds_done = ?3,"
      " finished_at = ?4 WHERE id = ?5");
  update.bind(1, final_verdict);
  update.bind(2, passed);
  update.bind(3, rounds_done);
  update.bind(4, utc_now_iso8601());
  update.bind(5, trajectory_id);
  update.run();
  require_changed("trajectories", trajectory_id);
  tx.commit();
}

void sqlite_store::set_trajectory_provenance(int64_t trajectory_id, const std::string& source,
                                             const std::string& mutation_operator) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement update = m_db.query("UPDATE trajectories SET source = ?1, mutation_operator = ?2 WHERE id = ?3");
  update.bind(1, source);
  update.bind(2, mutation_operator);
  update.bind(3, trajectory_id);
  update.run();
  require_changed("trajectories", trajectory_id);
  tx.commit();
}

}  // namespace store_detail
}  // namespace ptxbench
