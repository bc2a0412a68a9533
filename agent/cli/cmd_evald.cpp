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
#include "agent/cli/options.hpp"
#include "agent/service/server.hpp"
#include "evaluator/api/json_path.hpp"
#include "evaluator/api/local.hpp"

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_evald_stop{false};
void on_evald_signal(int) { g_evald_stop = true; }

int int_option(const cxxopts::ParseResult& args, const std::string& name, int fallback, int lo, int hi) {
  auto v = option_or_env(args, name);
  if (!v) return fallback;
  int n = 0;
  try {
    size_t used = 0;
    n = std::stoi(*v, &used);
    if (used != v->size()) throw std::invalid_argument(*v);
  } catch (const std::exception&) {
    throw input_error("--" + name + " must be an integer, not '" + *v + "'");
  }
  if (n < lo || n > hi) throw input_error("--" + name + " must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return n;
}

}  // namespace

int cmd_evald(int argc, char** argv) {
  cxxopts::Options opts(argv[0],
                        "Serve evaluations over HTTP: POST /v1/evaluate, /v1/evaluate/batch; GET /v1/tasks, "
                        "/v1/health, /v1/metrics. Every request and result is logged to --db.");
  opts.add_options()
    ("host", "address to bind (default 127.0.0.1; any other needs --token-env)", cxxopts::value<std::string>())
    ("port", "port (default 8477; 0 picks a free one)", cxxopts::value<std::string>())
    ("token-env", "environment variable holding the bearer token clients must send", cxxopts::value<std::string>())
    ("db", "request log database (default runs/evald.db; 'none' logs nothing)", cxxopts::value<std::string>())
    ("tasks-dir", "folder of task files", cxxopts::value<std::string>()->default_value("tasks"))
    ("gpu", "GPU stages: auto | off", cxxopts::value<std::string>()->default_value("auto"))
    ("width", "evaluations at once (default: hardware threads, at least 2)", cxxopts::value<std::string>())
    ("queue", "evaluations admitted at once, running and waiting; beyond: 429 (default 64, at most 1024)",
     cxxopts::value<std::string>())
    ("max-batch", "requests in one batch (default and most: --queue, as a batch is admitted whole)",
     cxxopts::value<std::string>())
    ("max-body-mb", "largest request body in MiB (default 64)", cxxopts::value<std::string>())
    ("port-file", "write the bound port to this file once listening (for scripts using --port 0)",
     cxxopts::value<std::string>());
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  const std::string host = option_or_env(args, "host").value_or("127.0.0.1");
  const int port = int_option(args, "port", 8477, 0, 65535);
  service::service_options so;
  if (auto var = option_or_env(args, "token-env")) {
    const char* value = std::getenv(var->c_str());
    if (!value || !*value) throw input_error("--token-env " + *var + ": the variable is not set or empty");
    so.token = value;
  }
  so.width = int_option(args, "width", 0, 0, 1024);
  // evald starts a handler thread per admitted evaluation up front (server.cpp).
  so.capacity = int_option(args, "queue", 64, 1, 1024);
  // One batch is admitted whole: it can hold no more requests than the queue.
  so.max_batch = std::min(int_option(args, "max-batch", so.capacity, 1, 1024), so.capacity);
  so.max_body_bytes = size_t(int_option(args, "max-body-mb", 64, 1, 4096)) << 20;
  const std::string gpu = option_or_env(args, "gpu").value_or("auto");
  if (gpu != "auto" && gpu != "off") throw input_error("--gpu: expected auto or off");
  // Refused before anything starts: an open evaluator runs anyone's code.
  if (!service::is_loopback_host(host) && so.token.empty())
    throw input_error("evald: listening on " + host + " (not loopback) needs a bearer token: --token-env VAR");

  auto tasks = load_task_dir(option_or_env(args, "tasks-dir").value_or("tasks"));
  const std::string db = option_or_env(args, "db").value_or("runs/evald.db");
  std::unique_ptr<request_log> log;
  if (db != "none") log = request_log::open(db);
  local_evaluator_options eo;
  eo.gpu_mode = gpu;
  auto eval = make_local_evaluator(eo);
  service::evald_service svc(*eval, std::move(tasks), so, log.get());
  service::evald_server server(svc);
  const int bound = server.bind(host, port);
  if (auto f = option_or_env(args, "port-file")) {
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

}  // namespace ptxbench::cli
