// Every request evald answers is in its log, and a logged request replays to
// the same verdict.
#include <doctest/doctest.h>
#include <httplib.h>

#include "agent/service/metrics.hpp"
#include "agent/service/request.hpp"
#include "evaluator/api/local.hpp"
#include "evaluator/common/utf8.hpp"
#include "service_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::testing;
using nlohmann::json;

namespace {

// A CPU evaluator and a request log in a fresh file, removed at the end.
struct logged_cpu_service {
  std::filesystem::path path;
  std::unique_ptr<evaluator> eval;
  std::unique_ptr<request_log> log;
  explicit logged_cpu_service(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("ptxbench-evald-" + name + "-" + std::to_string(::getpid()) + ".db")) {
    std::filesystem::remove(path);
    local_evaluator_options eo;
    eo.gpu_mode = "off";
    eval = make_local_evaluator(eo);
    log = request_log::open(path);
  }
  ~logged_cpu_service() {
    log.reset();
    std::filesystem::remove(path);
  }
};

}  // namespace

TEST_CASE("evald logs every request and result to SQLite so they replay to the same verdict") {
  logged_cpu_service f("log");
  auto& eval = f.eval;
  auto& log = f.log;
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
}

TEST_CASE("metrics keep the milliseconds of seconds summed over days") {
  ptxbench::service::service_metrics m;
  ptxbench::evaluation_result r;
  m.record_evaluation(r, 1234567.891);
  const std::string text = m.render(0, 0, 8, 2);
  CAPTURE(text);
  CHECK(text.find("ptxbench_evald_evaluation_seconds_sum 1234567.891") != std::string::npos);
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

TEST_CASE("evald answers and logs a batch whose manifest quotes a non-ASCII character") {
  // One byte of the "é" went into the expression's error message: the answer
  // threw (500 for the whole batch, the good item lost) and no row was logged.
  logged_cpu_service f("utf8");
  auto& eval = f.eval;
  auto& log = f.log;
  {
    running_service svc(*eval, {}, log.get());
    httplib::Client client("127.0.0.1", svc.port());
    client.set_read_timeout(300, 0);
    const std::string dir = (source_dir() / "tasks/solutions/gemm_bf16_mma_sync/").string();
    const std::string ptx = read_text_file(dir + "kernel.ptx");
    json manifest = json::parse(read_text_file(dir + "manifest.json"));
    json good = {{"task", "gemm_bf16_mma_sync"}, {"ptx", ptx}, {"manifest", manifest}, {"run_gpu", false}};
    json batch = json::array({good});
    for (const char* field : {"grid", "block", "shared_bytes"}) {
      json m = manifest;
      if (std::string(field) == "shared_bytes") m["launches"][0][field] = "1 \xc3\xa9";
      else m["launches"][0][field][0] = "M \xc3\xa9";
      batch.push_back({{"task", "gemm_bf16_mma_sync"}, {"ptx", ptx}, {"manifest", m.dump()}, {"run_gpu", false}});
    }
    json as_reply = manifest;
    as_reply["launches"][0]["grid"][0] = "cdiv(N,128)\xc3\xa9";
    batch.push_back({{"task", "gemm_bf16_mma_sync"},
                     {"reply", "```ptx\n" + ptx + "\n```\n```json\n" + as_reply.dump() + "\n```\n"},
                     {"run_gpu", false}});
    auto answered = client.Post("/v1/evaluate/batch", batch.dump(), "application/json");
    REQUIRE(answered);
    REQUIRE(answered->status == 200);
    json results = json::parse(answered->body).at("results");
    REQUIRE(results.size() == 5);
    CHECK(results[0].at("stages").at("compile").at("status") == "passed");
    for (size_t i = 1; i < 5; ++i) {
      CAPTURE(i);
      CHECK(results[i].at("verdict") == "format");
      CHECK(results[i].at("stages").at("format").at("reason").get<std::string>().find("\xc3\xa9") != std::string::npos);
    }
    auto single = client.Post("/v1/evaluate", batch[1].dump(), "application/json");
    REQUIRE(single);
    CHECK(single->status == 200);
  }
  auto rows = log->rows();
  REQUIRE(rows.size() == 6);
  for (const auto& row : rows) {
    CHECK(row.http_status == 200);
    CHECK(row.result.at("verdict").is_string());
  }
}

TEST_CASE("the request log keeps valid UTF-8 and the status the answer went out with") {
  auto path = std::filesystem::temp_directory_path() / ("ptxbench-evald-bytes-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  gated_evaluator eval;
  eval.release();
  auto log = request_log::open(path);
  {
    running_service svc(eval, {}, log.get());
    httplib::Client client("127.0.0.1", svc.port());
    client.set_read_timeout(300, 0);
    // Not JSON: logged as sent, but readable as text (Python's sqlite3 failed on the row).
    auto broken = client.Post("/v1/evaluate", "{\"task\": \"\xff\xc3", "application/json");
    REQUIRE(broken);
    CHECK(broken->status == 400);
    // A rejected body cut in the middle of a character.
    std::string body = "{\"x\": \"";
    while (body.size() < 5000) body += "\xc3\xa9";
    auto cut = client.Post("/v1/evaluate", body, "application/json");
    REQUIRE(cut);
    CHECK(cut->status == 400);
  }
  auto rows = log->rows();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].request == "{\"task\": \"\xef\xbf\xbd\xef\xbf\xbd");
  for (const auto& row : rows) {
    CHECK(utf8_repaired(row.request) == row.request);
    CHECK(utf8_repaired(row.error) == row.error);
  }
  CHECK(rows[1].request.size() < 4200);

  // A row whose result carries invalid UTF-8 is still written.
  service_request_row row;
  row.endpoint = "/v1/evaluate";
  row.http_status = 200;
  row.request = "{}";
  row.result = {{"headline", "bad \xc3"}};
  CHECK_NOTHROW(log->append(row));
  CHECK(log->rows().back().result.at("headline") == "bad \xef\xbf\xbd");
  std::filesystem::remove(path);
}
