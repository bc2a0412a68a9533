// The "llm" section of an experiment config. Every field is checked where it
// enters, with the JSON path in the message; an API key itself is refused so
// that it can never end up in a stored config.
#include <limits>

#include "agent/llm/provider.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench {

namespace llm_detail {
std::string default_base_url(provider_kind kind) {
  switch (kind) {
    case provider_kind::openai: return "https://api.openai.com/v1";
    case provider_kind::anthropic: return "https://api.anthropic.com";
    case provider_kind::replay:
    case provider_kind::embedded: return "";
  }
  return "";
}
}  // namespace llm_detail

const char* to_string(provider_kind k) {
  switch (k) {
    case provider_kind::openai: return "openai";
    case provider_kind::anthropic: return "anthropic";
    case provider_kind::replay: return "replay";
    case provider_kind::embedded: return "embedded";
  }
  return "unknown";
}

namespace {
const std::vector<std::string> known_fields = {
    "kind",      "base_url",    "model",          "api_key_env",       "temperature",
    "top_p",     "max_tokens",  "seed",           "extra",             "timeout_s",
    "max_retries", "backoff_initial_s", "backoff_max_s", "replay_db", "replay_experiment"};

provider_kind parse_kind(const json_reader& r) {
  const std::string name = r.get_string("kind", "openai");
  for (auto k : {provider_kind::openai, provider_kind::anthropic, provider_kind::replay,
                 provider_kind::embedded})
    if (name == to_string(k)) return k;
  r.fail_key("kind", "unknown provider '" + name + "' (known: openai, anthropic, replay, embedded)");
}

double number_at_least(const json_reader& r, const std::string& key, double fallback, double low,
                       bool low_allowed) {
  double v = r.get_number(key, fallback);
  if (v < low || (!low_allowed && v == low))
    r.fail_key(key, std::string("must be ") + (low_allowed ? ">= " : "> ") + std::to_string(low));
  return v;
}

int int_in(const json_reader& r, const std::string& key, int fallback, int64_t low, int64_t high) {
  int64_t v = r.get_int(key, fallback);
  if (v < low || v > high)
    r.fail_key(key, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  return static_cast<int>(v);
}
}  // namespace

provider_config parse_provider_config(const nlohmann::json& j, const std::string& path) {
  json_reader r(j, path);
  r.expect_object();
  for (const char* secret : {"api_key", "key", "token"})
    if (j.contains(secret))
      r.fail_key(secret, "keys are never read from a config; put the name of the environment "
                         "variable holding it in api_key_env");
  r.reject_unknown(known_fields);

  provider_config c;
  c.kind = parse_kind(r);
  const bool needs_model = c.kind == provider_kind::openai || c.kind == provider_kind::anthropic;
  c.model = needs_model ? r.get_string("model") : r.get_string("model", "");
  c.base_url = r.get_string("base_url", llm_detail::default_base_url(c.kind));
  c.api_key_env = r.get_string("api_key_env", "");
  if (r.has("temperature")) c.temperature = number_at_least(r, "temperature", 0, 0, true);
  if (r.has("top_p")) {
    c.top_p = number_at_least(r, "top_p", 1, 0, false);
    if (*c.top_p > 1) r.fail_key("top_p", "must be <= 1");
  }
  c.max_tokens = int_in(r, "max_tokens", c.max_tokens, 1, std::numeric_limits<int>::max());
  if (r.has("seed")) c.seed = r.get_int("seed");
  if (r.has("extra")) {
    r.at("extra").expect_object();
    c.extra = j.at("extra");
  }
  c.timeout_s = number_at_least(r, "timeout_s", c.timeout_s, 0, false);
  c.max_retries = int_in(r, "max_retries", c.max_retries, 0, 100);
  c.backoff_initial_s = number_at_least(r, "backoff_initial_s", c.backoff_initial_s, 0, true);
  c.backoff_max_s = number_at_least(r, "backoff_max_s", c.backoff_max_s, 0, true);
  if (c.backoff_max_s < c.backoff_initial_s)
    r.fail_key("backoff_max_s", "must be >= backoff_initial_s");
  c.replay_db = r.get_string("replay_db", "");
  c.replay_experiment = r.get_string("replay_experiment", "");
  return c;
}

nlohmann::json provider_config_to_json(const provider_config& c) {
  nlohmann::json j = {{"kind", to_string(c.kind)},
                      {"model", c.model},
                      {"max_tokens", c.max_tokens},
                      {"extra", c.extra},
                      {"timeout_s", c.timeout_s},
                      {"max_retries", c.max_retries},
                      {"backoff_initial_s", c.backoff_initial_s},
                      {"backoff_max_s", c.backoff_max_s}};
  if (!c.base_url.empty()) j["base_url"] = c.base_url;
  if (!c.api_key_env.empty()) j["api_key_env"] = c.api_key_env;
  if (c.temperature) j["temperature"] = *c.temperature;
  if (c.top_p) j["top_p"] = *c.top_p;
  if (c.seed) j["seed"] = *c.seed;
  if (!c.replay_db.empty()) j["replay_db"] = c.replay_db;
  if (!c.replay_experiment.empty()) j["replay_experiment"] = c.replay_experiment;
  return j;
}

}  // namespace ptxbench
