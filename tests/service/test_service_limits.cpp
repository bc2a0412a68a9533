// evald's limits over loopback HTTP: the width of concurrent evaluations, the
// bounded queue (429 + Retry-After), bearer tokens, body size, metrics.
#include <doctest/doctest.h>
#include <httplib.h>

#include <future>

#include "evaluator/api/json_path.hpp"
#include "service_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::testing;
using nlohmann::json;

namespace {
json item(const std::string& ptx) { return {{"task", "gemm_bf16_mma_sync"}, {"ptx", ptx}, {"manifest", "{}"}}; }
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
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
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

  auto after = probe.Get("/v1/metrics");
  REQUIRE(after);
  const std::string& m = after->body;
  CHECK(m.find("ptxbench_evald_evaluations_total 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_evaluation_seconds_bucket{le=\"+Inf\"} 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_evaluation_seconds_count 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_stage_outcomes_total{stage=\"compile\",status=\"failed\"} 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_verdicts_total{verdict=\"compile\"} 7\n") != std::string::npos);
  CHECK(m.find("ptxbench_evald_http_responses_total{endpoint=\"/v1/evaluate/batch\",code=\"200\"} 1\n") !=
        std::string::npos);
  CHECK(after->get_header_value("Content-Type").find("text/plain") == 0);
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
  for (int i = 0; i < 200 && svc.service().metrics().evaluations() == 0; ++i) {
    httplib::Client c("127.0.0.1", svc.port());
    auto h = c.Get("/v1/health");
    if (h && json::parse(h->body).at("queue").at("waiting") == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
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
