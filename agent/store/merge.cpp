// merge_run_databases: check every input against the others and the output,
// then copy. Only the run_store API is used, so the merge obeys the same
// transaction rules as a run (record_turn is idempotent per round).
#include "agent/store/merge.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

namespace ptxbench {
namespace {

constexpr const char* merged_key = "merged_from_shards";

struct input_db {
  std::filesystem::path path;
  std::unique_ptr<run_store> store;
};

// One input's copy of an experiment, with its LLM failures by trajectory id.
struct experiment_source {
  size_t input = 0;
  experiment_row row;
  std::map<int64_t, std::vector<llm_failure_row>> failures;
};

// A trajectory's content as it is compared across databases.
struct trajectory_content {
  trajectory_row row;
  std::vector<turn_view> turns;
  std::vector<llm_failure_row> failures;
  std::vector<branch_reply_row> siblings;  // of branched rounds, by round and branch
};

enum class plan_action { copy, complete };

struct trajectory_plan {
  size_t source = 0;  // index into experiment_group::sources
  trajectory_row row;
  plan_action action = plan_action::copy;
  trajectory_content existing;  // complete: what the output holds
};

struct experiment_group {
  std::vector<experiment_source> sources;
  std::optional<experiment_row> existing;  // the output's experiment of that name
  std::map<int64_t, std::vector<llm_failure_row>> existing_failures;
  std::vector<trajectory_plan> plans;
  merged_experiment summary;
};

using trajectory_key = std::pair<std::string, int>;  // task id, sample

std::map<int64_t, std::vector<llm_failure_row>> failures_by_trajectory(run_store& store, int64_t experiment_id) {
  std::map<int64_t, std::vector<llm_failure_row>> by_trajectory;
  for (auto& f : store.llm_failures(experiment_id)) by_trajectory[f.trajectory_id].push_back(std::move(f));
  return by_trajectory;
}

trajectory_content load_content(run_store& store, const trajectory_row& row,
                                const std::map<int64_t, std::vector<llm_failure_row>>& failures) {
  trajectory_content c{row, store.turns(row.id), {}, store.branch_replies(row.id)};
  if (auto it = failures.find(row.id); it != failures.end()) c.failures = it->second;
  return c;
}

std::string describe(const trajectory_row& t) { return t.task_id + " sample " + std::to_string(t.sample); }

// The first field in which two turns differ, ids aside; "" when they agree.
std::string turn_difference(const turn_view& a, const turn_view& b) {
  const turn_row& x = a.turn;
  const turn_row& y = b.turn;
  if (x.messages != y.messages) return "messages";
  if (x.feedback != y.feedback || x.feedback_detail != y.feedback_detail) return "feedback";
  if (x.reply != y.reply) return "reply";
  if (x.reasoning != y.reasoning) return "reasoning";
  if (x.finish_reason != y.finish_reason || x.model != y.model) return "finish_reason/model";
  if (x.prompt_tokens != y.prompt_tokens || x.completion_tokens != y.completion_tokens ||
      x.reasoning_tokens != y.reasoning_tokens || x.latency_ms != y.latency_ms)
    return "token counts/latency";
  if (x.created_at != y.created_at) return "created_at";
  if (a.candidate.has_value() != b.candidate.has_value()) return "candidate";
  if (a.candidate && (a.candidate->ptx != b.candidate->ptx || a.candidate->manifest != b.candidate->manifest ||
                      a.candidate->format_problem != b.candidate->format_problem))
    return "candidate";
  return "";
}

bool same_evaluation(const evaluation_row& a, const evaluation_row& b) {
  return a.evaluator_version == b.evaluator_version && a.gpu == b.gpu && a.verdict == b.verdict &&
         a.passed == b.passed && a.correct == b.correct && a.instructions_ok == b.instructions_ok &&
         a.speedup == b.speedup && a.result == b.result && a.origin_evaluation_id == b.origin_evaluation_id &&
         a.created_at == b.created_at;
}

// The first field in which two siblings of one (round, branch) differ, their
// verdicts and chosen flags aside (compare() treats those); "" when they agree.
std::string sibling_difference(const branch_reply_row& a, const branch_reply_row& b) {
  turn_view x{a.turn, a.candidate, std::nullopt};
  turn_view y{b.turn, b.candidate, std::nullopt};
  if (auto field = turn_difference(x, y); !field.empty()) return field;
  if (a.turn.author != b.turn.author) return "author";
  return "";
}

bool same_failure(const llm_failure_row& a, const llm_failure_row& b) {
  return a.round == b.round && a.attempt == b.attempt && a.http_status == b.http_status && a.cause == b.cause &&
         a.elapsed_ms == b.elapsed_ms && a.final == b.final && a.created_at == b.created_at;
}

// The failures of `incoming` that `have` lacks; nullopt when `have` holds one
// that `incoming` does not (the two disagree).
std::optional<std::vector<llm_failure_row>> missing_failures(const std::vector<llm_failure_row>& have,
                                                             const std::vector<llm_failure_row>& incoming) {
  std::vector<bool> matched(incoming.size(), false);
  for (const auto& h : have) {
    size_t i = 0;
    while (i < incoming.size() && (matched[i] || !same_failure(h, incoming[i]))) ++i;
    if (i == incoming.size()) return std::nullopt;
    matched[i] = true;
  }
  std::vector<llm_failure_row> missing;
  for (size_t i = 0; i < incoming.size(); ++i)
    if (!matched[i]) missing.push_back(incoming[i]);
  return missing;
}

enum class relation { identical, extends, conflicts };

struct comparison {
  relation kind = relation::identical;
  std::string reason;  // conflicts, extends: what differs
};

// How `incoming` relates to `have`: equal; a continuation of it (have is
// pending and holds a prefix of incoming's rounds, evaluations and failures);
// or in conflict.
comparison compare(const trajectory_content& have, const trajectory_content& incoming) {
  bool more = false;
  for (size_t i = 0; i < have.turns.size(); ++i) {
    const int round = have.turns[i].turn.round;
    if (i >= incoming.turns.size() || incoming.turns[i].turn.round != round)
      return {relation::conflicts, "round " + std::to_string(round) + " is missing from one side"};
    if (auto field = turn_difference(have.turns[i], incoming.turns[i]); !field.empty())
      return {relation::conflicts, "round " + std::to_string(round) + ": " + field + " differs"};
    const auto& a = have.turns[i].evaluation;
    const auto& b = incoming.turns[i].evaluation;
    if (a && (!b || !same_evaluation(*a, *b)))
      return {relation::conflicts, "round " + std::to_string(round) + ": evaluation differs"};
    if (b && !a) more = true;
  }
  if (incoming.turns.size() > have.turns.size()) more = true;
  std::map<std::pair<int, int>, const branch_reply_row*> incoming_siblings;
  for (const auto& b : incoming.siblings) incoming_siblings[{b.turn.round, b.branch}] = &b;
  for (const auto& a : have.siblings) {
    const std::string where = "round " + std::to_string(a.turn.round) + " branch " + std::to_string(a.branch);
    const auto it = incoming_siblings.find({a.turn.round, a.branch});
    if (it == incoming_siblings.end()) return {relation::conflicts, where + " is missing from one side"};
    const branch_reply_row& b = *it->second;
    if (auto field = sibling_difference(a, b); !field.empty()) return {relation::conflicts, where + ": " + field + " differs"};
    if (a.evaluation && (!b.evaluation || !same_evaluation(*a.evaluation, *b.evaluation)))
      return {relation::conflicts, where + ": evaluation differs"};
    if (a.chosen && !b.chosen) return {relation::conflicts, where + ": chosen on one side only"};
    if ((b.evaluation && !a.evaluation) || (b.chosen && !a.chosen)) more = true;
  }
  std::string sibling_reason;  // why a finished side cannot take the other's siblings
  {
    std::set<std::pair<int, int>> have_keys;
    for (const auto& a : have.siblings) have_keys.insert({a.turn.round, a.branch});
    for (const auto& b : incoming.siblings) {
      if (have_keys.count({b.turn.round, b.branch})) continue;
      more = true;
      if (sibling_reason.empty())
        sibling_reason = "round " + std::to_string(b.turn.round) + " branch " + std::to_string(b.branch) +
                         " is missing from one side";
    }
  }
  const auto missing = missing_failures(have.failures, incoming.failures);
  if (!missing) return {relation::conflicts, "LLM failures differ"};
  if (!missing->empty()) more = true;
  const trajectory_row& x = have.row;
  const trajectory_row& y = incoming.row;
  if (x.status == "done") {
    if (y.status != "done" || x.final_verdict != y.final_verdict || x.passed != y.passed ||
        x.rounds_done != y.rounds_done)
      return {relation::conflicts, "finish state differs"};
    if (more)
      return {relation::conflicts,
              sibling_reason.empty() ? "one side holds rounds the other, finished, lacks" : sibling_reason};
  } else if (y.status == "done") {
    more = true;
  }
  return more ? comparison{relation::extends, "one side holds more"} : comparison{};
}

// The config without what legitimately differs between shards: the shard
// fields, the database path, and the LLM endpoint's address (each node of an
// array job may serve the same model itself).
nlohmann::json comparable_config(nlohmann::json config) {
  if (config.is_object()) {
    config.erase("shard_index");
    config.erase("shard_count");
    config.erase("db");
    config.erase(merged_key);
    if (config.contains("llm") && config["llm"].is_object()) config["llm"].erase("base_url");
  }
  return config;
}

std::string shard_label(const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("shard_index") || !config.contains("shard_count")) return "";
  const auto& i = config["shard_index"];
  const auto& n = config["shard_count"];
  if (!i.is_number_integer() || !n.is_number_integer()) return "";
  return std::to_string(i.get<int>()) + "/" + std::to_string(n.get<int>());
}

std::string value_at(const nlohmann::json& j, const std::string& pointer) {
  const nlohmann::json::json_pointer p(pointer);
  return j.contains(p) ? j.at(p).dump() : "absent";
}

// Throws merge_error when two experiments of one name disagree beyond sharding.
void check_same_experiment(const experiment_row& a, const std::string& a_file, const experiment_row& b,
                           const std::string& b_file) {
  auto fail = [&](const std::string& what, const std::string& va, const std::string& vb) {
    throw merge_error("experiment '" + a.name + "': " + what + " differs between " + a_file + " (" + va + ") and " +
                      b_file + " (" + vb + ")");
  };
  if (a.kind != b.kind) fail("kind", a.kind, b.kind);
  if (a.model != b.model) fail("model", a.model, b.model);
  if (a.evaluator_version != b.evaluator_version)
    fail("evaluator_version", a.evaluator_version, b.evaluator_version);
  const nlohmann::json ca = comparable_config(a.config);
  const nlohmann::json cb = comparable_config(b.config);
  if (ca == cb) return;
  const nlohmann::json patch = nlohmann::json::diff(ca, cb);
  const std::string path = patch.empty() ? "" : patch.front().value("path", "");
  fail("config key '" + (path.empty() ? std::string("/") : path) + "'", value_at(ca, path), value_at(cb, path));
}

std::vector<input_db> open_inputs(const std::vector<std::filesystem::path>& paths, const run_store& out) {
  std::vector<input_db> inputs;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw merge_error("input '" + path.string() + "': no such file");
    if (std::filesystem::equivalent(path, out.path(), ec))
      throw merge_error("input '" + path.string() + "' is the output database");
    try {
      inputs.push_back({path, run_store::open(path, true)});
    } catch (const store_error& e) {
      throw merge_error("input '" + path.string() + "': " + e.what());
    }
  }
  return inputs;
}

std::string merged_status(const experiment_group& g) {
  bool all_done = true;
  bool any_running = false;
  for (const auto& s : g.sources) {
    all_done = all_done && s.row.status == "done";
    any_running = any_running || s.row.status == "running";
  }
  return all_done ? "done" : any_running ? "running" : "interrupted";
}

}  // namespace

namespace {

// The experiment as the output stores it: shard fields replaced by the list of
// shards merged, hosts and GPUs of all shards, the earliest start.
experiment_row merged_row(const experiment_group& g, const std::vector<input_db>& inputs, const run_store& out) {
  experiment_row row = g.sources.front().row;
  row.id = 0;
  std::set<std::string> shards;
  std::vector<std::string> databases;
  std::vector<std::string> hosts;
  std::vector<std::string> gpus;
  std::vector<std::string> providers;
  auto add = [](std::vector<std::string>& list, const std::string& value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
  };
  for (const auto& s : g.sources) {
    if (auto label = shard_label(s.row.config); !label.empty()) shards.insert(label);
    databases.push_back(inputs[s.input].path.string());
    add(hosts, s.row.host);
    add(gpus, s.row.gpu);
    add(providers, s.row.provider);
    row.created_at = std::min(row.created_at, s.row.created_at);
    row.finished_at = std::max(row.finished_at, s.row.finished_at);
  }
  auto join = [](const std::vector<std::string>& parts) {
    std::string text;
    for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
    return text;
  };
  if (row.config.is_object()) {
    row.config.erase("shard_index");
    row.config.erase("shard_count");
    row.config["db"] = out.path().string();
    row.config[merged_key] = {{"databases", databases}, {"shards", std::vector(shards.begin(), shards.end())}};
  }
  row.host = join(hosts);
  row.gpu = join(gpus);
  row.provider = join(providers);
  row.status = merged_status(g);
  if (row.status != "done") row.finished_at.clear();
  return row;
}

// A warning when every input names the same shard count but some shards are absent.
std::optional<std::string> missing_shards(const experiment_group& g) {
  std::set<int> indexes;
  std::optional<int> count;
  for (const auto& s : g.sources) {
    const std::string label = shard_label(s.row.config);
    if (label.empty()) return std::nullopt;
    const int n = s.row.config["shard_count"].get<int>();
    if (count && *count != n) return std::nullopt;
    count = n;
    indexes.insert(s.row.config["shard_index"].get<int>());
  }
  if (!count || static_cast<int>(indexes.size()) >= *count) return std::nullopt;
  std::string missing;
  for (int i = 0; i < *count; ++i)
    if (!indexes.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(*count);
  return "experiment '" + g.summary.name + "': shards " + missing + " are not among the inputs";
}

std::vector<experiment_group> collect_groups(const std::vector<input_db>& inputs, run_store& out,
                                             const merge_options& options) {
  std::vector<experiment_group> groups;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (auto& e : inputs[i].store->experiments()) {
      if (!options.experiments.empty() &&
          std::find(options.experiments.begin(), options.experiments.end(), e.name) == options.experiments.end())
        continue;
      auto [it, fresh] = by_name.try_emplace(e.name, groups.size());
      if (fresh) {
        groups.emplace_back();
        groups.back().summary.name = e.name;
      }
      experiment_group& g = groups[it->second];
      if (!g.sources.empty())
        check_same_experiment(g.sources.front().row, inputs[g.sources.front().input].path.string(), e,
                              inputs[i].path.string());
      auto failures = failures_by_trajectory(*inputs[i].store, e.id);
      g.sources.push_back({i, std::move(e), std::move(failures)});
    }
  }
  for (auto& g : groups) {
    g.existing = out.find_experiment(g.summary.name);
    if (g.existing) {
      check_same_experiment(*g.existing, out.path().string(), g.sources.front().row,
                            inputs[g.sources.front().input].path.string());
      g.existing_failures = failures_by_trajectory(out, g.existing->id);
    }
    g.summary.created = !g.existing;
    g.summary.databases = static_cast<int>(g.sources.size());
    g.summary.status = merged_status(g);
  }
  return groups;
}

// Decides, for every trajectory of the group, whether to copy, complete or skip
// it. Throws merge_error on overlapping shards or a conflict with the output.
void plan_trajectories(experiment_group& g, const std::vector<input_db>& inputs, run_store& out) {
  std::map<trajectory_key, trajectory_row> in_output;
  if (g.existing)
    for (auto& t : out.trajectories(g.existing->id)) in_output.emplace(trajectory_key{t.task_id, t.sample}, t);
  std::map<trajectory_key, std::pair<size_t, trajectory_row>> first_seen;
  for (size_t s = 0; s < g.sources.size(); ++s) {
    const experiment_source& src = g.sources[s];
    run_store& store = *inputs[src.input].store;
    for (auto& t : store.trajectories(src.row.id)) {
      const trajectory_key key{t.task_id, t.sample};
      if (auto seen = first_seen.find(key); seen != first_seen.end()) {
        const experiment_source& other = g.sources[seen->second.first];
        const comparison c = compare(load_content(*inputs[other.input].store, seen->second.second, other.failures),
                                     load_content(store, t, src.failures));
        if (c.kind != relation::identical)
          throw merge_error("experiment '" + g.summary.name + "': trajectory " + describe(t) + " is in both " +
                            inputs[other.input].path.string() + " and " + inputs[src.input].path.string() +
                            " with different content (" + c.reason + "); shards must not overlap");
        ++g.summary.trajectories_skipped;
        continue;
      }
      first_seen.emplace(key, std::make_pair(s, t));
      trajectory_plan plan{s, t, plan_action::copy, {}};
      if (auto have = in_output.find(key); have != in_output.end()) {
        plan.existing = load_content(out, have->second, g.existing_failures);
        const comparison c = compare(plan.existing, load_content(store, t, src.failures));
        if (c.kind == relation::conflicts)
          throw merge_error("experiment '" + g.summary.name + "': trajectory " + describe(t) + " in " +
                            inputs[src.input].path.string() + " differs from the one in the output " +
                            out.path().string() + " (" + c.reason + ")");
        if (c.kind == relation::identical) {
          ++g.summary.trajectories_skipped;
          continue;
        }
        plan.action = plan_action::complete;
      }
      g.plans.push_back(std::move(plan));
    }
  }
}

// Writes one trajectory's missing turns, evaluations, failures and finish state.
void write_trajectory(experiment_group& g, int64_t experiment_id, const trajectory_plan& plan,
                      const std::vector<input_db>& inputs, run_store& out) {
  const experiment_source& src = g.sources[plan.source];
  const trajectory_content incoming = load_content(*inputs[src.input].store, plan.row, src.failures);
  const trajectory_row& t = plan.row;
  const int64_t out_id = out.ensure_trajectory(experiment_id, t.task_id, t.family, t.sample);
  if (t.source != "model" || !t.mutation_operator.empty())
    out.set_trajectory_provenance(out_id, t.source, t.mutation_operator);
  std::set<int> rounds_present;
  for (const auto& v : plan.existing.turns) rounds_present.insert(v.turn.round);
  for (const auto& v : incoming.turns) {
    if (rounds_present.count(v.turn.round)) continue;
    turn_row turn = v.turn;
    turn.trajectory_id = out_id;
    out.record_turn(turn, v.candidate.value_or(candidate_row{}));
    ++g.summary.turns;
  }
  std::map<int, turn_view> written;
  for (auto& v : out.turns(out_id)) written.emplace(v.turn.round, std::move(v));
  for (const auto& v : incoming.turns) {
    const auto it = written.find(v.turn.round);
    if (!v.evaluation || it == written.end() || it->second.evaluation || !it->second.candidate) continue;
    evaluation_row e = *v.evaluation;
    e.candidate_id = it->second.candidate->id;
    out.record_evaluation(e);
    ++g.summary.evaluations;
  }
  // Siblings after the turns: the chosen one's turn is in place when it is
  // marked chosen. record_branch_reply writes a sibling once and then only
  // fills in its verdict or chosen flag, so a merge that was killed halfway
  // completes here.
  std::map<std::pair<int, int>, const branch_reply_row*> present;
  for (const auto& b : plan.existing.siblings) present[{b.turn.round, b.branch}] = &b;
  for (const auto& b : incoming.siblings) {
    const auto it = present.find({b.turn.round, b.branch});
    if (it != present.end() && (it->second->evaluation || !b.evaluation) && (it->second->chosen || !b.chosen)) continue;
    branch_reply_row copy = b;
    copy.id = 0;
    copy.turn.trajectory_id = out_id;
    out.record_branch_reply(copy);
    ++g.summary.branch_replies;
  }
  for (auto f : missing_failures(plan.existing.failures, incoming.failures).value_or(incoming.failures)) {
    f.trajectory_id = out_id;
    out.record_llm_failure(f);
    ++g.summary.llm_failures;
  }
  if (t.status == "done" && plan.existing.row.status != "done")
    out.finish_trajectory(out_id, incoming.row.final_verdict, incoming.row.passed, incoming.row.rounds_done);
  if (plan.action == plan_action::copy) ++g.summary.trajectories_copied;
  else ++g.summary.trajectories_completed;
}

void write_group(experiment_group& g, const std::vector<input_db>& inputs, run_store& out) {
  const int64_t experiment_id = g.existing ? g.existing->id : out.create_experiment(merged_row(g, inputs, out));
  for (const auto& plan : g.plans) write_trajectory(g, experiment_id, plan, inputs, out);
  if (g.existing && g.existing->status != g.summary.status) out.set_experiment_status(experiment_id, g.summary.status);
}

}  // namespace

int merge_result::total_trajectories() const {
  int n = 0;
  for (const auto& e : experiments) n += e.trajectories_copied + e.trajectories_completed;
  return n;
}

int merge_result::total_turns() const {
  int n = 0;
  for (const auto& e : experiments) n += e.turns;
  return n;
}

int merge_result::total_evaluations() const {
  int n = 0;
  for (const auto& e : experiments) n += e.evaluations;
  return n;
}

int merge_result::total_branch_replies() const {
  int n = 0;
  for (const auto& e : experiments) n += e.branch_replies;
  return n;
}

int merge_result::total_llm_failures() const {
  int n = 0;
  for (const auto& e : experiments) n += e.llm_failures;
  return n;
}

merge_result merge_run_databases(const std::vector<std::filesystem::path>& inputs, run_store& out,
                                 const merge_options& options) {
  const std::vector<input_db> dbs = open_inputs(inputs, out);
  std::vector<experiment_group> groups = collect_groups(dbs, out, options);
  for (auto& g : groups) plan_trajectories(g, dbs, out);
  merge_result result;
  result.inputs = static_cast<int>(dbs.size());
  for (auto& g : groups) {
    write_group(g, dbs, out);
    if (auto warning = missing_shards(g)) result.warnings.push_back(*warning);
    result.experiments.push_back(g.summary);
  }
  return result;
}

}  // namespace ptxbench
