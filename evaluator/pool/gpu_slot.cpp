#include "evaluator/pool/gpu_slot.hpp"

namespace ptxbench {
namespace {
// A fresh worker creates a context and measures peak rates (about a second).
constexpr int k_restart_timeout_ms = 120000;
}  // namespace

gpu_slot::gpu_slot(std::string executable, int device) : m_device(device), m_worker(std::move(executable), device) {}

worker_start gpu_slot::start(int timeout_ms) {
  std::unique_lock lock(m_mutex);
  uint64_t ticket = m_next_ticket++;
  m_turn.wait(lock, [&] { return m_serving == ticket; });
  lock.unlock();
  worker_start s = m_worker.start(timeout_ms);
  lock.lock();
  if (s.ok) {
    m_hello = s.hello;
    m_worker.set_known_rates(s.hello.peak_tflops, s.hello.copy_gbps);
  }
  ++m_serving;
  m_turn.notify_all();
  return s;
}

job_outcome gpu_slot::run(const protocol::worker_job& job, std::string& restart_error) {
  std::unique_lock lock(m_mutex);
  uint64_t ticket = m_next_ticket++;
  m_turn.wait(lock, [&] { return m_serving == ticket; });
  lock.unlock();

  job_outcome out;
  restart_error.clear();
  bool ready = m_worker.alive();
  if (!ready) {
    worker_start s = m_worker.start(k_restart_timeout_ms);
    ready = s.ok;
    if (!ready) restart_error = "GPU worker could not be restarted: " + s.error;
  }
  if (ready) out = m_worker.run(job);

  lock.lock();
  if (!ready || out.end != job_end::result || out.result.context_lost) ++m_restarts;
  ++m_serving;
  m_turn.notify_all();
  return out;
}

int gpu_slot::queued() const {
  std::lock_guard lock(m_mutex);
  return int(m_next_ticket - m_serving);
}

protocol::worker_hello gpu_slot::hello() const {
  std::lock_guard lock(m_mutex);
  return m_hello;
}

int gpu_slot::restarts() const {
  std::lock_guard lock(m_mutex);
  return m_restarts;
}

}  // namespace ptxbench
