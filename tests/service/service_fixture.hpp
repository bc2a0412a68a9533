#pragma once
// An evald_service behind a real HTTP server on 127.0.0.1 (any free port),
// served from a background thread for one test, and an evaluator whose
// evaluations block until released (queue, 429 and concurrency tests).
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/service/server.hpp"
#include "evaluator/common/files.hpp"

namespace ptxbench::testing {

inline std::filesystem::path source_dir() {
  if (const char* e = std::getenv("PTXBENCH_SOURCE_DIR"); e && *e) return e;
  return PTXBENCH_SOURCE_DIR;
}

class running_service {
 public:
  running_service(evaluator& eval, service::service_options o, request_log* log = nullptr)
      : m_service(eval, load_task_dir(source_dir() / "tasks"), std::move(o), log), m_server(m_service) {
    m_port = m_server.bind("127.0.0.1", 0);
    m_thread = std::thread([this] { m_server.serve(); });
  }
  ~running_service() {
    m_server.stop();
    m_thread.join();
  }
  int port() const { return m_port; }
  service::evald_service& service() { return m_service; }

 private:
  service::evald_service m_service;
  service::evald_server m_server;
  int m_port = 0;
  std::thread m_thread;
};

// Evaluations wait for release() (or pass at once when released already);
// counts how many ran at the same time.
class gated_evaluator final : public evaluator {
 public:
  evaluation_result evaluate(const evaluation_request& req) override {
    int now = ++m_running;
    for (int seen = m_peak.load(); now > seen && !m_peak.compare_exchange_weak(seen, now);) {
    }
    {
      std::unique_lock lock(m_mutex);
      m_changed.notify_all();
      m_changed.wait(lock, [&] { return m_released; });
    }
    --m_running;
    ++m_done;
    evaluation_result r;
    r.evaluator_version = "gated";
    r.verdict = stage::compile;
    r.headline = "task " + req.t.id + " ptx " + req.ptx;
    r.stages[stage::format] = {stage_status::passed, "", 0.0};
    r.stages[stage::compile] = {stage_status::failed, "ptx " + req.ptx, 0.0};
    return r;
  }
  std::string version() const override { return "gated"; }
  std::string gpu_description() const override { return "none"; }

  void release() {
    std::lock_guard lock(m_mutex);
    m_released = true;
    m_changed.notify_all();
  }
  // Waits until `n` evaluations are running at once.
  bool wait_running(int n) {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, std::chrono::seconds(20), [&] { return m_running.load() >= n; });
  }
  int peak() const { return m_peak; }
  int done() const { return m_done; }

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  bool m_released = false;
  std::atomic<int> m_running{0}, m_peak{0}, m_done{0};
};

}  // namespace ptxbench::testing
