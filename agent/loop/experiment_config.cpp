#include "agent/loop/experiment_config.hpp"

#include <fstream>

#include "evaluator/api/files.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench {

const char* to_string(stop_policy p) { return p == stop_policy::first_pass ? "first_pass" : "all_rounds"; }
const char* to_string(history_policy p) { return p == history_policy::all ? "all" : "last_k"; }

namespace {
// An int field within [lo, hi], or the fallback when absent. Out of range is an
// error with the JSON path: static_cast<int> made 4294967297 samples into 1.
int bounded_int(const json_reader& r, const std::string& key, int fallback, int64_t lo, int64_t hi) {
  if (!r.has(key)) return fallback;
  const int64_t v = r.get_int(key);
  if (v < lo || v > hi)
    r.fail_key(key, std::to_string(v) + " is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
  return static_cast<int>(v);
}
}  // namespace

experiment_config parse_experiment_config(const nlohmann::json& j, const std::string& source) {
  json_reader r(j, "$", source);
  r.expect_object();
  r.reject_unknown({"name", "db", "tasks_dir", "tasks", "prompts_dir", "samples", "rounds", "concurrency", "feedback",
                    "stop", "history", "history_k", "llm", "endpoint_script", "endpoint_latency_ms", "gpu", "seeds",
                    "time_limit_ms", "timing_budget_ms", "shard_index", "shard_count"});
  experiment_config c;
  c.name = r.get_string("name", c.name);
  c.db = r.get_string("db", c.db);
  c.tasks_dir = r.get_string("tasks_dir", c.tasks_dir);
  if (r.has("tasks")) c.tasks = r.get_strings("tasks");
  c.prompts_dir = r.get_string("prompts_dir", c.prompts_dir);
  c.samples = bounded_int(r, "samples", c.samples, 1, k_max_samples);
  c.rounds = bounded_int(r, "rounds", c.rounds, 1, k_max_rounds);
  c.concurrency = bounded_int(r, "concurrency", c.concurrency, 1, k_max_concurrency);
  try {
    c.feedback = parse_feedback_detail(r.get_string("feedback", "full"));
  } catch (const input_error& e) {
    r.fail_key("feedback", e.what());
  }
  std::string stop = r.get_string("stop", "first_pass");
  if (stop != "first_pass" && stop != "all_rounds") r.fail_key("stop", "expected first_pass or all_rounds");
  c.stop = stop == "first_pass" ? stop_policy::first_pass : stop_policy::all_rounds;
  std::string history = r.get_string("history", "all");
  if (history != "all" && history != "last_k") r.fail_key("history", "expected all or last_k");
  c.history = history == "all" ? history_policy::all : history_policy::last_k;
  c.history_k = bounded_int(r, "history_k", c.history_k, 0, k_max_rounds);
  if (r.has("llm")) c.llm = parse_provider_config(r.at("llm").json(), "$.llm");
  c.endpoint_script = r.get_string("endpoint_script", "");
  c.endpoint_latency_ms = r.get_number("endpoint_latency_ms", -1);
  c.gpu = r.get_string("gpu", c.gpu);
  if (c.gpu != "auto" && c.gpu != "off") r.fail_key("gpu", "expected auto or off");
  if (r.has("seeds")) {
    auto s = r.at("seeds");
    s.expect_array();
    c.seeds.clear();
    for (size_t i = 0; i < s.json().size(); ++i) {
      if (!s.json()[i].is_number_unsigned() && !s.json()[i].is_number_integer()) s.at(i).fail("expected an integer seed");
      if (!s.json()[i].is_number_unsigned() && s.json()[i].get<int64_t>() < 0) s.at(i).fail("seeds are not negative");
      c.seeds.push_back(s.json()[i].get<uint64_t>());
    }
  }
  c.time_limit_ms = r.get_number("time_limit_ms", c.time_limit_ms);
  c.timing_budget_ms = r.get_number("timing_budget_ms", c.timing_budget_ms);
  c.shard_index = bounded_int(r, "shard_index", 0, 0, k_max_shards - 1);
  c.shard_count = bounded_int(r, "shard_count", 1, 1, k_max_shards);
  validate_experiment_config(c);
  return c;
}

void validate_experiment_config(const experiment_config& c) {
  auto bad = [](const std::string& m) { throw input_error("config: " + m); };
  if (c.name.empty()) bad("name must not be empty");
  if (c.samples < 1 || c.samples > k_max_samples)
    bad("samples must be between 1 and " + std::to_string(k_max_samples));
  if (c.rounds < 1 || c.rounds > k_max_rounds) bad("rounds must be between 1 and " + std::to_string(k_max_rounds));
  if (c.concurrency < 1 || c.concurrency > k_max_concurrency)
    bad("concurrency must be between 1 and " + std::to_string(k_max_concurrency));
  if (c.history == history_policy::last_k && c.history_k < 0) bad("history_k must be >= 0");
  if (c.llm.kind == provider_kind::embedded && c.endpoint_script.empty())
    bad("llm.kind is embedded but endpoint_script is not set");
  if ((c.llm.kind == provider_kind::openai || c.llm.kind == provider_kind::anthropic) && c.llm.base_url.empty())
    bad("llm.base_url is required for " + std::string(to_string(c.llm.kind)));
  if (c.seeds.empty()) bad("seeds must not be empty");
  if (c.shard_count < 1 || c.shard_count > k_max_shards || c.shard_index < 0 || c.shard_index >= c.shard_count)
    bad("shard must be i/n with 0 <= i < n");
}

experiment_config load_experiment_config(const std::string& path) {
  return parse_experiment_config(read_json_file(path, "config"), path);
}

nlohmann::json experiment_config_to_json(const experiment_config& c) {
  return {{"name", c.name},
          {"db", c.db},
          {"tasks_dir", c.tasks_dir},
          {"tasks", c.tasks},
          {"prompts_dir", c.prompts_dir},
          {"samples", c.samples},
          {"rounds", c.rounds},
          {"concurrency", c.concurrency},
          {"feedback", to_string(c.feedback)},
          {"stop", to_string(c.stop)},
          {"history", to_string(c.history)},
          {"history_k", c.history_k},
          {"llm", provider_config_to_json(c.llm)},
          {"endpoint_script", c.endpoint_script},
          {"endpoint_latency_ms", c.endpoint_latency_ms},
          {"gpu", c.gpu},
          {"seeds", c.seeds},
          {"time_limit_ms", c.time_limit_ms},
          {"timing_budget_ms", c.timing_budget_ms},
          {"shard_index", c.shard_index},
          {"shard_count", c.shard_count}};
}

}  // namespace ptxbench
