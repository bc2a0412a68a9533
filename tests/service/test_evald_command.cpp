// `ptxbench evald`'s options, through the executable: refused values exit at
// once with the reason, before anything listens.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A listener as another cpp-httplib server makes it (SO_REUSEPORT set): evald
// used to listen beside it silently and take half of its connections.
TEST_CASE("evald on a port another server listens on exits 2 naming the port") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 16) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const int port = ntohs(addr.sin_port);
  const command_result r =
      run_evald("--gpu off --tasks-dir " + std::string(PTXBENCH_SOURCE_DIR) + "/tasks --port " + std::to_string(port));
  ::close(fd);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(r.output.find("in use") != std::string::npos);
}
