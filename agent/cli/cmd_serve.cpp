// ptxbench serve: a read-only web viewer over a run database, on 127.0.0.1 by default.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/viewer/server.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::cli {

int cmd_serve(int argc, char** argv) {
  cxxopts::Options opts(argv[0],
                        "Serve a read-only web viewer over a run database: experiments, trajectories, each round's "
                        "prompt, feedback, reply, PTX diff and figures. JSON under /api/.");
  opts.add_options()
    ("db", "run database", cxxopts::value<std::string>())
    ("host", "address to bind (default 127.0.0.1; anything else exposes model output to the network)",
     cxxopts::value<std::string>())
    ("port", "port (default 8080; 0 picks a free one)", cxxopts::value<std::string>());
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  auto db = option_or_env(args, "db");
  if (!db) throw input_error("--db is required");
  if (!std::filesystem::exists(*db)) throw input_error("no run database at " + *db);
  std::string host = option_or_env(args, "host").value_or("127.0.0.1");
  const int port = int_option("port", option_or_env(args, "port").value_or("8080"), 0, 65535);

  auto store = run_store::open(*db, true);
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
  std::printf("serving %s at http://%s:%d/ (Ctrl-C to stop)\n", db->c_str(), host.c_str(), bound);
  std::fflush(stdout);
  std::thread([&server, stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
  }).detach();
  server.serve();
  return exit_code::ok;
}

}  // namespace ptxbench::cli
