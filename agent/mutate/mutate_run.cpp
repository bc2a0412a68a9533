#include "agent/mutate/mutate_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include "agent/judge/judge.hpp"
#include "evaluator/api/candidate.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/verdict.hpp"

namespace ptxbench::mutate {
namespace {

using json = nlohmann::json;

// The same path a model's reply takes in the loop: the candidate extracted
// from the reply text, judged through agent/judge with the run's settings.
evaluation_result judge_reply(evaluator& eval, const task& t, const std::string& reply, const judge_settings& s) {
  auto c = extract_candidate(reply);
  return judge_candidate(eval, t, candidate_row{0, 0, c.ptx, c.manifest_text, c.problem}, s);
}

bool any_failed(const evaluation_result& r) { return verdict_of(r).kind == verdict_kind::failed; }

json message(const std::string& role, const std::string& content) { return {{"role", role}, {"content", content}}; }

int64_t record_round(run_store& store, int64_t trajectory, int round, const json& messages, const std::string& feedback,
                     const std::string& reply, const std::string& model, const evaluation_result& r,
                     const mutate_options& o, const std::string& author, const std::string& reasoning = "") {
  turn_row turn;
  turn.author = author;
  turn.reasoning = reasoning;
  turn.trajectory_id = trajectory;
  turn.round = round;
  turn.messages = messages;
  turn.feedback = feedback;
  turn.feedback_detail = to_string(o.feedback);
  turn.reply = reply;
  turn.finish_reason = "stop";
  turn.model = model;
  auto c = extract_candidate(reply);
  candidate_row cand{0, 0, c.ptx, c.manifest_text, c.problem};
  const int64_t turn_id = store.record_turn(turn, cand);
  store.record_evaluation(evaluation_row_of(r, store.candidate_id(turn_id).value_or(0)));
  return turn_id;
}

// The teacher's reasoning from the mutant to the fix; "" when the call gave
// up (its failures are stored against the trajectory).
std::string ask_rationale(run_store& store, int64_t traj, const task& t, int sample, const std::string& attempt,
                          const std::string& feedback, const std::string& fix, const prompt_library& prompts,
                          const mutate_options& o, mutate_summary& summary) {
  completion_request req{{{"user", prompts.rationale_prompt(t, attempt, feedback, fix)}}, {t.id, sample, 1}};
  auto outcome = o.rationale_teacher->complete(req);
  for (size_t i = 0; i < outcome.failures.size(); ++i) {
    const auto& f = outcome.failures[i];
    store.record_llm_failure({0, traj, 1, f.attempt, f.http_status, f.cause, f.elapsed_ms,
                              !outcome.ok && i + 1 == outcome.failures.size(), ""});
  }
  if (!outcome.ok) {
    ++summary.rationale_failures;
    return "";
  }
  ++summary.rationales;
  return outcome.result.text;
}

// Stores one kept mutant as a two-round trajectory.
void store_kept(run_store& store, int64_t experiment_id, const task_solution& ts, int sample, const std::string& op,
                const std::string& mutant_reply, const evaluation_result& mutant_result,
                const evaluation_result& solution_result, const prompt_library& prompts, const mutate_options& o,
                mutate_summary& summary) {
  const int64_t traj = store.ensure_trajectory(experiment_id, ts.t.id, ts.t.family, sample);
  store.set_trajectory_provenance(traj, "mutation", op);
  json prompt = json::array({message("system", prompts.system_prompt(ts.t)), message("user", prompts.task_prompt(ts.t))});
  record_round(store, traj, 0, prompt, "", mutant_reply, "mutation:" + op, mutant_result, o, "mutation");
  const std::string feedback = prompts.feedback(ts.t, mutant_result, 0, o.feedback);
  json repair = prompt;
  repair.push_back(message("assistant", mutant_reply));
  repair.push_back(message("user", feedback));
  const std::string fix = render_reply(ts.s.ptx, ts.s.manifest_text, true);
  std::string reasoning;
  if (o.rationale_teacher)
    reasoning = ask_rationale(store, traj, ts.t, sample, mutant_reply, feedback, fix, prompts, o, summary);
  // The reply is the reference solution whoever wrote the reasoning.
  record_round(store, traj, 1, repair, feedback, fix,
               reasoning.empty() ? "reference" : "reference, rationale by " + o.rationale_model, solution_result, o,
               "reference", reasoning);
  // The trajectory's verdict is its best candidate's, as the loop and replay name it.
  const evaluation_result& best = better(mutant_result, solution_result) ? mutant_result : solution_result;
  store.finish_trajectory(traj, verdict_name(best), best.passed, 2);
}

std::vector<const mutation_operator*> chosen_operators(const mutate_options& o) {
  std::vector<const mutation_operator*> ops;
  if (o.operators.empty()) {
    for (const auto& op : catalogue()) ops.push_back(&op);
    return ops;
  }
  for (const auto& name : o.operators) {
    const mutation_operator* op = find_operator(name);
    if (!op) throw input_error("unknown mutation operator '" + name + "' (see agent/mutate/README.md)");
    ops.push_back(op);
  }
  return ops;
}

}  // namespace

std::vector<const mutation_operator*> interleave_by_stage(const std::vector<const mutation_operator*>& ops) {
  // One operator of each target stage in turn (format, compile, ..., performance,
  // then format again): a small --per-solution still reaches every stage,
  // where the catalogue's order would spend it all on the first stages.
  std::vector<std::vector<const mutation_operator*>> by_stage(static_cast<size_t>(stage_count));
  for (const auto* op : ops) by_stage[static_cast<size_t>(op->target)].push_back(op);
  std::vector<const mutation_operator*> out;
  for (size_t i = 0; out.size() < ops.size(); ++i)
    for (const auto& group : by_stage)
      if (i < group.size()) out.push_back(group[i]);
  return out;
}

const char* to_string(mutant_outcome o) {
  switch (o) {
    case mutant_outcome::kept: return "kept";
    case mutant_outcome::other_stage: return "other_stage";
    case mutant_outcome::not_run: return "not_run";
    case mutant_outcome::passed: return "passed";
    case mutant_outcome::error: return "error";
  }
  return "?";
}

mutant_outcome classify(const evaluation_result& r, stage target) {
  if (r.evaluator_error()) return mutant_outcome::error;
  auto it = r.stages.find(target);
  const stage_status at_target = it == r.stages.end() ? stage_status::not_run : it->second.status;
  if (!r.passed && r.verdict == target && at_target == stage_status::failed) return mutant_outcome::kept;
  if (any_failed(r)) return mutant_outcome::other_stage;
  if (at_target == stage_status::not_run || at_target == stage_status::unverified) return mutant_outcome::not_run;
  return mutant_outcome::passed;
}

int mutate_summary::kept() const {
  int n = 0;
  for (const auto& m : mutants) n += m.outcome == mutant_outcome::kept;
  return n;
}

std::vector<task_solution> load_solutions(const std::vector<task>& tasks, const solution_roots& roots,
                                          const std::vector<std::string>& wanted) {
  std::vector<task_solution> out;
  std::set<std::string> found;
  for (const auto& t : tasks) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), t.id) == wanted.end()) continue;
    const auto found_dir = solution_dir(t.id, roots);
    if (!found_dir) continue;
    const auto& dir = *found_dir;
    solution s{read_text_file(dir / "kernel.ptx", "solution PTX"),
               read_text_file(dir / "manifest.json", "solution manifest"), {}};
    const auto rewrites = roots.checked_in / t.id / "rewrites";
    std::error_code ec;
    if (std::filesystem::is_directory(rewrites, ec)) {
      for (const auto& r : std::filesystem::directory_iterator(rewrites)) {
        if (!std::filesystem::is_regular_file(r.path() / "kernel.ptx") ||
            !std::filesystem::is_regular_file(r.path() / "manifest.json"))
          continue;
        s.rewrites.push_back({r.path().filename().string(), read_text_file(r.path() / "kernel.ptx", "rewrite PTX"),
                              read_text_file(r.path() / "manifest.json", "rewrite manifest")});
      }
      std::sort(s.rewrites.begin(), s.rewrites.end(),
                [](const rewrite& a, const rewrite& b) { return a.name < b.name; });
    }
    out.push_back({t, std::move(s)});
    found.insert(t.id);
  }
  for (const auto& id : wanted)
    if (!found.count(id))
      throw input_error("task '" + id + "': no verified solution in " + (roots.checked_in / id).string() + " or " +
                        (roots.generated / id).string() +
                        " (kernel.ptx and manifest.json; scripts/gen_solutions.sh generates them), or no such task");
  return out;
}

mutate_summary run_mutation(const std::vector<task_solution>& solutions, evaluator& eval, run_store& store,
                            const prompt_library& prompts, const mutate_options& o, const mutate_progress& progress) {
  const auto ops = chosen_operators(o);
  if (store.find_experiment(o.experiment_name))
    throw input_error("experiment '" + o.experiment_name + "' already exists in " + store.path().string() +
                      " (choose another --name)");
  mutate_summary summary;
  summary.gpu = eval.gpu_description();
  experiment_row e;
  e.name = o.experiment_name;
  std::vector<std::string> op_names;
  for (const auto* op : ops) op_names.push_back(op->name);
  e.config = {{"source", "mutation"}, {"seed", o.seed}, {"per_solution", o.per_solution}, {"operators", op_names},
              {"gpu", o.judging.run_gpu ? "auto" : "off"}, {"feedback", to_string(o.feedback)},
              // The judging settings, as a run stores them: replay judges with these.
              {"seeds", o.judging.seeds}, {"time_limit_ms", o.judging.time_limit_ms},
              {"timing_budget_ms", o.judging.timing_budget_ms}};
  e.evaluator_version = eval.version();
  e.host = "";
  e.gpu = summary.gpu;
  e.model = "mutation";
  e.provider = "ptxbench mutate";
  summary.experiment_id = store.create_experiment(e);
  using clock = std::chrono::steady_clock;

  for (const auto& ts : solutions) {
    // Only a solution that fails no stage here can be the verified fix.
    const evaluation_result reference = judge_reply(eval, ts.t, render_reply(ts.s.ptx, ts.s.manifest_text, true), o.judging);
    if (any_failed(reference) || reference.evaluator_error()) {  // failed or error: no verified fix here
      summary.skipped_tasks.push_back(ts.t.id + ": " + reference.headline);
      continue;
    }
    std::set<std::string> seen;  // mutant texts already judged for this task
    std::vector<const mutation_operator*> applicable;
    std::map<const mutation_operator*, int> variant;
    for (const auto* op : ops) {
      if (apply_operator(*op, ts.t, ts.s, o.seed, 0)) applicable.push_back(op);
      else summary.not_applicable.emplace_back(ts.t.id, op->name);
    }
    std::vector<const mutation_operator*> live = interleave_by_stage(applicable);
    int judged = 0, sample = 0;
    // Round robin over the applicable operators; one that yields only
    // mutants already judged (a fixed edit has one) is dropped.
    while (judged < o.per_solution && !live.empty()) {
      for (size_t k = 0; k < live.size() && judged < o.per_solution;) {
        const mutation_operator* op = live[k];
        std::optional<mutant> m;
        int tries = 0;
        for (; tries < 4; ++tries) {
          m = apply_operator(*op, ts.t, ts.s, o.seed, variant[op]++);
          if (m && seen.insert(m->ptx + "\x1f" + m->manifest_text + (m->manifest_block ? "" : "#")).second) break;
          m.reset();
        }
        if (!m) {
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
          continue;
        }
        const std::string reply = render_reply(m->ptx, m->manifest_text, m->manifest_block);
        auto t0 = clock::now();
        const evaluation_result r = judge_reply(eval, ts.t, reply, o.judging);
        summary.judge_s += std::chrono::duration<double>(clock::now() - t0).count();
        ++judged;
        mutant_record rec{ts.t.id, op->name, op->target, m->change, classify(r, op->target), verdict_name(r), r.headline};
        if (o.judging.profile && op->target == stage::performance && op->stalls)
          rec.located = localise(*op, m->lines, r, rec.profile_note);
        if (rec.located && reference.speedup() && r.speedup())
          rec.located->slowdown = *reference.speedup() / *r.speedup();
        if (rec.outcome == mutant_outcome::kept)
          store_kept(store, summary.experiment_id, ts, sample++, op->name, reply, r, reference, prompts, o, summary);
        if (progress) progress(rec);
        summary.mutants.push_back(std::move(rec));
        ++k;
      }
    }
  }
  store.set_experiment_status(summary.experiment_id, "done");
  return summary;
}

std::optional<mutant_record::localisation> localise(const mutation_operator& op, const std::vector<int>& region,
                                                    const evaluation_result& r, std::string& why) {
  if (!r.profile) {
    why = "no profile (the mutant did not reach the performance stage: " + verdict_name(r) + ")";
    return std::nullopt;
  }
  if (r.profile->lines.empty()) {
    why = "no PTX lines in the profile: " + (r.profile->lines_error.empty() ? "no samples" : r.profile->lines_error);
    return std::nullopt;
  }
  if (region.empty()) {
    why = "the mutation changed no line";
    return std::nullopt;
  }
  // What the feedback leads with: the hottest line, or the lines waiting on
  // local memory when together they outweigh it (format_profile).
  const bool local_first = leads_with_local_memory(*r.profile);
  const profile_line& top = local_first ? r.profile->local_wait_top.front() : r.profile->lines.front();
  mutant_record::localisation l;
  l.top_line = top.line;
  l.top_share = top.share;
  l.stall = top.stall;
  l.in_region = in_region(region, top.line);
  const std::string expected = std::string(",") + (op.stalls ? op.stalls : "") + ",";
  l.stall_matches = !top.stall.empty() && expected.find("," + top.stall + ",") != std::string::npos;
  l.profile_ms = r.profile->time_ms;
  for (size_t i = 0; i < r.profile->lines.size() && i < 5; ++i)
    l.in_top5 = l.in_top5 || in_region(region, r.profile->lines[i].line);
  if (local_first) l.in_top5 = l.in_top5 || in_region(region, top.line);
  l.lead = local_first ? "local memory" : "line";
  l.region_first = *std::min_element(region.begin(), region.end());
  l.region_last = *std::max_element(region.begin(), region.end());
  for (size_t i = 1; i < r.profile->lines.size() && i < 4; ++i) {
    const profile_line& p = r.profile->lines[i];
    char b[96];
    std::snprintf(b, sizeof b, "%s%d %s %.0f%%%s", l.next_lines.empty() ? "" : "; ", p.line, p.stall.c_str(),
                  100 * p.share, in_region(region, p.line) ? " (in region)" : "");
    l.next_lines += b;
  }
  return l;
}

std::string format_localisation_table(const mutate_summary& s) {
  struct tally {
    int n = 0, in_region = 0, stall = 0, top5 = 0;
    void add(const mutant_record::localisation& l) {
      ++n;
      in_region += l.in_region;
      stall += l.stall_matches;
      top5 += l.in_top5;
    }
  };
  std::map<std::string, tally> by_op;
  tally all, slowed;
  std::string rows;
  char line[512];
  for (const auto& m : s.mutants) {
    if (!m.located && m.profile_note.empty()) continue;
    if (!m.located) {
      std::snprintf(line, sizeof line, "%-32s %-24s %s\n", m.task_id.c_str(), m.op.c_str(), m.profile_note.c_str());
      rows += line;
      continue;
    }
    const auto& l = *m.located;
    char slower[16] = "-";
    if (l.slowdown > 0) std::snprintf(slower, sizeof slower, "%.2fx", l.slowdown);
    std::snprintf(line, sizeof line, "%-32s %-24s %6d %5.1f%% %-6s %-18s %-5s %7.0f %7s\n", m.task_id.c_str(),
                  m.op.c_str(), l.top_line, 100 * l.top_share, l.in_region ? "yes" : "no", l.stall.c_str(),
                  l.stall_matches ? "yes" : "no", l.profile_ms, slower);
    rows += line;
    if (l.lead != "line") {
      std::snprintf(line, sizeof line, "%-32s   led with %s (line %d waits on it most)\n", "", l.lead.c_str(), l.top_line);
      rows += line;
    }
    if (!l.in_region) {
      std::snprintf(line, sizeof line, "%-32s   mutated lines %d-%d; next hottest: %s\n", "", l.region_first,
                    l.region_last, l.next_lines.empty() ? "none" : l.next_lines.c_str());
      rows += line;
    }
    by_op[m.op].add(l);
    all.add(l);
    if (l.slowdown >= k_localisation_min_slowdown) slowed.add(l);
  }
  if (rows.empty()) return "";
  std::string out = "profile localisation (hottest PTX line in the mutated region, dominant stall the mutation's):\n";
  std::snprintf(line, sizeof line, "%-32s %-24s %6s %6s %-6s %-18s %-5s %7s %7s\n", "task", "operator", "line", "share",
                "region", "stall", "match", "prof ms", "slower");
  out += line + rows;
  for (const auto& [op, t] : by_op) {
    std::snprintf(line, sizeof line, "%-24s localised %d/%d, stall matches %d/%d, in the top five lines %d/%d\n",
                  op.c_str(), t.in_region, t.n, t.stall, t.n, t.top5, t.n);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "all: localised %d/%d (%.0f%%), stall matches %d/%d (%.0f%%), in the top five lines %d/%d (%.0f%%)\n",
                all.in_region, all.n, all.n ? 100.0 * all.in_region / all.n : 0.0, all.stall, all.n,
                all.n ? 100.0 * all.stall / all.n : 0.0, all.top5, all.n, all.n ? 100.0 * all.top5 / all.n : 0.0);
  out += line;
  // The same over the mutants that ran measurably slower than their solution.
  std::snprintf(line, sizeof line,
                "slowed by %.0f%% or more (%d of %d): localised %d/%d (%.0f%%), stall matches %d/%d, in the top five "
                "lines %d/%d\n",
                100 * (k_localisation_min_slowdown - 1), slowed.n, all.n, slowed.in_region, slowed.n,
                slowed.n ? 100.0 * slowed.in_region / slowed.n : 0.0, slowed.stall, slowed.n, slowed.top5, slowed.n);
  return out + line;
}

std::string format_mutation_table(const mutate_summary& s) {
  struct row {
    stage target = stage::format;
    int judged = 0, kept = 0, other = 0, not_run = 0, passed = 0, error = 0;
  };
  std::map<std::string, row> rows;
  for (const auto& op : catalogue()) rows[op.name].target = op.target;
  for (const auto& m : s.mutants) {
    row& r = rows[m.op];
    ++r.judged;
    switch (m.outcome) {
      case mutant_outcome::kept: ++r.kept; break;
      case mutant_outcome::other_stage: ++r.other; break;
      case mutant_outcome::not_run: ++r.not_run; break;
      case mutant_outcome::passed: ++r.passed; break;
      case mutant_outcome::error: ++r.error; break;
    }
  }
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %-13s %6s %5s %6s %7s %6s %5s\n", "operator", "target", "judged", "kept",
                "other", "not_run", "passed", "error");
  out += line;
  row total;
  for (int st = 0; st < stage_count; ++st) {
    for (const auto& op : catalogue()) {
      const row& r = rows[op.name];
      if (static_cast<int>(r.target) != st || r.judged == 0) continue;
      std::snprintf(line, sizeof line, "%-24s %-13s %6d %5d %6d %7d %6d %5d\n", op.name, to_string(r.target), r.judged,
                    r.kept, r.other, r.not_run, r.passed, r.error);
      out += line;
      total.judged += r.judged, total.kept += r.kept, total.other += r.other, total.not_run += r.not_run;
      total.passed += r.passed, total.error += r.error;
    }
  }
  std::snprintf(line, sizeof line, "%-24s %-13s %6d %5d %6d %7d %6d %5d\n", "total", "", total.judged, total.kept,
                total.other, total.not_run, total.passed, total.error);
  out += line;
  const double per_min = s.judge_s > 0 ? total.judged / (s.judge_s / 60.0) : 0.0;
  std::snprintf(line, sizeof line, "%d mutants judged in %.1f s: %.1f mutants judged per minute (GPU: %s)\n",
                total.judged, s.judge_s, per_min, s.gpu.c_str());
  out += line;
  if (total.not_run > 0)
    out += "not_run: the stage the operator aims at was not judged here (no GPU or another architecture); "
           "such mutants are not kept as verified\n";
  for (const auto& t : s.skipped_tasks) out += "skipped (reference solution failed here): " + t + "\n";
  if (s.rationales + s.rationale_failures > 0)
    out += "rationales: " + std::to_string(s.rationales) + " written by the teacher, " +
           std::to_string(s.rationale_failures) + " calls failed\n";
  return out;
}

}  // namespace ptxbench::mutate
