#include <doctest/doctest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/endpoint/embedded_endpoint.hpp"
#include "evaluator/common/json_path.hpp"
#include "slow_clients.hpp"

using namespace ptxbench;
using nlohmann::json;

namespace {
json ask(httplib::Client& c, const json& messages) {
  auto res = c.Post("/v1/chat/completions", json{{"model", "m"}, {"messages", messages}}.dump(), "application/json");
  REQUIRE(res);
  json out = json::parse(res->body);
  out["_status"] = res->status;
  return out;
}
std::string text(const json& r) { return r["choices"][0]["message"]["content"]; }
}  // namespace

TEST_CASE("the endpoint answers by task and round - cycling variants - over real HTTP") {
  endpoint_script s;
  s.tasks["t1"] = {{{"t1 r0 a"}, {"t1 r0 b"}}, {{"t1 r1"}}};
  s.tasks["*"] = {{{"any r0"}}};
  embedded_endpoint ep(s);
  httplib::Client c("127.0.0.1", ep.port());
  json first = json::array({{{"role", "system"}, {"content", "sys"}}, {{"role", "user"}, {"content", "Task id: t1\n..."}}});
  CHECK(text(ask(c, first)) == "t1 r0 a");
  CHECK(text(ask(c, first)) == "t1 r0 b");
  CHECK(text(ask(c, first)) == "t1 r0 a");
  json second = first;
  second.push_back({{"role", "assistant"}, {"content", "x"}});
  second.push_back({{"role", "user"}, {"content", "## Feedback on round 0: compile"}});
  auto r = ask(c, second);
  CHECK(text(r) == "t1 r1");
  CHECK(r["usage"]["completion_tokens"].get<int>() >= 1);
  // Past the script's last round the last round repeats.
  second.push_back({{"role", "assistant"}, {"content", "y"}});
  second.push_back({{"role", "user"}, {"content", "## Feedback on round 5: compile"}});
  CHECK(text(ask(c, second)) == "t1 r1");
  json other = json::array({{{"role", "user"}, {"content", "Task id: t9"}}});
  CHECK(text(ask(c, other)) == "any r0");
  CHECK(ep.requests_served() == 6);
}

TEST_CASE("bad requests get 4xx with a message") {
  endpoint_script s;
  s.tasks["t1"] = {{{"r"}}};
  embedded_endpoint ep(s);
  httplib::Client c("127.0.0.1", ep.port());
  auto res = c.Post("/v1/chat/completions", "{not json", "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  auto r = ask(c, json::array({{{"role", "user"}, {"content", "Task id: nope"}}}));
  CHECK(r["_status"] == 404);
  CHECK(r["error"]["message"].get<std::string>().find("no scripted replies for task 'nope'") != std::string::npos);
}

TEST_CASE("scripts load replies from files and report bad fields by path") {
  auto dir = std::filesystem::temp_directory_path() / ("ptxbench_ep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.ptx") << ".entry k() { ret; }\n";
  std::ofstream(dir / "m.json") << "{\"launches\": []}\n";
  std::ofstream(dir / "s.json") << R"({"latency_ms": 5, "tasks": {"t": [[{"text": "hi", "ptx": "k.ptx", "manifest": "m.json"}]]}})";
  auto s = load_endpoint_script(dir / "s.json");
  CHECK(s.latency_ms == 5);
  const auto& t = s.tasks.at("t")[0][0].text;
  CHECK(t.find("```ptx\n.entry k() { ret; }\n```") != std::string::npos);
  CHECK(t.find("```json\n{\"launches\": []}\n```") != std::string::npos);
  std::ofstream(dir / "bad.json") << R"({"tasks": {"t": [[{"txt": "hi"}]]}})";
  CHECK_THROWS_WITH_AS(load_endpoint_script(dir / "bad.json"), doctest::Contains("$.tasks.t[0][0].txt: unknown field"),
                       input_error);
  std::filesystem::remove_all(dir);
}

// The endpoint kept httplib's defaults: 64 threads and no deadline for a
// request, so 80 clients sending a byte a second took it down.
TEST_CASE("the endpoint keeps answering while 80 slow clients send a byte a second") {
  endpoint_script s;
  s.tasks["t1"] = {{{"r"}}};
  embedded_endpoint ep(s);
  test::slow_clients slow(ep.port(), 80, std::chrono::milliseconds(1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::Client c("127.0.0.1", ep.port());
  c.set_connection_timeout(3, 0);
  c.set_read_timeout(3, 0);
  auto start = std::chrono::steady_clock::now();
  auto r = ask(c, json::array({{{"role", "user"}, {"content", "Task id: t1"}}}));
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 2.5);
  CHECK(text(r) == "r");
}

TEST_CASE("the endpoint refuses a taken port - and a request nested 1000000 levels deep") {
  endpoint_script s;
  s.tasks["t1"] = {{{"r"}}};
  embedded_endpoint ep(s);
  CHECK_THROWS_WITH_AS(embedded_endpoint(s, ep.port()), doctest::Contains("in use"), input_error);
  httplib::Client c("127.0.0.1", ep.port());
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  auto res = c.Post("/v1/chat/completions",
                    R"({"model": "m", "messages": [{"role": "user", "content": "Task id: t1"}], "x": )" + deep + "}",
                    "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  CHECK(json::parse(res->body)["error"]["message"].get<std::string>().find("nested deeper") != std::string::npos);
}
