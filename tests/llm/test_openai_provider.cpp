// The OpenAI-compatible provider against a real local server: request shape,
// reply parsing, API key handling.
#include <doctest/doctest.h>

#include <cstdlib>
#include <thread>

#include "evaluator/common/json_path.hpp"
#include "llm_test_support.hpp"

using namespace ptxbench;
using namespace ptxbench::test;

TEST_CASE("openai: a reply's text - reasoning_content - usage and model are kept") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("```ptx\n.version 8.5\n```", "reasoning_content", "Tile 128x128."));
  });
  auto p = make_http_provider(fast_config(server));
  auto out = p->complete(gemm_request());
  REQUIRE(out.ok);
  CHECK(out.failures.empty());
  CHECK(out.result.text == "```ptx\n.version 8.5\n```");
  CHECK(out.result.reasoning == "Tile 128x128.");
  CHECK(out.result.finish_reason == "stop");
  CHECK(out.result.model == "served-model");
  CHECK(out.result.prompt_tokens == 120);
  CHECK(out.result.completion_tokens == 45);
  CHECK(out.result.reasoning_tokens == 30);
  CHECK(out.result.latency_ms > 0.0);
}

TEST_CASE("openai: reasoning in message.reasoning (newer vLLM - Ollama) is kept") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("answer", "reasoning", "thought"));
  });
  auto out = make_http_provider(fast_config(server))->complete(gemm_request());
  REQUIRE(out.ok);
  CHECK(out.result.reasoning == "thought");
}

TEST_CASE("openai: sampling settings and extra fields reach the server") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("ok"));
  });
  auto c = fast_config(server);
  c.temperature = 0.6;
  c.top_p = 0.95;
  c.seed = 1234;
  c.max_tokens = 2048;
  c.extra = {{"chat_template_kwargs", {{"enable_thinking", true}}}, {"top_k", 20}};
  REQUIRE(make_http_provider(c)->complete(gemm_request()).ok);

  auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/v1/chat/completions");
  const auto& body = reqs[0].body;
  CHECK(body["model"] == "test-model");
  CHECK(body["temperature"] == 0.6);
  CHECK(body["top_p"] == 0.95);
  CHECK(body["seed"] == 1234);
  CHECK(body["max_tokens"] == 2048);
  CHECK(body["top_k"] == 20);
  CHECK(body["chat_template_kwargs"]["enable_thinking"] == true);
  REQUIRE(body["messages"].size() == 2);
  CHECK(body["messages"][0]["role"] == "system");
  CHECK(body["messages"][1]["content"] == "Write a bf16 GEMM.");
}

TEST_CASE("openai: unset sampling settings are left out and extra null removes a field") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("ok"));
  });
  auto c = fast_config(server);
  c.extra = {{"max_tokens", nullptr}, {"max_completion_tokens", 512}};
  REQUIRE(make_http_provider(c)->complete(gemm_request()).ok);
  const auto body = server.requests().at(0).body;
  CHECK_FALSE(body.contains("temperature"));
  CHECK_FALSE(body.contains("top_p"));
  CHECK_FALSE(body.contains("seed"));
  CHECK_FALSE(body.contains("max_tokens"));
  CHECK(body["max_completion_tokens"] == 512);
}

TEST_CASE("openai: the API key comes from the named environment variable") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("ok"));
  });
  auto c = fast_config(server);

  SUBCASE("named variable set: Bearer header") {
    ::setenv("PTXBENCH_TEST_LLM_KEY", "sk-test-123", 1);
    c.api_key_env = "PTXBENCH_TEST_LLM_KEY";
    REQUIRE(make_http_provider(c)->complete(gemm_request()).ok);
    auto headers = server.requests().at(0).headers;
    REQUIRE(headers.count("Authorization") == 1);
    CHECK(headers.find("Authorization")->second == "Bearer sk-test-123");
    ::unsetenv("PTXBENCH_TEST_LLM_KEY");
  }
  SUBCASE("no variable named: no Authorization header") {
    REQUIRE(make_http_provider(c)->complete(gemm_request()).ok);
    CHECK(server.requests().at(0).headers.count("Authorization") == 0);
  }
  SUBCASE("named variable missing: a clear error naming it") {
    ::unsetenv("PTXBENCH_TEST_LLM_MISSING");
    c.api_key_env = "PTXBENCH_TEST_LLM_MISSING";
    CHECK_THROWS_WITH_AS(make_http_provider(c), doctest::Contains("PTXBENCH_TEST_LLM_MISSING"),
                         input_error);
  }
}

TEST_CASE("openai: describe names kind - url and model") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("ok"));
  });
  auto p = make_http_provider(fast_config(server));
  CHECK(p->describe() == "openai " + server.base_url() + " model=test-model");
}

TEST_CASE("openai: many threads share one provider") {
  fake_llm_server server([](int, const httplib::Request& req, httplib::Response& res) {
    auto body = nlohmann::json::parse(req.body);
    reply_json(res, openai_body(body["messages"][1]["content"].get<std::string>()));
  });
  auto p = make_http_provider(fast_config(server));
  constexpr int n = 8;
  std::vector<completion_outcome> outs(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      completion_request r = gemm_request();
      r.messages[1].content = "request " + std::to_string(i);
      outs[i] = p->complete(r);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    REQUIRE(outs[i].ok);
    CHECK(outs[i].result.text == "request " + std::to_string(i));
  }
}
