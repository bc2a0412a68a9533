#pragma once
// Runs the ptxbench executable as a child process for end-to-end tests.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::test {

struct process_result {
  int exit_code = -1;   // -1 when killed by a signal
  int signal = 0;
  std::string output;   // stdout and stderr together
};

// Starts ptxbench with `args` in `cwd`, output to `log`. Returns the pid.
inline pid_t spawn_ptxbench(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                            const std::filesystem::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(PTXBENCH_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(PTXBENCH_EXE, argv.data());
    _exit(127);
  }
  return pid;
}

inline process_result wait_for(pid_t pid, const std::filesystem::path& log) {
  int status = 0;
  waitpid(pid, &status, 0);
  process_result r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

// Runs any program (found on PATH) with `args` in `cwd`, output to `log`.
inline pid_t spawn_command(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                           const std::filesystem::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

inline std::filesystem::path next_log_path() {
  // A log per process and call, outside the working folder: tests run in parallel.
  static int calls = 0;
  return std::filesystem::temp_directory_path() /
         ("ptxbench_cli_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".log");
}

inline process_result run_command(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  const auto log = next_log_path();
  auto r = wait_for(spawn_command(args, cwd, log), log);
  std::filesystem::remove(log);
  return r;
}

inline process_result run_ptxbench(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  const auto log = next_log_path();
  auto r = wait_for(spawn_ptxbench(args, cwd, log), log);
  std::filesystem::remove(log);
  return r;
}

}  // namespace ptxbench::test
