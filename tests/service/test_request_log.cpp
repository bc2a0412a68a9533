// Every request evald answers is in its log, and a logged request replays to
// the same verdict.
#include <doctest/doctest.h>
#include <httplib.h>

#include "agent/service/metrics.hpp"
#include "agent/service/request.hpp"
#include "evaluator/api/local.hpp"
#include "service_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::testing;
using nlohmann::json;

TEST_CASE("evald logs every request and result to SQLite so they replay to the same verdict") {
  auto path = std::filesystem::temp_directory_path() / ("ptxbench-evald-log-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  local_evaluator_options eo;
  eo.gpu_mode = "off";
  auto eval = make_local_evaluator(eo);
  auto log = request_log::open(path);
  {
    running_service svc(*eval, {}, log.get());
    httplib::Client client("127.0.0.1", svc.port());
    client.set_read_timeout(300, 0);
    const std::string dir = (source_dir() / "tasks/solutions/gemm_bf16_mma_sync/").string();
    json good = {{"task", "gemm_bf16_mma_sync"}, {"ptx", read_text_file(dir + "kernel.ptx")},
                 {"manifest", read_text_file(dir + "manifest.json")}};
    json batch = json::array({good, {{"task", "gemm_bf16_mma_sync"}, {"reply", "nothing"}}});
    auto answered = client.Post("/v1/evaluate/batch", batch.dump(), "application/json");
    REQUIRE(answered);
    REQUIRE(answered->status == 200);
    auto broken = client.Post("/v1/evaluate", "{broken", "application/json");
    REQUIRE(broken);
    REQUIRE(broken->status == 400);
  }
  auto rows = log->rows();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].endpoint == "/v1/evaluate/batch");
  CHECK(rows[0].item_index == 0);
  CHECK(rows[1].item_index == 1);
  CHECK(rows[1].result.at("verdict") == "format");
  CHECK(rows[2].http_status == 400);
  CHECK(rows[2].request == "{broken");
  CHECK(rows[2].result.is_null());
  CHECK(rows[2].error.find("not valid JSON") != std::string::npos);
  CHECK(log->rows(rows[0].id).size() == 2);

  // Replay: the logged item, parsed as the service parses it, judged again.
  std::map<std::string, task> tasks;
  for (auto& t : load_task_dir(source_dir() / "tasks")) tasks.emplace(t.id, t);
  auto item = service::parse_evaluate_item(json::parse(rows[0].request), "$", tasks);
  auto again = to_json(eval->evaluate(item.request));
  CHECK(again.at("verdict") == rows[0].result.at("verdict"));
  CHECK(again.at("headline") == rows[0].result.at("headline"));
  CHECK(again.at("stages").at("compile") .at("status") == rows[0].result.at("stages").at("compile").at("status"));
  std::filesystem::remove(path);
}

TEST_CASE("metrics carry the evaluator's usage per GPU - none without a GPU") {
  ptxbench::service::service_metrics m;
  ptxbench::gpu_usage u;
  u.device = 1;
  u.busy_s = 12.5;
  u.jobs = 7;
  u.passes = 14;
  u.spare_starts = 18;
  const std::string text = m.render(0, 0, 8, 2, {u});
  CHECK(text.find("# TYPE ptxbench_gpu_busy_seconds_total counter") != std::string::npos);
  CHECK(text.find("ptxbench_gpu_busy_seconds_total{gpu=\"1\"} 12.5") != std::string::npos);
  CHECK(text.find("ptxbench_gpu_jobs_total{gpu=\"1\"} 7") != std::string::npos);
  CHECK(text.find("ptxbench_gpu_counting_passes_total{gpu=\"1\"} 14") != std::string::npos);
  CHECK(text.find("ptxbench_gpu_spare_starts_total{gpu=\"1\"} 18") != std::string::npos);
  CHECK(m.render(0, 0, 8, 2).find("ptxbench_gpu_") == std::string::npos);
}
