// Building export records: which turns make a correction, sft or preference
// example, and the messages and provenance of each.
#include <algorithm>
#include <tuple>

#include "agent/data/export.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::data {
namespace {

using json = nlohmann::json;

// The first system message and the first user message (the task) of a prompt.
json system_and_task(const turn_row& turn) {
  json out = json::array();
  bool have_system = false;
  for (const auto& m : turn.messages) {
    if (!m.is_object() || !m.contains("role")) continue;
    if (m["role"] == "system" && !have_system && out.empty()) {
      out.push_back({{"role", "system"}, {"content", m.value("content", "")}});
      have_system = true;
    } else if (m["role"] == "user") {
      out.push_back({{"role", "user"}, {"content", m.value("content", "")}});
      break;
    }
  }
  return out;
}

// The user message that carried the feedback in `turn`'s prompt: its last user
// message when that is not the task itself, else the stored feedback column.
std::string feedback_message(const turn_row& turn) {
  int users = 0;
  std::string last;
  for (const auto& m : turn.messages) {
    if (m.is_object() && m.value("role", "") == "user") {
      ++users;
      last = m.value("content", "");
    }
  }
  return users >= 2 ? last : turn.feedback;
}

json assistant(const std::string& content) { return {{"role", "assistant"}, {"content", content}}; }

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

json provenance(const provenance_input& p, export_kind kind) {
  const auto& e = p.data->experiment;
  const auto& t = p.trajectory->trajectory;
  const auto& ev = p.fix->evaluation;
  return {
      {"kind", to_string(kind)},
      {"experiment", e.name},
      {"experiment_id", e.id},
      {"trajectory", t.id},
      {"sample", t.sample},
      {"round", p.fix->turn.round},
      {"failing_round", p.failing_rank == -2 ? json(nullptr) : json(p.failing_round)},
      {"evaluator_version", ev && !ev->evaluator_version.empty() ? ev->evaluator_version : e.evaluator_version},
      {"task", t.task_id},
      {"family", t.family},
      {"model", model_of(*p.fix, e)},
      {"failing_stage", p.failing_rank == -2 ? json(nullptr) : json(verdict_name(p.failing_rank))},
      {"fix_stage", verdict_name(quality_of(*p.fix).verdict)},
      {"speedup", optional_number(quality_of(*p.fix).speedup)},
      // "model", or "mutation" for a failed attempt made by ptxbench mutate.
      {"source", t.source},
      // Who wrote the fix (the chosen or final answer): student, teacher or reference.
      {"author", p.fix->turn.author},
      {"operator", t.mutation_operator.empty() ? json(nullptr) : json(t.mutation_operator)},
  };
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
bool accept(const export_filter& f, const experiment_data& d, const trajectory_data& t, const turn_view& fix,
            int failing_rank) {
  if (!listed(f.tasks, t.trajectory.task_id) || !listed(f.families, t.trajectory.family)) return false;
  if (!listed(f.models, model_of(fix, d.experiment))) return false;
  if (f.failing_stage && failing_rank != *f.failing_stage) return false;
  auto q = quality_of(fix);
  if (f.min_fix_stage && q.reached < *f.min_fix_stage) return false;
  if (f.min_speedup && (!q.speedup || *q.speedup < *f.min_speedup)) return false;
  return true;
}

keyed_record make_record(const provenance_input& p, export_kind kind, json body) {
  const auto& t = p.trajectory->trajectory;
  keyed_record k;
  k.order = {t.task_id, t.sample, t.id, p.fix->turn.round, 0};
  body["provenance"] = provenance(p, kind);
  k.record.body = std::move(body);
  k.record.family = t.family;
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
      if (feedback.empty() || !accept(o.filter, d, t, fix, before.verdict)) continue;
      json messages = system_and_task(failed.turn);
      messages.push_back(assistant(failed.turn.reply));
      messages.push_back({{"role", "user"}, {"content", feedback}});
      json fix_message = assistant(fix.turn.reply);
      // The fix's reasoning (a teacher's rationale, or the model's own), in the
      // field OpenAI-compatible servers and reasoning chat templates use.
      if (!fix.turn.reasoning.empty()) fix_message["reasoning_content"] = fix.turn.reasoning;
      messages.push_back(fix_message);
      out.push_back(make_record({&d, &t, &fix, before.verdict, failed.turn.round}, o.kind, {{"messages", messages}}));
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
    if (!answer || t.turns.empty() || !accept(f, d, t, *answer, -2)) continue;
    auto first = quality_of(t.turns.front());
    bool first_try = answer == &t.turns.front() || first.reached >= *f.min_fix_stage;
    json messages = system_and_task(answer->turn);
    messages.push_back(assistant(answer->turn.reply));
    out.push_back(make_record({&d, &t, answer, first_try ? -2 : first.verdict, t.turns.front().turn.round}, o.kind,
                              {{"messages", messages}}));
    out.back().record.duplicate_key = root_of(*answer);
  }
}

struct prompt_entry {
  const trajectory_data* trajectory;
  const turn_view* turn;
};

void preferences(const experiment_data& d, const export_options& o, std::vector<keyed_record>& out) {
  std::map<std::string, std::vector<prompt_entry>> groups;  // keyed by the exact prompt sent
  for (const auto& t : d.trajectories) {
    for (const auto& turn : t.turns) {
      if (quality_of(turn).verdict < 0) continue;
      groups[model_of(turn, d.experiment) + "\n" + turn.turn.messages.dump()].push_back({&t, &turn});
    }
  }
  for (auto& [key, entries] : groups) {
    // Best first; ties keep database order so the pairing is deterministic.
    std::stable_sort(entries.begin(), entries.end(), [](const prompt_entry& a, const prompt_entry& b) {
      return better(quality_of(*a.turn), quality_of(*b.turn));
    });
    for (size_t i = 0, j = entries.size() - 1; i < j; ++i, --j) {
      const auto& chosen = entries[i];
      const auto& rejected = entries[j];
      if (!better(quality_of(*chosen.turn), quality_of(*rejected.turn))) break;
      int rejected_rank = quality_of(*rejected.turn).verdict;
      if (!accept(o.filter, d, *chosen.trajectory, *chosen.turn, rejected_rank)) continue;
      json body = {{"prompt", chosen.turn->turn.messages},
                   {"chosen", json::array({assistant(chosen.turn->turn.reply)})},
                   {"rejected", json::array({assistant(rejected.turn->turn.reply)})}};
      auto k = make_record({&d, chosen.trajectory, chosen.turn, rejected_rank, rejected.turn->turn.round}, o.kind,
                           std::move(body));
      k.record.body["provenance"]["rejected_trajectory"] = rejected.trajectory->trajectory.id;
      k.record.body["provenance"]["rejected_round"] = rejected.turn->turn.round;
      k.record.body["provenance"]["rejected_speedup"] = optional_number(quality_of(*rejected.turn).speedup);
      k.record.selection_key += "/" + std::to_string(rejected.trajectory->trajectory.sample);
      std::get<4>(k.order) = rejected.trajectory->trajectory.id;
      k.record.duplicate_key = root_of(*chosen.turn) + "/" + root_of(*rejected.turn);
      out.push_back(std::move(k));
    }
  }
}

}  // namespace

export_kind parse_export_kind(const std::string& s) {
  if (s == "correction") return export_kind::correction;
  if (s == "sft") return export_kind::sft;
  if (s == "preference") return export_kind::preference;
  throw input_error("unknown export kind '" + s + "' (expected correction, sft or preference)");
}

const char* to_string(export_kind k) {
  switch (k) {
    case export_kind::correction: return "correction";
    case export_kind::sft: return "sft";
    case export_kind::preference: return "preference";
  }
  return "?";
}

std::vector<export_record> export_records(const experiment_data& data, const export_options& options) {
  std::vector<keyed_record> keyed;
  switch (options.kind) {
    case export_kind::correction: corrections(data, options, keyed); break;
    case export_kind::sft: sfts(data, options, keyed); break;
    case export_kind::preference: preferences(data, options, keyed); break;
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const keyed_record& a, const keyed_record& b) { return a.order < b.order; });
  std::vector<export_record> out;
  out.reserve(keyed.size());
  for (auto& k : keyed) out.push_back(std::move(k.record));
  return out;
}

}  // namespace ptxbench::data
