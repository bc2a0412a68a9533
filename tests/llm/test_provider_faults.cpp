// Injected faults against a real local server: what is retried, how long the
// provider waits, and that every failed attempt is recorded with its cause.
#include <doctest/doctest.h>

#include <thread>

#include "llm_test_support.hpp"

using namespace ptxbench;
using namespace ptxbench::test;
using clock_type = std::chrono::steady_clock;

namespace {
// Fails the first request with `fault`, answers normally afterwards.
reply_script fail_once(std::function<void(httplib::Response&)> fault) {
  return [fault](int index, const httplib::Request&, httplib::Response& res) {
    if (index == 0) return fault(res);
    reply_json(res, openai_body("recovered"));
  };
}

void check_recovered(const completion_outcome& out, int http_status, const std::string& cause) {
  REQUIRE(out.ok);
  CHECK(out.result.text == "recovered");
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].attempt == 1);
  CHECK(out.failures[0].http_status == http_status);
  CHECK_MESSAGE(out.failures[0].cause.find(cause) != std::string::npos, out.failures[0].cause);
}
}  // namespace

TEST_CASE("faults: 429 with Retry-After is retried after the announced wait") {
  fake_llm_server server(fail_once([](httplib::Response& res) {
    res.set_header("Retry-After", "1");
    reply_json(res, {{"error", {{"message", "Rate limit reached"}}}}, 429);
  }));
  auto start = clock_type::now();
  auto c = fast_config(server);
  c.backoff_max_s = 5;
  auto out = make_http_provider(c)->complete(gemm_request());
  CHECK(seconds_since(start) >= 1.0);
  check_recovered(out, 429, "HTTP 429 (Retry-After 1 s): Rate limit reached");
}

TEST_CASE("faults: a Retry-After longer than backoff_max_s is capped") {
  fake_llm_server server(fail_once([](httplib::Response& res) {
    res.set_header("Retry-After", "30");
    reply_json(res, {{"error", "slow down"}}, 429);
  }));
  auto start = clock_type::now();
  auto out = make_http_provider(fast_config(server))->complete(gemm_request());
  CHECK(seconds_since(start) < 5.0);
  check_recovered(out, 429, "Retry-After 30 s");
}

TEST_CASE("faults: 500 then success") {
  fake_llm_server server(fail_once([](httplib::Response& res) {
    reply_json(res, {{"error", {{"message", "CUDA out of memory"}}}}, 500);
  }));
  check_recovered(make_http_provider(fast_config(server))->complete(gemm_request()), 500,
                  "HTTP 500: CUDA out of memory");
}

TEST_CASE("faults: a server slower than the timeout is abandoned and retried") {
  fake_llm_server server([](int index, const httplib::Request&, httplib::Response& res) {
    if (index == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the slow server under test
    reply_json(res, openai_body("recovered"));
  });
  auto c = fast_config(server);
  c.timeout_s = 0.3;
  auto start = clock_type::now();
  auto out = make_http_provider(c)->complete(gemm_request());
  CHECK(seconds_since(start) < 1.0);
  check_recovered(out, 0, "timeout after 0.3 s");
  CHECK(out.failures[0].elapsed_ms >= 290.0);
}

TEST_CASE("faults: malformed JSON is retried with the byte offset in the cause") {
  fake_llm_server server(fail_once([](httplib::Response& res) {
    res.set_content(R"({"choices": [oops]})", "application/json");
  }));
  check_recovered(make_http_provider(fast_config(server))->complete(gemm_request()), 200,
                  "malformed JSON at byte 14");
}

TEST_CASE("faults: a body cut short by a closed connection is retried") {
  fake_llm_server server(fail_once(reply_truncated));
  check_recovered(make_http_provider(fast_config(server))->complete(gemm_request()), 200,
                  "truncated body");
}

TEST_CASE("faults: a complete response whose JSON stops mid-way is a truncated body") {
  fake_llm_server server(fail_once([](httplib::Response& res) {
    res.set_content(R"({"choices": [{"message": {"content": "half)", "application/json");
  }));
  check_recovered(make_http_provider(fast_config(server))->complete(gemm_request()), 200,
                  "truncated body: malformed JSON at byte");
}

TEST_CASE("faults: a reply with no choices is retried") {
  fake_llm_server server(fail_once([](httplib::Response& res) {
    reply_json(res, {{"id", "x"}, {"choices", nlohmann::json::array()}});
  }));
  check_recovered(make_http_provider(fast_config(server))->complete(gemm_request()), 200,
                  "response has no choices");
}

TEST_CASE("faults: 400 is not retried and gives the server's message") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, {{"error", {{"message", "max_tokens is too large: 999999"}}}}, 400);
  });
  auto out = make_http_provider(fast_config(server))->complete(gemm_request());
  CHECK_FALSE(out.ok);
  CHECK(server.request_count() == 1);
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].http_status == 400);
  CHECK(out.error == "HTTP 400: max_tokens is too large: 999999");
}

TEST_CASE("faults: when retries run out every attempt is recorded") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, {{"error", {{"message", "overloaded"}}}}, 503);
  });
  auto c = fast_config(server);
  c.max_retries = 2;
  auto out = make_http_provider(c)->complete(gemm_request());
  CHECK_FALSE(out.ok);
  CHECK(server.request_count() == 3);
  REQUIRE(out.failures.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(out.failures[i].attempt == i + 1);
    CHECK(out.failures[i].http_status == 503);
    CHECK(out.failures[i].cause == "HTTP 503: overloaded");
  }
  CHECK(out.error == "gave up after 3 attempts; last: HTTP 503: overloaded");
}

TEST_CASE("faults: a refused connection is recorded as a connection error") {
  int closed_port = 0;
  {
    fake_llm_server gone([](int, const httplib::Request&, httplib::Response&) {});
    closed_port = gone.port();
  }
  provider_config c;
  c.base_url = "http://127.0.0.1:" + std::to_string(closed_port) + "/v1";
  c.model = "m";
  c.max_retries = 1;
  c.backoff_initial_s = 0.01;
  auto out = make_http_provider(c)->complete(gemm_request());
  CHECK_FALSE(out.ok);
  REQUIRE(out.failures.size() == 2);
  CHECK(out.failures[0].http_status == 0);
  CHECK(out.failures[0].cause.rfind("connection error", 0) == 0);
}
