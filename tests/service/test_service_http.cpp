// evald over real loopback HTTP with this host's evaluator (GPU stages off):
// the answers are the JSON `eval --json` prints, in request order for batches.
#include <doctest/doctest.h>
#include <httplib.h>

#include "agent/http/server.hpp"
#include "idle_sockets.hpp"
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
  req.t = load_task(source_dir() / "tasks", "gemm_bf16_mma_sync");
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
  // Where it broke, as nlohmann says it (line, column, what was expected).
  CHECK(error_of("/v1/evaluate", "{\"task\": 1,,}").find("column 12") != std::string::npos);
  // An unknown key of a megabyte is named in part.
  CHECK(error_of("/v1/evaluate", "{\"" + std::string(1 << 20, 'k') + "\": 1}").size() < 2000);
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
  CHECK(error_of("/v1/evaluate", std::string(1000000, '[')).find("nested deeper") != std::string::npos);
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

TEST_CASE("evald keeps answering health while 40 connections that send nothing are open") {
  gated_evaluator eval;
  service::service_options o;
  o.capacity = 4;
  running_service svc(eval, o);
  int status = 0;
  {
    test::idle_sockets idle(svc.port(), 40);
    REQUIRE(idle.wait_accepted());
    httplib::Client client("127.0.0.1", svc.port());
    client.set_connection_timeout(3, 0);
    client.set_read_timeout(3, 0);
    if (auto r = client.Get("/v1/health")) status = r->status;
  }
  eval.release();
  CHECK(status == 200);
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
  CHECK(http::without_brotli("gzip, deflate, br, zstd") == "gzip, deflate, zstd");
  CHECK(http::without_brotli("br;q=1.0, gzip;q=0.5") == "gzip;q=0.5");
  CHECK(http::without_brotli("BR") == "");
  CHECK(http::without_brotli("br") == "");
  CHECK(http::without_brotli("identity") == "identity");
  CHECK(http::without_brotli(" gzip ,, br ; q=0.2 ,deflate") == "gzip, deflate");
  CHECK(http::without_brotli("") == "");
}

TEST_CASE("evald quotes an unknown task id only in part - cut between characters") {
  gated_evaluator eval;
  eval.release();
  running_service svc(eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  std::string id = "x";
  while (id.size() < (1u << 20)) id += "\xc3\xa9";
  auto res = client.Post("/v1/evaluate", json{{"task", id}, {"reply", "x"}}.dump(), "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  CHECK(res->body.size() < 1000);
  const std::string error = json::parse(res->body).at("error");
  CHECK(error.find("unknown task 'x\xc3\xa9") != std::string::npos);
  CHECK(error.find("\xef\xbf\xbd") == std::string::npos);  // no half character repaired

  // The path's id, 'x' and then two-byte characters: byte 100 is inside one.
  auto one = client.Get(("/v1/tasks/" + id.substr(0, 301)).c_str());
  REQUIRE(one);
  CHECK(one->status == 404);
  const std::string missing = json::parse(one->body).at("error");
  CHECK(missing.find("\xef\xbf\xbd") == std::string::npos);
  CHECK(missing.size() < 200);
}

TEST_CASE("evald reports a compiler it cannot run as an evaluator error - not the candidate's compile failure") {
  auto eval = cpu_evaluator();
  running_service svc(*eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  setenv("PTXBENCH_COMPILER", "ptxas", 1);
  setenv("PTXBENCH_PTXAS", "/nonexistent/ptxas", 1);
  json body = {{"task", "gemm_bf16_mma_sync"}, {"ptx", solution_file("kernel.ptx")},
               {"manifest", solution_file("manifest.json")}, {"run_gpu", false}};
  auto res = client.Post("/v1/evaluate", body.dump(), "application/json");
  unsetenv("PTXBENCH_COMPILER");
  unsetenv("PTXBENCH_PTXAS");
  REQUIRE(res);
  CHECK(res->status == 200);
  json r = json::parse(res->body);
  CHECK(r.at("stages").at("compile").at("status") == "error");
  CHECK(r.at("stages").at("compile").at("reason").get<std::string>().find("ptxas not found") != std::string::npos);
  CHECK(r.at("verdict") == "error");
  CHECK(r.at("passed") == false);
}

TEST_CASE("evald echoes a well-formed X-Request-Id on every answer") {
  gated_evaluator eval;
  eval.release();
  service::service_options o;
  o.max_body_bytes = 1000;
  running_service svc(eval, o);
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  const httplib::Headers id = {{"X-Request-Id", "run-7.traj_3-round.2"}};
  const std::string item = json{{"task", "gemm_bf16_mma_sync"}, {"ptx", "p"}, {"manifest", "{}"}}.dump();
  auto evaluated = client.Post("/v1/evaluate", id, item, "application/json");
  REQUIRE(evaluated);
  CHECK(evaluated->status == 200);
  CHECK(evaluated->get_header_value("X-Request-Id") == "run-7.traj_3-round.2");
  for (const char* path : {"/v1/health", "/v1/tasks", "/v1/metrics", "/v1/nothing"}) {
    auto res = client.Get(path, id);
    REQUIRE(res);
    CHECK_MESSAGE(res->get_header_value("X-Request-Id") == "run-7.traj_3-round.2", path);
  }
  auto bad = client.Post("/v1/evaluate", id, "{", "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(bad->get_header_value("X-Request-Id") == "run-7.traj_3-round.2");
  auto big = client.Post("/v1/evaluate", id, std::string(5000, ' '), "application/json");  // httplib's own 413
  REQUIRE(big);
  CHECK(big->status == 413);
  CHECK(big->get_header_value("X-Request-Id") == "run-7.traj_3-round.2");
  // Anything else is not echoed.
  for (const std::string& other : {std::string(129, 'a'), std::string("a b"), std::string("id;x"), std::string("\xc3\xa9")}) {
    auto res = client.Get("/v1/health", {{"X-Request-Id", other}});
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK_FALSE(res->has_header("X-Request-Id"));
  }
  auto longest = client.Get("/v1/health", {{"X-Request-Id", std::string(128, 'a')}});
  REQUIRE(longest);
  CHECK(longest->get_header_value("X-Request-Id") == std::string(128, 'a'));
}

TEST_CASE("evald refuses a task document with a bad arch or too many targets with 400 at its path") {
  gated_evaluator eval;
  eval.release();
  running_service svc(eval, {});
  httplib::Client client("127.0.0.1", svc.port());
  client.set_read_timeout(300, 0);
  json t = task_to_json(load_task(source_dir() / "tasks", "gemm_bf16_mma_sync"));
  auto error_of = [&](const json& task_doc) {
    auto r = client.Post("/v1/evaluate", json{{"task", task_doc}, {"ptx", "p"}, {"manifest", "{}"}}.dump(),
                         "application/json");
    REQUIRE(r);
    CHECK(r->status == 400);
    return json::parse(r->body).at("error").get<std::string>();
  };
  json bad_arch = t;
  bad_arch["arch"] = "sm_90a -o /x";
  CHECK(error_of(bad_arch).find("$.task.arch: expected sm_<digits>") == 0);
  json many = t;
  many["target_instructions"] = json(std::vector<std::string>(100000, "mma.sync"));
  CHECK(error_of(many).find("$.task.target_instructions: 100000 entries") == 0);
  CHECK(eval.done() == 0);
  auto fine = client.Post("/v1/evaluate", json{{"task", t}, {"ptx", "p"}, {"manifest", "{}"}}.dump(), "application/json");
  REQUIRE(fine);
  CHECK(fine->status == 200);
}
