// evald over real loopback HTTP with this host's evaluator (GPU stages off):
// the answers are the JSON `eval --json` prints, in request order for batches.
#include <doctest/doctest.h>
#include <httplib.h>

#include "agent/service/http_encoding.hpp"
#include "evaluator/api/local.hpp"
#include "service_fixture.hpp"

using namespace ptxbench;
using namespace ptxbench::testing;
using nlohmann::json;

namespace {

std::string solution_file(const std::string& name) {
  return read_text_file(source_dir() / "tasks/solutions/gemm_bf16_mma_sync" / name);
}

std::string solution_reply() {
  return "Here is the kernel.\n\n```ptx\n" + solution_file("kernel.ptx") + "\n```\n\n```json\n" +
         solution_file("manifest.json") + "\n```\n";
}

std::unique_ptr<evaluator> cpu_evaluator() {
  local_evaluator_options o;
  o.gpu_mode = "off";
  return make_local_evaluator(o);
}

// Stage statuses and reasons, verdict and headline: what must not depend on
// where the evaluation ran (timings and drawn seeds do).
json verdict_of(const json& r) {
  json stages = json::object();
  for (auto& [name, s] : r.at("stages").items()) stages[name] = {s.at("status"), s.at("reason")};
  return {{"passed", r.at("passed")}, {"verdict", r.at("verdict")}, {"headline", r.at("headline")}, {"stages", stages}};
}

}  // namespace

TEST_CASE("evald answers POST /v1/evaluate with the result eval --json prints") {
  auto eval = cpu_evaluator();
  running_service svc(*eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  json body = {{"task", "gemm_bf16_mma_sync"}, {"ptx", solution_file("kernel.ptx")},
               {"manifest", solution_file("manifest.json")}, {"run_gpu", false}};
  auto res = client.Post("/v1/evaluate", body.dump(), "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  json got = json::parse(res->body);

  evaluation_request req;
  req.t = load_task_file(source_dir() / "tasks/gemm_bf16_mma_sync.json");
  req.ptx = solution_file("kernel.ptx");
  req.manifest_text = solution_file("manifest.json");
  req.run_gpu = false;
  json local = to_json(eval->evaluate(req));
  CHECK(verdict_of(got) == verdict_of(local));
  CHECK(got.at("stages").at("compile").at("status") == "passed");
  CHECK(got.at("compile").at("cubin_bytes").get<int>() > 0);
  // Every field eval --json has, and nothing else.
  for (auto& [k, v] : local.items()) CHECK_MESSAGE(got.contains(k), k);
  CHECK(got.size() == local.size());

  // The same candidate as a whole reply; a reply without a candidate fails format (no 400).
  auto as_reply = client.Post("/v1/evaluate", json{{"task", "gemm_bf16_mma_sync"}, {"reply", solution_reply()},
                                                   {"run_gpu", false}}.dump(), "application/json");
  REQUIRE(as_reply);
  CHECK(as_reply->status == 200);
  CHECK(verdict_of(json::parse(as_reply->body)) == verdict_of(local));
  auto garbage = client.Post("/v1/evaluate", json{{"task", "gemm_bf16_mma_sync"}, {"reply", "no code here"}}.dump(),
                             "application/json");
  REQUIRE(garbage);
  CHECK(garbage->status == 200);
  json g = json::parse(garbage->body);
  CHECK(g.at("verdict") == "format");
  CHECK(g.at("stages").at("format").at("status") == "failed");
}

TEST_CASE("evald batch returns results in request order with bad items named by JSON path") {
  auto eval = cpu_evaluator();
  running_service svc(*eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  std::string broken = solution_file("kernel.ptx");
  broken.replace(broken.find(".entry"), 6, ".entri");
  json items = json::array({
      {{"task", "gemm_bf16_mma_sync"}, {"reply", "garbage"}},
      {{"task", "gemm_bf16_mma_sync"}, {"reply", solution_reply()}, {"run_gpu", false}},
      {{"task", "gemm_bf16_mma_sync"}, {"ptx", solution_file("kernel.ptx") + "\n bogus.instr;\n"},
       {"manifest", json::parse(solution_file("manifest.json"))}},
  });
  auto res = client.Post("/v1/evaluate/batch", json{{"requests", items}}.dump(), "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  json results = json::parse(res->body).at("results");
  REQUIRE(results.size() == 3);
  CHECK(results[0].at("verdict") == "format");
  CHECK(results[1].at("stages").at("compile").at("status") == "passed");
  CHECK(results[2].at("verdict") == "compile");
  CHECK(results[2].at("stages").at("compile").at("status") == "failed");

  // A bare array works too; one bad item refuses the batch with its path.
  items[1].erase("reply");
  items[1]["ptx"] = "x";
  auto bad = client.Post("/v1/evaluate/batch", items.dump(), "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(json::parse(bad->body).at("error").get<std::string>().find("$[1].manifest") != std::string::npos);
}

TEST_CASE("evald rejects malformed requests with 400 and the JSON path - never a crash") {
  auto eval = cpu_evaluator();
  running_service svc(*eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  auto error_of = [&](const std::string& path, const std::string& body) {
    auto r = client.Post(path.c_str(), body, "application/json");
    REQUIRE(r);
    CHECK(r->status == 400);
    return json::parse(r->body).at("error").get<std::string>();
  };
  CHECK(error_of("/v1/evaluate", "{not json").find("not valid JSON") != std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":"nope","reply":"x"})").find("$.task: unknown task 'nope'") !=
        std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":7,"reply":"x"})").find("$.task") != std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":"gemm_bf16_mma_sync","reply":"x","ptx":"y"})").find("$.reply") !=
        std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":"gemm_bf16_mma_sync","reply":"x","colour":1})").find("colour") !=
        std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":"gemm_bf16_mma_sync","reply":"x","seeds":[-1]})").find("$.seeds[0]") !=
        std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":"gemm_bf16_mma_sync","reply":"x","time_limit_ms":1e9})")
            .find("$.time_limit_ms") != std::string::npos);
  CHECK(error_of("/v1/evaluate", R"({"task":{"id":"t"},"reply":"x"})").find("$.task") != std::string::npos);
  CHECK(error_of("/v1/evaluate", std::string(100000, '[')).find("nested deeper") != std::string::npos);
  CHECK(error_of("/v1/evaluate/batch", "[]").find("empty") != std::string::npos);
  CHECK(error_of("/v1/evaluate/batch", R"({"items":[]})").find("requests") != std::string::npos);

  auto get = client.Get("/v1/evaluate");
  REQUIRE(get);
  CHECK(get->status == 405);
  auto missing = client.Get("/v1/nothing");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  auto tasks = client.Get("/v1/tasks");
  REQUIRE(tasks);
  CHECK(tasks->status == 200);
  CHECK(json::parse(tasks->body).at("tasks").size() == load_task_dir(source_dir() / "tasks").size());
  auto one = client.Get("/v1/tasks/gemm_bf16_mma_sync");
  REQUIRE(one);
  CHECK(json::parse(one->body).at("id") == "gemm_bf16_mma_sync");
  auto health = client.Get("/v1/health");
  REQUIRE(health);
  CHECK(json::parse(health->body).at("status") == "ok");
}

TEST_CASE("evald answers JSON uncompressed even to a client that offers brotli") {
  // cpp-httplib compresses exactly "application/json" with brotli at its
  // slowest quality: 26 ms per 12 KB result on the GPU machine.
  auto eval = cpu_evaluator();
  running_service svc(*eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_decompress(false);
  const httplib::Headers offers = {{"Accept-Encoding", "br, gzip, deflate"}};
  for (const char* path : {"/v1/tasks", "/v1/health"}) {
    auto res = client.Get(path, offers);
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK_MESSAGE(!res->has_header("Content-Encoding"), std::string(path), " came back encoded: ", res->get_header_value("Content-Encoding"));
    CHECK(res->get_header_value("Content-Type").find("application/json") == 0);
    CHECK(json::accept(res->body));
  }
  json body = {{"task", "gemm_bf16_mma_sync"}, {"ptx", solution_file("kernel.ptx")},
               {"manifest", solution_file("manifest.json")}, {"run_gpu", false}};
  client.set_read_timeout(300, 0);
  auto res = client.Post("/v1/evaluate", offers, body.dump(), "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(!res->has_header("Content-Encoding"));
  CHECK(json::parse(res->body).at("stages").at("compile").at("status") == "passed");
}

TEST_CASE("evald's text answers never come back in brotli") {
  auto eval = cpu_evaluator();
  running_service svc(*eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_decompress(false);
  auto res = client.Get("/v1/metrics", {{"Accept-Encoding", "br;q=1.0, gzip;q=0.5"}});
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->get_header_value("Content-Encoding") != "br");
}

TEST_CASE("an Accept-Encoding loses its br entries and keeps the rest") {
  CHECK(without_brotli("gzip, deflate, br, zstd") == "gzip, deflate, zstd");
  CHECK(without_brotli("br;q=1.0, gzip;q=0.5") == "gzip;q=0.5");
  CHECK(without_brotli("BR") == "");
  CHECK(without_brotli("br") == "");
  CHECK(without_brotli("identity") == "identity");
  CHECK(without_brotli(" gzip ,, br ; q=0.2 ,deflate") == "gzip, deflate");
  CHECK(without_brotli("") == "");
}
