// The server's deadlines over real loopback sockets: a client that sends its
// request, or takes its answer, slower than the server allows loses its
// connection at the deadline, and no number of them keeps others waiting
// longer than that.
#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <thread>

#include "raw_client.hpp"
#include "slow_clients.hpp"

using namespace ptxbench;
using namespace ptxbench::test;

namespace {

http::response ok(const http::request& r) { return {200, "{\"path\":\"" + r.path + "\"}"}; }

http::server_options quick(double head_s, double body_s) {
  http::server_options o;
  o.name = "test";
  o.limits.threads = 8;
  o.limits.idle_s = 1;
  o.limits.head_s = head_s;
  o.limits.body_s = body_s;
  return o;
}

}  // namespace

TEST_CASE("a client sending its headers a byte at a time is answered 408 at the head deadline") {
  running_server server(quick(1, 5), ok);
  raw_client client(server.port());
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread sender([&] {
    client.send("GET /x HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 100 && !stop; ++i) {  // a header line that never ends, a byte each 100 ms
      if (!client.send("a")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const std::string answer = client.read_all();
  const double s = seconds_since(start);
  stop = true;
  sender.join();
  CHECK(answer.rfind("HTTP/1.1 408", 0) == 0);
  CHECK(answer.find("did not arrive within 1 s") != std::string::npos);
  CHECK(s > 0.9);
  CHECK(s < 2.5);
}

TEST_CASE("a body trickled below the minimum rate is answered 408 at the body deadline") {
  running_server server(quick(5, 1), ok);
  raw_client client(server.port());
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(client.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"));
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    for (int i = 0; i < 100 && !stop && client.send("b"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  const std::string answer = client.read_all();
  const double s = seconds_since(start);
  stop = true;
  sender.join();
  CHECK(answer.rfind("HTTP/1.1 408", 0) == 0);
  CHECK(answer.find("request body did not arrive") != std::string::npos);
  CHECK(s > 0.9);
  CHECK(s < 2.5);
}

TEST_CASE("a client that does not read its answer loses the connection at the write deadline") {
  http::server_options o = quick(5, 5);
  o.limits.threads = 1;  // the stalled answer holds the only thread
  o.limits.write_s = 1;
  o.limits.min_bytes_per_s = 1e12;  // no allowance for what the socket buffers take
  running_server server(o, [](const http::request& r) {
    return http::response{200, r.path == "/big" ? std::string(64 << 20, 'x') : "small", "text/plain"};
  });
  raw_client stalled(server.port());
  REQUIRE(stalled.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));  // and never reads
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  httplib::Client other("127.0.0.1", server.port());
  other.set_read_timeout(10, 0);
  auto r = other.Get("/small");
  REQUIRE(r);
  CHECK(r->body == "small");
  CHECK(seconds_since(start) < 3);
}

TEST_CASE("more slow clients than threads hold nobody past the head deadline") {
  http::server_options o = quick(1, 1);
  o.limits.threads = 16;
  running_server server(o, ok);
  slow_clients slow(server.port(), 64, std::chrono::milliseconds(200));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(10, 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = client.Get("/good");
  REQUIRE(r);
  CHECK(r->status == 200);
  // 64 slow connections over 16 threads: four rounds of at most 1 s, in the
  // worst order; the good request came after them all.
  CHECK(seconds_since(start) < 5.5);
  // And each slow one was dropped, though it never stopped sending.
  for (int i = 0; i < 100 && slow.open() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(slow.open() == 0);
}

TEST_CASE("headers past max_head_bytes are answered 431") {
  http::server_options o = quick(5, 5);
  o.limits.max_head_bytes = 2048;
  running_server server(o, ok);
  raw_client client(server.port());
  std::string head = "GET /x HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 100; ++i) head += "X-Filler-" + std::to_string(i) + ": " + std::string(40, 'f') + "\r\n";
  client.send(head + "\r\n");
  const std::string answer = client.read_all();
  CHECK(answer.rfind("HTTP/1.1 431", 0) == 0);
  CHECK(answer.find("larger than 2048 bytes") != std::string::npos);
}
