#include "agent/loop/experiment_config.hpp"

#include <filesystem>
#include <fstream>

#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"

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

double bounded_seconds(const json_reader& r, const std::string& key, double fallback, double lo, double hi) {
  if (!r.has(key)) return fallback;
  const double v = r.get_number(key);
  if (!(v >= lo && v <= hi))
    r.fail_key(key, std::to_string(v) + " s is out of range (" + std::to_string(int64_t(lo)) + " to " +
                        std::to_string(int64_t(hi)) + " s)");
  return v;
}
}  // namespace

experiment_config parse_experiment_config(const nlohmann::json& j, const std::string& source) {
  json_reader r(j, "$", source);
  r.expect_object();
  r.reject_unknown({"name", "db", "tasks_dir", "tasks", "suite", "prompts_dir", "samples", "rounds", "concurrency", "feedback",
                     "stop", "history", "history_k", "max_context_tokens", "llm", "endpoint_script", "endpoint_latency_ms", "gpu", "seeds",
                     "time_limit_ms", "timing_budget_ms", "shard_index", "shard_count", "evaluator", "teacher",
                     "coverage_target", "max_llm_calls", "branch"});
  experiment_config c;
  c.name = r.get_string("name", c.name);
  c.db = r.get_string("db", c.db);
  c.tasks_dir = r.get_string("tasks_dir", c.tasks_dir);
  if (r.has("tasks")) c.tasks = r.get_strings("tasks");
  c.suite = r.get_string("suite", c.suite);
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
  c.max_context_tokens = bounded_int(r, "max_context_tokens", 0, 0, 100000000);
  if (r.has("llm")) c.llm = parse_provider_config(r.at("llm").json(), "$.llm");
  c.endpoint_script = r.get_string("endpoint_script", "");
  c.endpoint_latency_ms = r.get_number("endpoint_latency_ms", -1);
  if (c.endpoint_latency_ms > k_max_endpoint_latency_ms)
    r.fail_key("endpoint_latency_ms", "more than " + std::to_string(int64_t(k_max_endpoint_latency_ms)) + " ms");
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
  if (r.has("evaluator")) {
    json_reader e = r.at("evaluator");
    e.expect_object();
    e.reject_unknown({"url", "token_env", "timeout_s", "max_wait_s", "max_attempts"});
    if (e.has("url")) {
      if (e.json().at("url").is_string()) c.evaluator_urls = {e.get_string("url")};
      else c.evaluator_urls = e.get_strings("url");
      for (size_t i = 0; i < c.evaluator_urls.size(); ++i)
        if (c.evaluator_urls[i].rfind("http://", 0) != 0 && c.evaluator_urls[i].rfind("https://", 0) != 0)
          e.at("url").fail("expected http:// or https:// addresses, got '" + c.evaluator_urls[i] + "'");
    }
    c.evaluator_token_env = e.get_string("token_env", "");
    c.evaluator_timeout_s = bounded_seconds(e, "timeout_s", c.evaluator_timeout_s, 1, 86400);
    c.evaluator_max_wait_s = bounded_seconds(e, "max_wait_s", c.evaluator_max_wait_s, 0, 7 * 86400);
    c.evaluator_max_attempts = bounded_int(e, "max_attempts", c.evaluator_max_attempts, 1, 100);
  }
  c.coverage_target = bounded_int(r, "coverage_target", 0, 0, 1000000);
  c.max_llm_calls = bounded_int(r, "max_llm_calls", 0, 0, 1000000000);
  c.branch = bounded_int(r, "branch", 1, 1, k_max_branch);
  if (r.has("teacher")) {
    auto t = r.at("teacher");
    t.expect_object();
    teacher_config tc;
    tc.after_failures = bounded_int(t, "after_failures", 0, 0, k_max_rounds);
    if (tc.after_failures < 0) t.fail_key("after_failures", "must be >= 0");
    tc.endpoint_script = t.get_string("endpoint_script", "");
    // The rest is an endpoint config like "llm".
    nlohmann::json endpoint = t.json();
    endpoint.erase("after_failures");
    endpoint.erase("endpoint_script");
    tc.llm = parse_provider_config(endpoint, "$.teacher");
    c.teacher = tc;
  }
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
  if (c.max_context_tokens < 0) bad("max_context_tokens must be >= 0 (0: no limit)");
  if (c.max_context_tokens > 0 && c.max_context_tokens <= c.llm.max_tokens)
    bad("max_context_tokens must be larger than llm.max_tokens (the reply needs room in the context)");
  if (c.shard_count < 1 || c.shard_count > k_max_shards || c.shard_index < 0 || c.shard_index >= c.shard_count)
    bad("shard must be i/n with 0 <= i < n");
  if (c.coverage_target < 0 || c.max_llm_calls < 0) bad("coverage_target and max_llm_calls must be >= 0");
  // Some cells cannot fill (no GPU: runtime and later never fail), so the
  // budget is what ends a coverage run.
  if (c.coverage_target > 0 && c.max_llm_calls == 0) bad("coverage_target needs max_llm_calls (the LLM-call budget)");
  if (c.coverage_target > 0 && c.shard_count > 1) bad("coverage_target does not combine with shards");
  if (c.branch < 1 || c.branch > k_max_branch) bad("branch must be between 1 and " + std::to_string(k_max_branch));
  // A replay answers one recorded reply per (task, sample, round): every sibling would be the same.
  if (c.branch > 1 && c.llm.kind == provider_kind::replay)
    bad("branch > 1 does not combine with llm.kind replay (it answers one recorded reply per round)");
  if (c.teacher) {
    const auto& t = *c.teacher;
    if (t.llm.kind == provider_kind::replay) bad("teacher.kind replay is not supported (a teacher writes new turns)");
    if (t.llm.kind == provider_kind::embedded && t.endpoint_script.empty())
      bad("teacher.kind is embedded but teacher.endpoint_script is not set");
    if (t.llm.kind != provider_kind::embedded && t.llm.base_url.empty())
      bad("teacher.base_url is required for " + std::string(to_string(t.llm.kind)));
  }
}

namespace {

// A path written in the config file, made relative to the file's folder.
void resolve(nlohmann::json& value, const std::filesystem::path& base) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty()) return;
  std::filesystem::path p(value.get<std::string>());
  if (p.is_absolute()) return;
  value = (base / p).lexically_normal().string();
}

}  // namespace

nlohmann::json read_experiment_config_document(const std::string& path) {
  nlohmann::json j = read_json_file(path, "config");
  // Only paths the file gives are the file's; defaults stay relative to the working directory.
  const auto base = std::filesystem::path(path).parent_path();
  if (!j.is_object()) return j;
  for (const char* key : {"db", "tasks_dir", "prompts_dir", "endpoint_script"})
    if (j.contains(key)) resolve(j[key], base);
  if (j.contains("llm") && j["llm"].is_object() && j["llm"].contains("replay_db")) resolve(j["llm"]["replay_db"], base);
  return j;
}

experiment_config load_experiment_config(const std::string& path) {
  return parse_experiment_config(read_experiment_config_document(path), path);
}

void check_config_paths(const experiment_config& c) {
  auto need = [](const std::string& path, const char* what, bool directory) {
    std::error_code ec;
    bool ok = directory ? std::filesystem::is_directory(path, ec) : std::filesystem::is_regular_file(path, ec);
    if (!ok) throw input_error(std::string("config: ") + what + " " + path + (directory ? " is not a folder" : " is not a file"));
  };
  need(c.tasks_dir, "tasks_dir", true);
  need(c.prompts_dir, "prompts_dir", true);
  if (c.llm.kind == provider_kind::embedded) need(c.endpoint_script, "endpoint_script", false);
  if (c.llm.kind == provider_kind::replay) need(c.llm.replay_db, "llm.replay_db", false);
}

nlohmann::json experiment_config_to_json(const experiment_config& c) {
  nlohmann::json j = {{"name", c.name},
          {"db", c.db},
          {"tasks_dir", c.tasks_dir},
          {"tasks", c.tasks},
          {"suite", c.suite},
          {"prompts_dir", c.prompts_dir},
          {"samples", c.samples},
          {"rounds", c.rounds},
          {"concurrency", c.concurrency},
          {"feedback", to_string(c.feedback)},
          {"stop", to_string(c.stop)},
          {"history", to_string(c.history)},
          {"history_k", c.history_k},
          {"max_context_tokens", c.max_context_tokens},
          {"llm", provider_config_to_json(c.llm)},
          {"endpoint_script", c.endpoint_script},
          {"endpoint_latency_ms", c.endpoint_latency_ms},
          {"gpu", c.gpu},
          {"seeds", c.seeds},
          {"time_limit_ms", c.time_limit_ms},
          {"timing_budget_ms", c.timing_budget_ms},
          {"shard_index", c.shard_index},
          {"shard_count", c.shard_count},
           {"evaluator",
            {{"url", c.evaluator_urls},
             {"token_env", c.evaluator_token_env},
             {"timeout_s", c.evaluator_timeout_s},
             {"max_wait_s", c.evaluator_max_wait_s},
             {"max_attempts", c.evaluator_max_attempts}}},
           {"coverage_target", c.coverage_target},
           {"max_llm_calls", c.max_llm_calls},
           {"branch", c.branch}};
  if (c.teacher) {
    nlohmann::json t = provider_config_to_json(c.teacher->llm);
    t["after_failures"] = c.teacher->after_failures;
    t["endpoint_script"] = c.teacher->endpoint_script;
    j["teacher"] = t;
  }
  return j;
}

}  // namespace ptxbench
