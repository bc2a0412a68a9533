// Building export records: which turns make a correction, sft or preference
// example, and the messages and provenance of each.
#include <algorithm>
#include <set>
#include <tuple>

#include "agent/data/export.hpp"
#include "agent/data/export_messages.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

bool listed(const std::vector<std::string>& allowed, const std::string& value) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

struct provenance_input {
  const experiment_data* data;
  const trajectory_data* trajectory;
  const turn_view* fix;       // the fixed / chosen / final answer
  int failing_rank;           // -2: none (sft solved first try)
  int failing_round;
};

// A config value of the experiment as stored (null when absent or of another
// type, so a column keeps one type).
json config_number(const json& config, const char* key) {
  const json* v = &config;
  if (std::string(key).rfind("llm.", 0) == 0) {
    if (!config.is_object() || !config.contains("llm")) return nullptr;
    v = &config["llm"];
    key += 4;
  }
  if (!v->is_object() || !v->contains(key) || !(*v)[key].is_number()) return nullptr;
  return (*v)[key];
}

std::string config_text(const json& config, const char* key, const std::string& fallback) {
  if (!config.is_object() || !config.contains(key) || !config[key].is_string()) return fallback;
  return config[key].get<std::string>();
}

// Feedback level, history policy and sampling settings of the run that wrote
// the turn; numbers the config lacks are null.
void add_run_settings(json& out, const experiment_row& e, const turn_row& fix, const export_options& o) {
  const json& c = e.config;
  out["feedback"] = fix.feedback_detail.empty() ? config_text(c, "feedback", "") : fix.feedback_detail;
  out["run_history"] = config_text(c, "history", "");
  json k = config_number(c, "history_k");
  out["run_history_k"] = k.is_number_integer() ? k : json(nullptr);
  out["export_history"] = to_string(o.history);
  out["reasoning"] = to_string(o.reasoning);
  json temperature = config_number(c, "llm.temperature");
  json top_p = config_number(c, "llm.top_p");
  json max_tokens = config_number(c, "llm.max_tokens");
  json seed = config_number(c, "llm.seed");
  out["temperature"] = temperature.is_null() ? temperature : json(temperature.get<double>());
  out["top_p"] = top_p.is_null() ? top_p : json(top_p.get<double>());
  out["max_tokens"] = max_tokens.is_number_integer() ? max_tokens : json(nullptr);
  out["seed"] = seed.is_number_integer() ? seed : json(nullptr);
  const json extra = c.is_object() && c.contains("llm") && c["llm"].is_object() ? c["llm"].value("extra", json::object())
                                                                                : json::object();
  out["sampling_extra"] = extra.dump();
}

json provenance(const provenance_input& p, const export_options& o) {
  const auto& e = p.data->experiment;
  const auto& t = p.trajectory->trajectory;
  const auto& ev = p.fix->evaluation;
  json out = {
      {"kind", to_string(o.kind)},
      {"experiment", e.name},
      {"experiment_id", e.id},
      {"trajectory", t.id},
      {"sample", t.sample},
      {"round", p.fix->turn.round},
      {"failing_round", p.failing_rank == -2 ? json(nullptr) : json(p.failing_round)},
      {"evaluator_version", ev && !ev->evaluator_version.empty() ? ev->evaluator_version : e.evaluator_version},
      {"task", t.task_id},
      {"family", t.family},
      // From the task catalogue: 0 and "{}" when it does not know the task.
      {"level", info_of(o.catalogue, t.task_id).level},
      {"variant", variant_json(info_of(o.catalogue, t.task_id).variant)},
      {"model", model_of(*p.fix, e)},
      {"failing_stage", p.failing_rank == -2 ? json(nullptr) : json(verdict_name(p.failing_rank))},
      {"fix_stage", verdict_name(quality_of(*p.fix).verdict)},
      {"speedup", optional_number(quality_of(*p.fix).speedup)},
      // "model", or "mutation" for a failed attempt made by ptxbench mutate.
      {"source", t.source},
      // Who wrote the fix (the chosen or final answer): student, teacher or reference.
      {"author", p.fix->turn.author},
      // The trained reply ended at the token limit (finish_reason length /
      // stop_reason max_tokens): a trainer may want to drop it.
      {"cut_off", p.fix->turn.finish_reason == "length" || p.fix->turn.finish_reason == "max_tokens"},
      {"operator", t.mutation_operator.empty() ? json(nullptr) : json(t.mutation_operator)},
      // The trained sequence's length, set by measure_lengths.
      {"bytes", 0},
      {"tokens", nullptr},
      {"over_max_tokens", false},
  };
  add_run_settings(out, e, p.fix->turn, o);
  return out;
}

// {"prompt", "completion"} or the two joined as {"messages"}.
json conversation(json prompt, json completion, export_format format) {
  if (format == export_format::prompt_completion) {
    return {{"prompt", std::move(prompt)}, {"completion", json::array({std::move(completion)})}};
  }
  prompt.push_back(std::move(completion));
  return {{"messages", std::move(prompt)}};
}

// The earliest near-duplicate of a turn's candidate, or the turn itself when
// it has no PTX to compare.
std::string root_of(const turn_view& v) {
  if (!v.candidate || v.candidate->normalised_hash.empty()) return "t" + std::to_string(v.turn.id);
  return "c" + std::to_string(v.candidate->duplicate_of.value_or(v.candidate->id));
}

struct keyed_record {
  std::tuple<std::string, int, int64_t, int, int64_t> order;
  export_record record;
};

// Filters shared by every kind; `failing_rank` is -2 when the kind has none.
bool accept(const task_catalogue& catalogue, const export_filter& f, const experiment_data& d,
            const trajectory_data& t, const turn_view& fix, int failing_rank) {
  if (!listed(f.tasks, t.trajectory.task_id) || !listed(f.families, t.trajectory.family)) return false;
  if (!f.levels.empty() && std::find(f.levels.begin(), f.levels.end(),
                                     info_of(catalogue, t.trajectory.task_id).level) == f.levels.end())
    return false;
  if (!listed(f.models, model_of(fix, d.experiment))) return false;
  if (f.failing_stage && failing_rank != *f.failing_stage) return false;
  auto q = quality_of(fix);
  if (f.min_fix_stage && q.reached < *f.min_fix_stage) return false;
  if (f.min_speedup && (!q.speedup || *q.speedup < *f.min_speedup)) return false;
  return true;
}

keyed_record make_record(const provenance_input& p, const export_options& o, json body) {
  const auto& t = p.trajectory->trajectory;
  keyed_record k;
  k.order = {t.task_id, t.sample, t.id, p.fix->turn.round, 0};
  body["provenance"] = provenance(p, o);
  k.record.body = std::move(body);
  k.record.family = t.family;
  k.record.task = t.task_id;
  k.record.level = info_of(o.catalogue, t.task_id).level;
  k.record.variant = variant_json(info_of(o.catalogue, t.task_id).variant);
  k.record.failing_stage = p.failing_rank == -2 ? "first_try" : verdict_name(p.failing_rank);
  k.record.selection_key = p.data->experiment.name + "/" + t.task_id + "/" + std::to_string(t.sample) + "/" +
                           std::to_string(p.fix->turn.round);
  return k;
}

void corrections(const experiment_data& d, const export_options& o, std::vector<keyed_record>& out) {
  for (const auto& t : d.trajectories) {
    for (size_t i = 0; i + 1 < t.turns.size(); ++i) {
      const auto& failed = t.turns[i];
      const auto& fix = t.turns[i + 1];
      auto before = quality_of(failed);
      if (before.verdict < 0 || before.reached == passed_rank || fix.turn.round != failed.turn.round + 1) continue;
      if (!got_further(quality_of(fix), before)) continue;
      std::string feedback = feedback_message(fix.turn);
      if (feedback.empty() || !accept(o.catalogue, o.filter, d, t, fix, before.verdict)) continue;
      json prompt = correction_prompt(t, i + 1, o.history, o.reasoning);
      out.push_back(make_record({&d, &t, &fix, before.verdict, failed.turn.round}, o,
                                conversation(std::move(prompt), reply_message(fix.turn, o.reasoning), o.format)));
        out.back().record.duplicate_key = root_of(failed) + "/" + root_of(fix);
    }
  }
}

void sfts(const experiment_data& d, const export_options& o, std::vector<keyed_record>& out) {
  export_filter f = o.filter;
  if (!f.min_fix_stage) f.min_fix_stage = passed_rank;
  for (const auto& t : d.trajectories) {
    const turn_view* answer = nullptr;
    for (const auto& turn : t.turns) {
      if (quality_of(turn).reached >= *f.min_fix_stage) answer = &turn;
    }
    if (!answer || t.turns.empty() || !accept(o.catalogue, f, d, t, *answer, -2)) continue;
    auto first = quality_of(t.turns.front());
    bool first_try = answer == &t.turns.front() || first.reached >= *f.min_fix_stage;
    json prompt = system_and_task(answer->turn, o.reasoning);
    out.push_back(make_record({&d, &t, answer, first_try ? -2 : first.verdict, t.turns.front().turn.round}, o,
                              conversation(std::move(prompt), reply_message(answer->turn, o.reasoning), o.format)));
    out.back().record.duplicate_key = root_of(*answer);
  }
}

struct prompt_entry {
  const trajectory_data* trajectory;
  const turn_view* turn;
  std::optional<int> branch;  // a sibling of a branched round; nullopt: a round's only reply
  std::string root;           // its candidate's earliest near-duplicate (root_of)
};

// The duplicate root of a sibling that is not the round's turn: the root of a
// turn's candidate with the same fingerprint in the same task, if any, so a
// sibling and a turn with one kernel count as duplicates; else the
// fingerprint itself (or the sibling, without PTX).
std::string sibling_root(const std::map<std::pair<std::string, std::string>, std::string>& turn_roots,
                         const trajectory_data& t, const sibling_data& s) {
  const std::string& hash = s.view.candidate ? s.view.candidate->normalised_hash : std::string();
  if (hash.empty())
    return "s" + std::to_string(t.trajectory.id) + "/" + std::to_string(s.view.turn.round) + "/" +
           std::to_string(s.branch);
  auto it = turn_roots.find({t.trajectory.task_id, hash});
  return it != turn_roots.end() ? it->second : "h" + t.trajectory.task_id + "/" + hash;
}

// Every reply that may take part in a pair: a round's turn, or, for a
// branched round, each of its siblings (the chosen one as the round's turn).
std::vector<prompt_entry> preference_pool(const experiment_data& d) {
  std::map<std::pair<std::string, std::string>, std::string> turn_roots;  // (task, fingerprint) -> root
  for (const auto& t : d.trajectories)
    for (const auto& turn : t.turns)
      if (turn.candidate && !turn.candidate->normalised_hash.empty())
        turn_roots.emplace(std::make_pair(t.trajectory.task_id, turn.candidate->normalised_hash), root_of(turn));
  std::vector<prompt_entry> pool;
  for (const auto& t : d.trajectories) {
    std::map<int, const turn_view*> by_round;
    for (const auto& turn : t.turns) by_round[turn.turn.round] = &turn;
    std::set<int> rounds;
    for (const auto& [round, turn] : by_round) rounds.insert(round);
    for (const auto& [round, siblings] : t.siblings) rounds.insert(round);
    for (int round : rounds) {
      const auto turn = by_round.find(round);
      const auto siblings = t.siblings.find(round);
      if (siblings == t.siblings.end() || siblings->second.empty()) {
        pool.push_back({&t, turn->second, std::nullopt, root_of(*turn->second)});
        continue;
      }
      // A round whose siblings were not all recorded (a pending trajectory)
      // still pairs the ones that were: they were sent the same prompt.
      for (const auto& s : siblings->second) {
        if (s.chosen && turn != by_round.end())
          pool.push_back({&t, turn->second, s.branch, root_of(*turn->second)});
        else
          pool.push_back({&t, &s.view, s.branch, sibling_root(turn_roots, t, s)});
      }
    }
  }
  return pool;
}

json optional_int(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

void preferences(const experiment_data& d, const export_options& o, std::vector<keyed_record>& out) {
  std::map<std::string, std::vector<prompt_entry>> groups;  // keyed by the exact prompt sent
  for (auto& entry : preference_pool(d)) {
    // Unevaluated replies and evaluator errors have no verdict: never in a pair.
    if (quality_of(*entry.turn).verdict < 0) continue;
    groups[model_of(*entry.turn, d.experiment) + "\n" + entry.turn->turn.messages.dump()].push_back(std::move(entry));
  }
  for (auto& [key, entries] : groups) {
    // Best first; ties keep database order so the pairing is deterministic.
    std::stable_sort(entries.begin(), entries.end(), [](const prompt_entry& a, const prompt_entry& b) {
      return better(quality_of(*a.turn), quality_of(*b.turn));
    });
    for (size_t i = 0, j = entries.size() - 1; i < j; ++i, --j) {
      const auto& chosen = entries[i];
      const auto& rejected = entries[j];
      const auto chosen_quality = quality_of(*chosen.turn);
      const auto rejected_quality = quality_of(*rejected.turn);
      if (!better(chosen_quality, rejected_quality)) break;
      int rejected_rank = rejected_quality.verdict;
      if (!accept(o.catalogue, o.filter, d, *chosen.trajectory, *chosen.turn, rejected_rank)) continue;
      json body = {{"prompt", prompt_messages(chosen.turn->turn.messages, o.reasoning)},
                   {"chosen", json::array({reply_message(chosen.turn->turn, o.reasoning)})},
                   {"rejected", json::array({reply_message(rejected.turn->turn, o.reasoning)})}};
      auto k = make_record({&d, chosen.trajectory, chosen.turn, rejected_rank, rejected.turn->turn.round}, o,
                           std::move(body));
      auto& p = k.record.body["provenance"];
      p["rejected_trajectory"] = rejected.trajectory->trajectory.id;
      p["rejected_round"] = rejected.turn->turn.round;
      p["rejected_speedup"] = optional_number(rejected_quality.speedup);
      p["branch"] = optional_int(chosen.branch);
      p["rejected_branch"] = optional_int(rejected.branch);
      // siblings: two replies of one branched round of one trajectory;
      // samples: replies of different trajectories (or rounds) sent the same prompt.
      const bool siblings = chosen.branch && rejected.branch && chosen.trajectory == rejected.trajectory &&
                            chosen.turn->turn.round == rejected.turn->turn.round;
      p["pair"] = siblings ? "siblings" : "samples";
      // stage: the chosen reply got further; speedup: as far, and faster.
      p["decided_by"] = got_further(chosen_quality, rejected_quality) ? "stage" : "speedup";
      k.record.selection_key += "/" + std::to_string(rejected.trajectory->trajectory.sample);
      if (chosen.branch || rejected.branch)
        k.record.selection_key += "/b" + std::to_string(chosen.branch.value_or(-1)) + "/" +
                                  std::to_string(rejected.branch.value_or(-1));
      std::get<4>(k.order) = rejected.trajectory->trajectory.id;
      k.record.duplicate_key = chosen.root + "/" + rejected.root;
      out.push_back(std::move(k));
    }
  }
}

}  // namespace

export_kind parse_export_kind(const std::string& s) {
  if (s == "correction") return export_kind::correction;
  if (s == "sft") return export_kind::sft;
  if (s == "preference") return export_kind::preference;
  if (s == "prompts") return export_kind::prompts;
  throw input_error("unknown export kind '" + s + "' (expected correction, sft, preference or prompts)");
}

export_format parse_export_format(const std::string& s) {
  if (s == "messages") return export_format::messages;
  if (s == "prompt_completion") return export_format::prompt_completion;
  throw input_error("unknown export format '" + s + "' (expected messages or prompt_completion)");
}

export_history parse_export_history(const std::string& s) {
  if (s == "last") return export_history::last;
  if (s == "full") return export_history::full;
  throw input_error("unknown export history '" + s + "' (expected last or full)");
}

reasoning_mode parse_reasoning_mode(const std::string& s) {
  if (s == "drop") return reasoning_mode::drop;
  if (s == "field") return reasoning_mode::field;
  if (s == "inline") return reasoning_mode::inline_think;
  throw input_error("unknown reasoning mode '" + s + "' (expected drop, field or inline)");
}

const char* to_string(export_format f) { return f == export_format::messages ? "messages" : "prompt_completion"; }
const char* to_string(export_history h) { return h == export_history::last ? "last" : "full"; }
const char* to_string(reasoning_mode r) {
  return r == reasoning_mode::drop ? "drop" : r == reasoning_mode::field ? "field" : "inline";
}

const char* to_string(export_kind k) {
  switch (k) {
    case export_kind::correction: return "correction";
    case export_kind::sft: return "sft";
    case export_kind::preference: return "preference";
    case export_kind::prompts: return "prompts";
  }
  return "?";
}

std::vector<export_record> export_records(const experiment_data& data, const export_options& options) {
  std::vector<keyed_record> keyed;
  switch (options.kind) {
    case export_kind::correction: corrections(data, options, keyed); break;
    case export_kind::sft: sfts(data, options, keyed); break;
    case export_kind::preference: preferences(data, options, keyed); break;
    case export_kind::prompts: break;  // from tasks, not runs: build_prompts_export
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const keyed_record& a, const keyed_record& b) { return a.order < b.order; });
  std::vector<export_record> out;
  out.reserve(keyed.size());
  for (auto& k : keyed) out.push_back(std::move(k.record));
  return out;
}

}  // namespace ptxbench::data
