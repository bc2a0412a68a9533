// The store's part in keeping a run alive and single: judgings that ended the process and
// agent errors (containment), and the writer lease of an experiment. Each
// writer is one BEGIN IMMEDIATE transaction, so two processes deciding on one
// lease at once are serialised by SQLite: exactly one of them takes it.
#include "agent/store/sqlite_store.hpp"
#include "agent/store/store_rows.hpp"

namespace ptxbench {

const char* to_string(judge_subject::kind k) {
  return k == judge_subject::kind::candidate ? "candidate" : "branch_reply";
}

}  // namespace ptxbench

namespace ptxbench::store_detail {

int sqlite_store::judge_crashes(const judge_subject& subject) {
  std::lock_guard lock(m_mutex);
  if (!table_exists(m_db, "judge_crashes")) return 0;  // a read-only open of an older file
  statement select = m_db.query("SELECT crashes FROM judge_crashes WHERE subject = ?1 AND subject_id = ?2");
  select.bind(1, std::string(to_string(subject.what)));
  select.bind(2, subject.id);
  return select.step() ? select.int_at(0) : 0;
}

void sqlite_store::note_judge_crashes(const std::vector<judge_crash_row>& crashes) {
  if (crashes.empty()) return;
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  for (const auto& c : crashes) {
    statement upsert = m_db.query(
        "INSERT INTO judge_crashes (subject, subject_id, crashes, last_signal, last_at) VALUES (?1, ?2, 1, ?3, ?4)"
        " ON CONFLICT (subject, subject_id) DO UPDATE SET crashes = crashes + 1, last_signal = ?3, last_at = ?4");
    upsert.bind(1, std::string(to_string(c.subject.what)));
    upsert.bind(2, c.subject.id);
    upsert.bind(3, c.signal);
    upsert.bind(4, utc_now_iso8601());
    upsert.run();
  }
  tx.commit();
}

void sqlite_store::record_agent_error(const agent_error_row& e) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement insert = m_db.query(
      "INSERT INTO agent_errors (trajectory_id, round, step, message, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  insert.bind(1, e.trajectory_id);
  insert.bind(2, e.round);
  insert.bind(3, e.step);
  insert.bind(4, e.message);
  insert.bind(5, e.created_at.empty() ? utc_now_iso8601() : e.created_at);
  insert.run();
  tx.commit();
}

void sqlite_store::fail_trajectory(int64_t trajectory_id, int rounds_done) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement update = m_db.query(
      "UPDATE trajectories SET status = 'done', final_verdict = 'error', passed = 0, rounds_done = ?1,"
      " finished_at = ?2 WHERE id = ?3");
  update.bind(1, rounds_done);
  update.bind(2, utc_now_iso8601());
  update.bind(3, trajectory_id);
  update.run();
  require_changed("trajectories", trajectory_id);
  tx.commit();
}

std::vector<agent_error_row> sqlite_store::agent_errors(int64_t experiment_id) {
  std::lock_guard lock(m_mutex);
  std::vector<agent_error_row> rows;
  if (!table_exists(m_db, "agent_errors")) return rows;  // a read-only open of an older file
  statement select = m_db.query(
      "SELECT a.id, a.trajectory_id, a.round, a.step, a.message, a.created_at FROM agent_errors a"
      " JOIN trajectories r ON r.id = a.trajectory_id WHERE r.experiment_id = ?1 ORDER BY a.id");
  select.bind(1, experiment_id);
  while (select.step())
    rows.push_back({select.int64_at(0), select.int64_at(1), select.int_at(2), select.text_at(3), select.text_at(4),
                    select.text_at(5)});
  return rows;
}

std::optional<lease_row> sqlite_store::lease_locked(int64_t experiment_id) {
  if (!table_exists(m_db, "experiment_leases")) return std::nullopt;
  statement select = m_db.query(
      "SELECT experiment_id, host, pid, started_at, heartbeat_at,"
      " (julianday('now') - julianday(heartbeat_at)) * 86400.0 FROM experiment_leases WHERE experiment_id = ?1");
  select.bind(1, experiment_id);
  if (!select.step()) return std::nullopt;
  return lease_row{select.int64_at(0), select.text_at(1), select.int64_at(2), select.text_at(3), select.text_at(4),
                   select.is_null(5) ? 1e18 : select.double_at(5)};
}

std::optional<lease_row> sqlite_store::lease(int64_t experiment_id) {
  std::lock_guard lock(m_mutex);
  return lease_locked(experiment_id);
}

std::optional<lease_row> sqlite_store::acquire_lease(int64_t experiment_id, const std::string& host, int64_t pid,
                                                     const std::function<bool(const lease_row&)>& holder_alive) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  if (auto holder = lease_locked(experiment_id)) {
    const bool ours = holder->host == host && holder->pid == pid;
    if (!ours && holder_alive(*holder)) return holder;  // tx rolls back: nothing written
  }
  const std::string now = utc_now_iso8601();
  statement put = m_db.query(
      "INSERT OR REPLACE INTO experiment_leases (experiment_id, host, pid, started_at, heartbeat_at)"
      " VALUES (?1, ?2, ?3, ?4, ?4)");
  put.bind(1, experiment_id);
  put.bind(2, host);
  put.bind(3, pid);
  put.bind(4, now);
  put.run();
  tx.commit();
  return std::nullopt;
}

bool sqlite_store::renew_lease(int64_t experiment_id, const std::string& host, int64_t pid) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement update = m_db.query(
      "UPDATE experiment_leases SET heartbeat_at = ?1 WHERE experiment_id = ?2 AND host = ?3 AND pid = ?4");
  update.bind(1, utc_now_iso8601());
  update.bind(2, experiment_id);
  update.bind(3, host);
  update.bind(4, pid);
  update.run();
  const bool ours = m_db.changes() > 0;
  tx.commit();
  return ours;
}

void sqlite_store::release_lease(int64_t experiment_id, const std::string& host, int64_t pid) {
  std::lock_guard lock(m_mutex);
  write_transaction tx(m_db);
  statement del = m_db.query("DELETE FROM experiment_leases WHERE experiment_id = ?1 AND host = ?2 AND pid = ?3");
  del.bind(1, experiment_id);
  del.bind(2, host);
  del.bind(3, pid);
  del.run();
  tx.commit();
}

}  // namespace ptxbench::store_detail
