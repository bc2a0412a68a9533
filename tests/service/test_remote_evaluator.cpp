// The remote evaluator (agent/llm) against real evald services on loopback,
// and against scripted services that fail the ways services do: spread over
// several, a dead or failing one backed off, an answer that is no result
// refused, a full queue waited out, a stop or an outage left unjudged.
#include <doctest/doctest.h>
#include <httplib.h>

#include <functional>
#include <thread>

#include "agent/llm/provider.hpp"
#include "agent/http/remote_evaluator.hpp"
#include "evaluator/common/json_path.hpp"
#include "service_fixture.hpp"
#include "wait_until.hpp"

using namespace ptxbench;
using namespace ptxbench::testing;

namespace {

class versioned_evaluator final : public evaluator {
 public:
  explicit versioned_evaluator(std::string v) : m_version(std::move(v)) {}
  evaluation_result evaluate(const evaluation_request& req) override {
    ++calls;
    evaluation_result r;
    r.evaluator_version = m_version;
    r.verdict = stage::compile;
    r.headline = "judged " + req.ptx;
    r.stages[stage::format] = {stage_status::passed, "", 0.0};
    r.stages[stage::compile] = {stage_status::failed, "ptx " + req.ptx, 0.0};
    return r;
  }
  std::string version() const override { return m_version; }
  std::string gpu_description() const override { return "Fake GPU"; }
  std::atomic<int> calls{0};

 private:
  std::string m_version;
};

evaluation_request request(const std::string& ptx) {
  evaluation_request r;
  r.t = load_task(source_dir() / "tasks", "gemm_bf16_mma_sync");
  r.ptx = ptx;
  r.manifest_text = "{}";
  return r;
}

// An HTTP service whose /v1/health says evaluator `version` and whose
// /v1/evaluate answers as `answer` decides (call counts from 1).
class scripted_service {
 public:
  using answer_fn = std::function<void(const httplib::Request&, httplib::Response&, int call)>;
  explicit scripted_service(answer_fn answer, int port = 0, std::string version = "1.0")
      : m_answer(std::move(answer)) {
    m_server.Get("/v1/health", [version](const httplib::Request&, httplib::Response& res) {
      res.set_content(nlohmann::json{{"evaluator_version", version}, {"gpu", "Fake GPU"}}.dump(), "application/json");
    });
    m_server.Post("/v1/evaluate", [this](const httplib::Request& req, httplib::Response& res) {
      m_answer(req, res, ++m_calls);
    });
    m_port = port > 0 ? (m_server.bind_to_port("127.0.0.1", port) ? port : -1) : m_server.bind_to_any_port("127.0.0.1");
    REQUIRE(m_port > 0);
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
  }
  ~scripted_service() {
    m_server.stop();
    m_thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  int port() const { return m_port; }
  int calls() const { return m_calls; }

 private:
  answer_fn m_answer;
  httplib::Server m_server;
  int m_port = 0;
  std::atomic<int> m_calls{0};
  std::thread m_thread;
};

// A well-formed result of evaluator 1.0 for a request, echoing its X-Request-Id.
void good_answer(const httplib::Request& req, httplib::Response& res) {
  evaluation_result r;
  r.evaluator_version = "1.0";
  r.verdict = stage::compile;
  r.headline = "scripted";
  r.stages[stage::format] = {stage_status::passed, "", 0.0};
  r.stages[stage::compile] = {stage_status::failed, "scripted", 0.0};
  res.set_header("X-Request-Id", req.get_header_value("X-Request-Id"));
  res.set_content(to_json(r).dump(), "application/json");
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("remote evaluator: a dead and a failing service take almost no work from a healthy one under concurrency") {
  versioned_evaluator healthy("1.0");
  running_service sh(healthy, {});
  scripted_service failing([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 503;
    res.set_content(R"({"error":"restarting"})", "application/json");
  });
  remote_evaluator_options o;
  o.urls = {"http://127.0.0.1:1", failing.url(), "http://127.0.0.1:" + std::to_string(sh.port())};
  auto remote = make_remote_evaluator(o);
  std::atomic<int> judged{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        try {
          auto r = remote->evaluate(request("p" + std::to_string(t * 10 + i)));
          if (r.headline == "judged p" + std::to_string(t * 10 + i)) ++judged;
        } catch (const std::exception& e) {
          MESSAGE(e.what());
          ++errors;
        }
      }
    });
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  CHECK(judged == 20);
  CHECK(healthy.calls == 20);
  CHECK(failing.calls() <= 4);  // backed off: 1 s, then 2 s, 4 s... while the run lasts
}

TEST_CASE("remote evaluator: an answer that is no result of this evaluator for this request is refused - never a verdict") {
  const auto gpu_result = [](const httplib::Request& req, httplib::Response& res) {
    evaluation_result r;
    r.evaluator_version = "1.0";
    r.passed = true;
    r.verdict = stage::performance;
    for (int i = 0; i < stage_count; ++i) r.stages[static_cast<stage>(i)] = {stage_status::passed, "", 0.0};
    res.set_header("X-Request-Id", req.get_header_value("X-Request-Id"));
    res.set_content(to_json(r).dump(), "application/json");
  };
  const std::vector<std::pair<std::string, scripted_service::answer_fn>> liars = {
      {"an empty object", [](auto&, auto& res, int) { res.set_content("{}", "application/json"); }},
      {"not JSON", [](auto&, auto& res, int) { res.set_content("<html>proxy</html>", "text/html"); }},
      {"a verdict without stages",
       [](auto&, auto& res, int) {
         res.set_content(R"({"verdict":"format","passed":false,"evaluator_version":"1.0"})", "application/json");
       }},
      {"another evaluator version",
       [](const httplib::Request& req, httplib::Response& res, int) {
         good_answer(req, res);
         auto j = nlohmann::json::parse(res.body);
         j["evaluator_version"] = "9.9";
         res.set_content(j.dump(), "application/json");
       }},
      {"GPU stages passed for a request without them", [&](const httplib::Request& req, httplib::Response& res, int) {
         gpu_result(req, res);
       }},
      {"the answer to another request", [](const httplib::Request& req, httplib::Response& res, int) {
         good_answer(req, res);
         res.set_header("X-Request-Id", "someone-else");
       }},
      {"a result nested a million levels deep", [](const httplib::Request& req, httplib::Response& res, int) {
         good_answer(req, res);
         const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
         res.set_content(res.body.substr(0, res.body.size() - 1) + ",\"notes\":" + deep + "}", "application/json");
       }}};
  for (const auto& [what, answer] : liars) {
    CAPTURE(what);
    scripted_service liar(answer);
    remote_evaluator_options o;
    o.urls = {liar.url()};
    o.max_attempts = 2;
    auto alone = make_remote_evaluator(o);
    evaluation_request static_only = request("p");
    static_only.run_gpu = false;
    try {
      auto r = alone->evaluate(static_only);
      FAIL("taken as a verdict: " << r.headline);
    } catch (const evaluator_unavailable& e) {
      FAIL("not an answer at all? " << e.what());
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find(liar.url()) != std::string::npos);  // names the service
    }
    CHECK(liar.calls() == 2);
    scripted_service honest([](const httplib::Request& req, httplib::Response& res, int) { good_answer(req, res); });
    o.urls = {liar.url(), honest.url()};
    auto both = make_remote_evaluator(o);
    for (int i = 0; i < 3; ++i) CHECK(both->evaluate(static_only).headline == "scripted");
  }
}

TEST_CASE("remote evaluator: a Retry-After of 0 waits half a second - a queue full for max_wait_s is unavailable") {
  scripted_service full([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 429;
    res.set_header("Retry-After", "0");
    res.set_content(R"({"error":"queue full"})", "application/json");
  });
  remote_evaluator_options o;
  o.urls = {full.url()};
  o.max_wait_s = 2;
  auto remote = make_remote_evaluator(o);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(remote->evaluate(request("p")), evaluator_unavailable);
  CHECK(seconds_since(start) >= 1.9);
  CHECK(full.calls() <= 6);
}

TEST_CASE("remote evaluator: a stop ends a waiting evaluation at once - as unavailable - not an error") {
  scripted_service full([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 429;
    res.set_header("Retry-After", "30");
  });
  remote_evaluator_options o;
  o.urls = {full.url()};
  auto remote = make_remote_evaluator(o);
  std::exception_ptr thrown;
  const auto start = std::chrono::steady_clock::now();
  std::thread t([&] {
    try {
      remote->evaluate(request("p"));
    } catch (...) {
      thrown = std::current_exception();
    }
  });
  // Stop once the evaluation waits: the service has refused it (Retry-After 30 s).
  CHECK(ptxbench::test::wait_until([&] { return full.calls() >= 1; }));
  cancel_llm_calls();
  t.join();
  reset_llm_cancellation();
  CHECK(seconds_since(start) < 2);
  REQUIRE(thrown);
  CHECK_THROWS_AS(std::rethrow_exception(thrown), evaluator_unavailable);
}

TEST_CASE("remote evaluator: a service restarting is waited for - one gone for max_wait_s is unavailable") {
  auto service = std::make_unique<scripted_service>(
      [](const httplib::Request& req, httplib::Response& res, int) { good_answer(req, res); });
  const int port = service->port();
  remote_evaluator_options o;
  o.urls = {service->url()};
  o.max_wait_s = 20;
  auto remote = make_remote_evaluator(o);
  CHECK(remote->evaluate(request("p")).headline == "scripted");
  service.reset();  // down: connections refused
  std::thread restart([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the outage under test
    service = std::make_unique<scripted_service>(
        [](const httplib::Request& req, httplib::Response& res, int) { good_answer(req, res); }, port);
  });
  CHECK(remote->evaluate(request("p")).headline == "scripted");
  restart.join();
  service.reset();
  remote_evaluator_options quick = o;
  quick.urls = {"http://127.0.0.1:" + std::to_string(port)};
  quick.max_wait_s = 1;
  {
    scripted_service up([](const httplib::Request& req, httplib::Response& res, int) { good_answer(req, res); }, port);
    remote = make_remote_evaluator(quick);
  }
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(remote->evaluate(request("p")), evaluator_unavailable);
  CHECK(seconds_since(start) < 5);
}

TEST_CASE("remote evaluator: a request that cuts the service off every time is an error while others are judged") {
  scripted_service service([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.body.find("poison") == std::string::npos) return good_answer(req, res);
    // The answer breaks off after its first byte, as when the service dies on this request.
    res.set_content_provider(1000, "application/json", [](size_t, size_t, httplib::DataSink& sink) {
      sink.write("{", 1);
      return false;
    });
  });
  remote_evaluator_options o;
  o.urls = {service.url()};
  o.max_attempts = 3;
  o.max_wait_s = 60;
  auto remote = make_remote_evaluator(o);
  std::atomic<bool> finished{false};
  std::atomic<int> others{0};
  std::thread judged_beside([&] {
    while (!finished) {
      if (remote->evaluate(request("p")).headline == "scripted") ++others;
    }
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    remote->evaluate(request("poison"));
    FAIL("a broken answer was taken");
  } catch (const evaluator_unavailable& e) {
    FAIL("the run would stop at every resume: " << e.what());
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("judged other requests") != std::string::npos);
  }
  finished = true;
  judged_beside.join();
  CHECK(others > 0);
  CHECK(seconds_since(start) < 20);
}

TEST_CASE("remote evaluator: a service that refuses the token fails over to one that takes it") {
  scripted_service wrong_token([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 401;
    res.set_content(R"({"error":"unauthorized"})", "application/json");
  });
  scripted_service good([](const httplib::Request& req, httplib::Response& res, int) { good_answer(req, res); });
  remote_evaluator_options o;
  o.urls = {wrong_token.url(), good.url()};
  auto remote = make_remote_evaluator(o);
  for (int i = 0; i < 6; ++i) CHECK(remote->evaluate(request("p")).headline == "scripted");
  CHECK(good.calls() == 6);
  CHECK(wrong_token.calls() <= 1);
}

TEST_CASE("remote evaluator spreads over services - skips a dead one - and returns their results") {
  versioned_evaluator a("1.0"), b("1.0");
  running_service sa(a, {}), sb(b, {});
  remote_evaluator_options o;
  o.urls = {"http://127.0.0.1:" + std::to_string(sa.port()), "http://127.0.0.1:1",
            "http://127.0.0.1:" + std::to_string(sb.port()) + "/"};
  auto remote = make_remote_evaluator(o);
  CHECK(remote->version() == "1.0");
  CHECK(remote->gpu_description().find("Fake GPU") != std::string::npos);
  for (int i = 0; i < 8; ++i) {
    auto r = remote->evaluate(request("p" + std::to_string(i)));
    CHECK(r.headline == "judged p" + std::to_string(i));
    CHECK(r.stages[stage::compile].status == stage_status::failed);
  }
  CHECK(a.calls + b.calls == 8);
  CHECK(a.calls >= 2);  // round-robin on ties: both services take work
  CHECK(b.calls >= 2);
}

TEST_CASE("remote evaluator refuses services of different evaluator versions - and non-http addresses") {
  versioned_evaluator a("1.0"), b("2.0");
  running_service sa(a, {}), sb(b, {});
  remote_evaluator_options o;
  o.urls = {"http://127.0.0.1:" + std::to_string(sa.port()), "http://127.0.0.1:" + std::to_string(sb.port())};
  CHECK_THROWS_AS(make_remote_evaluator(o), input_error);
  o.urls = {"ftp://127.0.0.1:1"};
  CHECK_THROWS_AS(make_remote_evaluator(o), input_error);
  o.urls = {"http://127.0.0.1:1"};
  CHECK_THROWS_AS(make_remote_evaluator(o), std::runtime_error);  // nobody answers
}
