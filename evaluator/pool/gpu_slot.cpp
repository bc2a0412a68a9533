#include "evaluator/pool/gpu_slot.hpp"

#include <chrono>

namespace ptxbench {
namespace {
// A fresh worker creates a context and sets up cuBLAS (a second or so; the
// first one also measures peak rates).
constexpr int k_restart_timeout_ms = 120000;
// After this many failed spare starts in a row the keeper stops trying until
// a pass asks for a worker again.
constexpr int k_max_spare_failures = 3;
}  // namespace

void gpu_gate::lock_shared() {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return !m_exclusive && m_exclusive_waiting == 0; });
  ++m_shared;
}

void gpu_gate::unlock_shared() {
  std::lock_guard lock(m_mutex);
  --m_shared;
  m_changed.notify_all();
}

void gpu_gate::lock() {
  std::unique_lock lock(m_mutex);
  ++m_exclusive_waiting;
  m_changed.wait(lock, [&] { return !m_exclusive && m_shared == 0; });
  --m_exclusive_waiting;
  m_exclusive = true;
}

void gpu_gate::unlock() {
  std::lock_guard lock(m_mutex);
  m_exclusive = false;
  m_changed.notify_all();
}

gpu_slot::gpu_slot(std::string executable, int device, int spares, std::string visible_devices)
    : m_executable(executable),
      m_device(device),
      m_spare_target(spares),
      m_visible_devices(std::move(visible_devices)),
      m_worker(std::move(executable), m_visible_devices.empty() ? device : 0) {
  m_worker.set_visible_devices(m_visible_devices);
}

std::unique_ptr<worker_process> gpu_slot::new_spare() const {
  auto w = std::make_unique<worker_process>(m_executable, m_visible_devices.empty() ? m_device : 0);
  w->set_visible_devices(m_visible_devices);
  protocol::worker_hello h = hello();
  w->set_known_rates(h.peak_tflops, h.copy_gbps);
  w->set_spare(true);
  return w;
}

gpu_slot::~gpu_slot() {
  {
    std::lock_guard lock(m_spare_mutex);
    m_stopping = true;
  }
  m_spare_changed.notify_all();
  if (m_keeper.joinable()) m_keeper.join();
}

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
  lock.unlock();
  if (s.ok && m_spare_target > 0 && !m_keeper.joinable()) m_keeper = std::thread([this] { keep_spares(); });
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
    m_gate.lock_shared();  // a starting process must not disturb another job's timing
    worker_start s = m_worker.start(k_restart_timeout_ms);
    m_gate.unlock_shared();
    ready = s.ok;
    if (!ready) restart_error = "GPU worker could not be restarted: " + s.error;
  }
  if (ready) {
    bool exclusive = false;
    out = m_worker.run(job, [&] {
      m_gate.lock();
      exclusive = true;
    });
    if (exclusive) m_gate.unlock();
  }

  lock.lock();
  if (!ready || out.end != job_end::result || out.result.context_lost) ++m_restarts;
  ++m_serving;
  m_turn.notify_all();
  return out;
}

void gpu_slot::replace_worker() {
  std::unique_lock lock(m_mutex);
  uint64_t ticket = m_next_ticket++;
  m_turn.wait(lock, [&] { return m_serving == ticket; });
  m_worker.stop();
  ++m_restarts;
  ++m_serving;
  m_turn.notify_all();
}

void gpu_slot::keep_spares() {
  std::unique_lock lock(m_spare_mutex);
  while (true) {
    m_spare_changed.wait(lock, [&] {
      return m_stopping || (int(m_spares.size()) + m_spares_starting < m_spare_target &&
                            m_spare_failures < k_max_spare_failures);
    });
    if (m_stopping) return;
    ++m_spares_starting;
    lock.unlock();
    auto w = new_spare();
    m_gate.lock_shared();
    worker_start s = w->start(k_restart_timeout_ms);
    m_gate.unlock_shared();
    lock.lock();
    --m_spares_starting;
    if (s.ok) {
      m_spares.push_back(std::move(w));
      m_spare_failures = 0;
    } else {
      ++m_spare_failures;
      m_spare_error = s.error;
    }
    m_spare_changed.notify_all();
  }
}

std::unique_ptr<worker_process> gpu_slot::take_spare(std::string& error) {
  std::unique_lock lock(m_spare_mutex);
  if (m_spare_target > 0) {
    m_spare_failures = 0;  // asked again: let the keeper retry
    m_spare_changed.notify_all();
    m_spare_changed.wait_for(lock, std::chrono::milliseconds(k_restart_timeout_ms), [&] {
      return m_stopping || !m_spares.empty() || (m_spares_starting == 0 && m_spare_failures >= k_max_spare_failures);
    });
    if (!m_spares.empty()) {
      auto w = std::move(m_spares.front());
      m_spares.pop_front();
      m_spare_changed.notify_all();  // the keeper starts a replacement
      if (w->alive()) return w;
    }
  }
  lock.unlock();
  // No spare ready (none kept, or their starts failed): start one here.
  auto w = new_spare();
  m_gate.lock_shared();
  worker_start s = w->start(k_restart_timeout_ms);
  m_gate.unlock_shared();
  if (!s.ok) {
    error = "no GPU worker for the counting pass: " + s.error;
    return nullptr;
  }
  return w;
}

job_outcome gpu_slot::count(const protocol::worker_job& job, std::string& start_error) {
  start_error.clear();
  auto w = take_spare(start_error);
  if (!w) return {};
  m_gate.lock_shared();
  job_outcome out = w->run(job, {});
  m_gate.unlock_shared();
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
