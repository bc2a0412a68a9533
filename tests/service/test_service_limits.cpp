// evald's limits over loopback HTTP: the width of concurrent evaluations, the
// bounded queue (429 + Retry-After), bearer tokens, body size, metrics.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <future>

#include "evaluator/common/json_path.hpp"
#include "service_fixture.hpp"
#include "slow_clients.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
using namespace ptxbench::testing;
using nlohmann::json;

namespace {
json item(const std::string& ptx) { return {{"task", "gemm_bf16_mma_sync"}, {"ptx", ptx}, {"manifest", "{}"}}; }

// Evaluations admitted and waiting, as /v1/health reports them (-1: no answer).
int waiting(int port) {
  httplib::Client c("127.0.0.1", port);
  auto h = c.Get("/v1/health");
  return h && h->status == 200 ? json::parse(h->body).at("queue").at("waiting").get<int>() : -1;
}
}  // namespace

TEST_CASE("evald runs a batch concurrently up to its width and keeps the order") {
  gated_evaluator eval;
  service::service_options o;
  o.width = 3;
  running_service svc(eval, o);
  json batch = json::array();
  for (int i = 0; i < 7; ++i) batch.push_back(item("p" + std::to_string(i)));
  auto answer = std::async(std::launch::async, [&] {
    httplib::Client client("127.0.0.1", svc.port());
    client.set_read_timeout(300, 0);
    return client.Post("/v1/evaluate/batch", batch.dump(), "application/json");
  });
  REQUIRE(eval.wait_running(3));
  // Every item is either running or waiting: a fourth would have started by now.
  CHECK(test::wait_until([&] { return waiting(svc.port()) == 4; }));
  CHECK(eval.peak() == 3);  // never more than the width
  httplib::Client probe("127.0.0.1", svc.port());
  probe.set_read_timeout(300, 0);
  auto metrics = probe.Get("/v1/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("ptxbench_evald_queue_depth 4\n") != std::string::npos);
  CHECK(metrics->body.find("ptxbench_evald_in_flight 3\n") != std::string::npos);
  eval.release();
  auto res = answer.get();
  REQUIRE(res);
  REQUIRE(res->status == 200);
  json results = json::parse(res->body).at("results");
  REQUIRE(results.size() == 7);
  for (int i = 0; i < 7; ++i) CHECK(results[size_t(i)].at("headline") == "task gemm_bf16_mma_sync ptx p" + std::to_string(i));

  // The response counter is counted once the answer has been sent, so the
  // client may read its answer first: wait for it (not a sleep).
  const std::string responded = "ptxbench_evald_http_responses_total{endpoint=\"/v1/evaluate/batch\",code=\"200\"} 1\n";
  std::string m, content_type;
  CHECK(test::wait_until([&] {
    auto after = probe.Get("/v1/metrics");
    if (after) m = after->body, content_type = after->get_header_value("Content-Type");
    return m.find(responded) != std::string::npos;
  }));
  CHECK(m.find("ptxbench_evald_evaluations_total 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_evaluation_seconds_bucket{le=\"+Inf\"} 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_evaluation_seconds_count 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_stage_outcomes_total{stage=\"compile\",status=\"failed\"} 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_verdicts_total{verdict=\"compile\"} 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_http_responses_total{endpoint=\"/v1/evaluate/batch\",code=\"200\"} 1\n") !=
        std::string::npos);
  CHECK(content_type.find("text/plain") == 0);
}

TEST_CASE("evald answers 429 with Retry-After when the queue is full - and serves again after") {
  gated_evaluator eval;
  service::service_options o;
  o.width = 1;
  o.capacity = 2;
  o.retry_after_s = 3;
  running_service svc(eval, o);
  auto post = [&](const json& body, const std::string& path) {
    httplib::Client client("127.0.0.1", svc.port());
    client.set_read_timeout(300, 0);
    return client.Post(path.c_str(), body.dump(), "application/json");
  };
  auto first = std::async(std::launch::async, [&] { return post(item("a"), "/v1/evaluate"); });
  REQUIRE(eval.wait_running(1));
  auto second = std::async(std::launch::async, [&] { return post(item("b"), "/v1/evaluate"); });
  REQUIRE(test::wait_until([&] { return waiting(svc.port()) == 1; }));
  auto full = post(item("c"), "/v1/evaluate");
  REQUIRE(full);
  CHECK(full->status == 429);
  CHECK(full->get_header_value("Retry-After") == "3");
  // A batch that can never fit is refused outright rather than retried forever.
  auto too_big = post(json::array({item("x"), item("y"), item("z")}), "/v1/evaluate/batch");
  REQUIRE(too_big);
  CHECK(too_big->status == 413);
  eval.release();
  REQUIRE(first.get());
  REQUIRE(second.get());
  auto again = post(item("d"), "/v1/evaluate");
  REQUIRE(again);
  CHECK(again->status == 200);
  CHECK(eval.done() == 3);
}

TEST_CASE("evald requires the bearer token when it has one - and refuses a public address without one") {
  gated_evaluator eval;
  eval.release();
  service::service_options o;
  o.token = "s3cret-token";
  running_service svc(eval, o);
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  auto none = client.Post("/v1/evaluate", item("a").dump(), "application/json");
  REQUIRE(none);
  CHECK(none->status == 401);
  CHECK(client.Get("/v1/tasks")->status == 401);
  CHECK(client.Get("/v1/metrics")->status == 401);
  httplib::Headers wrong = {{"Authorization", "Bearer s3cret-tokeN"}};
  CHECK(client.Post("/v1/evaluate", wrong, item("a").dump(), "application/json")->status == 401);
  httplib::Headers right = {{"Authorization", "Bearer s3cret-token"}};
  CHECK(client.Post("/v1/evaluate", right, item("a").dump(), "application/json")->status == 200);
  CHECK(client.Get("/v1/health")->status == 200);  // for load balancers; tells nothing secret
  CHECK(eval.done() == 1);

  service::evald_service open_service(eval, {}, {}, nullptr);
  service::evald_server open_server(open_service);
  CHECK_THROWS_AS(open_server.bind("0.0.0.0", 0), input_error);
  service::service_options with_token;
  with_token.token = "t";
  service::evald_service closed_service(eval, {}, with_token, nullptr);
  service::evald_server closed_server(closed_service);
  CHECK(closed_server.bind("0.0.0.0", 0) > 0);
}

TEST_CASE("evald refuses bodies over its limit with 413") {
  gated_evaluator eval;
  eval.release();
  service::service_options o;
  o.max_body_bytes = 1000;
  running_service svc(eval, o);
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  auto big = client.Post("/v1/evaluate", item(std::string(5000, 'x')).dump(), "application/json");
  REQUIRE(big);
  CHECK(big->status == 413);
  auto small = client.Post("/v1/evaluate", item("ok").dump(), "application/json");
  REQUIRE(small);
  CHECK(small->status == 200);
  CHECK(eval.done() == 1);
}

namespace {

// A raw HTTP/1.1 exchange on 127.0.0.1:`port`: sends `head`, then `body`
// while the server reads, and returns what the server answered (up to its
// close, or `limit_s`).
struct raw_exchange {
  std::string answer;
  size_t body_sent = 0;
};

raw_exchange exchange(int port, const std::string& head, const std::string& body, int limit_s = 20) {
  raw_exchange out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  timeval tv{limit_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  REQUIRE(::send(fd, head.data(), head.size(), MSG_NOSIGNAL) == ssize_t(head.size()));
  for (size_t at = 0; at < body.size();) {
    const ssize_t n = ::send(fd, body.data() + at, std::min<size_t>(body.size() - at, 1 << 16), MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed: it reads no more
    at += size_t(n);
    out.body_sent = at;
  }
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) out.answer.append(buffer, size_t(n));
  ::close(fd);
  return out;
}

}  // namespace

TEST_CASE("evald refuses a chunked body with 411 before reading it - and a wrong token with 401") {
  // httplib 0.11 read a chunked body whole whatever its size (1 GiB: 1.1 GB of RSS), token or not.
  gated_evaluator eval;
  eval.release();
  service::service_options o;
  o.token = "s3cret-token";
  o.max_body_bytes = 1 << 20;
  running_service svc(eval, o);
  const std::string chunk = std::string("100000\r\n") + std::string(1 << 20, 'a') + "\r\n";
  std::string chunks;
  for (int i = 0; i < 64; ++i) chunks += chunk;  // 64 MiB: more than the socket buffers take unread
  const std::string head = "POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           "Transfer-Encoding: chunked\r\nX-Request-Id: chunky\r\n";
  auto chunked = exchange(svc.port(), head + "Authorization: Bearer s3cret-token\r\n\r\n", chunks);
  CHECK(chunked.answer.rfind("HTTP/1.1 411", 0) == 0);
  CHECK(chunked.answer.find("Connection: close") != std::string::npos);
  CHECK(chunked.answer.find("X-Request-Id: chunky") != std::string::npos);
  CHECK(chunked.answer.find(R"("status":411)") != std::string::npos);
  CHECK(chunked.body_sent < chunks.size());  // the server stopped reading

  auto no_token = exchange(svc.port(), head + "\r\n", chunks);
  CHECK(no_token.answer.rfind("HTTP/1.1 401", 0) == 0);
  CHECK(no_token.answer.find("WWW-Authenticate: Bearer") != std::string::npos);
  CHECK(no_token.body_sent < chunks.size());

  // A body of stated length and a wrong token: 401 before the body is read.
  const std::string big(32 << 20, ' ');
  auto wrong = exchange(svc.port(),
                        "POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nContent-Length: " +
                            std::to_string(big.size()) + "\r\n\r\n",
                        big);
  CHECK(wrong.answer.rfind("HTTP/1.1 401", 0) == 0);
  CHECK(wrong.body_sent < big.size());

  // A POST of no length at all would be read until the connection closes.
  auto unbounded = exchange(svc.port(), "POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\n\r\n", "");
  CHECK(unbounded.answer.rfind("HTTP/1.1 411", 0) == 0);

  // The same server still answers a request of stated length.
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  auto fine = client.Post("/v1/evaluate", {{"Authorization", "Bearer s3cret-token"}}, item("ok").dump(), "application/json");
  REQUIRE(fine);
  CHECK(fine->status == 200);
  CHECK(eval.done() == 1);
  auto metrics = client.Get("/v1/metrics", {{"Authorization", "Bearer s3cret-token"}});
  REQUIRE(metrics);
  CHECK(metrics->body.find(R"(ptxbench_evald_http_responses_total{endpoint="/v1/evaluate",code="411"} 2)") != std::string::npos);
}

TEST_CASE("only loopback addresses and localhost count as loopback") {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "0:0:0:0:0:0:0:1"}) {
    CAPTURE(host);
    CHECK(service::is_loopback_host(host));
  }
  for (const char* host : {"127.0.0.1.example.invalid", "127.evil.example", "0.0.0.0", "::", "10.0.0.1",
                           "localhost.example", "128.0.0.1", "", "127.0.0.1 ", "[::1", "::ffff:10.0.0.1"}) {
    CAPTURE(host);
    CHECK_FALSE(service::is_loopback_host(host));
  }
  gated_evaluator eval;
  service::evald_service open_service(eval, {}, {}, nullptr);
  service::evald_server open_server(open_service);
  CHECK_THROWS_AS(open_server.bind("127.0.0.1.example.invalid", 0), input_error);
}

// 140 clients sending a byte a second held every handler thread (128 at the
// default queue): health and evaluations waited for as long as they kept on.
TEST_CASE("evald keeps answering while 140 slow clients send a byte a second") {
  gated_evaluator eval;
  eval.release();
  running_service svc(eval, {});
  test::slow_clients slow(svc.port(), 140, std::chrono::milliseconds(1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server has taken them all
  httplib::Client client("127.0.0.1", svc.port());
  client.set_connection_timeout(3, 0);
  client.set_read_timeout(3, 0);
  const auto start = std::chrono::steady_clock::now();
  auto health = client.Get("/v1/health");
  auto evaluated = client.Post("/v1/evaluate", item("ok").dump(), "application/json");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(health);
  CHECK(health->status == 200);
  REQUIRE(evaluated);
  CHECK(evaluated->status == 200);
  CHECK(s < 2.5);
}

// httplib read "-5" as 2^64 - 5, past the body limit, and tried to skip that
// many bytes: 413 after its 10 s read timeout.
TEST_CASE("evald answers a Content-Length that is no length with 400 at once") {
  gated_evaluator eval;
  eval.release();
  running_service svc(eval, {});
  for (const char* length : {"-5", "5x", "+5", "0x10", "5 5"}) {
    CAPTURE(length);
    const auto start = std::chrono::steady_clock::now();
    auto r = exchange(svc.port(),
                      std::string("POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: ") + length + "\r\n\r\n", "");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(r.answer.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(r.answer.find("Content-Length") != std::string::npos);
    CHECK(s < 2);
  }
  // An empty value is no Content-Length at all (httplib drops it): 411, at once too.
  auto empty = exchange(svc.port(), "POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", "");
  CHECK(empty.answer.rfind("HTTP/1.1 411", 0) == 0);
  auto twice = exchange(svc.port(), "POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "");
  CHECK(twice.answer.rfind("HTTP/1.1 400", 0) == 0);
  // Past the limit: 413 at once, the body never read.
  service::service_options o;
  o.max_body_bytes = 1000;
  running_service small(eval, o);
  const auto start = std::chrono::steady_clock::now();
  auto big = exchange(small.port(), "POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n", "");
  CHECK(big.answer.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 2);
}

// The docs promise that text which is not UTF-8 is answered with replacement
// characters; raw invalid bytes in the body got 400 (nlohmann refuses them).
TEST_CASE("evald takes a body with raw invalid UTF-8 - the bytes become replacement characters") {
  gated_evaluator eval;
  eval.release();
  running_service svc(eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  const std::string body = std::string(R"({"task": "gemm_bf16_mma_sync", "ptx": "k)") + "\xff\xc3(" +
                           R"(", "manifest": "{}"})";
  auto r = client.Post("/v1/evaluate", body, "application/json");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(json::parse(r->body).at("headline") == "task gemm_bf16_mma_sync ptx k\xEF\xBF\xBD\xEF\xBF\xBD(");
  const std::string bad_task = std::string(R"({"task": "no)") + "\xfe" + R"(", "reply": "x"})";
  auto unknown = client.Post("/v1/evaluate", bad_task, "application/json");
  REQUIRE(unknown);
  CHECK(unknown->status == 400);
  CHECK(json::parse(unknown->body).at("error").get<std::string>().find("unknown task 'no\xEF\xBF\xBD'") !=
        std::string::npos);
}

// cpp-httplib sets SO_REUSEPORT: a second evald on a taken port listened
// beside the first, and the kernel split the connections between them.
TEST_CASE("evald refuses a port another server listens on - with the port in the message") {
  gated_evaluator eval;
  running_service first(eval, {});
  service::evald_service other_service(eval, {}, {}, nullptr);
  service::evald_server other(other_service);
  const std::string port = std::to_string(first.port());
  CHECK_THROWS_WITH_AS(other.bind("127.0.0.1", first.port()), doctest::Contains(port.c_str()), input_error);
  CHECK_THROWS_WITH_AS(other.bind("127.0.0.1", first.port()), doctest::Contains("in use"), input_error);
}
