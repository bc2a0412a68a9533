// Streamed replies (server-sent events) in both wire formats over a real
// loopback server, the SSE parser's bounds, inline <think> reasoning, and
// cancellation of a call in flight.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "agent/llm/sse.hpp"
#include "agent/llm/wire_format.hpp"
#include "evaluator/common/json_path.hpp"
#include "llm_test_support.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
using namespace ptxbench::test;
using ptxbench::llm_detail::sse_event;

namespace {

// Serves `chunks` as a text/event-stream, one write each, `gap_ms` apart.
void reply_stream(httplib::Response& res, std::vector<std::string> chunks, int gap_ms = 5) {
  auto shared = std::make_shared<std::vector<std::string>>(std::move(chunks));
  res.set_chunked_content_provider("text/event-stream", [shared, gap_ms](size_t, httplib::DataSink& sink) {
    for (const auto& c : *shared) {
      std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));  // a stream arriving in pieces is the input
      if (!sink.write(c.data(), c.size())) return false;
    }
    sink.done();
    return true;
  });
}

std::string data(const nlohmann::json& j) { return "data: " + j.dump() + "\n\n"; }

std::vector<std::string> openai_events(const std::string& finish = "stop", bool done = true) {
  std::vector<std::string> e = {
      ": keep-alive\n\n",
      data({{"model", "served-model"}, {"choices", {{{"index", 0}, {"delta", {{"role", "assistant"}}}}}}}),
      data({{"choices", {{{"index", 0}, {"delta", {{"reasoning_content", "Tile "}}}}}}}),
      data({{"choices", {{{"index", 0}, {"delta", {{"reasoning_content", "128x128."}}}}}}}),
      data({{"choices", {{{"index", 0}, {"delta", {{"content", "```ptx\n.version"}}}}}}}),
      data({{"choices", {{{"index", 0}, {"delta", {{"content", " 8.5\n```"}}}, {"finish_reason", finish}}}}}),
      data({{"choices", nlohmann::json::array()},
            {"usage", {{"prompt_tokens", 120}, {"completion_tokens", 45},
                       {"completion_tokens_details", {{"reasoning_tokens", 30}}}}}})};
  if (done) e.push_back("data: [DONE]\n\n");
  return e;
}

std::string event(const std::string& type, const nlohmann::json& j) {
  return "event: " + type + "\r\ndata: " + j.dump() + "\r\n\r\n";
}

std::vector<std::string> anthropic_events(const std::string& stop = "end_turn") {
  return {
      event("message_start", {{"type", "message_start"},
                              {"message", {{"model", "claude-test"}, {"usage", {{"input_tokens", 120}, {"output_tokens", 1}}}}}}),
      event("content_block_start", {{"type", "content_block_start"}, {"index", 0},
                                    {"content_block", {{"type", "thinking"}, {"thinking", ""}}}}),
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 0},
                                    {"delta", {{"type", "thinking_delta"}, {"thinking", "Tile 128x128."}}}}),
      event("ping", {{"type", "ping"}}),
      event("content_block_start", {{"type", "content_block_start"}, {"index", 1},
                                    {"content_block", {{"type", "text"}, {"text", ""}}}}),
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 1},
                                    {"delta", {{"type", "text_delta"}, {"text", "```ptx\n.version"}}}}),
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 1},
                                    {"delta", {{"type", "text_delta"}, {"text", " 8.5\n```"}}}}),
      event("message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", stop}}}, {"usage", {{"output_tokens", 45}}}}),
      event("message_stop", {{"type", "message_stop"}})};
}

}  // namespace

TEST_CASE("sse: lines in CRLF - LF or CR - split anywhere - comments and multi-line data") {
  const std::string stream = ": hi\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: x\rdata: y\r\rdata: last\n\ndata: tail";
  for (size_t split = 0; split <= stream.size(); ++split) {
    llm_detail::sse_parser p;
    std::vector<sse_event> out;
    REQUIRE(p.feed(std::string_view(stream).substr(0, split), out));
    REQUIRE(p.feed(std::string_view(stream).substr(split), out));
    REQUIRE(p.finish(out));
    REQUIRE(out.size() == 4);
    CHECK(out[0].type == "a");
    CHECK(out[0].data == "one\ntwo");
    CHECK(out[1].data == "x\ny");
    CHECK(out[2].data == "last");
    CHECK(out[3].data == "tail");
  }
}

TEST_CASE("sse: a line - an event or too many events past the limits is an error - not growth") {
  llm_detail::sse_limits limits{16, 32, 2};
  std::vector<sse_event> out;
  std::string error;
  CHECK_FALSE(llm_detail::parse_sse("data: " + std::string(20, 'x') + "\n\n", out, error, limits));
  CHECK(error.find("line longer than 16") != std::string::npos);
  CHECK_FALSE(llm_detail::parse_sse("data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n", out, error, limits));
  CHECK(error.find("event larger than 32") != std::string::npos);
  CHECK_FALSE(llm_detail::parse_sse("data: a\n\ndata: b\n\ndata: c\n\n", out, error, limits));
  CHECK(error.find("more than 2 events") != std::string::npos);
  llm_detail::sse_parser p(limits);
  CHECK_FALSE(p.feed(std::string(17, 'y'), out));  // no line end yet: still bounded
}

TEST_CASE("openai stream: recorded like the same reply sent plainly") {
  fake_llm_server server([](int i, const httplib::Request&, httplib::Response& res) {
    if (i == 0) reply_stream(res, openai_events());
    else reply_json(res, openai_body("```ptx\n.version 8.5\n```", "reasoning_content", "Tile 128x128."));
  });
  auto c = fast_config(server);
  c.stream = true;
  auto streamed = make_http_provider(c)->complete(gemm_request());
  c.stream = false;
  auto plain = make_http_provider(c)->complete(gemm_request());
  REQUIRE(streamed.ok);
  REQUIRE(plain.ok);
  CHECK(streamed.failures.empty());
  CHECK(streamed.result.text == plain.result.text);
  CHECK(streamed.result.reasoning == plain.result.reasoning);
  CHECK(streamed.result.finish_reason == plain.result.finish_reason);
  CHECK(streamed.result.model == plain.result.model);
  CHECK(streamed.result.prompt_tokens == plain.result.prompt_tokens);
  CHECK(streamed.result.completion_tokens == plain.result.completion_tokens);
  CHECK(streamed.result.reasoning_tokens == plain.result.reasoning_tokens);
  const auto sent = server.requests()[0].body;
  CHECK(sent["stream"] == true);
  CHECK(sent["stream_options"]["include_usage"] == true);
  CHECK_FALSE(server.requests()[1].body.contains("stream"));
}

TEST_CASE("openai stream: \"stream\": true in extra is honoured - a cut stream is retried") {
  fake_llm_server server([](int i, const httplib::Request&, httplib::Response& res) {
    auto events = openai_events("length", i > 0);
    if (i == 0) events.resize(4);  // ends mid-reply, before any finish reason
    reply_stream(res, events);
  });
  auto c = fast_config(server);
  c.extra = {{"stream", true}};
  auto out = make_http_provider(c)->complete(gemm_request());
  REQUIRE(out.ok);
  REQUIRE(out.failures.size() == 1);
  CHECK(out.failures[0].cause.find("truncated body: event stream ended") != std::string::npos);
  CHECK(out.result.finish_reason == "length");
  CHECK(out.result.text == "```ptx\n.version 8.5\n```");
}

TEST_CASE("openai stream: a reply longer than timeout_s lives while bytes keep coming") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_stream(res, openai_events(), 400);  // 8 writes, 3.2 s in all
  });
  auto c = fast_config(server);
  c.stream = true;
  c.timeout_s = 1.5;
  c.max_retries = 0;
  auto start = std::chrono::steady_clock::now();
  auto out = make_http_provider(c)->complete(gemm_request());
  CHECK(out.ok);
  CHECK(seconds_since(start) > 2.5);
}

TEST_CASE("anthropic stream: recorded like the same reply sent plainly") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_stream(res, anthropic_events("max_tokens"));
  });
  auto c = fast_config(server, provider_kind::anthropic);
  c.stream = true;
  auto out = make_http_provider(c)->complete(gemm_request());
  REQUIRE(out.ok);
  CHECK(out.result.text == "```ptx\n.version 8.5\n```");
  CHECK(out.result.reasoning == "Tile 128x128.");
  CHECK(out.result.finish_reason == "max_tokens");
  CHECK(out.result.model == "claude-test");
  CHECK(out.result.prompt_tokens == 120);
  CHECK(out.result.completion_tokens == 45);
  CHECK(server.requests()[0].body["stream"] == true);
}

TEST_CASE("anthropic stream: an error event or a stream without message_stop is a failure with its cause") {
  auto cut = anthropic_events();
  cut.pop_back();
  CHECK(llm_detail::anthropic_parse_stream(cut[0] + cut[1]).cause.find("before message_stop") != std::string::npos);
  auto err = llm_detail::anthropic_parse_stream(
      event("error", {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}}));
  CHECK_FALSE(err.ok);
  CHECK(err.cause == "stream error: Overloaded");
  CHECK_FALSE(llm_detail::openai_parse_stream("data: {not json\n\n").ok);
  CHECK_FALSE(llm_detail::openai_parse_stream("data: [1]\n\n").ok);
}

TEST_CASE("think tags: inline reasoning moves out of the content") {
  auto split = [](std::string text, std::vector<std::string> tags = {"think"}) {
    completion c;
    c.text = std::move(text);
    llm_detail::split_inline_reasoning(c, tags);
    return std::pair{c.text, c.reasoning};
  };
  CHECK(split("<think>plan\n</think>\n\nanswer") == std::pair<std::string, std::string>{"answer", "plan\n"});
  CHECK(split("plan</think>answer") == std::pair<std::string, std::string>{"answer", "plan"});
  CHECK(split("<think>cut off while thin") == std::pair<std::string, std::string>{"", "cut off while thin"});
  CHECK(split("a<think>1</think>b<think>2</think>c") == std::pair<std::string, std::string>{"abc", "1\n\n2"});
  CHECK(split("<think>x</think>answer", {}) == std::pair<std::string, std::string>{"<think>x</think>answer", ""});
  CHECK(split("<reasoning>x</reasoning>y", {"reasoning"}) == std::pair<std::string, std::string>{"y", "x"});
  CHECK(split("no tags at all") == std::pair<std::string, std::string>{"no tags at all", ""});
}

TEST_CASE("think tags: a provider splits them by default - after the server's own reasoning field") {
  fake_llm_server server([](int, const httplib::Request&, httplib::Response& res) {
    reply_json(res, openai_body("<think>Tile 128x128.</think>\n```ptx\n.version 8.5\n```"));
  });
  auto out = make_http_provider(fast_config(server))->complete(gemm_request());
  REQUIRE(out.ok);
  CHECK(out.result.text == "```ptx\n.version 8.5\n```");
  CHECK(out.result.reasoning == "Tile 128x128.");
}

TEST_CASE("cancellation: an HTTP call in flight ends within 2 s - not retried - not a failure") {
  std::atomic<bool> release{false};
  fake_llm_server server([&](int, const httplib::Request&, httplib::Response& res) {
    test::wait_until([&] { return release.load(); }, std::chrono::seconds(30), std::chrono::milliseconds(10));
    reply_json(res, openai_body("late"));
  });
  auto c = fast_config(server);
  c.timeout_s = 60;
  auto p = make_http_provider(c);
  std::thread canceller([&] {
    // Cancel once the call is in flight: the server holds its request.
    test::wait_until([&] { return server.request_count() == 1; });
    cancel_llm_calls();
  });
  auto start = std::chrono::steady_clock::now();
  auto out = p->complete(gemm_request());
  const double s = seconds_since(start);
  canceller.join();
  CHECK(llm_calls_cancelled());
  auto again = p->complete(gemm_request());  // refused at once while cancelled
  reset_llm_cancellation();
  release = true;
  CHECK_FALSE(out.ok);
  CHECK(out.cancelled);
  CHECK(out.failures.empty());
  CHECK(s < 2.0);
  CHECK(again.cancelled);
  CHECK(server.request_count() == 1);
}

// Keep-alive comments (or endless content) every few hundred ms kept the idle
// timeout from firing: one attempt could last as long as the server liked.
TEST_CASE("a stream that never ends is cut at stream_deadline_s - a failed attempt - retried") {
  std::atomic<bool> done{false};
  fake_llm_server server([&](int i, const httplib::Request&, httplib::Response& res) {
    if (i > 0) return reply_stream(res, openai_events());
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      const std::string first = data({{"choices", {{{"index", 0}, {"delta", {{"content", "```ptx"}}}}}}});
      if (!sink.write(first.data(), first.size())) return false;
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!sink.write(": keep-alive\n\n", 14)) return false;  // the client gave up
      }
      return false;
    });
  });
  nlohmann::json j = {{"kind", "openai"}, {"model", "m"}, {"base_url", server.base_url()}, {"stream", true},
                      {"timeout_s", 1}, {"stream_deadline_s", 1.5}, {"max_retries", 1},
                      {"backoff_initial_s", 0.01}, {"backoff_max_s", 0.01}};
  provider_config c = parse_provider_config(j);
  const auto start = std::chrono::steady_clock::now();
  auto out = make_http_provider(c)->complete(gemm_request());
  const double s = seconds_since(start);
  done = true;
  REQUIRE(out.ok);
  REQUIRE(out.failures.size() == 1);
  CHECK_MESSAGE(out.failures[0].cause.find("stream_deadline_s") != std::string::npos, out.failures[0].cause);
  CHECK(out.failures[0].elapsed_ms >= 1400);
  CHECK(s < 5);
  CHECK(out.result.text == "```ptx\n.version 8.5\n```");
  // The default bounds an attempt too; it is stored with the config.
  CHECK(provider_config_to_json(parse_provider_config({{"kind", "openai"}, {"model", "m"}})).at("stream_deadline_s") ==
        3600);
  CHECK(provider_config_to_json(c).at("stream_deadline_s") == 1.5);
  CHECK_THROWS_AS(parse_provider_config({{"kind", "openai"}, {"model", "m"}, {"stream_deadline_s", 0}}), input_error);
}
