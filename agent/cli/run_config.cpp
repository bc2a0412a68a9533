#include "agent/cli/run_config.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {
namespace {

using nlohmann::json;

// The value at a dotted config key ("llm.model"); nullptr where the document
// has none. With `create`, missing objects on the way are made.
json* at_key(json& doc, const std::string& key, bool create) {
  json* v = &doc;
  std::istringstream path(key);
  for (std::string part; std::getline(path, part, '.');) {
    if (create && v->is_null()) *v = json::object();
    if (!v->is_object() || (!create && !v->contains(part))) return nullptr;
    v = &(*v)[part];
  }
  return v;
}

// The value as stored at the option's config keys (a shard: [index, count]).
json stored_value(const option& o, json& stored) {
  if (o.config_keys.size() == 1) {
    json* v = at_key(stored, o.config_keys[0], false);
    return v ? *v : json();
  }
  json values = json::array();
  for (const auto& key : o.config_keys) {
    json* v = at_key(stored, key, false);
    values.push_back(v ? *v : json());
  }
  return values;
}

std::string describe_stored(const option& o, const json& value) {
  if (o.config_keys.size() == 1) return o.config_keys[0] + " " + value.dump();
  std::string out;
  for (size_t i = 0; i < o.config_keys.size(); ++i)
    out += (i ? ", " : "") + o.config_keys[i] + " " + value[i].dump();
  return out;
}

}  // namespace

experiment_config read_run_config(const option_values& values, const std::string& path) {
  json doc = read_experiment_config_document(path);
  if (!doc.is_object()) return parse_experiment_config(doc, path);  // its error names the file
  for (const option* o : values.declared()) {
    if (o->config_keys.size() != 1) continue;  // a shard's two keys are checked together by the parser
    if (const json* v = at_key(doc, o->config_keys[0], false); v && !v->is_null())
      value_from_json(*o, *v, path + ": $." + o->config_keys[0]);
  }
  for (const auto& [id, given] : values.all_given()) {
    const option& o = find_option(id);
    for (size_t i = 0; i < o.config_keys.size(); ++i) {
      json* slot = at_key(doc, o.config_keys[i], true);
      if (slot == nullptr) continue;  // "llm" is no object: the parser names it
      *slot = o.config_keys.size() == 1 ? given.value : given.value[i];
    }
  }
  return parse_experiment_config(doc, path);
}

experiment_config resume_config(const experiment_config& current, const experiment_row& exp,
                                const option_values& values) {
  experiment_config stored =
      parse_experiment_config(exp.config, current.db + " (stored config of " + exp.name + ")");
  json stored_json = experiment_config_to_json(stored);
  for (const auto& [id, given] : values.all_given()) {
    const option& o = find_option(id);
    if (o.config_keys.empty() || o.may_change_on_resume) continue;
    const json then = stored_value(o, stored_json);
    if (then == given.value) continue;
    const bool on_command_line = given.origin == value_origin::command_line;
    throw input_error((on_command_line ? given.source + " " : given.source + "=") + given.text + ": experiment '" +
                      exp.name + "' was run with " + describe_stored(o, then) +
                      "; a resume continues it as stored (leave " + (on_command_line ? given.source : "it") +
                      " out, or run a new experiment under another --name)");
  }
  stored.name = current.name;
  stored.db = current.db;
  stored.concurrency = current.concurrency;
  if (stored.llm.kind != provider_kind::embedded) stored.llm.base_url = current.llm.base_url;
  // The services' addresses may change between runs; their evaluator version is checked on connect.
  if (!current.evaluator_urls.empty()) stored.evaluator_urls = current.evaluator_urls;
  return stored;
}

void name_new_experiment(experiment_config& cfg, run_store& store, bool name_given, bool quiet) {
  if (name_given) return;
  const std::string base = cfg.name;
  for (int n = 2; store.find_experiment(cfg.name); ++n) cfg.name = base + "-" + std::to_string(n);
  if (cfg.name != base && !quiet)
    std::fprintf(stderr, "experiment %s exists in %s; this run is %s\n", base.c_str(), cfg.db.c_str(), cfg.name.c_str());
}

std::vector<task> select_tasks(const experiment_config& cfg) {
  auto all_tasks = load_task_dir(cfg.tasks_dir);
  if (!cfg.suite.empty()) all_tasks = tasks_in_suite(all_tasks, cfg.suite);
  if (cfg.tasks.empty()) return all_tasks;
  std::vector<task> tasks;
  for (const auto& id : cfg.tasks) {
    auto it = std::find_if(all_tasks.begin(), all_tasks.end(), [&](const task& t) { return t.id == id; });
    if (it == all_tasks.end())
      throw input_error("unknown task '" + id + "'" + (cfg.suite.empty() ? "" : " in suite '" + cfg.suite + "'") +
                        " (see `ptxbench tasks list`)");
    tasks.push_back(*it);
  }
  return tasks;
}

}  // namespace ptxbench::cli
