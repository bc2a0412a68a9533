// `ptxbench evald`'s options, through the executable: refused values exit at
// once with the reason, before anything listens.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

struct command_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs ptxbench evald with `args`, killed after 20 s (a value that made evald
// hang must fail the test, not hold it).
command_result run_evald(const std::string& args) {
  const std::string command = "timeout 20 " + std::string(PTXBENCH_EXE) + " evald --db none " + args + " 2>&1";
  command_result r;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST_CASE("evald refuses a --queue past 1024 at once instead of hanging on its threads") {
  // --queue 100000 made evald start 100008 handler threads: thread creation
  // failed and evald hung, deaf to SIGTERM.
  const command_result big = run_evald("--port 0 --queue 100000");
  CHECK(big.exit_code != 0);
  CHECK(big.exit_code != 124);  // not killed by timeout
  CHECK(big.output.find("--queue: 100000 is out of range (1 to 1024)") != std::string::npos);
  const command_result batch = run_evald("--port 0 --max-batch 5000");
  CHECK(batch.exit_code != 124);
  CHECK(batch.output.find("--max-batch: 5000 is out of range (1 to 1024)") != std::string::npos);
  const command_result help = run_evald("--help");
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("1 to 1024") != std::string::npos);
  CHECK(help.output.find("default and most: --queue") != std::string::npos);
}

TEST_CASE("evald refuses a host name that only starts like a loopback address without a token") {
  const command_result r = run_evald("--port 0 --host 127.0.0.1.example.invalid");
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);
  CHECK(r.output.find("needs a bearer token") != std::string::npos);
}
