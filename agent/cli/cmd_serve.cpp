// ptxbench serve: a read-only web viewer over a run database, on 127.0.0.1 by default.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "agent/cli/commands.hpp"
#include "agent/viewer/server.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {

namespace {

int cmd_serve(const option_values& values) {
  const std::string db = values.text("db");
  if (!std::filesystem::exists(db)) throw input_error("no run database at " + db);
  const std::string host = values.text("host");
  const int port = static_cast<int>(values.integer_if("port").value_or(8080));

  auto store = run_store::open(db, true);
  viewer::viewer_server server(*store);
  // SIGINT/SIGTERM are taken by a waiting thread (blocked everywhere else), which
  // stops the server so it shuts down cleanly instead of dying mid-response.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (host != "127.0.0.1" && host != "localhost" && host != "::1") {
    std::fprintf(stderr, "ptxbench: warning: serving on %s: anyone who can reach it reads the database\n",
                 host.c_str());
  }
  int bound = server.bind(host, port);
  std::printf("serving %s at http://%s:%d/ (Ctrl-C to stop)\n", db.c_str(), host.c_str(), bound);
  std::fflush(stdout);
  std::thread([&server, stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
  }).detach();
  server.serve();
  return exit_code::ok;
}

}  // namespace

const command_spec& serve_command() {
  static const command_spec spec{
      "serve", cmd_serve, "read-only web viewer over a run database",
      "Serve a read-only web viewer over a run database: experiments, trajectories, each round's prompt, feedback, "
      "reply, PTX diff and figures. JSON under /api/.",
      {"db", "host", "port"},
      {"db"}};
  return spec;
}

}  // namespace ptxbench::cli
