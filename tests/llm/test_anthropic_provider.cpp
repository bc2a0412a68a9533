// The Anthropic messages provider: system prompt placement, headers, content
// blocks, usage, and its overload status being retried.
#include <doctest/doctest.h>

#include <cstdlib>

#include "llm_test_support.hpp"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {
nlohmann::json anthropic_body() {
  return {{"id", "msg_1"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", "claude-test"},
          {"content",
           {{{"type", "thinking"}, {"thinking", "Use wgmma."}, {"signature", "sig"}},
            {{"type", "redacted_thinking"}, {"data", "opaque"}},
            {{"type", "text"}, {"text", "```ptx\n"}},
            {{"type", "text"}, {"text", ".version 8.5\n```"}}}},
          {"stop_reason", "end_turn"},
          {"usage", {{"input_tokens", 300}, {"output_tokens", 77}}}};
}
}  // namespace

TEST_CASE("anthropic: request carries the system field - headers and extra fields") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, anthropic_body());
  });
  ::setenv("PTXBENCH_TEST_ANTHROPIC_KEY", "sk-ant-test", 1);
  auto c = fast_config(server, provider_kind::anthropic);
  c.api_key_env = "PTXBENCH_TEST_ANTHROPIC_KEY";
  c.temperature = 1.0;
  c.seed = 7;  // Anthropic has no seed; it must not be sent
  c.max_tokens = 4096;
  c.extra = {{"thinking", {{"type", "enabled"}, {"budget_tokens", 2048}}}};
  auto out = make_http_provider(c)->complete(gemm_request());
  ::unsetenv("PTXBENCH_TEST_ANTHROPIC_KEY");
  REQUIRE(out.ok);

  auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/v1/messages");
  CHECK(reqs[0].headers.find("x-api-key")->second == "sk-ant-test");
  CHECK(reqs[0].headers.find("anthropic-version")->second == "2023-06-01");
  CHECK(reqs[0].headers.count("Authorization") == 0);
  const auto& body = reqs[0].body;
  CHECK(body["system"] == "You write PTX for sm_90a.");
  REQUIRE(body["messages"].size() == 1);
  CHECK(body["messages"][0]["role"] == "user");
  CHECK(body["max_tokens"] == 4096);
  CHECK(body["temperature"] == 1.0);
  CHECK_FALSE(body.contains("seed"));
  CHECK(body["thinking"]["budget_tokens"] == 2048);
}

TEST_CASE("anthropic: text blocks form the text - thinking blocks the reasoning") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, anthropic_body());
  });
  auto out = make_http_provider(fast_config(server, provider_kind::anthropic))->complete(gemm_request());
  REQUIRE(out.ok);
  CHECK(out.result.text == "```ptx\n.version 8.5\n```");
  CHECK(out.result.reasoning == "Use wgmma.");
  CHECK(out.result.finish_reason == "end_turn");
  CHECK(out.result.model == "claude-test");
  CHECK(out.result.prompt_tokens == 300);
  CHECK(out.result.completion_tokens == 77);
}

TEST_CASE("anthropic: a base URL ending in /v1 is not doubled") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, anthropic_body());
  });
  auto c = fast_config(server, provider_kind::anthropic);
  c.base_url = server.origin() + "/v1/";
  REQUIRE(make_http_provider(c)->complete(gemm_request()).ok);
  CHECK(server.requests().at(0).path == "/v1/messages");
}

TEST_CASE("anthropic: 529 overloaded is retried - its message recorded") {
  fake_llm_server server([](int index, const httplib::Request&, httplib::Response& res) {
    if (index == 0)
      return reply_json(
          res, {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}},
          529);
    reply_json(res, anthropic_body());
  });
  auto out = make_http_provider(fast_config(server, provider_kind::anthropic))->complete(gemm_request());
  REQUIRE(out.ok);
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].cause == "HTTP 529: Overloaded");
}
