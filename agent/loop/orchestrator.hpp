#pragma once
// The generate -> evaluate -> feed back -> log loop over tasks x samples x
// rounds. Many trajectories are in flight at once (one thread each, up to
// `concurrency`): while one waits on the model, others compile or wait for the
// GPU queue, so waiting on the model never serialises the run.
//
// Containment: whatever fails while one turn is handled (the reply parser, the
// evaluator, the prompt builder) is recorded on that turn or trajectory as an
// error of the agent and the run goes on; a candidate whose judging crashed
// the process k times is not judged again (agent/judge/contained.hpp; a
// process killed from outside charges nobody).
//
// Durability: a turn and its candidate are stored in one transaction right
// after the reply arrives, the evaluation right after it is judged. A run killed
// at any moment resumes (resume=true) from what is stored: recorded turns are
// never asked again, a turn without an evaluation is evaluated, and the
// conversation is rebuilt from the stored replies and feedback.
//
// Branching (config.branch = N > 1): each repair round asks for N replies to
// the same prompt (in parallel, each one LLM call against max_llm_calls),
// stores each sibling as soon as it arrives, judges them one after the other,
// stores each verdict as soon as it is known, then writes the best as the
// round's turn (choose_branch: one transaction). Best: `better` of
// evaluator/api/verdict.hpp (an evaluator or agent error never wins over a
// verdict; then got further, stage by stage, then faster); ties go to the lower branch.
// A resume keeps the siblings stored, asks only for the missing ones, judges
// the unjudged ones and then chooses, so a round is never asked twice.
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "agent/judge/contained.hpp"
#include "agent/judge/judge.hpp"
#include "agent/llm/provider.hpp"
#include "agent/loop/experiment_config.hpp"
#include "agent/loop/progress.hpp"
#include "agent/loop/writer_lease.hpp"
#include "agent/prompt/prompt.hpp"
#include "agent/store/store.hpp"
#include "evaluator/api/evaluation.hpp"
#include "evaluator/api/task.hpp"

namespace ptxbench {

struct run_summary {
  int64_t experiment_id = 0;
  int trajectories = 0;
  int completed = 0;      // finished all their rounds or stopped on a pass
  int passed = 0;
  int incomplete = 0;     // stopped by an LLM failure or interruption; resumable
  int turns_requested = 0;  // LLM calls made by this process
  int llm_failures = 0;
  int budget_stopped = 0;   // trajectories not started or cut short because max_llm_calls was spent
  int coverage_waves = 0;   // rounds of extra samples added for coverage
  double wall_s = 0.0;
  // Why the run stopped early for want of an evaluator ("" when it did not):
  // the trajectories it left are pending, and a resume judges their candidates.
  std::string evaluator_unavailable;
  // Why the run stopped because its database could not be written (a full
  // disk, a lost file; "" when it did not): the store error of the first
  // trajectory that met it. What was stored is complete; a resume continues.
  std::string store_failure;
};

class orchestrator {
 public:
  orchestrator(experiment_config config, std::vector<task> tasks, provider& llm, evaluator& eval, run_store& store,
               const prompt_library& prompts, progress_sink& progress);

  // Runs (or, with resume, continues) the experiment named in the config.
  // Throws input_error when the experiment exists and resume is false, or when
  // resume is true and it does not exist.
  run_summary run(bool resume);

  // The endpoint that writes repair rounds per config.teacher (nullptr, the
  // default: the student writes every round). Must outlive run().
  void set_teacher(provider* teacher) { m_teacher = teacher; }

  // Asks running trajectories to stop after their current step (signal handlers).
  static void request_stop();
  static bool stop_requested();
  // Lets a later run in this process start again after a stop (tests, embedders).
  static void clear_stop_request();

  // How often the writer lease is renewed and when a silent holder counts as gone.
  void set_lease_timing(lease_timing timing) { m_lease_timing = timing; }

 private:
  struct trajectory_outcome {
    bool completed = false;
    bool passed = false;
    bool budget_stopped = false;
    bool done_before = false;  // finished by an earlier process (a resume passes over it)
  };
  struct job {
    const task* t;
    int sample;
  };
  void run_jobs(int64_t experiment_id, const std::vector<job>& jobs, run_summary& summary);
  // Counts one LLM call against max_llm_calls; false when the budget is spent.
  bool reserve_llm_call(run_summary& summary);
  // Extra samples until every task x failing-stage cell holds coverage_target repairs.
  void fill_coverage(int64_t experiment_id, run_summary& summary);
  trajectory_outcome run_trajectory(int64_t experiment_id, const task& t, int sample, run_summary& summary);
  using history_list = std::vector<std::pair<std::string, std::string>>;  // (reply, feedback it got)
  // One round of a trajectory: the reply and its candidate, taken from the
  // store on a resume or asked for now, and its evaluation once judged.
  struct round_play {
    enum class state { ready, budget_spent, left_pending } status = state::ready;
    std::string reply, finish_reason, author = "student";
    std::string reply_error;  // the reply parser failed on this reply
    candidate_row candidate;
    std::optional<evaluation_result> result;
    bool budget_cut = false;  // a branched round chosen among the siblings the budget paid for
  };
  // A round the store does not hold: the writer chosen (the teacher after
  // enough student failures), asked once or as N branched siblings, stored.
  round_play play_new_round(int64_t trajectory_id, const task& t, int sample, int round, const history_list& history,
                            int student_failures, run_summary& summary);
  // Judges a round that has no evaluation yet (a reply the parser refused is
  // the agent's error, recorded as such) and records the evaluation.
  void judge_round(int64_t trajectory_id, int round, const task& t, round_play& play, int sample);
  // One LLM call for a round: counted against the budget first, retried once
  // with half the history on a context-length error, its failed attempts
  // recorded. `messages` becomes the prompt actually sent.
  struct model_answer {
    enum class state { ok, budget_spent, cancelled, failed } status = state::failed;
    completion_outcome outcome;
  };
  model_answer ask_model(provider& writer, int64_t trajectory_id, const task& t, int sample, int round,
                         std::vector<chat_message>& messages, run_summary& summary);
  // The turn row of an answer (prompt, feedback, reply, tokens, model).
  turn_row answer_turn(int64_t trajectory_id, int round, const std::vector<chat_message>& messages,
                       const history_list& history, const completion& answer, const std::string& author,
                       bool by_teacher) const;
  // A branched round: every sibling asked for (or taken from the store),
  // judged, and the best written as the round's turn.
  struct branched_round {
    enum class state { chosen, budget_spent, pending } status = state::pending;
    bool budget_cut = false;  // chosen among fewer than N siblings: the budget ran out
    std::string reply, finish_reason, author;
    candidate_row candidate;
    evaluation_result result;
  };
  branched_round run_branched_round(int64_t trajectory_id, const task& t, int sample, int round,
                                    const history_list& history, provider& writer, const std::string& author,
                                    bool by_teacher, run_summary& summary);
  enum class sibling_state { recorded, budget_spent, cancelled, failed };
  // Asks for sibling `branch` and stores it, unless `sibling` holds it
  // already; *reply_error: the reply parser failed on the new reply.
  sibling_state ask_sibling(int64_t trajectory_id, const task& t, int sample, int round, int branch,
                            const history_list& history, provider& writer, const std::string& author, bool by_teacher,
                            std::optional<branch_reply_row>& sibling, std::string& reply_error, run_summary& summary);
  // Judges a stored sibling that has no verdict (contained as judge_contained) and records it.
  void judge_sibling(int64_t trajectory_id, const task& t, int round, branch_reply_row& sibling,
                     const std::string& reply_error);
  std::vector<chat_message> build_messages(const task& t, const history_list& history) const;
  // Judges through m_judge (agent/judge/contained.hpp: a candidate whose
  // judging ended the process too often is an error instead of being judged
  // again); an evaluator or agent error is recorded in agent_errors, its
  // message after `where`.
  evaluation_result judge_contained(int64_t trajectory_id, int round, const task& t, const candidate_row& c,
                                    const judge_subject& subject, const std::string& where);
  // The judging settings of this run (seeds, GPU, limits), read from the
  // config as stored, as replay reads them.
  judge_settings judging() const;

  experiment_config m_config;
  std::vector<task> m_tasks;
  provider& m_llm;
  provider* m_teacher = nullptr;
  evaluator& m_eval;
  run_store& m_store;
  const prompt_library& m_prompts;
  progress_sink& m_progress;
  contained_judge* m_judge = nullptr;  // during run()
  std::mutex m_summary_mutex;
  std::atomic<bool> m_store_failed{false};  // run_jobs starts no more trajectories
  lease_timing m_lease_timing;
};

// The stage funnel of an experiment from the store: for each stage, how many
// candidates passed it, failed it, could not run it (no GPU, another
// architecture, an earlier failure) or ran it without proof (unverified), and
// how many have it as their verdict (results with an evaluator error have none).
// Then two rows of verdicts only: "passed" (full passes) and "partial" (no
// stage failed, some could not run or be verified).
struct funnel_row {
  std::string stage;
  int passed = 0;
  int failed = 0;
  int not_run = 0;
  int unverified = 0;
  int error = 0;  // the evaluator failed (never the candidate's verdict)
  int verdict = 0;
};
std::vector<funnel_row> experiment_funnel(run_store& store, int64_t experiment_id, bool all_candidates);
std::string format_funnel(const std::vector<funnel_row>& rows, const std::string& title);
// Trajectories of the experiment with a candidate that failed no stage: it
// passed, or every stage passed or could not run (no GPU) or be verified.
// Evaluator errors are no verdict and count as neither.
int trajectories_without_failure(run_store& store, int64_t experiment_id);



}  // namespace ptxbench
