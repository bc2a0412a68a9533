// ptxbench evald: the evaluation service (agent/service) over this host's
// evaluator, on 127.0.0.1 by default; another address needs a bearer token.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "agent/cli/commands.hpp"
#include "agent/service/server.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_evald_stop{false};
void on_evald_signal(int) { g_evald_stop = true; }

int cmd_evald(const option_values& values) {
  const std::string host = values.text("host");
  const int port = static_cast<int>(values.integer_if("port").value_or(8477));
  service::service_options so;
  if (auto var = values.text_if("token-env")) {
    const char* value = std::getenv(var->c_str());
    if (!value || !*value) throw input_error("--token-env " + *var + ": the variable is not set or empty");
    so.token = value;
  }
  so.width = static_cast<int>(values.integer("width"));
  // evald starts a handler thread per admitted evaluation up front (server.cpp).
  so.capacity = static_cast<int>(values.integer("queue"));
  // One batch is admitted whole: it can hold no more requests than the queue.
  so.max_batch = std::min(static_cast<int>(values.integer_if("max-batch").value_or(so.capacity)), so.capacity);
  so.max_body_bytes = size_t(values.integer("max-body-mb")) << 20;
  const std::string gpu = values.text("gpu");
  // Refused before anything starts: an open evaluator runs anyone's code.
  if (!service::is_loopback_host(host) && so.token.empty())
    throw input_error("evald: listening on " + host + " (not loopback) needs a bearer token: --token-env VAR");

  auto tasks = load_task_dir(values.text("tasks-dir"));
  const std::string db = values.text("evald.db");
  std::unique_ptr<request_log> log;
  if (db != "none") log = request_log::open(db);
  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  auto eval = make_local_evaluator(eo);
  service::evald_service svc(*eval, std::move(tasks), so, log.get());
  service::evald_server server(svc);
  const int bound = server.bind(host, port);
  if (auto f = values.text_if("port-file")) {
    if (std::FILE* out = std::fopen(f->c_str(), "w")) {
      std::fprintf(out, "%d\n", bound);
      std::fclose(out);
    } else {
      throw input_error("--port-file: cannot write " + *f);
    }
  }
  std::fprintf(stderr, "evald on http://%s:%d/v1/ | evaluator %s, GPU: %s | width %d, queue %d | log %s%s\n",
               host.c_str(), bound, eval->version().c_str(), eval->gpu_description().c_str(), svc.options().width,
               so.capacity, db.c_str(), so.token.empty() ? "" : " | bearer token required");
  std::signal(SIGINT, on_evald_signal);
  std::signal(SIGTERM, on_evald_signal);
  std::thread watcher([&server] {
    while (!g_evald_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server.stop();
  });
  server.serve();
  g_evald_stop = true;
  watcher.join();
  return exit_code::ok;
}

}  // namespace

const command_spec& evald_command() {
  static const command_spec spec{
      "evald", cmd_evald, "evaluation service over HTTP (for RL trainers and remote runs)",
      "Serve evaluations over HTTP: POST /v1/evaluate, /v1/evaluate/batch; GET /v1/tasks, /v1/health, /v1/metrics. "
      "Every request and result is logged to --db.",
      {"host", "port", "token-env", "evald.db", "tasks-dir", "gpu", "width", "queue", "max-batch", "max-body-mb",
       "port-file"}};
  return spec;
}

}  // namespace ptxbench::cli
