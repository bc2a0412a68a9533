#include "agent/loop/orchestrator.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "agent/loop/coverage.hpp"
#include "evaluator/api/candidate.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench {

namespace {
std::atomic<bool> g_stop{false};

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string verdict_name(const evaluation_result& r) { return r.passed ? "passed" : to_string(r.verdict); }

}  // namespace

void orchestrator::request_stop() { g_stop = true; }
bool orchestrator::stop_requested() { return g_stop.load(); }

evaluation_result format_failure_result(const std::string& problem, const std::string& evaluator_version) {
  evaluation_result r;
  r.verdict = stage::format;
  r.passed = false;
  r.headline = "format: " + problem;
  r.stages[stage::format] = {stage_status::failed, problem, 0.0};
  for (int i = 1; i < stage_count; ++i)
    r.stages[static_cast<stage>(i)] = {stage_status::not_run, "an earlier stage failed", 0.0};
  r.evaluator_version = evaluator_version;
  return r;
}

orchestrator::orchestrator(experiment_config config, std::vector<task> tasks, provider& llm, evaluator& eval,
                           run_store& store, const prompt_library& prompts, progress_sink& progress)
    : m_config(std::move(config)),
      m_tasks(std::move(tasks)),
      m_llm(llm),
      m_eval(eval),
      m_store(store),
      m_prompts(prompts),
      m_progress(progress) {}

std::vector<chat_message> orchestrator::build_messages(
    const task& t, const std::vector<std::pair<std::string, std::string>>& history) const {
  std::vector<chat_message> m{{"system", m_prompts.system_prompt(t)}, {"user", m_prompts.task_prompt(t)}};
  size_t first = 0;
  if (m_config.history == history_policy::last_k && history.size() > static_cast<size_t>(m_config.history_k))
    first = history.size() - m_config.history_k;
  for (size_t i = first; i < history.size(); ++i) {
    m.push_back({"assistant", history[i].first});
    m.push_back({"user", history[i].second});
  }
  return m;
}

evaluation_result orchestrator::judge(const task& t, const candidate_row& c) {
  if (!c.format_problem.empty()) return format_failure_result(c.format_problem, m_eval.version());
  evaluation_request req;
  req.t = t;
  req.ptx = c.ptx;
  req.manifest_text = c.manifest;
  req.seeds = m_config.seeds;
  req.run_gpu = m_config.gpu != "off";
  req.time_limit_ms = m_config.time_limit_ms;
  req.timing_budget_ms = m_config.timing_budget_ms;
  try {
    return m_eval.evaluate(req);
  } catch (const std::exception& e) {
    // An infrastructure failure while judging: recorded with status error
    // (never the candidate's verdict) rather than losing the turn.
    evaluation_result r = format_failure_result("", m_eval.version());
    r.verdict = stage::runtime;
    r.headline = std::string("evaluator error at runtime: ") + e.what();
    r.stages[stage::format] = {stage_status::not_run, "evaluator failed", 0.0};
    r.stages[stage::runtime] = {stage_status::error, std::string("evaluator failure: ") + e.what(), 0.0};
    return r;
  }
}

orchestrator::trajectory_outcome orchestrator::run_trajectory(int64_t experiment_id, const task& t, int sample,
                                                              run_summary& summary) {
  trajectory_outcome out;
  const int64_t traj_id = m_store.ensure_trajectory(experiment_id, t.id, t.family, sample);
  if (auto row = m_store.trajectory(traj_id); row && row->status == "done") {
    out.completed = true;
    out.passed = row->passed;
    return out;
  }
  auto stored = m_store.turns(traj_id);
  std::vector<std::pair<std::string, std::string>> history;  // (reply, feedback it got)
  std::optional<evaluation_result> best;
  int rounds_done = 0;
  int student_failures = 0;  // rounds the student wrote that did not pass
  for (int round = 0; round < m_config.rounds; ++round) {
    if (stop_requested()) return out;
    candidate_row cand;
    std::string reply;
    std::optional<evaluation_result> result;
    std::string author = "student";
    if (round < static_cast<int>(stored.size())) {
      const auto& tv = stored[round];
      reply = tv.turn.reply;
      author = tv.turn.author;
      if (tv.candidate) cand = *tv.candidate;
      if (tv.evaluation) result = evaluation_result_from_json(tv.evaluation->result);
    } else {
      auto messages = build_messages(t, history);
      completion_request req{messages, {t.id, sample, round}};
      const bool by_teacher = m_teacher && m_config.teacher && round >= 1 &&
                              student_failures >= m_config.teacher->after_failures;
      if (by_teacher) author = "teacher";
      if (!reserve_llm_call(summary)) {
        out.budget_stopped = true;
        break;  // what was judged so far is this trajectory's result
      }
      auto outcome = (by_teacher ? *m_teacher : m_llm).complete(req);
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
      if (!outcome.ok) {
        m_progress.on_turn(t.id, sample, round, "llm_error", outcome.error);
        return out;  // left pending: a resume asks again
      }
      reply = outcome.result.text;
      auto extracted = extract_candidate(reply);
      turn_row turn;
      turn.trajectory_id = traj_id;
      turn.round = round;
      nlohmann::json msgs = nlohmann::json::array();
      for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
      turn.messages = msgs;
      turn.feedback = history.empty() ? "" : history.back().second;
      turn.feedback_detail = to_string(m_config.feedback);
      turn.reply = reply;
      turn.reasoning = outcome.result.reasoning;
      turn.finish_reason = outcome.result.finish_reason;
      turn.model = !outcome.result.model.empty() ? outcome.result.model
                   : by_teacher                  ? m_config.teacher->llm.model
                                                 : m_config.llm.model;
      turn.author = author;
      turn.prompt_tokens = outcome.result.prompt_tokens;
      turn.completion_tokens = outcome.result.completion_tokens;
      turn.reasoning_tokens = outcome.result.reasoning_tokens;
      turn.latency_ms = outcome.result.latency_ms;
      cand.ptx = extracted.ptx;
      cand.manifest = extracted.manifest_text;
      cand.format_problem = extracted.problem;
      cand.id = m_store.candidate_id(m_store.record_turn(turn, cand)).value_or(0);
    }
    if (!result) {
      result = judge(t, cand);
      evaluation_row e;
      e.candidate_id = cand.id;
      e.evaluator_version = result->evaluator_version;
      e.gpu = result->gpu;
      e.verdict = verdict_name(*result);
      e.passed = result->passed;
      e.correct = result->correct();
      e.instructions_ok = result->instructions_executed();
      e.speedup = result->speedup();
      e.result = to_json(*result);
      m_store.record_evaluation(e);
      m_progress.on_turn(t.id, sample, round, verdict_name(*result), result->headline);
    }
    rounds_done = round + 1;
    if (author == "student" && !result->passed) ++student_failures;
    if (!best || better(*result, *best)) best = *result;
    history.emplace_back(reply, m_prompts.feedback(t, *result, round, m_config.feedback));
    if (result->passed && m_config.stop == stop_policy::first_pass) break;
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
  if (existing) {
    exp_id = existing->id;
    m_store.set_experiment_status(exp_id, "running");
  } else {
    experiment_row e;
    e.name = m_config.name;
    e.config = experiment_config_to_json(m_config);
    e.evaluator_version = m_eval.version();
    e.host = hostname();
    e.gpu = m_eval.gpu_description();
    e.model = m_config.llm.model;
    e.provider = m_llm.describe();
    exp_id = m_store.create_experiment(e);
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
      }
      {
        std::lock_guard<std::mutex> lock(m_summary_mutex);
        if (o.budget_stopped) ++summary.budget_stopped;
        if (o.completed) ++summary.completed;
        else if (!o.budget_stopped) ++summary.incomplete;
        if (o.passed) ++summary.passed;
      }
      m_progress.on_trajectory_done(o.passed);
    }
  };
  int n = std::min<int>(m_config.concurrency, static_cast<int>(jobs.size()));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
}

}  // namespace ptxbench
