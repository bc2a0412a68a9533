// Hostile reply bodies: token counts out of int's range and deep nesting are
// read as bounded values or a clear cause, never undefined behaviour.
#include <doctest/doctest.h>

#include <climits>

#include "agent/llm/wire_format.hpp"

using namespace ptxbench::llm_detail;

TEST_CASE("token counts past int are clamped - negative and fractional ones read sanely") {
  // static_cast<int> of 1e300 is undefined; get<int> of 2^40 wrapped.
  auto r = openai_parse_reply(R"({"choices": [{"message": {"content": "x"}}],
    "usage": {"prompt_tokens": 1e300, "completion_tokens": 1099511627776,
              "completion_tokens_details": {"reasoning_tokens": -5}}})");
  REQUIRE(r.ok);
  CHECK(r.result.prompt_tokens == INT_MAX);
  CHECK(r.result.completion_tokens == INT_MAX);
  CHECK(r.result.reasoning_tokens == 0);
  r = anthropic_parse_reply(R"({"content": [], "usage": {"input_tokens": 18446744073709551615, "output_tokens": 12.9}})");
  REQUIRE(r.ok);
  CHECK(r.result.prompt_tokens == INT_MAX);
  CHECK(r.result.completion_tokens == 12);
}

TEST_CASE("a reply nested deeper than the bound is a malformed reply with its cause") {
  const std::string deep = "{\"choices\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto r = openai_parse_reply(deep);
  CHECK_FALSE(r.ok);
  CHECK(r.cause == "JSON nested deeper than 64 levels");
  CHECK_FALSE(anthropic_parse_reply(deep).ok);
  CHECK(error_message_of(deep).size() < 400);
}

TEST_CASE("a reply with a number past double is a malformed reply - not an exception") {
  auto r = openai_parse_reply(R"({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 1e400}})");
  CHECK_FALSE(r.ok);
  CHECK(r.cause.find("malformed JSON") == 0);
  CHECK_FALSE(anthropic_parse_reply("{\"content\": [], \"x\": " + std::string(2000, '9') + "}").ok);
}
