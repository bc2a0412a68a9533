#include "evaluator/compile/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>

extern char** environ;

namespace ptxbench {

namespace fs = std::filesystem;

namespace {
bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// Reads both pipes until they close or the deadline passes; true on timeout.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err, int limit_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (pollfd& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n > 0) {
        std::string& sink = *sinks[&p - fds];
        if (sink.size() < k_max_process_output_bytes) {
          sink.append(buffer, std::min(static_cast<size_t>(n), k_max_process_output_bytes - sink.size()));
          if (sink.size() == k_max_process_output_bytes)
            sink += "\n[output cut at " + std::to_string(k_max_process_output_bytes) + " bytes]\n";
        }
      } else if (n == 0 || errno != EINTR) {
        p.fd = -1;
        --open_fds;
      }
    }
  }
  return false;
}
}  // namespace

process_result run_process(const std::vector<std::string>& argv, int limit_ms) {
  process_result result;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.failure = "pipe failed";
    return result;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    result.failure = "pipe failed";
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    result.failure = "could not start " + argv[0];
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  bool timed_out = drain(out_pipe[0], err_pipe[0], result.out, result.err, limit_ms);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  // A child that closed its pipes may still run: the limit holds for the wait too.
  while (!timed_out) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) timed_out = true;
    else ::usleep(2000);
  }
  if (timed_out) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out) {
    result.timed_out = true;
    result.failure = fs::path(argv[0]).filename().string() + " ran past " +
                     (limit_ms % 1000 == 0 ? std::to_string(limit_ms / 1000) + " s" : std::to_string(limit_ms) + " ms");
    return result;
  }
  result.ran = true;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

temp_file::temp_file(const std::string& prefix, const std::string& suffix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX" + suffix;
  const int fd = ::mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0) return;
  ::close(fd);
  m_path = pattern;
}

temp_file::~temp_file() {
  if (!m_path.empty()) ::unlink(m_path.c_str());
}

bool temp_file::write(const char* data, size_t size) const {
  std::ofstream out(m_path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

std::vector<char> temp_file::read() const {
  std::ifstream in(m_path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

fs::path find_executable(const std::string& name, const std::vector<fs::path>& candidates) {
  for (const fs::path& c : candidates) {
    if (executable(c)) return c;
  }
  if (const char* path = std::getenv("PATH")) {
    const std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      const size_t end = std::min(dirs.find(':', start), dirs.size());
      if (end > start && executable(fs::path(dirs.substr(start, end - start)) / name)) {
        return fs::path(dirs.substr(start, end - start)) / name;
      }
      start = end + 1;
    }
  }
  return {};
}

}  // namespace ptxbench
