// The remote evaluator (agent/llm) against real evald services on loopback:
// spread over several, a dead one skipped, services of different evaluator
// versions refused.
#include <doctest/doctest.h>

#include "agent/llm/remote_evaluator.hpp"
#include "evaluator/api/json_path.hpp"
#include "service_fixture.hpp"

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
  r.t = load_task_file(source_dir() / "tasks/gemm_bf16_mma_sync.json");
  r.ptx = ptx;
  r.manifest_text = "{}";
  return r;
}

}  // namespace

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
