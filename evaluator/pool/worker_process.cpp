#include "evaluator/pool/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace ptxbench {
namespace {

using clock_type = std::chrono::steady_clock;

// Allowance before the worker's first progress message of a job (parsing,
// module load): generous, since only a broken worker overruns it.
constexpr double k_job_start_allowance_ms = 60000;
// Added to every progress allowance: pipe latency and the worker's own bookkeeping.
constexpr double k_slack_ms = 250;
// How often a job that may be stopped (run's `stop`) looks at its flag.
constexpr int k_stop_poll_ms = 50;

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

std::string format_ms(double ms) {
  std::ostringstream s;
  s << int64_t(ms + 0.5);
  return s.str();
}

}  // namespace

worker_process::worker_process(std::string executable, int device)
    : m_executable(std::move(executable)), m_device(device) {}

worker_process::~worker_process() {
  kill_and_reap();
  if (!m_stderr_path.empty()) std::filesystem::remove(m_stderr_path);
}

void worker_process::prepare_exec(exec_vectors& v, bool wait_for_gpu) const {
  v.args = {m_executable, "--device", std::to_string(m_device)};
  if (m_spare) v.args.push_back("--spare");
  if (wait_for_gpu) v.args.push_back("--wait-for-gpu");
  if (wait_for_gpu && m_context_ungated) v.args.push_back("--context-ungated");
  if (m_known_peak_tflops > 0 && m_known_copy_gbps > 0) {
    for (std::string a : {std::string("--peak-tflops"), std::to_string(m_known_peak_tflops), std::string("--copy-gbps"),
                          std::to_string(m_known_copy_gbps)})
      v.args.push_back(a);
  }
  for (auto& a : v.args) v.argv.push_back(a.data());
  v.argv.push_back(nullptr);
  // The child's environment: ours, with the variables set for this worker
  // (CUDA_VISIBLE_DEVICES when it has its own GPU) replaced.
  std::map<std::string, std::string> overrides;
  for (const auto& [name, value] : m_environment)
    if (!value.empty()) overrides[name] = value;
  for (const auto& [name, value] : overrides) v.assignments.push_back(name + "=" + value);
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    const std::string name = eq ? std::string(*e, size_t(eq - *e)) : std::string(*e);
    if (!overrides.count(name)) v.envp.push_back(*e);
  }
  for (auto& a : v.assignments) v.envp.push_back(a.data());
  v.envp.push_back(nullptr);
}

bool worker_process::spawn(const exec_vectors& v, int err_fd, worker_start& out) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : to_child) ::close(fd);
    return false;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    out.error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::dup2(err_fd, 2);
    ::execve(v.argv[0], v.argv.data(), v.envp.data());
    _exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  m_pid = pid;
  m_to_worker = to_child[1];
  m_from_worker = from_child[0];
  m_reader = std::make_unique<protocol::line_reader>(m_from_worker);
  return true;
}

worker_start worker_process::await_hello(int timeout_ms, const std::function<void()>& before_gpu) {
  worker_start out;
  std::string line;
  auto deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count());
    auto st = m_reader->read_line(line, left > 0 ? left : 0);
    if (st == protocol::line_reader::status::timeout) {
      kill_and_reap();
      out.error = "GPU worker did not report ready within " + std::to_string(timeout_ms) + " ms" + stderr_tail();
      return out;
    }
    if (st == protocol::line_reader::status::eof) {
      std::string how = reap_description();
      std::string tail = stderr_tail();
      // The common case on a machine without the NVIDIA driver, said plainly.
      if (tail.find("libcuda.so.1") != std::string::npos)
        out.error = "the NVIDIA driver (libcuda.so.1) is not installed, so the GPU worker cannot start";
      else
        out.error = "GPU worker could not start (" + how + ")" + tail;
      return out;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // stray output (a library banner): not protocol
    std::string type = j.value("type", "");
    if (type == "hello") {
      out.ok = true;
      out.hello = protocol::hello_from_json(j);
      return out;
    }
    if (type == "fatal") {
      out.error = j.value("error", "GPU worker failed to start");
      kill_and_reap();
      return out;
    }
    if (type == "ready_to_start" && before_gpu) {
      before_gpu();  // may block; the start's deadline counts from here
      deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
      protocol::write_line(m_to_worker, R"({"type":"go"})");  // its death shows as end of file
    }
  }
}

worker_start worker_process::start(int timeout_ms, const std::function<void()>& before_gpu) {
  worker_start out;
  kill_and_reap();
  if (::access(m_executable.c_str(), X_OK) != 0) {
    out.error = "GPU worker not found or not executable at " + m_executable;
    return out;
  }
  std::string pattern = temp_dir() + "/ptxbench-worker-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int err_fd = ::mkstemp(name.data());
  if (err_fd < 0) {
    out.error = "cannot create the worker's stderr file in " + temp_dir() + ": " + std::strerror(errno);
    return out;
  }
  ::fcntl(err_fd, F_SETFD, FD_CLOEXEC);
  if (!m_stderr_path.empty()) std::filesystem::remove(m_stderr_path);
  m_stderr_path = name.data();
  exec_vectors v;
  prepare_exec(v, bool(before_gpu));
  const bool spawned = spawn(v, err_fd, out);
  ::close(err_fd);
  if (!spawned) return out;
  return await_hello(timeout_ms, before_gpu);
}

job_outcome worker_process::run(const protocol::worker_job& job, const std::function<void()>& before_gpu,
                                const std::function<void()>& after_gpu, const std::atomic<bool>* stop) {
  job_outcome out;
  if (!alive()) {
    out.cause = "GPU worker is not running";
    return out;
  }
  if (!protocol::write_line(m_to_worker, protocol::to_json(job).dump())) {
    out.cause = "worker died before taking the job (" + reap_description() + ")" + stderr_tail();
    return out;
  }
  const auto sent = clock_type::now();
  out.sent_at = sent;
  double allowance_ms = k_job_start_allowance_ms;
  auto deadline = clock_type::now() + std::chrono::milliseconds(int64_t(allowance_ms + k_slack_ms));
  std::string line;
  out.trail.push_back({"sending the job", 0.0});
  while (true) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count());
    if (stop && stop->load()) {
      kill_and_reap();
      out.end = job_end::stopped;
      out.cause = "stopped by the supervisor" + (out.last.what.empty() ? std::string() : " in " + out.last.what);
      return out;
    }
    // With a stop flag, wake at least every k_stop_poll_ms to look at it.
    const int wait_ms = std::max(0, stop ? std::min(left, k_stop_poll_ms) : left);
    auto st = m_reader->read_line(line, wait_ms);
    if (st == protocol::line_reader::status::timeout && wait_ms < left) continue;
    if (st == protocol::line_reader::status::timeout) {
      kill_and_reap();
      out.end = job_end::timeout;
      out.cause = "timeout after " + format_ms(allowance_ms) + " ms in " +
                  (out.last.what.empty() ? std::string("job setup") : out.last.what) +
                  (out.last.launch >= 0 ? ": the kernel did not finish (infinite loop or deadlock?); worker killed"
                                        : ": worker killed");
      return out;
    }
    if (st == protocol::line_reader::status::eof) {
      std::string how = reap_description();
      out.end = job_end::died;
      out.cause = "worker died: " + how + (out.last.what.empty() ? "" : " during " + out.last.what) + stderr_tail();
      return out;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    std::string type = j.value("type", "");
    const auto note = [&out, sent](std::string what) {
      if (out.trail.size() < 256)
        out.trail.push_back({std::move(what), std::chrono::duration<double, std::milli>(clock_type::now() - sent).count()});
    };
    if (type == "progress") {
      out.last = protocol::progress_from_json(j);
      note(out.last.what);
      allowance_ms = out.last.limit_ms;
      deadline = clock_type::now() + std::chrono::milliseconds(int64_t(allowance_ms + k_slack_ms));
    } else if (type == "gpu_idle") {
      note("gpu_idle");
      if (after_gpu) after_gpu();
    } else if (type == "ready_to_time") {
      note("waiting for the GPU");
      if (before_gpu) before_gpu();
      note("go");
      if (!protocol::write_line(m_to_worker, R"({"type":"go"})")) continue;  // its death shows as end of file
      deadline = clock_type::now() + std::chrono::milliseconds(int64_t(allowance_ms + k_slack_ms));
    } else if (type == "result") {
      note("result");
      out.end = job_end::result;
      out.result = protocol::result_from_json(j);
      // It exits by itself after a lost context or a counting pass; make sure
      // before the next job, so that job never meets a dying process.
      if (out.result.context_lost || out.result.recycle) kill_and_reap();
      return out;
    }
  }
}

std::map<std::string, double> trail_phases(const std::vector<job_outcome::step>& trail, double end_ms) {
  std::map<std::string, double> phases;
  for (size_t i = 0; i < trail.size(); ++i) {
    std::string kind = trail[i].what;
    for (const char* cut : {" at ", " ("})
      if (size_t at = kind.find(cut); at != std::string::npos) kind.resize(at);
    for (char& c : kind)
      if (c >= '0' && c <= '9') c = '#';
    const double next = i + 1 < trail.size() ? trail[i + 1].at_ms : end_ms;
    phases[kind] += std::max(0.0, next - trail[i].at_ms);
  }
  return phases;
}

void worker_process::kill_and_reap() {
  if (m_to_worker >= 0) ::close(m_to_worker);
  if (m_from_worker >= 0) ::close(m_from_worker);
  m_to_worker = m_from_worker = -1;
  m_reader.reset();
  if (m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
  }
}

std::string worker_process::reap_description() {
  if (m_pid <= 0) return "not running";
  int status = 0;
  // The pipe closed: the child has exited or is about to. Give it a moment, then force.
  pid_t r = 0;
  for (int i = 0; i < 200 && (r = ::waitpid(m_pid, &status, WNOHANG)) == 0; ++i) ::usleep(10000);
  if (r == 0) {
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, &status, 0);
  }
  m_pid = -1;
  if (m_to_worker >= 0) ::close(m_to_worker);
  if (m_from_worker >= 0) ::close(m_from_worker);
  m_to_worker = m_from_worker = -1;
  m_reader.reset();
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  return "unknown status";
}

std::string worker_process::stderr_tail() const {
  std::ifstream in(m_stderr_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return "";
  std::string tail = text.size() > 400 ? "..." + text.substr(text.size() - 400) : text;
  for (char& c : tail)
    if (c == '\n') c = ' ';
  return ": " + tail;
}

}  // namespace ptxbench
