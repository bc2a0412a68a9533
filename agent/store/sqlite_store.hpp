#pragma once
// run_store over one SQLite connection (private to the store folder). Every
// public method takes m_mutex for its whole duration, so the store may be shared
// by any number of threads; each writer is one BEGIN IMMEDIATE transaction.
#include <mutex>

#include "agent/store/sqlite_handle.hpp"
#include "agent/store/store.hpp"

namespace ptxbench::store_detail {

class sqlite_store final : public run_store {
 public:
  sqlite_store(const std::filesystem::path& path, bool read_only);

  int64_t create_experiment(const experiment_row& e) override;
  void set_experiment_status(int64_t experiment_id, const std::string& status) override;
  int64_t ensure_trajectory(int64_t experiment_id, const std::string& task_id, const std::string& family,
                            int sample) override;
  int64_t record_turn(const turn_row& turn, const candidate_row& candidate) override;
  int64_t record_evaluation(const evaluation_row& e) override;
  void record_llm_failure(const llm_failure_row& f) override;
  void finish_trajectory(int64_t trajectory_id, const std::string& final_verdict, bool passed,
                         int rounds_done) override;
  void set_trajectory_provenance(int64_t trajectory_id, const std::string& source,
                                 const std::string& mutation_operator) override;
  int64_t record_branch_reply(const branch_reply_row& reply) override;
  void record_branch_evaluation(int64_t branch_reply_id, const evaluation_row& e) override;
  int64_t choose_branch(int64_t trajectory_id, int round, int branch) override;

  int judge_crashes(const judge_subject& subject) override;
  void note_judge_crashes(const std::vector<judge_crash_row>& crashes) override;
  void record_agent_error(const agent_error_row& e) override;
  void fail_trajectory(int64_t trajectory_id, int rounds_done) override;
  std::optional<lease_row> acquire_lease(int64_t experiment_id, const std::string& host, int64_t pid,
                                         const std::function<bool(const lease_row&)>& holder_alive) override;
  bool renew_lease(int64_t experiment_id, const std::string& host, int64_t pid) override;
  void release_lease(int64_t experiment_id, const std::string& host, int64_t pid) override;
  std::optional<lease_row> lease(int64_t experiment_id) override;

  std::vector<experiment_row> experiments() override;
  std::optional<experiment_row> find_experiment(const std::string& name) override;
  std::optional<experiment_row> experiment(int64_t id) override;
  std::vector<trajectory_row> trajectories(int64_t experiment_id) override;
  std::optional<trajectory_row> trajectory(int64_t id) override;
  std::vector<turn_view> turns(int64_t trajectory_id) override;
  std::optional<int64_t> candidate_id(int64_t turn_id) override;
  std::vector<llm_failure_row> llm_failures(int64_t experiment_id) override;
  std::vector<agent_error_row> agent_errors(int64_t experiment_id) override;
  std::vector<branch_reply_row> branch_replies(int64_t trajectory_id) override;
  std::filesystem::path path() const override { return m_path; }

 private:
  std::optional<lease_row> lease_locked(int64_t experiment_id);
  // record_turn's body, inside the caller's transaction: returns the existing
  // turn's id (and writes nothing) or the new one's; *inserted tells which.
  int64_t insert_turn_locked(const turn_row& turn, const candidate_row& candidate, bool* inserted,
                             int64_t* candidate_id);
  int64_t insert_evaluation_locked(const evaluation_row& e);
  // Writes a sibling's verdict unless it has one.
  void fill_branch_evaluation_locked(int64_t branch_reply_id, const evaluation_row& e);
  // Throws store_error when an UPDATE by id touched no row.
  void require_changed(const char* table, int64_t id);

  std::filesystem::path m_path;
  std::mutex m_mutex;
  connection m_db;
};

}  // namespace ptxbench::store_detail
