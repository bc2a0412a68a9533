#include "agent/loop/orchestrator.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "agent/loop/context_budget.hpp"
#include "agent/loop/coverage.hpp"
#include "agent/loop/writer_lease.hpp"
#include "evaluator/api/candidate.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench {

namespace {
std::atomic<bool> g_stop{false};

// Judging a candidate that ended the process this many times (a crash in a
// parser or the evaluator) is not started again: the turn is an error.
constexpr int k_max_judge_attempts = 3;

// As exported (to_json): an evaluator error is no stage verdict on the candidate.
std::string verdict_name(const evaluation_result& r) {
  return r.passed ? "passed" : r.evaluator_error() ? "error" : to_string(r.verdict);
}

// A turn the agent could not handle (its own failure, never the candidate's):
// every stage unjudged, the format stage holding the error.
evaluation_result agent_error_result(const std::string& step, const std::string& message,
                                     const std::string& evaluator_version) {
  evaluation_result r = format_failure_result("", evaluator_version);
  r.headline = "not judged: " + step + " failed: " + message;
  r.stages[stage::format] = {stage_status::error, step + " failed: " + message, 0.0};
  for (int i = 1; i < stage_count; ++i)
    r.stages[static_cast<stage>(i)] = {stage_status::not_run, "the candidate was not judged", 0.0};
  return r;
}

bool cut_by_token_limit(const std::string& finish_reason) {
  return finish_reason == "length" || finish_reason == "max_tokens";
}

}  // namespace

void orchestrator::request_stop() { g_stop = true; }
bool orchestrator::stop_requested() { return g_stop.load(); }
void orchestrator::clear_stop_request() { g_stop = false; }

orchestrator::orchestrator(experiment_config config, std::vector<task> tasks, provider& llm, evaluator& eval,
                           run_store& store, const prompt_library& prompts, progress_sink& progress)
    : m_config(std::move(config)),
      m_tasks(std::move(tasks)),
      m_llm(llm),
      m_eval(eval),
      m_store(store),
      m_prompts(prompts),
      m_progress(progress) {}

std::vector<chat_message> orchestrator::build_messages(const task& t, const history_list& history) const {
  std::vector<chat_message> m{{"system", m_prompts.system_prompt(t)}, {"user", m_prompts.task_prompt(t)}};
  size_t first = 0;
  if (m_config.history == history_policy::last_k && history.size() > static_cast<size_t>(m_config.history_k))
    first = history.size() - m_config.history_k;
  for (size_t i = first; i < history.size(); ++i) {
    m.push_back({"assistant", history[i].first});
    m.push_back({"user", history[i].second});
  }
  if (m_config.max_context_tokens > 0) return fit_context(std::move(m), m_config.max_context_tokens - m_config.llm.max_tokens);
  return m;
}

evaluation_result orchestrator::judge(const task& t, const candidate_row& c) {
  return judge_candidate(m_eval, t, c, judging());
}

evaluation_result orchestrator::judge_contained(int64_t trajectory_id, int round, const task& t,
                                                const candidate_row& c) {
  if (!c.format_problem.empty() || c.id <= 0) return judge(t, c);
  // Counted before judging: a judging that takes the process down (a signal in
  // a parser) leaves its count behind, so a resume can stop retrying it.
  const int attempts = m_store.note_judge_attempt(c.id);
  if (attempts > k_max_judge_attempts) {
    const std::string message = "judging this candidate started " + std::to_string(attempts - 1) +
                                " times and never finished (the process ended each time)";
    m_store.record_agent_error({0, trajectory_id, round, "judge", message, ""});
    return agent_error_result("judging", message, m_eval.version());
  }
  evaluation_result r;
  try {
    r = judge(t, c);
  } catch (const evaluator_unavailable&) {
    m_store.forget_judge_attempt(c.id);  // never judged: no count against the candidate
    throw;
  }
  if (r.evaluator_error())
    m_store.record_agent_error({0, trajectory_id, round, "judge", r.headline, ""});
  return r;
}

judge_settings orchestrator::judging() const {
  judge_settings s;
  s.seeds = m_config.seeds;
  s.run_gpu = m_config.gpu != "off";
  s.profile = m_config.feedback == feedback_detail::profile;
  s.time_limit_ms = m_config.time_limit_ms;
  s.timing_budget_ms = m_config.timing_budget_ms;
  return s;
}

orchestrator::model_answer orchestrator::ask_model(provider& writer, int64_t traj_id, const task& t, int sample,
                                                   int round, std::vector<chat_message>& messages,
                                                   run_summary& summary) {
  model_answer answer;
  if (!reserve_llm_call(summary)) {
    answer.status = model_answer::state::budget_spent;
    return answer;
  }
  auto outcome = writer.complete({messages, {t.id, sample, round}});
  if (!outcome.ok && !outcome.cancelled && is_context_length_error(outcome) && reserve_llm_call(summary)) {
    // Once, with the history cut to half its estimate, instead of ending the trajectory.
    messages = fit_context(messages, estimate_tokens(messages) / 2);
    auto retry = writer.complete({messages, {t.id, sample, round}});
    retry.failures.insert(retry.failures.begin(), outcome.failures.begin(), outcome.failures.end());
    outcome = std::move(retry);
  }
  {
    std::lock_guard<std::mutex> lock(m_summary_mutex);
    summary.llm_failures += static_cast<int>(outcome.failures.size());
  }
  for (size_t i = 0; i < outcome.failures.size(); ++i) {
    const auto& f = outcome.failures[i];
    llm_failure_row row{0, traj_id, round, f.attempt, f.http_status, f.cause, f.elapsed_ms,
                        !outcome.ok && i + 1 == outcome.failures.size(), ""};
    m_store.record_llm_failure(row);
  }
  answer.status = outcome.cancelled ? model_answer::state::cancelled
                  : outcome.ok      ? model_answer::state::ok
                                    : model_answer::state::failed;
  if (answer.status == model_answer::state::failed) m_progress.on_turn(t.id, sample, round, "llm_error", outcome.error);
  answer.outcome = std::move(outcome);
  return answer;
}

turn_row orchestrator::answer_turn(int64_t traj_id, int round, const std::vector<chat_message>& messages,
                                   const history_list& history, const completion& answer, const std::string& author,
                                   bool by_teacher) const {
  turn_row turn;
  turn.trajectory_id = traj_id;
  turn.round = round;
  nlohmann::json msgs = nlohmann::json::array();
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  turn.messages = msgs;
  turn.feedback = history.empty() ? "" : history.back().second;
  turn.feedback_detail = to_string(m_config.feedback);
  turn.reply = answer.text;
  turn.reasoning = answer.reasoning;
  turn.finish_reason = answer.finish_reason;
  turn.model = !answer.model.empty() ? answer.model : by_teacher ? m_config.teacher->llm.model : m_config.llm.model;
  turn.author = author;
  turn.prompt_tokens = answer.prompt_tokens;
  turn.completion_tokens = answer.completion_tokens;
  turn.reasoning_tokens = answer.reasoning_tokens;
  turn.latency_ms = answer.latency_ms;
  return turn;
}

orchestrator::sibling_state orchestrator::ask_sibling(int64_t traj_id, const task& t, int sample, int round,
                                                      int branch, const history_list& history, provider& writer,
                                                      const std::string& author, bool by_teacher,
                                                      std::optional<branch_reply_row>& sibling,
                                                      std::string& reply_error, run_summary& summary) {
  if (sibling) return sibling_state::recorded;
  if (stop_requested()) return sibling_state::cancelled;
  auto messages = build_messages(t, history);
  auto answer = ask_model(writer, traj_id, t, sample, round, messages, summary);
  switch (answer.status) {
    case model_answer::state::ok: break;
    case model_answer::state::budget_spent: return sibling_state::budget_spent;
    case model_answer::state::cancelled: return sibling_state::cancelled;  // nothing to record
    case model_answer::state::failed: return sibling_state::failed;        // a resume asks again
  }
  extracted_candidate extracted;
  try {
    extracted = extract_candidate(answer.outcome.result.text);
  } catch (const std::exception& e) {
    reply_error = e.what();
  }
  branch_reply_row row;
  row.branch = branch;
  row.turn = answer_turn(traj_id, round, messages, history, answer.outcome.result, author, by_teacher);
  row.candidate.ptx = extracted.ptx;
  row.candidate.manifest = extracted.manifest_text;
  row.candidate.format_problem = extracted.problem;
  row.id = m_store.record_branch_reply(row);
  sibling = std::move(row);
  return sibling_state::recorded;
}

void orchestrator::judge_sibling(int64_t traj_id, const task& t, int round, branch_reply_row& sibling,
                                 const std::string& reply_error) {
  if (sibling.evaluation) return;
  const std::string where = "branch " + std::to_string(sibling.branch) + ": ";
  evaluation_result r;
  if (!reply_error.empty()) {
    m_store.record_agent_error({0, traj_id, round, "reply", where + reply_error, ""});
    r = agent_error_result("reading the reply", reply_error, m_eval.version());
  } else if (!sibling.candidate.format_problem.empty()) {
    r = judge(t, sibling.candidate);
  } else {
    // Counted before judging, as judge_contained does for the round's turns.
    const int attempts = m_store.note_branch_judge_attempt(sibling.id);
    if (attempts > k_max_judge_attempts) {
      const std::string message = "judging this candidate started " + std::to_string(attempts - 1) +
                                  " times and never finished (the process ended each time)";
      m_store.record_agent_error({0, traj_id, round, "judge", where + message, ""});
      r = agent_error_result("judging", message, m_eval.version());
    } else {
      try {
        r = judge(t, sibling.candidate);
      } catch (const evaluator_unavailable&) {
        m_store.forget_branch_judge_attempt(sibling.id);
        throw;
      }
      if (r.evaluator_error()) m_store.record_agent_error({0, traj_id, round, "judge", where + r.headline, ""});
    }
  }
  evaluation_row e = evaluation_row_of(r, 0);
  m_store.record_branch_evaluation(sibling.id, e);
  sibling.evaluation = std::move(e);
}

orchestrator::branched_round orchestrator::run_branched_round(int64_t traj_id, const task& t, int sample, int round,
                                                              const history_list& history, provider& writer,
                                                              const std::string& author, bool by_teacher,
                                                              run_summary& summary) {
  branched_round out;
  const int n = m_config.branch;
  std::vector<std::optional<branch_reply_row>> siblings(n);
  for (auto& b : m_store.branch_replies(traj_id))
    if (b.turn.round == round && b.branch >= 0 && b.branch < n) siblings[b.branch] = std::move(b);
  // Every missing sibling asked at once: the model's latency is paid once per
  // round, not N times. Each is stored as soon as it arrives.
  std::vector<sibling_state> states(n, sibling_state::failed);
  std::vector<std::string> reply_errors(n);
  std::vector<std::exception_ptr> errors(n);
  auto work = [&](int b) {
    try {
      states[b] = ask_sibling(traj_id, t, sample, round, b, history, writer, author, by_teacher, siblings[b],
                              reply_errors[b], summary);
    } catch (...) {
      errors[b] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int b = 1; b < n; ++b) {
    if (siblings[b]) states[b] = sibling_state::recorded;
    else threads.emplace_back(work, b);
  }
  work(0);
  for (auto& th : threads) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);  // a store error, or the agent's own failure (the prompt builder)
  // Judged one after the other, in branch order: a candidate whose judging
  // takes the process down is then the only one charged for it (judge
  // attempts), never a sibling judged beside it.
  int judged = 0;
  bool budget = false;
  for (int b = 0; b < n; ++b) {
    if (states[b] == sibling_state::recorded) {
      judge_sibling(traj_id, t, round, *siblings[b], reply_errors[b]);
      ++judged;
    }
  }
  for (int b = 0; b < n; ++b) {
    if (states[b] == sibling_state::cancelled || states[b] == sibling_state::failed) return out;  // pending
    budget = budget || states[b] == sibling_state::budget_spent;
  }
  if (judged == 0) {
    out.status = branched_round::state::budget_spent;
    return out;
  }
  // The best sibling: an error (the evaluator's or the agent's) never wins over
  // a verdict, then got further, then faster; ties keep the lower branch.
  int best = -1;
  std::vector<evaluation_result> results(n);
  for (int b = 0; b < n; ++b) {
    if (states[b] != sibling_state::recorded) continue;
    results[b] = evaluation_result_from_json(siblings[b]->evaluation->result);
    if (best < 0) {
      best = b;
      continue;
    }
    const bool error_b = results[b].evaluator_error();
    const bool error_best = results[best].evaluator_error();
    if (error_b != error_best ? !error_b : better(results[b], results[best])) best = b;
  }
  const int64_t turn_id = m_store.choose_branch(traj_id, round, best);
  const branch_reply_row& chosen = *siblings[best];
  out.status = branched_round::state::chosen;
  out.budget_cut = budget;
  out.reply = chosen.turn.reply;
  out.finish_reason = chosen.turn.finish_reason;
  out.author = chosen.turn.author;
  out.candidate = chosen.candidate;
  out.candidate.id = m_store.candidate_id(turn_id).value_or(0);
  out.result = results[best];
  m_progress.on_turn(t.id, sample, round, verdict_name(out.result),
                     "best of " + std::to_string(judged) + " (branch " + std::to_string(best) + "): " +
                         out.result.headline);
  return out;
}

orchestrator::trajectory_outcome orchestrator::run_trajectory(int64_t experiment_id, const task& t, int sample,
                                                              run_summary& summary) {
  trajectory_outcome out;
  const int64_t traj_id = m_store.ensure_trajectory(experiment_id, t.id, t.family, sample);
  if (auto row = m_store.trajectory(traj_id); row && row->status == "done") {
    out.completed = true;
    out.passed = row->passed;
    out.done_before = true;
    return out;
  }
  auto stored = m_store.turns(traj_id);
  history_list history;
  std::optional<evaluation_result> best;
  int rounds_done = 0;
  int student_failures = 0;  // rounds the student wrote that did not pass
  int round = 0;
  try {
    for (; round < m_config.rounds; ++round) {
      if (stop_requested()) return out;
      candidate_row cand;
      std::string reply;
      std::string finish_reason;
      std::string reply_error;  // the reply parser failed on this reply
      std::optional<evaluation_result> result;
      std::string author = "student";
      bool budget_cut = false;
      if (round < static_cast<int>(stored.size())) {
        const auto& tv = stored[round];
        reply = tv.turn.reply;
        author = tv.turn.author;
        finish_reason = tv.turn.finish_reason;
        if (tv.candidate) cand = *tv.candidate;
        if (tv.evaluation) result = evaluation_result_from_json(tv.evaluation->result);
      } else {
        const bool by_teacher = m_teacher && m_config.teacher && round >= 1 &&
                                student_failures >= m_config.teacher->after_failures;
        if (by_teacher) author = "teacher";
        provider& writer = by_teacher ? *m_teacher : m_llm;
        if (m_config.branch > 1 && round >= 1) {
          auto branched = run_branched_round(traj_id, t, sample, round, history, writer, author, by_teacher, summary);
          if (branched.status == branched_round::state::pending) return out;  // a resume completes the round
          if (branched.status == branched_round::state::budget_spent) {
            out.budget_stopped = true;
            break;  // what was judged so far is this trajectory's result
          }
          reply = std::move(branched.reply);
          finish_reason = std::move(branched.finish_reason);
          author = std::move(branched.author);
          cand = std::move(branched.candidate);
          result = std::move(branched.result);
          budget_cut = branched.budget_cut;
        } else {
          auto messages = build_messages(t, history);
          auto answer = ask_model(writer, traj_id, t, sample, round, messages, summary);
          if (answer.status == model_answer::state::budget_spent) {
            out.budget_stopped = true;
            break;  // what was judged so far is this trajectory's result
          }
          // Ctrl-C: left pending, nothing to record; a failed call: left pending, a resume asks again.
          if (answer.status != model_answer::state::ok) return out;
          reply = answer.outcome.result.text;
          finish_reason = answer.outcome.result.finish_reason;
          extracted_candidate extracted;
          try {
            extracted = extract_candidate(reply);
          } catch (const std::exception& e) {
            reply_error = e.what();
          }
          turn_row turn = answer_turn(traj_id, round, messages, history, answer.outcome.result, author, by_teacher);
          cand.ptx = extracted.ptx;
          cand.manifest = extracted.manifest_text;
          cand.format_problem = extracted.problem;
          cand.id = m_store.candidate_id(m_store.record_turn(turn, cand)).value_or(0);
        }
      }
      if (!result) {
        if (!reply_error.empty()) {
          m_store.record_agent_error({0, traj_id, round, "reply", reply_error, ""});
          result = agent_error_result("reading the reply", reply_error, m_eval.version());
        } else {
          result = judge_contained(traj_id, round, t, cand);
        }
        m_store.record_evaluation(evaluation_row_of(*result, cand.id));
        m_progress.on_turn(t.id, sample, round, verdict_name(*result), result->headline);
      }
      rounds_done = round + 1;
      if (author == "student" && !result->passed) ++student_failures;
      if (!best || better(*result, *best)) best = *result;
      std::string feedback = m_prompts.feedback(t, *result, round, m_config.feedback);
      if (cut_by_token_limit(finish_reason)) feedback = m_prompts.cut_off_note(m_config.llm.max_tokens) + feedback;
      history.emplace_back(reply, std::move(feedback));
      if (result->passed && m_config.stop == stop_policy::first_pass) break;
      if (budget_cut) {
        out.budget_stopped = true;
        break;  // the round was chosen among the siblings the budget paid for
      }
    }
  } catch (const store_error&) {
    throw;  // infrastructure: the trajectory stays pending and a resume continues it
  } catch (const evaluator_unavailable& e) {
    // Infrastructure too: the round's reply and candidate are stored, its
    // judging is not, so a resume judges it. The run stops: further model
    // calls would only pile up candidates nobody can judge.
    if (!stop_requested()) {
      m_store.record_agent_error({0, traj_id, round, "judge", std::string("left for a resume: ") + e.what(), ""});
      {
        std::lock_guard<std::mutex> lock(m_summary_mutex);
        if (summary.evaluator_unavailable.empty()) summary.evaluator_unavailable = e.what();
      }
      request_stop();
    }
    m_progress.on_turn(t.id, sample, round, "pending", e.what());
    return out;
  } catch (const std::exception& e) {
    // The agent failed on this trajectory (the prompt builder, a stored result
    // it cannot read): recorded, and the trajectory ends here rather than
    // failing the same way on every resume.
    m_store.record_agent_error({0, traj_id, round, "trajectory", e.what(), ""});
    m_store.fail_trajectory(traj_id, rounds_done);
    m_progress.on_turn(t.id, sample, round, "error", e.what());
    out.completed = true;
    return out;
  }
  if (rounds_done == 0) return out;  // budget spent before its first call: left pending
  m_store.finish_trajectory(traj_id, best ? verdict_name(*best) : "", best && best->passed, rounds_done);
  out.completed = true;
  out.passed = best && best->passed;
  return out;
}

run_summary orchestrator::run(bool resume) {
  auto start = std::chrono::steady_clock::now();
  run_summary summary;
  auto existing = m_store.find_experiment(m_config.name);
  if (existing && !resume)
    throw input_error("experiment '" + m_config.name + "' already exists in " + m_store.path().string() +
                      " (use --resume to continue it, or choose another --name)");
  if (!existing && resume)
    throw input_error("experiment '" + m_config.name + "' is not in " + m_store.path().string() + ": nothing to resume");
  int64_t exp_id;
  std::unique_ptr<writer_lease> lease;
  auto on_lost = [] { request_stop(); };
  if (existing) {
    if (!existing->evaluator_version.empty() && existing->evaluator_version != m_eval.version())
      throw input_error("experiment '" + m_config.name + "' was judged by evaluator " + existing->evaluator_version +
                        " and this evaluator is " + m_eval.version() +
                        ": one experiment needs one evaluator version (start a new experiment, or re-judge this "
                        "one with `ptxbench replay`)");
    exp_id = existing->id;
    lease = std::make_unique<writer_lease>(m_store, exp_id, m_config.name, m_lease_timing, on_lost);
    m_store.set_experiment_status(exp_id, "running");
  } else {
    experiment_row e;
    e.name = m_config.name;
    e.config = experiment_config_to_json(m_config);
    e.evaluator_version = m_eval.version();
    e.host = this_host();
    e.gpu = m_eval.gpu_description();
    e.model = m_config.llm.model;
    e.provider = m_llm.describe();
    exp_id = m_store.create_experiment(e);
    lease = std::make_unique<writer_lease>(m_store, exp_id, m_config.name, m_lease_timing, on_lost);
  }
  summary.experiment_id = exp_id;

  std::vector<job> jobs;
  size_t index = 0;
  for (const auto& t : m_tasks)
    for (int s = 0; s < m_config.samples; ++s, ++index)
      if (static_cast<int>(index % m_config.shard_count) == m_config.shard_index) jobs.push_back({&t, s});
  summary.trajectories = static_cast<int>(jobs.size());
  int already = 0;
  for (const auto& tr : m_store.trajectories(exp_id))
    if (tr.status == "done") ++already;
  m_progress.on_start(summary.trajectories, already);
  run_jobs(exp_id, jobs, summary);
  if (m_config.coverage_target > 0) fill_coverage(exp_id, summary);
  m_progress.on_finish();
  // A process whose lease was taken over leaves the status to the new holder.
  if (!lease->lost())
    m_store.set_experiment_status(exp_id, summary.incomplete == 0 && !stop_requested() ? "done" : "interrupted");
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

bool orchestrator::reserve_llm_call(run_summary& summary) {
  std::lock_guard<std::mutex> lock(m_summary_mutex);
  if (m_config.max_llm_calls > 0 && summary.turns_requested >= m_config.max_llm_calls) return false;
  ++summary.turns_requested;
  return true;
}

void orchestrator::fill_coverage(int64_t exp_id, run_summary& summary) {
  std::map<std::string, int> next_sample;
  for (const auto& tr : m_store.trajectories(exp_id))
    next_sample[tr.task_id] = std::max(next_sample[tr.task_id], tr.sample + 1);
  for (;;) {
    if (stop_requested()) return;
    {
      std::lock_guard<std::mutex> lock(m_summary_mutex);
      if (summary.turns_requested >= m_config.max_llm_calls) return;
    }
    auto unfilled = unfilled_tasks(count_repairs(m_store, exp_id, m_tasks), m_tasks, m_config.coverage_target);
    if (unfilled.empty()) return;
    // One new sample per task with an unfilled cell, as many in flight as
    // the concurrency allows.
    std::vector<job> wave;
    for (const task* t : unfilled) wave.push_back({t, next_sample[t->id]++});
    summary.trajectories += static_cast<int>(wave.size());
    ++summary.coverage_waves;
    run_jobs(exp_id, wave, summary);
  }
}

void orchestrator::run_jobs(int64_t exp_id, const std::vector<job>& jobs, run_summary& summary) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (;;) {
      size_t i = next++;
      if (i >= jobs.size() || stop_requested()) return;
      m_progress.on_trajectory_started();
      trajectory_outcome o;
      try {
        o = run_trajectory(exp_id, *jobs[i].t, jobs[i].sample, summary);
      } catch (const std::exception& e) {
        m_progress.on_turn(jobs[i].t->id, jobs[i].sample, -1, "error", e.what());
      } catch (...) {
        m_progress.on_turn(jobs[i].t->id, jobs[i].sample, -1, "error", "unknown exception");
      }
      {
        std::lock_guard<std::mutex> lock(m_summary_mutex);
        if (o.budget_stopped) ++summary.budget_stopped;
        if (o.completed) ++summary.completed;
        else if (!o.budget_stopped) ++summary.incomplete;
        if (o.passed) ++summary.passed;
      }
      // Done by an earlier process: on_start counted it already.
      if (o.done_before) m_progress.on_trajectory_skipped();
      else m_progress.on_trajectory_done(o.passed, o.completed);
    }
  };
  int n = std::min<int>(m_config.concurrency, static_cast<int>(jobs.size()));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
}

}  // namespace ptxbench
