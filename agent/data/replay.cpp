#include "agent/data/replay.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>

#include "agent/data/run_data.hpp"
#include "evaluator/common/host.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {
namespace {

// One candidate to judge again.
struct replay_job {
  std::string task_id;
  int sample = 0;
  int round = 0;
  int64_t new_candidate_id = 0;
  std::optional<candidate_row> candidate;
  std::optional<evaluation_row> old;
  int branch = -1;              // a sibling of a branched round that was not chosen; -1: a turn
  int64_t new_sibling_id = 0;   // that sibling in the target
  int64_t chosen_sibling_id = 0;  // a turn: its chosen sibling in the target (0: none), given the turn's verdict
};

// The old result's headline, read loosely: a result written by an older
// evaluator need not parse with today's schema.
std::string old_headline(const std::optional<evaluation_row>& old) {
  if (!old) return "";
  if (old->result.is_object() && old->result.contains("headline") && old->result["headline"].is_string()) {
    return old->result["headline"].get<std::string>();
  }
  return "";
}

std::vector<replay_job> copy_experiment(run_store& source, run_store& target, const experiment_row& from,
                                        int64_t new_experiment_id) {
  std::vector<replay_job> jobs;
  auto data = load_experiment(source, from);
  for (const auto& t : data.trajectories) {
    const auto& tr = t.trajectory;
    int64_t new_id = target.ensure_trajectory(new_experiment_id, tr.task_id, tr.family, tr.sample);
    if (tr.source != "model" || !tr.mutation_operator.empty())
      target.set_trajectory_provenance(new_id, tr.source, tr.mutation_operator);
    for (const auto& view : t.turns) {
      turn_row turn = view.turn;
      turn.id = 0;
      turn.trajectory_id = new_id;
      candidate_row candidate = view.candidate.value_or(candidate_row{});
      if (!view.candidate) candidate.format_problem = "no candidate was recorded for this turn";
      candidate.id = 0;
      target.record_turn(turn, candidate);
    }
    // Siblings of branched rounds, with the run's choice: the conversation went
    // on from the chosen one, which a replay does not change. The chosen one
    // gets its turn's new verdict; the others are judged again.
    std::map<int, int64_t> chosen_by_round;
    for (const auto& [round, siblings] : t.siblings) {
      for (const auto& s : siblings) {
        branch_reply_row row;
        row.branch = s.branch;
        row.chosen = s.chosen;
        row.turn = s.view.turn;
        row.turn.trajectory_id = new_id;
        row.candidate = s.view.candidate.value_or(candidate_row{});
        const int64_t id = target.record_branch_reply(row);
        if (s.chosen) {
          chosen_by_round[round] = id;
          continue;
        }
        replay_job job{tr.task_id, tr.sample, round, 0, row.candidate, s.view.evaluation};
        job.branch = s.branch;
        job.new_sibling_id = id;
        jobs.push_back(std::move(job));
      }
    }
    for (const auto& copied : target.turns(new_id)) {
      auto original = std::find_if(t.turns.begin(), t.turns.end(),
                                   [&](const turn_view& v) { return v.turn.round == copied.turn.round; });
      if (original == t.turns.end() || !copied.candidate) continue;
      replay_job job{tr.task_id, tr.sample, copied.turn.round, copied.candidate->id, copied.candidate,
                     original->evaluation};
      if (auto c = chosen_by_round.find(copied.turn.round); c != chosen_by_round.end()) job.chosen_sibling_id = c->second;
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

// Marks each copied trajectory with the best new verdict (what the loop's stop
// policy cares about) and the experiment as done.
void finish_copy(run_store& target, int64_t experiment_id) {
  for (const auto& t : target.trajectories(experiment_id)) {
    auto turns = target.turns(t.id);
    candidate_quality best;
    bool passed = false;
    for (const auto& v : turns) {
      auto q = quality_of(v);
      if (better(q, best)) best = q;
      passed = passed || (v.evaluation && v.evaluation->passed);
    }
    // Named as the loop names it (verdict_name): the same evaluations give the same final verdict.
    target.finish_trajectory(t.id, best.st.judged ? verdict_name(verdict_of(best.st)) : "", passed,
                             static_cast<int>(turns.size()));
  }
  target.set_experiment_status(experiment_id, "done");
}

}  // namespace

replay_summary replay_experiment(run_store& source, run_store& target, evaluator& judge, const task_lookup& tasks,
                                 const replay_options& options) {
  auto from = source.find_experiment(options.experiment);
  if (!from) throw input_error("no experiment named '" + options.experiment + "' in " + source.path().string());
  experiment_row copy = *from;
  copy.id = 0;
  copy.name = options.new_name.empty() ? from->name + "-replay" : options.new_name;
  if (target.find_experiment(copy.name)) {
    throw input_error("experiment '" + copy.name + "' exists already in " + target.path().string());
  }
  copy.kind = "replay";
  copy.evaluator_version = judge.version();
  copy.gpu = judge.gpu_description();
  copy.host = host_name();
  copy.status = "running";
  copy.created_at.clear();  // the store stamps the replay when it is written
  copy.finished_at.clear();
  copy.parent_experiment_id = from->id;
  copy.parent_database = std::filesystem::absolute(source.path()).string();

  replay_summary summary;
  summary.experiment_name = copy.name;
  summary.experiment_id = target.create_experiment(copy);
  auto jobs = copy_experiment(source, target, *from, summary.experiment_id);
  // The run's own seeds and limits (its stored config), the GPU as asked here.
  judge_settings settings = judge_settings_from_config(from->config);
  settings.run_gpu = options.run_gpu;
  settings.run_timing = options.run_timing;
  summary.candidates = static_cast<int>(jobs.size());

  std::mutex mutex;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      const auto& job = jobs[i];
      std::string where = job.task_id + " sample " + std::to_string(job.sample) + " round " + std::to_string(job.round);
      if (job.branch >= 0) where += " branch " + std::to_string(job.branch);
      try {
        const bool has_ptx = job.candidate->format_problem.empty() && !job.candidate->ptx.empty();
        std::optional<task> t = has_ptx ? tasks(job.task_id) : std::optional<task>(task{});
        if (!t) throw input_error("unknown task '" + job.task_id + "'");
        // The very inputs the candidate was judged on: the seeds its evaluation recorded.
        auto judged_with = job.old ? with_recorded_seeds(settings, job.old->result) : settings;
        evaluation_result result;
        evaluation_row row;
        if (job.branch >= 0) {
          // A sibling: its verdict lives on its branch_replies row (no evaluation id).
          result = judge_candidate(judge, *t, *job.candidate, judged_with);
          row = evaluation_row_of(result, 0);
          target.record_branch_evaluation(job.new_sibling_id, row);
        } else {
          row = judge_and_record(target, judge, *t, *job.candidate, judged_with, &result,
                                 job.old ? std::optional<int64_t>(job.old->id) : std::nullopt);
          if (job.chosen_sibling_id) target.record_branch_evaluation(job.chosen_sibling_id, row);
        }
        std::string old_verdict = job.old ? job.old->verdict : "none";
        std::lock_guard lock(mutex);
        ++summary.evaluated;
        ++summary.transitions[{old_verdict, row.verdict}];
        if (old_verdict == row.verdict) {
          ++summary.unchanged;
        } else {
          verdict_change change{job.task_id, job.sample, job.round, job.old ? job.old->id : 0, row.id,
                                old_verdict, row.verdict, old_headline(job.old), result.headline};
          change.branch = job.branch;
          summary.changes.push_back(std::move(change));
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        summary.problems.push_back(where + ": " + e.what());
      }
    }
  };
  std::vector<std::thread> workers;
  for (int w = 1; w < std::max(1, options.jobs); ++w) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();

  std::sort(summary.changes.begin(), summary.changes.end(), [](const verdict_change& a, const verdict_change& b) {
    return std::tie(a.task, a.sample, a.round, a.branch) < std::tie(b.task, b.sample, b.round, b.branch);
  });
  std::sort(summary.problems.begin(), summary.problems.end());
  finish_copy(target, summary.experiment_id);
  return summary;
}

std::string format_replay_summary(const replay_summary& s) {
  std::ostringstream os;
  os << "replayed " << s.evaluated << " of " << s.candidates << " candidates into experiment '"
     << s.experiment_name << "': " << s.unchanged << " verdicts unchanged, " << s.changes.size() << " changed";
  if (!s.problems.empty()) os << ", " << s.problems.size() << " not re-evaluated";
  os << '\n';
  for (const auto& c : s.changes) {
    os << "  " << c.task << " sample " << c.sample << " round " << c.round;
    if (c.branch >= 0) os << " branch " << c.branch;
    os << ": " << c.old_verdict << " -> " << c.new_verdict << '\n';
    if (!c.old_headline.empty()) os << "      was: " << c.old_headline << '\n';
    if (!c.new_headline.empty()) os << "      now: " << c.new_headline << '\n';
  }
  if (!s.transitions.empty()) {
    os << "verdict transitions (old -> new: count):\n";
    for (const auto& [key, count] : s.transitions) {
      os << "  " << key.first << " -> " << key.second << ": " << count << '\n';
    }
  }
  for (const auto& p : s.problems) os << "  not re-evaluated: " << p << '\n';
  return os.str();
}

}  // namespace ptxbench::data
