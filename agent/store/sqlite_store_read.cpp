// The readers. Each is one SELECT, so it sees one consistent snapshot even
// while another connection (or process) writes.
#include "agent/store/sqlite_store.hpp"
#include "agent/store/store_rows.hpp"

namespace ptxbench::store_detail {

std::vector<experiment_row> sqlite_store::experiments() {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT " PTXBENCH_EXPERIMENT_COLUMNS " FROM experiments x ORDER BY x.id");
  std::vector<experiment_row> rows;
  while (select.step()) rows.push_back(read_experiment(m_db, select));
  return rows;
}

std::optional<experiment_row> sqlite_store::find_experiment(const std::string& name) {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT " PTXBENCH_EXPERIMENT_COLUMNS " FROM experiments x WHERE x.name = ?1");
  select.bind(1, name);
  if (!select.step()) return std::nullopt;
  return read_experiment(m_db, select);
}

std::optional<experiment_row> sqlite_store::experiment(int64_t id) {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT " PTXBENCH_EXPERIMENT_COLUMNS " FROM experiments x WHERE x.id = ?1");
  select.bind(1, id);
  if (!select.step()) return std::nullopt;
  return read_experiment(m_db, select);
}

std::vector<trajectory_row> sqlite_store::trajectories(int64_t experiment_id) {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT " PTXBENCH_TRAJECTORY_COLUMNS
                                " FROM trajectories r WHERE r.experiment_id = ?1 ORDER BY r.id");
  select.bind(1, experiment_id);
  std::vector<trajectory_row> rows;
  while (select.step()) rows.push_back(read_trajectory(select));
  return rows;
}

std::optional<trajectory_row> sqlite_store::trajectory(int64_t id) {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT " PTXBENCH_TRAJECTORY_COLUMNS " FROM trajectories r WHERE r.id = ?1");
  select.bind(1, id);
  if (!select.step()) return std::nullopt;
  return read_trajectory(select);
}

std::vector<turn_view> sqlite_store::turns(int64_t trajectory_id) {
  std::lock_guard lock(m_mutex);
  // The latest evaluation is the one with the highest id: ids only grow, and a
  // candidate evaluated again (a retry after a worker crash) keeps its history.
  statement select = m_db.query(
      "SELECT " PTXBENCH_TURN_COLUMNS ", " PTXBENCH_CANDIDATE_COLUMNS ", " PTXBENCH_EVALUATION_COLUMNS
      " FROM turns t"
      " LEFT JOIN candidates c ON c.turn_id = t.id"
      " LEFT JOIN evaluations e ON e.id = (SELECT max(id) FROM evaluations WHERE candidate_id = c.id)"
      " WHERE t.trajectory_id = ?1 ORDER BY t.round");
  select.bind(1, trajectory_id);
  constexpr int candidate_first = k_turn_column_count;
  constexpr int evaluation_first = k_turn_column_count + k_candidate_column_count;
  std::vector<turn_view> views;
  while (select.step()) {
    turn_view view;
    view.turn = read_turn(m_db, select);
    if (!select.is_null(candidate_first)) view.candidate = read_candidate(select, candidate_first);
    if (!select.is_null(evaluation_first)) view.evaluation = read_evaluation(m_db, select, evaluation_first);
    views.push_back(std::move(view));
  }
  return views;
}

std::optional<int64_t> sqlite_store::candidate_id(int64_t turn_id) {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT id FROM candidates WHERE turn_id = ?1");
  select.bind(1, turn_id);
  if (!select.step()) return std::nullopt;
  return select.int64_at(0);
}

std::vector<llm_failure_row> sqlite_store::llm_failures(int64_t experiment_id) {
  std::lock_guard lock(m_mutex);
  statement select = m_db.query("SELECT " PTXBENCH_LLM_FAILURE_COLUMNS
                                " FROM llm_failures f JOIN trajectories r ON r.id = f.trajectory_id"
                                " WHERE r.experiment_id = ?1 ORDER BY f.id");
  select.bind(1, experiment_id);
  std::vector<llm_failure_row> rows;
  while (select.step()) rows.push_back(read_llm_failure(select));
  return rows;
}

}  // namespace ptxbench::store_detail
