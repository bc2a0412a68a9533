// The "llm" section of an experiment config. Every field is checked where it
// enters, with the JSON path in the message; an API key itself is refused so
// that it can never end up in a stored config.
#include <cctype>
#include <limits>

#include "agent/http/url.hpp"
#include "agent/llm/provider.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench {

namespace llm_detail {
// http and https only: libcurl would read file:///etc/passwd as the model's
// reply, and speak dict, gopher or smtp as readily.
void check_base_url(const std::string& url, const std::string& path) {
  if (!http::is_http_url(url))
    throw input_error(path + ": '" + utf8_shortened(redact_url_credentials(url), 200) +
                      "' is not an http:// or https:// address");
}

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
    "max_retries", "backoff_initial_s", "backoff_max_s", "replay_db", "replay_experiment", "think_tags",
    "stream", "stream_deadline_s"};

bool secret_name(std::string name) {
  for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* word : {"key", "token", "secret", "pass", "auth", "sig", "credential"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

std::vector<std::string> parse_think_tags(const json_reader& r, const nlohmann::json& j) {
  const auto& tags = j.at("think_tags");
  if (!tags.is_array()) r.fail_key("think_tags", "must be an array of tag names, e.g. [\"think\"]");
  std::vector<std::string> out;
  for (size_t i = 0; i < tags.size(); ++i) {
    const auto& t = tags[i];
    bool ok = t.is_string() && !t.get<std::string>().empty() && t.get<std::string>().size() <= 64;
    if (ok)
      for (char ch : t.get<std::string>())
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != ':') ok = false;
    if (!ok)
      r.fail_key("think_tags", "entry " + std::to_string(i) + " must be a tag name (letters, digits, _ - :)");
    out.push_back(t.get<std::string>());
  }
  return out;
}

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
  if (r.has("base_url") || !c.base_url.empty()) llm_detail::check_base_url(c.base_url, r.path() + ".base_url");
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
  if (r.has("think_tags")) c.think_tags = parse_think_tags(r, j);
  if (r.has("stream")) {
    if (!j.at("stream").is_boolean()) r.fail_key("stream", "must be true or false");
    c.stream = j.at("stream").get<bool>();
  }
  c.stream_deadline_s = number_at_least(r, "stream_deadline_s", c.stream_deadline_s, 0, false);
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
                      {"backoff_max_s", c.backoff_max_s},
                      {"think_tags", c.think_tags},
                      {"stream", c.stream},
                      {"stream_deadline_s", c.stream_deadline_s}};
  if (!c.base_url.empty()) j["base_url"] = redact_url_credentials(c.base_url);
  if (!c.api_key_env.empty()) j["api_key_env"] = c.api_key_env;
  if (c.temperature) j["temperature"] = *c.temperature;
  if (c.top_p) j["top_p"] = *c.top_p;
  if (c.seed) j["seed"] = *c.seed;
  if (!c.replay_db.empty()) j["replay_db"] = c.replay_db;
  if (!c.replay_experiment.empty()) j["replay_experiment"] = c.replay_experiment;
  return j;
}

std::string redact_url_credentials(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t host_end = url.find_first_of("/?#", host_start);
  if (host_end == std::string::npos) host_end = url.size();
  std::string out = url.substr(0, host_start);
  const size_t at = url.rfind('@', host_end);
  if (at != std::string::npos && at >= host_start) out += "REDACTED@" + url.substr(at + 1, host_end - at - 1);
  else out += url.substr(host_start, host_end - host_start);
  // Query parameters: names kept, secret-looking values replaced.
  const size_t query = url.find('?', host_end);
  if (query == std::string::npos) return out + url.substr(host_end);
  out += url.substr(host_end, query + 1 - host_end);
  size_t i = query + 1;
  const size_t fragment = url.find('#', i);
  const size_t query_end = fragment == std::string::npos ? url.size() : fragment;
  while (i < query_end) {
    size_t amp = url.find('&', i);
    if (amp == std::string::npos || amp > query_end) amp = query_end;
    const std::string param = url.substr(i, amp - i);
    const size_t eq = param.find('=');
    if (eq != std::string::npos && secret_name(param.substr(0, eq))) out += param.substr(0, eq + 1) + "REDACTED";
    else out += param;
    if (amp < query_end) out += '&';
    i = amp + 1;
  }
  return out + url.substr(query_end);
}

}  // namespace ptxbench
