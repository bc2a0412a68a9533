// The "llm" config section: defaults, round trip, and errors that name the
// JSON path of the bad field.
#include <doctest/doctest.h>

#include "agent/llm/provider.hpp"
#include "evaluator/common/json_path.hpp"

using namespace ptxbench;
using nlohmann::json;

TEST_CASE("config: a full openai section round-trips through JSON") {
  json j = {{"kind", "openai"},
            {"base_url", "http://127.0.0.1:8000/v1"},
            {"model", "Qwen/Qwen3-32B"},
            {"api_key_env", "VLLM_KEY"},
            {"temperature", 0.6},
            {"top_p", 0.95},
            {"max_tokens", 16384},
            {"seed", 42},
            {"extra", {{"top_k", 20}}},
            {"timeout_s", 900.0},
            {"max_retries", 4},
            {"backoff_initial_s", 2.0},
            {"backoff_max_s", 30.0},
            {"think_tags", {"think"}},
            {"stream", false},
            {"stream_deadline_s", 1800.0}};
  provider_config c = parse_provider_config(j);
  CHECK(c.kind == provider_kind::openai);
  CHECK(c.model == "Qwen/Qwen3-32B");
  CHECK(c.temperature == 0.6);
  CHECK(c.seed == 42);
  CHECK(c.extra["top_k"] == 20);
  CHECK(c.max_retries == 4);
  CHECK(provider_config_to_json(c) == j);
}

TEST_CASE("config: defaults and default base URLs") {
  provider_config c = parse_provider_config({{"kind", "anthropic"}, {"model", "claude-x"}});
  CHECK(c.base_url == "https://api.anthropic.com");
  CHECK(c.max_tokens == 8192);
  CHECK_FALSE(c.temperature.has_value());
  CHECK(c.timeout_s == 600);
  auto embedded = parse_provider_config({{"kind", "embedded"}});
  CHECK(embedded.kind == provider_kind::embedded);
  CHECK(embedded.base_url.empty());
  CHECK(parse_provider_config({{"model", "m"}}).base_url == "https://api.openai.com/v1");
}

TEST_CASE("config: the stored form keeps the key's variable name - never a key") {
  provider_config c;
  c.model = "m";
  c.api_key_env = "OPENAI_API_KEY";
  auto j = provider_config_to_json(c);
  CHECK(j["api_key_env"] == "OPENAI_API_KEY");
  CHECK_FALSE(j.contains("api_key"));
}

TEST_CASE("config: errors name the JSON path") {
  auto fails_with = [](const json& j, const std::string& message) {
    CHECK_THROWS_WITH_AS(parse_provider_config(j), doctest::Contains(message.c_str()), input_error);
  };
  fails_with({{"model", "m"}, {"temprature", 0.5}}, "$.llm.temprature: unknown field");
  fails_with({{"model", "m"}, {"api_key", "sk-123"}}, "$.llm.api_key: keys are never read");
  fails_with({{"kind", "gemini"}, {"model", "m"}}, "$.llm.kind: unknown provider 'gemini'");
  fails_with({{"kind", "openai"}}, "$.llm.model: missing");
  fails_with({{"model", 3}}, "$.llm.model: expected a string");
  fails_with({{"model", "m"}, {"top_p", 1.5}}, "$.llm.top_p: must be <= 1");
  fails_with({{"model", "m"}, {"max_tokens", 0}}, "$.llm.max_tokens: must be between 1");
  fails_with({{"model", "m"}, {"timeout_s", 0}}, "$.llm.timeout_s: must be > 0");
  fails_with({{"model", "m"}, {"extra", "x"}}, "$.llm.extra: expected an object");
  fails_with({{"model", "m"}, {"backoff_initial_s", 5}, {"backoff_max_s", 1}},
             "$.llm.backoff_max_s: must be >= backoff_initial_s");
  CHECK_THROWS_WITH_AS(parse_provider_config(json::array(), "$.experiment.llm"),
                       doctest::Contains("$.experiment.llm: expected an object"), input_error);
}

TEST_CASE("config: make_http_provider refuses replay and an embedded config without a URL") {
  provider_config replay;
  replay.kind = provider_kind::replay;
  CHECK_THROWS_AS(make_http_provider(replay), input_error);
  provider_config embedded;
  embedded.kind = provider_kind::embedded;
  CHECK_THROWS_WITH_AS(make_http_provider(embedded), doctest::Contains("base_url"), input_error);
}

TEST_CASE("config: credentials inside base_url are never in the stored config") {
  CHECK(redact_url_credentials("https://user:hunter2@example.com:8443/v1") == "https://REDACTED@example.com:8443/v1");
  CHECK(redact_url_credentials("https://example.com/v1?api-key=hunter2&api-version=2024-10-01") ==
        "https://example.com/v1?api-key=REDACTED&api-version=2024-10-01");
  CHECK(redact_url_credentials("http://h/v1?Token=a&sig=b#frag") == "http://h/v1?Token=REDACTED&sig=REDACTED#frag");
  CHECK(redact_url_credentials("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1");
  CHECK(redact_url_credentials("") == "");
  json j = {{"kind", "openai"}, {"model", "m"}, {"base_url", "https://me:hunter2@example.com/v1?key=hunter2"}};
  provider_config c = parse_provider_config(j);
  CHECK(c.base_url == "https://me:hunter2@example.com/v1?key=hunter2");  // used as given for the calls
  const std::string stored = provider_config_to_json(c).dump();
  CHECK(stored.find("hunter2") == std::string::npos);
  CHECK(stored.find("example.com") != std::string::npos);
  auto p = make_http_provider(c);
  CHECK(p->describe().find("hunter2") == std::string::npos);
}

TEST_CASE("config: think_tags and stream are read and checked") {
  json j = {{"kind", "openai"}, {"model", "m"}, {"base_url", "http://h/v1"}};
  provider_config d = parse_provider_config(j);
  CHECK(d.think_tags == std::vector<std::string>{"think"});
  CHECK_FALSE(d.stream);
  j["think_tags"] = {"reasoning", "thought"};
  j["stream"] = true;
  provider_config c = parse_provider_config(j);
  CHECK(c.think_tags == std::vector<std::string>{"reasoning", "thought"});
  CHECK(c.stream);
  CHECK(parse_provider_config(provider_config_to_json(c)).think_tags == c.think_tags);
  j["think_tags"] = {"a>b"};
  CHECK_THROWS_WITH_AS(parse_provider_config(j), doctest::Contains("$.llm.think_tags"), input_error);
  j["think_tags"] = "think";
  CHECK_THROWS_WITH_AS(parse_provider_config(j), doctest::Contains("$.llm.think_tags"), input_error);
  j.erase("think_tags");
  j["stream"] = "yes";
  CHECK_THROWS_WITH_AS(parse_provider_config(j), doctest::Contains("$.llm.stream"), input_error);
}

// `"base_url": "file:///etc/passwd"` made libcurl read a local file as the
// model's reply; gopher://, dict://, smtp:// and the rest are no LLM either.
TEST_CASE("config: base_url takes http and https only - the provider refuses any other scheme") {
  json j = {{"kind", "openai"}, {"model", "m"}};
  for (const char* url : {"file:///etc/passwd", "gopher://h/", "dict://h:11211/", "ftp://h/v1", "h:8000/v1", "",
                          "//h/v1", "FILE:///etc/hostname"}) {
    CAPTURE(url);
    j["base_url"] = url;
    CHECK_THROWS_WITH_AS(parse_provider_config(j), doctest::Contains("$.llm.base_url"), input_error);
  }
  for (const char* url : {"http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "HTTPS://h/v1"}) {
    CAPTURE(url);
    j["base_url"] = url;
    CHECK(parse_provider_config(j).base_url == url);
  }
  provider_config c;
  c.model = "m";
  c.base_url = "file:///etc/hostname";
  CHECK_THROWS_WITH_AS(make_http_provider(c), doctest::Contains("base_url"), input_error);
}
