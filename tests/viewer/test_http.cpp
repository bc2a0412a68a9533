#include <doctest/doctest.h>
#include <httplib.h>

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
