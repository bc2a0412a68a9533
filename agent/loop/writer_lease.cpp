#include "agent/loop/writer_lease.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "evaluator/common/host.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench {

std::string this_host() { return host_name(); }

bool lease_holder_alive(const lease_row& holder, const std::string& host, const lease_timing& timing) {
  if (holder.heartbeat_age_s > timing.stale_after_s) return false;  // hung, or its PID was reused
  if (holder.host != host) return true;  // only its heartbeat can tell
  if (holder.pid <= 0 || holder.pid == ::getpid()) return false;
  return ::kill(static_cast<pid_t>(holder.pid), 0) == 0 || errno == EPERM;
}

writer_lease::writer_lease(run_store& store, int64_t experiment_id, const std::string& experiment_name,
                           lease_timing timing, std::function<void()> on_lost)
    : m_store(store),
      m_experiment_id(experiment_id),
      m_host(this_host()),
      m_pid(::getpid()),
      m_timing(timing),
      m_on_lost(std::move(on_lost)) {
  auto holder = m_store.acquire_lease(m_experiment_id, m_host, m_pid, [this](const lease_row& l) {
    return lease_holder_alive(l, m_host, m_timing);
  });
  if (holder) {
    char age[32];
    std::snprintf(age, sizeof age, "%.0f", holder->heartbeat_age_s);
    throw input_error("experiment '" + experiment_name + "' in " + m_store.path().string() +
                      " is being run by PID " + std::to_string(holder->pid) + " on host " + holder->host +
                      " (since " + holder->started_at + ", last heartbeat " + age +
                      " s ago); one process writes an experiment at a time");
  }
  m_thread = std::thread([this] { beat(); });
}

writer_lease::~writer_lease() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
  try {
    if (!m_lost) m_store.release_lease(m_experiment_id, m_host, m_pid);
  } catch (const std::exception&) {
    // A lease left behind is taken over by the next run (its PID is dead).
  }
}

void writer_lease::beat() {
  std::unique_lock lock(m_mutex);
  while (!m_stopping) {
    m_wake.wait_for(lock, std::chrono::duration<double>(m_timing.heartbeat_s), [this] { return m_stopping; });
    if (m_stopping) return;
    lock.unlock();
    bool ours = true;
    try {
      ours = m_store.renew_lease(m_experiment_id, m_host, m_pid);
    } catch (const std::exception&) {
      // A busy or briefly failing database: the next beat tries again.
    }
    lock.lock();
    if (!ours) {
      m_lost = true;
      if (m_on_lost) m_on_lost();
      return;
    }
  }
}

}  // namespace ptxbench
