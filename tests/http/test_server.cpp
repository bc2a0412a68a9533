// The server wrapper's contract: framing checked before a body is read, a
// handler's exception as a 500, the request id echoed, an exclusive bind, a
// stop at any moment, and the header text helpers.
#include <doctest/doctest.h>
#include <httplib.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include "evaluator/common/json_path.hpp"
#include "raw_client.hpp"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {

http::server_options options() {
  http::server_options o;
  o.name = "test";
  o.limits.threads = 8;
  o.limits.max_body_bytes = 1000;
  return o;
}

http::response echo(const http::request& r) {
  if (r.path == "/boom") throw std::runtime_error("handler failed");
  return {200, r.method + " " + r.path + " " + r.body, "text/plain"};
}

}  // namespace

TEST_CASE("a body's framing is checked before it is read - answered at once and the connection closed") {
  std::mutex mutex;
  std::vector<int> seen;
  running_server server(options(), echo, nullptr, [&](const http::request&, int status) {
    std::lock_guard lock(mutex);
    seen.push_back(status);
  });
  struct framing_case {
    std::string head;
    int status;
    std::string says;
  };
  const std::vector<framing_case> cases = {
      {"POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 411, "Content-Length"},
      {"POST /x HTTP/1.1\r\nHost: x\r\n\r\n", 411, "Content-Length"},
      {"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400, "is not a number of bytes"},
      {"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400, "more than one"},
      {"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", 413, "over the limit of 1000"},
      {"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413, "over the limit"},
      {"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n", 200, "POST /x 0123456789"},
      {"PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 200, "PUT /x abc"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.head);
    raw_client client(server.port());
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(client.send(c.head));
    std::string answer;
    if (c.head.find("100-continue") != std::string::npos) {
      CHECK(client.read_until("\r\n\r\n").rfind("HTTP/1.1 100", 0) == 0);
      client.send("0123456789");
      answer = client.read_until("0123456789");
    } else if (c.status == 200) {
      answer = client.read_until(c.says);
    } else {
      answer = client.read_all();  // the server closes after a refusal
      CHECK(answer.find("Connection: close") != std::string::npos);
    }
    CHECK(answer.rfind("HTTP/1.1 " + std::to_string(c.status), 0) == 0);
    CHECK(answer.find(c.says) != std::string::npos);
    CHECK(seconds_since(start) < 2);
  }
  // The observer is told once the answer is written, after the client read it.
  for (int i = 0; i < 200; ++i) {
    if (std::lock_guard lock(mutex); seen.size() >= cases.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::lock_guard lock(mutex);
  CHECK(seen == std::vector<int>{411, 411, 400, 400, 413, 413, 200, 200});
}

TEST_CASE("the screen refuses before the body - sees the headers - and its refusal is the answer") {
  int screened = 0;
  running_server server(options(), echo, [&](const http::request& head) -> std::optional<http::response> {
    ++screened;
    CHECK(head.body.empty());
    if (head.header("authorization") == "Bearer yes") return std::nullopt;
    return http::response{401, R"({"error":"no"})", http::k_json_content_type, {{"WWW-Authenticate", "Bearer"}}};
  });
  httplib::Client client("127.0.0.1", server.port());
  auto refused = client.Post("/x", std::string(500, 'a'), "text/plain");
  REQUIRE(refused);
  CHECK(refused->status == 401);
  CHECK(refused->get_header_value("WWW-Authenticate") == "Bearer");
  auto allowed = client.Post("/x", {{"Authorization", "Bearer yes"}}, "body", "text/plain");
  REQUIRE(allowed);
  CHECK(allowed->body == "POST /x body");
  CHECK(screened == 2);  // once per request, though "100 Continue" and the routing both ask
}

TEST_CASE("a handler that throws is a 500 in the clients' format - and the server goes on") {
  http::server_options o = options();
  o.error_answer = [](int status, const std::string& message) {
    return http::response{status, "E" + std::to_string(status) + ": " + message, "text/plain"};
  };
  running_server server(o, echo);
  httplib::Client client("127.0.0.1", server.port());
  auto boom = client.Get("/boom");
  REQUIRE(boom);
  CHECK(boom->status == 500);
  CHECK(boom->body == "E500: internal error");
  auto fine = client.Get("/fine");
  REQUIRE(fine);
  CHECK(fine->body == "GET /fine ");
}

TEST_CASE("a well-formed X-Request-Id comes back on every answer - the server's own refusals too") {
  running_server server(options(), echo);
  httplib::Client client("127.0.0.1", server.port());
  auto ok = client.Get("/x", {{"X-Request-Id", "run-7.a_b"}});
  REQUIRE(ok);
  CHECK(ok->get_header_value("X-Request-Id") == "run-7.a_b");
  auto bad = client.Get("/x", {{"X-Request-Id", "has space"}});
  REQUIRE(bad);
  CHECK_FALSE(bad->has_header("X-Request-Id"));
  raw_client raw(server.port());
  raw.send("POST /x HTTP/1.1\r\nHost: x\r\nX-Request-Id: big-1\r\nContent-Length: 5000\r\n\r\n");
  const std::string answer = raw.read_all();
  CHECK(answer.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(answer.find("X-Request-Id: big-1") != std::string::npos);
}

TEST_CASE("pipelined requests on one connection are each answered") {
  running_server server(options(), echo);
  raw_client client(server.port());
  client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\n"
              "Host: x\r\nConnection: close\r\n\r\n");
  const std::string answers = client.read_all();
  CHECK(answers.find("GET /a ") != std::string::npos);
  CHECK(answers.find("POST /b hi") != std::string::npos);
  CHECK(answers.find("GET /c ") != std::string::npos);
}

TEST_CASE("a port another server listens on is refused by name - free again after stop") {
  http::server first(options(), echo);
  const int port = first.bind("127.0.0.1", 0);
  http::server second(options(), echo);
  CHECK_THROWS_WITH_AS(second.bind("127.0.0.1", port), doctest::Contains("test: cannot listen on 127.0.0.1:"),
                       input_error);
  CHECK_THROWS_WITH_AS(second.bind("localhost", port), doctest::Contains("in use"), input_error);
  CHECK_THROWS_WITH_AS(second.bind("no-such-host.invalid", 0), doctest::Contains("does not resolve"), input_error);
  CHECK_THROWS_WITH_AS(second.bind("192.0.2.1", 0), doctest::Contains("not one of this machine's"), input_error);
  first.stop();  // never served: the port is given back all the same
  http::server third(options(), echo);
  CHECK(third.bind("127.0.0.1", port) == port);
  third.stop();
  third.serve();  // stopped before serving: returns at once
}

TEST_CASE("header text: Content-Length values - brotli dropped from Accept-Encoding - request ids") {
  CHECK(http::parse_content_length("0") == 0u);
  CHECK(http::parse_content_length("1000") == 1000u);
  CHECK(http::parse_content_length("99999999999999999999999") == SIZE_MAX);
  for (const char* bad : {"", "-5", "+5", " 5", "5 ", "0x10", "1e3", "5,5"}) {
    CAPTURE(bad);
    CHECK_FALSE(http::parse_content_length(bad).has_value());
  }
  CHECK(http::without_brotli("gzip, deflate, br, zstd") == "gzip, deflate, zstd");
  CHECK(http::without_brotli("br") == "");
  CHECK(http::valid_request_id(std::string(128, 'a')));
  CHECK_FALSE(http::valid_request_id(std::string(129, 'a')));
  CHECK_FALSE(http::valid_request_id("a\r\nb"));
  http::request r{"GET", "/", {{"Content-Type", "x"}}, ""};
  CHECK(r.header("content-type") == "x");
  CHECK(r.header("Accept") == "");
}
