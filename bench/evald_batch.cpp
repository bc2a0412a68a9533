// The evaluation service's cost over in-process evaluation, on this machine.
//   1. added latency: the same candidate judged in-process and through evald on
//      loopback (remote_evaluator, one POST /v1/evaluate at a time), median of
//      each and of their difference; and the same with an evaluator that
//      answers at once, which isolates the service's own cost (HTTP, JSON both
//      ways, queue, SQLite log), with an empty result and with the real
//      evaluator's result recorded (its size: timeline, counts, reports);
//   2. batch throughput: POST /v1/evaluate/batch of --batch items, --rounds
//      times, against `width` concurrent in-process evaluations.
// Usage: ptxbench_bench_evald [--gpu auto|off] [--n 20] [--batch 16] [--rounds 4] [--width 2] [--replay RESULT.json]
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include "agent/http/remote_evaluator.hpp"
#include "agent/service/server.hpp"
#include "evaluator/api/verdict.hpp"
#include "bench/source_dir.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/local.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

using bench::source_dir;

namespace {

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

class instant_evaluator final : public evaluator {
 public:
  evaluation_result evaluate(const evaluation_request&) override {
    evaluation_result r;
    r.evaluator_version = "instant";
    r.verdict = stage::runtime;
    for (int i = 0; i < stage_count; ++i) r.stages[stage(i)] = {stage_status::not_run, "", 0.0};
    r.stages[stage::format] = {stage_status::passed, "", 0.0};
    r.stages[stage::compile] = {stage_status::passed, "", 0.0};
    return r;
  }
  std::string version() const override { return "instant"; }
  std::string gpu_description() const override { return "none"; }
};

// Answers at once with one recorded result: the service's cost for a result
// of real size (timeline, counts, reports), without the GPU's own spread.
class replay_evaluator final : public evaluator {
 public:
  explicit replay_evaluator(evaluation_result r) : m_result(std::move(r)) {}
  evaluation_result evaluate(const evaluation_request&) override { return m_result; }
  std::string version() const override { return m_result.evaluator_version; }
  std::string gpu_description() const override { return "none (recorded result)"; }

 private:
  evaluation_result m_result;
};

// What must agree between in-process and remote: the verdict and every
// stage's status (headlines carry measured times, which differ run to run).
std::string disagreement(const evaluation_result& a, const evaluation_result& b) {
  if (a.passed != b.passed || a.verdict != b.verdict)
    return "verdict " + verdict_name(a) + " against " + verdict_name(b);
  for (const auto& [st, out] : a.stages) {
    auto it = b.stages.find(st);
    if (it == b.stages.end() || it->second.status != out.status)
      return std::string(to_string(st)) + " " + to_string(out.status) + " against " +
             (it == b.stages.end() ? "absent" : to_string(it->second.status));
  }
  return "";
}

struct served {
  served(evaluator& e, int width, request_log* log)
      : service(e, load_task_dir(source_dir() / "tasks"), options(width), log), server(service) {
    port = server.bind("127.0.0.1", 0);
    thread = std::thread([this] { server.serve(); });
  }
  ~served() {
    server.stop();
    thread.join();
  }
  static service::service_options options(int width) {
    service::service_options o;
    o.width = width;
    o.capacity = 1024;
    o.max_batch = 1024;
    return o;
  }
  service::evald_service service;
  service::evald_server server;
  int port = 0;
  std::thread thread;
};

// Median in-process, median remote, median of the paired differences (ms).
// The pairs alternate which goes first, so what one evaluation leaves behind
// (spare workers being replaced) falls on either side alike. Returns the
// last in-process result.
evaluation_result added_latency(const char* label, evaluator& local, int width, const evaluation_request& req, int n,
                                request_log* log) {
  served s(local, width, log);
  remote_evaluator_options ro;
  ro.urls = {"http://127.0.0.1:" + std::to_string(s.port)};
  auto remote = make_remote_evaluator(ro);
  std::vector<double> a, b, d;
  evaluation_result x, y;
  int mismatches = 0;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 2; ++k) {
      const bool in_process = (k == 0) == (i % 2 == 0);
      const auto t0 = clock_type::now();
      (in_process ? x : y) = in_process ? local.evaluate(req) : remote->evaluate(req);
      (in_process ? a : b).push_back(ms_since(t0));
    }
    d.push_back(b.back() - a.back());
    if (const std::string why = disagreement(x, y); !why.empty()) {
      ++mismatches;
      std::printf("  MISMATCH in pair %d: %s\n", i, why.c_str());
    }
  }
  std::printf("%-34s in-process %8.2f ms | evald %8.2f ms | added %7.2f ms (median of %d pairs; %d verdicts differ)\n",
              label, median(a), median(b), median(d), n, mismatches);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  std::string gpu = "off", replay_path;
  int n = 20, batch = 16, rounds = 4, width = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--gpu") gpu = v;
    else if (k == "--n") n = std::stoi(v);
    else if (k == "--batch") batch = std::stoi(v);
    else if (k == "--rounds") rounds = std::stoi(v);
    else if (k == "--width") width = std::stoi(v);
    else if (k == "--replay") replay_path = v;  // a result's JSON (eval --json): the service's cost for it alone
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const fs::path src = source_dir();
  const fs::path sol = src / "tasks/solutions/gemm_bf16_mma_sync";
  evaluation_request req;
  req.t = load_task(src / "tasks", "gemm_bf16_mma_sync");
  req.ptx = read_text_file(sol / "kernel.ptx");
  req.manifest_text = read_text_file(sol / "manifest.json");
  req.run_gpu = gpu != "off";
  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  auto local = make_local_evaluator(eo);
  const fs::path log_path = fs::temp_directory_path() / ("ptxbench-bench-evald-" + std::to_string(::getpid()) + ".db");
  auto log = request_log::open(log_path);
  std::printf("evald benchmark: gemm_bf16_mma_sync reference solution, GPU: %s, evaluator %s, width %d\n",
              local->gpu_description().c_str(), local->version().c_str(), width);

  if (!replay_path.empty()) {
    replay_evaluator replay(evaluation_result_from_json(nlohmann::json::parse(read_text_file(replay_path))));
    added_latency("the recorded result (service cost)", replay, width, req, n * 5, log.get());
    std::filesystem::remove(log_path);
    return 0;
  }
  instant_evaluator instant;
  added_latency("instant evaluator (service cost)", instant, width, req, n * 5, log.get());
  const evaluation_result real = added_latency("this host's evaluator", *local, width, req, n, log.get());
  replay_evaluator replay(real);
  std::printf("recorded result: %zu bytes of JSON\n", to_json(real).dump().size());
  added_latency("its result, recorded (service cost)", replay, width, req, n * 5, log.get());

  // Throughput: in-process with `width` threads, then batches over HTTP.
  const int total = batch * rounds;
  auto t0 = clock_type::now();
  {
    std::vector<std::future<void>> f;
    std::atomic<int> next{0};
    for (int w = 0; w < width; ++w)
      f.push_back(std::async(std::launch::async, [&] {
        while (next++ < total) local->evaluate(req);
      }));
    for (auto& x : f) x.get();
  }
  const double in_process_s = ms_since(t0) / 1000;
  double batch_s = 0;
  {
    served s(*local, width, log.get());
    httplib::Client client("127.0.0.1", s.port);
    client.set_read_timeout(600, 0);
    nlohmann::json item = {{"task", req.t.id}, {"ptx", req.ptx}, {"manifest", req.manifest_text}, {"run_gpu", req.run_gpu}};
    nlohmann::json body = {{"requests", std::vector<nlohmann::json>(size_t(batch), item)}};
    const std::string text = body.dump();
    t0 = clock_type::now();
    for (int r = 0; r < rounds; ++r) {
      auto res = client.Post("/v1/evaluate/batch", text, "application/json");
      if (!res || res->status != 200) {
        std::fprintf(stderr, "batch %d failed\n", r);
        return 3;
      }
    }
    batch_s = ms_since(t0) / 1000;
  }
  std::printf("throughput, %d evaluations:          in-process (%d threads) %7.2f req/s | evald batches of %d %7.2f "
              "req/s\n",
              total, width, total / in_process_s, batch, total / batch_s);
  std::printf("request log rows written: %zu\n", log->rows(0, 1000000).size());
  std::filesystem::remove(log_path);
  return 0;
}
