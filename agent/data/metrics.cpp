#include "agent/data/metrics.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <set>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::data {
namespace {

// What a trajectory has achieved so far.
struct progress {
  bool compiled = false;
  bool correct = false;
  bool instructions = false;
  bool passed = false;
  std::optional<double> best_correct_speedup;

  void add(const turn_view& t) {
    if (!t.evaluation) return;
    const auto& e = *t.evaluation;
    compiled = compiled || data::compiled(t);
    correct = correct || e.correct;
    instructions = instructions || e.instructions_ok;
    passed = passed || e.passed;
    if (e.correct && e.speedup && (!best_correct_speedup || *e.speedup > *best_correct_speedup)) {
      best_correct_speedup = e.speedup;
    }
  }
};

rates summarize(const std::vector<progress>& states) {
  rates r;
  r.trajectories = static_cast<int>(states.size());
  r.fast_p.assign(fast_p_thresholds.size(), 0.0);
  if (states.empty()) return r;
  for (const auto& s : states) {
    r.compiled += s.compiled;
    r.correct += s.correct;
    r.instructions += s.instructions;
    r.passed += s.passed;
    for (size_t i = 0; i < fast_p_thresholds.size(); ++i) {
      if (s.correct && s.best_correct_speedup && *s.best_correct_speedup > fast_p_thresholds[i]) r.fast_p[i] += 1;
    }
  }
  double n = static_cast<double>(states.size());
  r.compiled /= n;
  r.correct /= n;
  r.instructions /= n;
  r.passed /= n;
  for (auto& f : r.fast_p) f /= n;
  return r;
}

struct group_input {
  std::string family;
  std::vector<const trajectory_data*> trajectories;
};

std::optional<double> geometric_mean(const std::vector<double>& values) {
  double log_sum = 0.0;
  int n = 0;
  for (double v : values) {
    if (v <= 0.0) continue;  // a speedup is a ratio of positive times; anything else is no measurement
    log_sum += std::log(v);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / n);
}

std::optional<double> reported_threshold(const turn_view& t) {
  if (!t.evaluation || !t.evaluation->result.is_object()) return std::nullopt;
  const auto& perf = t.evaluation->result.value("performance", nlohmann::json());
  if (!perf.is_object() || !perf.contains("threshold") || !perf["threshold"].is_number()) return std::nullopt;
  double v = perf["threshold"].get<double>();
  return v > 0.0 ? std::optional<double>(v) : std::nullopt;
}

group_metrics measure(const std::string& experiment, const std::string& model, const std::string& task,
                      const group_input& in) {
  group_metrics g;
  g.experiment = experiment;
  g.model = model;
  g.task = task;
  g.family = in.family;
  g.trajectories = static_cast<int>(in.trajectories.size());
  int max_round = -1;
  std::vector<double> correct_speedups;
  for (const auto* t : in.trajectories) {
    std::array<bool, 6> ran{}, passed{};
    for (const auto& turn : t->turns) {
      max_round = std::max(max_round, turn.turn.round);
      ++g.candidates;
      auto q = quality_of(turn);
      if (q.verdict < 0) {
        ++g.unevaluated;
        continue;
      }
      ++g.verdicts[q.verdict];
      for (int s = 0; s < 6; ++s) {
        g.stage_passed[s] += q.stage_passed[s];
        auto& c = g.stages[s];
        (q.stage_score[s] == 2 ? c.passed : q.stage_score[s] == 0 ? c.failed : c.not_run) += 1;
        ran[s] = ran[s] || q.stage_score[s] != 1;
        passed[s] = passed[s] || q.stage_score[s] == 2;
      }
      if (turn.evaluation->correct && turn.evaluation->speedup) correct_speedups.push_back(*turn.evaluation->speedup);
      if (!g.speedup_threshold) g.speedup_threshold = reported_threshold(turn);
    }
    for (int s = 0; s < 6; ++s) {
      g.stages[s].trajectories_ran += ran[s];
      g.stages[s].trajectories_passed += passed[s];
    }
  }
  g.geomean_correct = geometric_mean(correct_speedups);
  std::vector<progress> states(in.trajectories.size());
  for (int r = 0; r <= max_round; ++r) {
    for (size_t i = 0; i < in.trajectories.size(); ++i) {
      for (const auto& turn : in.trajectories[i]->turns) {
        if (turn.turn.round == r) states[i].add(turn);
      }
    }
    g.per_round.push_back(summarize(states));
  }
  g.final = summarize(states);
  for (const auto& s : states) {
    g.passed_trajectories += s.passed;
    if (s.best_correct_speedup) g.speedups.push_back(*s.best_correct_speedup);
  }
  std::sort(g.speedups.begin(), g.speedups.end());
  g.geomean_best = geometric_mean(g.speedups);
  for (int k : pass_k_values) {
    if (k <= g.trajectories) g.pass_at_k[k] = pass_at_k(g.trajectories, g.passed_trajectories, k);
  }
  return g;
}

// A reply that failed no stage: it passed, or every stage passed or did not run.
bool failed_no_stage(const turn_view& t) {
  if (!t.evaluation) return false;
  const auto q = quality_of(t);
  if (q.verdict < 0) return false;  // an evaluator error is no verdict
  if (q.reached == passed_rank) return true;
  const auto& stages = t.evaluation->result.is_object() ? t.evaluation->result.value("stages", nlohmann::json())
                                                        : nlohmann::json();
  if (!stages.is_object() || stages.empty()) return false;
  for (int s = 0; s < stage_count; ++s)
    if (q.stage_score[s] == 0) return false;
  return true;
}

// The replies of a trajectory that were LLM calls, in the order they were asked.
std::vector<const turn_view*> calls_of(const trajectory_data& t) {
  std::vector<const turn_view*> out;
  std::map<int, const turn_view*> by_round;
  for (const auto& turn : t.turns) by_round[turn.turn.round] = &turn;
  std::set<int> rounds;
  for (const auto& [r, turn] : by_round) rounds.insert(r);
  for (const auto& [r, siblings] : t.siblings) rounds.insert(r);
  auto model_written = [](const turn_view& v) { return v.turn.author != "mutation" && v.turn.author != "reference"; };
  for (int r : rounds) {
    auto siblings = t.siblings.find(r);
    if (siblings != t.siblings.end() && !siblings->second.empty()) {
      for (const auto& s : siblings->second)
        if (model_written(s.view)) out.push_back(&s.view);
    } else if (model_written(*by_round.at(r))) {
      out.push_back(by_round.at(r));
    }
  }
  return out;
}

int config_int(const nlohmann::json& config, const char* key, int fallback) {
  if (!config.is_object() || !config.contains(key) || !config[key].is_number_integer()) return fallback;
  return config[key].get<int>();
}

}  // namespace

std::vector<calls_curve> compute_calls_curves(const std::vector<experiment_data>& experiments) {
  std::vector<calls_curve> out;
  for (const auto& e : experiments) {
    calls_curve c;
    c.experiment = e.experiment.name;
    c.branch = config_int(e.experiment.config, "branch", 1);
    c.rounds = config_int(e.experiment.config, "rounds", 0);
    c.trajectories = static_cast<int>(e.trajectories.size());
    std::vector<std::vector<const turn_view*>> calls;
    size_t most = 0;
    for (const auto& t : e.trajectories) {
      calls.push_back(calls_of(t));
      most = std::max(most, calls.back().size());
      c.llm_calls += static_cast<int>(calls.back().size());
      for (const auto* v : calls.back()) {
        const auto q = quality_of(*v);
        if (q.verdict < 0) continue;
        for (int s = 0; s < stage_count; ++s) c.stage_ran[s] = c.stage_ran[s] || q.stage_score[s] != 1;
      }
    }
    if (most == 0) continue;  // no LLM calls (a mutation experiment): nothing to compare
    std::vector<progress> states(calls.size());
    std::vector<bool> sound(calls.size(), false);
    for (size_t k = 0; k < most; ++k) {
      int no_failure = 0;
      for (size_t i = 0; i < calls.size(); ++i) {
        if (k < calls[i].size()) {
          states[i].add(*calls[i][k]);
          sound[i] = sound[i] || failed_no_stage(*calls[i][k]);
        }
        no_failure += sound[i];
      }
      calls_point p;
      p.calls = static_cast<int>(k) + 1;
      p.at = summarize(states);
      p.no_failed_stage = calls.empty() ? 0.0 : static_cast<double>(no_failure) / static_cast<double>(calls.size());
      c.points.push_back(std::move(p));
    }
    out.push_back(std::move(c));
  }
  return out;
}

bool curve_ran(const calls_curve& c, rate_kind kind) { return c.stage_ran[stage_of(kind)]; }

double pass_at_k(int n, int c, int k) {
  assert(0 <= c && c <= n && 1 <= k && k <= n);
  if (n - c < k) return 1.0;
  // C(n-c,k)/C(n,k) = prod_{i=n-c+1}^{n} (1 - k/i)
  double ratio = 1.0;
  for (int i = n - c + 1; i <= n; ++i) ratio *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - ratio;
}

double median_sorted(const std::vector<double>& sorted) {
  assert(!sorted.empty());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

bool stage_ran(const group_metrics& g, int s) { return g.stages[s].passed + g.stages[s].failed > 0; }

int stage_of(rate_kind r) {
  switch (r) {
    case rate_kind::compiled: return static_cast<int>(stage::compile);
    case rate_kind::correct: return static_cast<int>(stage::correctness);
    case rate_kind::instructions: return static_cast<int>(stage::instructions);
    case rate_kind::passed: return static_cast<int>(stage::performance);
  }
  return 0;
}

std::vector<group_metrics> compute_metrics(const std::vector<experiment_data>& experiments) {
  std::vector<group_metrics> out;
  for (const auto& e : experiments) {
    std::map<std::pair<std::string, std::string>, group_input> groups;
    for (const auto& t : e.trajectories) {
      std::string model = t.turns.empty() ? e.experiment.model : model_of(t.turns.front(), e.experiment);
      auto& g = groups[{model, t.trajectory.task_id}];
      g.family = t.trajectory.family;
      g.trajectories.push_back(&t);
    }
    for (const auto& [key, input] : groups) out.push_back(measure(e.experiment.name, key.first, key.second, input));
  }
  return out;
}

void annotate_tasks(std::vector<group_metrics>& groups, const task_catalogue& catalogue) {
  for (auto& g : groups) {
    const auto& info = info_of(catalogue, g.task);
    g.level = info.level;
    g.variant = info.variant;
  }
}

}  // namespace ptxbench::data
