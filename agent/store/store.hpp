#pragma once
// The run database: SQLite in WAL mode (docs/design.md, "Store"). Only this folder
// sees SQLite. Every write is one transaction, so a process killed at any moment
// leaves the database consistent; a turn and its candidate are written together,
// and a turn is never written twice for one (trajectory, round).
// Infrastructure failures (disk full, corrupt file, locked too long) throw store_error.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ptxbench {

struct store_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The file given is not a run database this ptxbench can use (not SQLite at
// all, SQLite without the schema, damaged or truncated, written by a newer
// ptxbench, or missing where one must exist): the user's input, reported as
// bad input (exit 2), unlike the other store errors.
struct not_a_run_database : store_error {
  using store_error::store_error;
};

struct experiment_row {
  int64_t id = 0;
  std::string name;
  std::string kind = "run";        // run | replay
  nlohmann::json config;           // the full experiment config, secrets excluded
  std::string evaluator_version;
  std::string host;
  std::string gpu;
  std::string model;
  std::string provider;
  std::string status = "running";  // running | done | interrupted
  std::string created_at;          // ISO 8601 UTC
  std::string finished_at;
  std::optional<int64_t> parent_experiment_id;  // replay: the experiment it re-evaluates
  std::string parent_database;                  // replay: path of the original database
};

struct trajectory_row {
  int64_t id = 0;
  int64_t experiment_id = 0;
  std::string task_id;
  std::string family;
  int sample = 0;
  std::string status = "pending";  // pending | done
  int rounds_done = 0;
  std::string final_verdict;       // stage name or "passed"; empty while pending
  bool passed = false;
  // Where the trajectory's failed attempt came from: "model" (the model under
  // test) or "mutation" (ptxbench mutate broke a verified solution with
  // `mutation_operator`; round 1 is that solution).
  std::string source = "model";
  std::string mutation_operator;
};

struct turn_row {
  int64_t id = 0;
  int64_t trajectory_id = 0;
  int round = 0;
  nlohmann::json messages = nlohmann::json::array();  // the prompt sent: [{role, content}]
  std::string feedback;            // the feedback text included in this prompt ("" in round 0)
  std::string feedback_detail;     // none | stage | full
  std::string reply;
  std::string reasoning;
  std::string finish_reason;
  std::string model;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int reasoning_tokens = 0;
  double latency_ms = 0.0;
  std::string created_at;
  // Who wrote the reply: "student" (the model under test), "teacher" (the
  // config's teacher endpoint) or "reference" (a verified solution, in
  // mutation trajectories).
  std::string author = "student";
};

struct candidate_row {
  int64_t id = 0;
  int64_t turn_id = 0;
  std::string ptx;
  std::string manifest;
  std::string format_problem;  // non-empty when the reply held no valid candidate
  // Written by the store on record_turn (ptx_fingerprint.hpp); ignored on input.
  std::string normalised_hash;          // "" when there is no PTX
  std::optional<int64_t> duplicate_of;  // the earliest candidate of the same task with this hash
};

struct evaluation_row {
  int64_t id = 0;
  int64_t candidate_id = 0;
  std::string evaluator_version;
  std::string gpu;
  std::string verdict;       // stage name of the first failure, or "passed"
  bool passed = false;
  bool correct = false;
  bool instructions_ok = false;
  std::optional<double> speedup;
  nlohmann::json result;     // to_json(evaluation_result)
  std::optional<int64_t> origin_evaluation_id;  // replay: the evaluation it re-does
  std::string created_at;
};

struct llm_failure_row {
  int64_t id = 0;
  int64_t trajectory_id = 0;
  int round = 0;
  int attempt = 0;
  int http_status = 0;
  std::string cause;
  double elapsed_ms = 0.0;
  bool final = false;  // the call gave up after this failure
  std::string created_at;
};

// An error of the agent itself (a parser, the prompt builder, the evaluator
// throwing) while handling one turn; step names where (judge, reply, prompt).
struct agent_error_row {
  int64_t id = 0;
  int64_t trajectory_id = 0;
  int round = 0;
  std::string step;
  std::string message;
  std::string created_at;
};

// Who runs an experiment: one writer at a time.
struct lease_row {
  int64_t experiment_id = 0;
  std::string host;
  int64_t pid = 0;
  std::string started_at;
  std::string heartbeat_at;
  double heartbeat_age_s = 0.0;  // seconds since heartbeat_at, by the database's clock
};

// A turn with its candidate and latest evaluation, as readers want it.
struct turn_view {
  turn_row turn;
  std::optional<candidate_row> candidate;
  std::optional<evaluation_row> evaluation;
};

// One sibling of a branched repair round (`branch` > 1 in the config): one of
// the N replies sampled from the same conversation state, with its candidate
// and verdict. The sibling that continues the trajectory (chosen) is also the
// round's turn; the others live only here. Stored in `branch_replies`, one row
// per (trajectory, round, branch).
struct branch_reply_row {
  int64_t id = 0;
  int branch = 0;       // 0 .. N-1, the order the replies were asked for
  bool chosen = false;  // the round's turn is this sibling
  // trajectory_id, round, the prompt sent (messages), feedback, reply,
  // reasoning, tokens, latency, model, author; turn.id is unused.
  turn_row turn;
  // ptx, manifest, format_problem; normalised_hash is written by the store.
  // id, turn_id and duplicate_of are unused.
  candidate_row candidate;
  // The verdict; nullopt until judged. id and candidate_id are unused.
  std::optional<evaluation_row> evaluation;
};

// What a judging was about, for counting the judgings that ended the process
// (agent/judge/crash_record.hpp): a round's candidate (candidates.id) or a
// sibling of a branched round (branch_replies.id).
struct judge_subject {
  enum class kind { candidate, branch_reply } what = kind::candidate;
  int64_t id = 0;
};
const char* to_string(judge_subject::kind k);

// One judging that ended the process, with the signal that ended it ("SIGSEGV").
struct judge_crash_row {
  judge_subject subject;
  std::string signal;
};

class run_store {
 public:
  // Opens or creates the database (and its parent folder), applies the schema,
  // sets WAL mode. read_only opens an existing file without writing to it.
  static std::unique_ptr<run_store> open(const std::filesystem::path& path, bool read_only = false);
  virtual ~run_store() = default;

  // --- writers (thread-safe) ---
  // Creates the experiment; throws store_error if the name exists.
  virtual int64_t create_experiment(const experiment_row& e) = 0;
  virtual void set_experiment_status(int64_t experiment_id, const std::string& status) = 0;
  // Returns the trajectory's id, creating it if needed (idempotent).
  virtual int64_t ensure_trajectory(int64_t experiment_id, const std::string& task_id,
                                    const std::string& family, int sample) = 0;
  // Writes the turn and its candidate in one transaction and returns the turn id.
  // The candidate's fingerprint is computed here and it is flagged a duplicate
  // of the earliest stored candidate of the same task with the same one.
  // If a turn for (trajectory, round) exists already, writes nothing and returns
  // the existing id: a resumed run can never duplicate a turn.
  virtual int64_t record_turn(const turn_row& turn, const candidate_row& candidate) = 0;
  virtual int64_t record_evaluation(const evaluation_row& e) = 0;
  virtual void record_llm_failure(const llm_failure_row& f) = 0;
  virtual void finish_trajectory(int64_t trajectory_id, const std::string& final_verdict, bool passed,
                                 int rounds_done) = 0;
  // Branching (branch_reply_row). Writes the sibling (trajectory, round,
  // branch) when it is not stored yet, with its evaluation and chosen flag if
  // the row has them; when it is stored, only fills in what the stored row
  // lacks (an evaluation, chosen), so a resume or a merge can never duplicate
  // or change a sibling. Returns the sibling's id.
  virtual int64_t record_branch_reply(const branch_reply_row& reply) = 0;
  // Writes the verdict of a stored sibling that has none (one that has one is left as it is).
  virtual void record_branch_evaluation(int64_t branch_reply_id, const evaluation_row& e) = 0;
  // In one transaction: writes the judged sibling (trajectory, round, branch)
  // as the round's turn, candidate and evaluation, and marks it the chosen one
  // (the round's other siblings not chosen). When the round has a turn
  // already, writes nothing and returns its id. Throws store_error when the
  // sibling is missing or not judged.
  virtual int64_t choose_branch(int64_t trajectory_id, int round, int branch) = 0;
  // Sets the trajectory's source and mutation operator (trajectory_row);
  // throws store_error for an unknown id.
  virtual void set_trajectory_provenance(int64_t trajectory_id, const std::string& source,
                                         const std::string& mutation_operator) = 0;

  // --- containment ---
  // How many times judging `subject` ended the process (judge_crashes; 0 when never).
  virtual int judge_crashes(const judge_subject& subject) = 0;
  // Adds one to the count of each crash's subject, in one transaction.
  virtual void note_judge_crashes(const std::vector<judge_crash_row>& crashes) = 0;
  virtual void record_agent_error(const agent_error_row& e) = 0;
  // Marks the trajectory done with final verdict "error": it is not run again.
  virtual void fail_trajectory(int64_t trajectory_id, int rounds_done) = 0;

  // --- one writer per experiment ---
  // In one write transaction: takes the experiment's lease for (host, pid)
  // when it is free, already ours, or its holder is gone by `holder_alive`;
  // returns nullopt then. Otherwise returns the live holder, changing nothing.
  virtual std::optional<lease_row> acquire_lease(int64_t experiment_id, const std::string& host, int64_t pid,
                                                 const std::function<bool(const lease_row&)>& holder_alive) = 0;
  // Refreshes the heartbeat; false when the lease is no longer (host, pid)'s.
  virtual bool renew_lease(int64_t experiment_id, const std::string& host, int64_t pid) = 0;
  virtual void release_lease(int64_t experiment_id, const std::string& host, int64_t pid) = 0;
  virtual std::optional<lease_row> lease(int64_t experiment_id) = 0;

  // --- readers ---
  virtual std::vector<experiment_row> experiments() = 0;
  virtual std::optional<experiment_row> find_experiment(const std::string& name) = 0;
  virtual std::optional<experiment_row> experiment(int64_t id) = 0;
  virtual std::vector<trajectory_row> trajectories(int64_t experiment_id) = 0;
  virtual std::optional<trajectory_row> trajectory(int64_t id) = 0;
  // Turns of a trajectory in round order, each with its candidate and latest evaluation.
  virtual std::vector<turn_view> turns(int64_t trajectory_id) = 0;
  // The id of the candidate stored with a turn, or nullopt for an unknown turn.
  virtual std::optional<int64_t> candidate_id(int64_t turn_id) = 0;
  virtual std::vector<llm_failure_row> llm_failures(int64_t experiment_id) = 0;
  // Empty for a database written before agent errors were recorded.
  virtual std::vector<agent_error_row> agent_errors(int64_t experiment_id) = 0;
  // The siblings of a trajectory's branched rounds, by round and branch;
  // empty for a trajectory that never branched (or a database older than branching).
  virtual std::vector<branch_reply_row> branch_replies(int64_t trajectory_id) = 0;
  virtual std::filesystem::path path() const = 0;
};

}  // namespace ptxbench
