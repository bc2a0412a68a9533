// Hostile reply bodies: token counts out of int's range and deep nesting are
// read as bounded values or a clear cause, never undefined behaviour.
#include <doctest/doctest.h>

#include <climits>

#include "agent/llm/wire_format.hpp"
#include "evaluator/common/utf8.hpp"

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

namespace {
const std::string k_million_deep = std::string(1000000, '[') + std::string(1000000, ']');

std::string sse_data(const std::string& json) { return "data: " + json + "\n\n"; }

std::string openai_chunk(const std::string& delta, const std::string& finish = "") {
  nlohmann::json choice = {{"index", 0}, {"delta", nlohmann::json::parse(delta)}};
  if (!finish.empty()) choice["finish_reason"] = finish;
  return sse_data(nlohmann::json{{"choices", {choice}}}.dump());
}
}  // namespace

// A streamed error event whose `error` nests a million levels overflowed the
// stack (unbounded parse, then a recursive dump) and ended `run` and every resume.
TEST_CASE("a streamed error nested 1000000 levels deep is a failed attempt with its cause - both formats") {
  const auto openai = openai_parse_stream(sse_data("{\"error\": " + k_million_deep + "}"));
  CHECK_FALSE(openai.ok);
  CHECK(openai.cause.find("nested deeper than 64 levels") != std::string::npos);
  const auto anthropic =
      anthropic_parse_stream("event: error\ndata: {\"type\": \"error\", \"error\": " + k_million_deep + "}\n\n");
  CHECK_FALSE(anthropic.ok);
  CHECK(anthropic.cause.find("nested deeper than 64 levels") != std::string::npos);
  // A long error value is quoted in part, not whole.
  const auto wide = openai_parse_stream(sse_data("{\"error\": [\"" + std::string(100000, 'e') + "\"]}"));
  CHECK_FALSE(wide.ok);
  CHECK(wide.cause.size() < 1000);
}

TEST_CASE("every reader of a server's bytes refuses 1000000 levels of nesting with a cause") {
  for (const std::string& body : {k_million_deep, "{\"choices\": " + k_million_deep + "}",
                                  "{\"error\": " + k_million_deep + "}"}) {
    CHECK_FALSE(openai_parse_reply(body).ok);
    CHECK_FALSE(anthropic_parse_reply(body).ok);
    CHECK(error_message_of(body).size() < 400);
    CHECK_FALSE(openai_parse_stream(sse_data(body)).ok);
    CHECK_FALSE(anthropic_parse_stream(sse_data(body)).ok);
  }
}

// A stream cut short by a proxy that still wrote its own [DONE] was taken for
// a complete reply, and the half reply judged as the model's answer.
TEST_CASE("openai stream: [DONE] without a finish reason is a cut stream - retried") {
  const std::string cut = openai_chunk(R"({"role": "assistant"})") + openai_chunk(R"({"content": "```ptx\n.ver"})") +
                          "data: [DONE]\n\n";
  const auto r = openai_parse_stream(cut);
  CHECK_FALSE(r.ok);
  CHECK(r.cause.find("truncated body") == 0);
  CHECK(r.cause.find("finish reason") != std::string::npos);
  const std::string whole = openai_chunk(R"({"content": "x"})", "stop") + "data: [DONE]\n\n";
  CHECK(openai_parse_stream(whole).ok);
}

// `"content": 12345` and events without `choices` became an empty reply that
// was judged (and fed back) as the model's answer.
TEST_CASE("a reply whose text is not text is a malformed reply - plain and streamed") {
  auto plain = openai_parse_reply(R"({"choices": [{"message": {"content": 12345}, "finish_reason": "stop"}]})");
  CHECK_FALSE(plain.ok);
  CHECK(plain.cause.find("$.choices[0].message.content") != std::string::npos);
  CHECK_FALSE(openai_parse_reply(R"({"choices": [{"message": {"content": [{"type": "text", "text": 5}]}}]})").ok);
  CHECK_FALSE(openai_parse_reply(R"({"choices": [{"message": {"content": [7]}}]})").ok);
  // null content (a reply of reasoning only) and text parts stay readable.
  CHECK(openai_parse_reply(R"({"choices": [{"message": {"content": null, "reasoning_content": "r"}}]})").ok);
  auto parts = openai_parse_reply(R"({"choices": [{"message": {"content": [{"type": "text", "text": "a"}]}}]})");
  REQUIRE(parts.ok);
  CHECK(parts.result.text == "a");

  CHECK_FALSE(openai_parse_stream(openai_chunk(R"({"content": 12345})", "stop")).ok);
  const std::string no_choices =
      sse_data(R"({"id": "x", "object": "chat.completion.chunk"})") + sse_data(R"({"finish_reason": "stop"})") +
      "data: [DONE]\n\n";
  auto r = openai_parse_stream(no_choices);
  CHECK_FALSE(r.ok);
  CHECK(r.cause.find("choices") != std::string::npos);

  CHECK_FALSE(anthropic_parse_reply(R"({"content": [{"type": "text", "text": 12345}], "stop_reason": "end_turn"})").ok);
  const std::string anthropic_bad_delta =
      "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": "
      "{\"type\": \"text_delta\", \"text\": 12345}}\n\nevent: message_stop\ndata: {\"type\": \"message_stop\"}\n\n";
  CHECK_FALSE(anthropic_parse_stream(anthropic_bad_delta).ok);
}

// A proxy's error page in Latin-1, or a body cut at 300 bytes inside a
// character, reached the stored cause as bytes no UTF-8 reader accepts.
TEST_CASE("a server's invalid UTF-8 reaches a cause as replacement characters - cut between characters") {
  const auto valid = [](const std::string& s) { return s == ptxbench::utf8_repaired(s); };
  const std::string latin1 = "<html>Service indisponible \xe0 cette heure</html>";
  CHECK(valid(error_message_of(latin1)));
  CHECK(error_message_of(latin1).find("indisponible \xEF\xBF\xBD cette") != std::string::npos);
  const std::string long_text = std::string(299, 'a') + "\xc3\xa9\xc3\xa9 and more";
  CHECK(valid(error_message_of(long_text)));
  CHECK(valid(error_message_of("{\"error\": \"x\xff\"}")));  // not JSON: quoted as text
  CHECK(valid(openai_parse_reply("{\"choices\": \xff}").cause));
  CHECK(valid(anthropic_parse_reply("\xc3").cause));
}
