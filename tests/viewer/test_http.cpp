#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "evaluator/common/json_path.hpp"
#include "idle_sockets.hpp"
#include "slow_clients.hpp"
#include "served_db.hpp"

using namespace ptxbench;

TEST_CASE("viewer serves pages and JSON and assets over HTTP on 127.0.0.1") {
  testing::served_db served("viewer-http");
  httplib::Client client("127.0.0.1", served.port());
  auto home = client.Get("/");
  REQUIRE(home);
  CHECK(home->status == 200);
  CHECK(home->get_header_value("Content-Type").find("text/html") == 0);
  CHECK(home->get_header_value("Content-Security-Policy").find("script-src 'self'") != std::string::npos);
  CHECK(home->body.find("exp1") != std::string::npos);

  auto traj = client.Get(("/trajectories/" + std::to_string(served.db().trajectories["C"])).c_str());
  REQUIRE(traj);
  CHECK(traj->status == 200);
  CHECK(traj->body.find("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;") != std::string::npos);
  CHECK(traj->body.find("<script>document") == std::string::npos);

  auto api = client.Get("/api/experiments");
  REQUIRE(api);
  CHECK(api->status == 200);
  CHECK(nlohmann::json::parse(api->body)[0]["name"] == "exp1");

  auto js = client.Get("/assets/viewer.js");
  REQUIRE(js);
  CHECK(js->status == 200);
  CHECK(js->get_header_value("Content-Type").find("text/javascript") == 0);

  auto bad = client.Get("/trajectories/x");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  auto missing = client.Get("/api/trajectories/12345");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  auto post = client.Post("/", "x", "text/plain");
  REQUIRE(post);
  CHECK(post->status >= 400);  // read-only
}

TEST_CASE("viewer answers percent-encoded invalid UTF-8 with 400") {
  testing::served_db served("viewer-http-ff");
  httplib::Client client("127.0.0.1", served.port());
  auto r = client.Get("/api/experiments/%ff");
  REQUIRE(r);
  CHECK(r->status == 400);
}

TEST_CASE("viewer keeps answering while 60 idle TCP connections are open") {
  testing::served_db served("viewer-http-idle");
  auto idle = std::make_unique<test::idle_sockets>(served.port(), 60);
  REQUIRE(idle->wait_accepted());
  httplib::Client client("127.0.0.1", served.port());
  client.set_connection_timeout(3, 0);
  client.set_read_timeout(3, 0);
  auto start = std::chrono::steady_clock::now();
  auto r = client.Get("/api/experiments");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  idle.reset();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(s < 2.5);
}

TEST_CASE("viewer answers JSON uncompressed even to a browser that offers brotli") {
  testing::served_db served("viewer-encoding");
  httplib::Client client("127.0.0.1", served.port());
  client.set_decompress(false);
  auto api = client.Get("/api/experiments", {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  REQUIRE(api);
  CHECK(api->status == 200);
  CHECK_MESSAGE(!api->has_header("Content-Encoding"), "encoded: ", api->get_header_value("Content-Encoding"));
  CHECK(api->get_header_value("Content-Type").find("application/json") == 0);
  CHECK(nlohmann::json::parse(api->body)[0]["name"] == "exp1");
}

TEST_CASE("viewer pages never come back in brotli - gzip when offered") {
  // cpp-httplib's brotli took 0.68 s for a 548 KB trajectory page (gzip 41 ms).
  testing::served_db served("viewer-brotli");
  httplib::Client client("127.0.0.1", served.port());
  client.set_decompress(false);
  const std::string traj = "/trajectories/" + std::to_string(served.db().trajectories["C"]);
  auto br_only = client.Get(traj.c_str(), {{"Accept-Encoding", "br"}});
  REQUIRE(br_only);
  CHECK(br_only->status == 200);
  CHECK_MESSAGE(!br_only->has_header("Content-Encoding"), "encoded: ", br_only->get_header_value("Content-Encoding"));
  CHECK(br_only->body.find("<html") != std::string::npos);
  auto browser = client.Get(traj.c_str(), {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  REQUIRE(browser);
  CHECK(browser->status == 200);
  CHECK(browser->get_header_value("Content-Encoding") != "br");
  // Decompressed as a browser would, it is the page.
  httplib::Client plain("127.0.0.1", served.port());
  auto page = plain.Get(traj.c_str(), {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  REQUIRE(page);
  CHECK(page->body == br_only->body);
}

// 80 clients sending a byte a second held all 64 of the viewer's threads
// (its 2 s read timeout never fired): every page waited for as long as they kept on.
TEST_CASE("viewer keeps answering while 80 slow clients send a byte a second") {
  testing::served_db served("viewer-http-slow");
  test::slow_clients slow(served.port(), 80, std::chrono::milliseconds(1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server has taken them all
  httplib::Client client("127.0.0.1", served.port());
  client.set_connection_timeout(3, 0);
  client.set_read_timeout(3, 0);
  auto start = std::chrono::steady_clock::now();
  auto r = client.Get("/api/experiments");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(s < 2.5);
}

// cpp-httplib sets SO_REUSEPORT: a second `serve` on a taken port listened
// beside the first, and browsers got pages from either database at random.
TEST_CASE("viewer refuses a port another server listens on") {
  testing::served_db served("viewer-http-port");
  auto other_db = testing::make_fixture_db("viewer-http-port-2", "m1", "x");
  viewer::viewer_server other(*other_db.store);
  CHECK_THROWS_WITH_AS(other.bind("127.0.0.1", served.port()), doctest::Contains("in use"), input_error);
}
