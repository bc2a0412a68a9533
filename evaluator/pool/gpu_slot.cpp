#include "evaluator/pool/gpu_slot.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

namespace ptxbench {
namespace {
// A fresh worker creates a context and sets up cuBLAS (a second or so; the
// first one also measures peak rates).
constexpr int k_restart_timeout_ms = 120000;
// After this many failed spare starts in a row the keeper stops trying until
// a pass asks for a worker again.
constexpr int k_max_spare_failures = 3;
// $PTXBENCH_UNGATED_CONTEXT=1: spares make their context and cuBLAS handle
// while another job may time (only their warm-up waits for the GPU). Off by
// default: measured on the H200 (docs/gpu-runs.md, 2026-12-03), it raised the
// 64-trajectory throughput (67 -> 71 per minute) but timed the attention
// forward solution at up to 1.48x-1.70x (median 1.00x) under load, its cuDNN
// baseline slow for a whole evaluation, against a clean 0.996-1.002x with the
// context made inside the gate.
bool context_ungated() {
  const char* v = std::getenv("PTXBENCH_UNGATED_CONTEXT");
  return v && std::string(v) == "1";
}
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

void gpu_gate::downgrade() {
  std::lock_guard lock(m_mutex);
  m_exclusive = false;
  ++m_shared;
  m_changed.notify_all();
}

gpu_slot::gpu_slot(std::string executable, int device, int spares, std::string visible_devices, int mains)
    : m_executable(std::move(executable)),
      m_device(device),
      m_spare_target(spares),
      m_visible_devices(std::move(visible_devices)) {
  for (int i = 0; i < std::max(1, mains); ++i) {
    m_mains.push_back(std::make_unique<worker_process>(m_executable, m_visible_devices.empty() ? m_device : 0));
    m_mains.back()->set_visible_devices(m_visible_devices);
  }
  m_main_busy.assign(m_mains.size(), false);
}

std::unique_ptr<worker_process> gpu_slot::new_spare() const {
  auto w = std::make_unique<worker_process>(m_executable, m_visible_devices.empty() ? m_device : 0);
  w->set_visible_devices(m_visible_devices);
  protocol::worker_hello h = hello();
  w->set_known_rates(h.peak_tflops, h.copy_gbps);
  w->set_spare(true);
  w->set_context_ungated(context_ungated());
  if (m_spare_connections > 0) w->set_environment("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(m_spare_connections));
  return w;
}

gpu_slot::~gpu_slot() {
  {
    std::lock_guard lock(m_spare_mutex);
    m_stopping = true;
  }
  m_spare_changed.notify_all();
  for (auto& k : m_keepers)
    if (k.joinable()) k.join();
}

void gpu_slot::enter_busy() {
  std::lock_guard lock(m_usage_mutex);
  if (m_active++ == 0) m_busy_since = std::chrono::steady_clock::now();
}

void gpu_slot::leave_busy(double& total_s, uint64_t& count, std::chrono::steady_clock::time_point since) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(m_usage_mutex);
  total_s += std::chrono::duration<double>(now - since).count();
  ++count;
  if (--m_active == 0) m_usage.busy_s += std::chrono::duration<double>(now - m_busy_since).count();
}

gpu_usage gpu_slot::usage() const {
  std::lock_guard lock(m_usage_mutex);
  gpu_usage u = m_usage;
  u.device = m_device;
  if (m_active > 0) u.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - m_busy_since).count();
  std::lock_guard lock2(m_mutex);
  u.restarts = uint64_t(m_restarts);
  return u;
}

worker_start gpu_slot::start_gated(worker_process& w, bool spare) {
  const auto t0 = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point gated;
  bool held = false;
  worker_start s = w.start(k_restart_timeout_ms, [&] {
    if (spare) {  // a main job about to time comes first (hold_spare_starts)
      std::unique_lock lock(m_spare_mutex);
      m_spare_changed.wait_for(lock, std::chrono::milliseconds(k_spare_hold_ms),
                               [&] { return m_spare_holds == 0 || m_stopping; });
    }
    m_gate.lock_shared();  // a context being made must not disturb another job's timing
    held = true;
    gated = std::chrono::steady_clock::now();
  });
  const auto now = std::chrono::steady_clock::now();
  if (held) m_gate.unlock_shared();
  if (spare) {
    std::lock_guard lock(m_usage_mutex);
    ++m_usage.spare_starts;
    m_usage.spare_start_s += std::chrono::duration<double>(now - t0).count();
    if (held) m_usage.spare_gated_s += std::chrono::duration<double>(now - gated).count();
    if (s.ok)
      for (const auto& [phase, ms] : s.hello.start_ms) m_usage.spare_phase_s[phase] += ms / 1000.0;
  }
  return s;
}

// Each main worker serves one caller at a time; callers are served in ticket
// order, each taking the first free worker that is started (else the first
// free one, which the caller then starts). A turn is handed on when its holder
// leaves by any path, an exception included.
gpu_slot::turn::turn(gpu_slot& s) : m_slot(s) {
  std::unique_lock lock(s.m_mutex);
  uint64_t ticket = s.m_next_ticket++;
  s.m_turn.wait(lock, [&] {
    if (s.m_serving != ticket) return false;
    bool found = false;
    for (size_t i = 0; i < s.m_mains.size(); ++i) {
      if (s.m_main_busy[i]) continue;
      if (s.m_mains[i]->alive()) {
        m_index = i;
        return true;
      }
      if (!found) m_index = i;
      found = true;
    }
    return found;
  });
  s.m_main_busy[m_index] = true;
  ++s.m_serving;
  s.m_turn.notify_all();  // the next ticket may take another free worker
}

gpu_slot::turn::~turn() {
  std::lock_guard lock(m_slot.m_mutex);
  m_slot.m_main_busy[m_index] = false;
  m_slot.m_turn.notify_all();
}

worker_start gpu_slot::start(int timeout_ms) {
  worker_start s;
  {
    turn my_turn(*this);
    s = m_mains[my_turn.index()]->start(timeout_ms);
    std::lock_guard lock(m_mutex);
    if (s.ok) {
      m_hello = s.hello;
      for (auto& w : m_mains) w->set_known_rates(s.hello.peak_tflops, s.hello.copy_gbps);
    }
  }
  if (s.ok && m_spare_target > 0 && m_keepers.empty())
    for (int k = 0; k < m_spare_target; ++k) m_keepers.emplace_back([this] { keep_spares(); });
  return s;
}

job_outcome gpu_slot::run(const protocol::worker_job& job, std::string& restart_error, int* main_used) {
  turn my_turn(*this);
  worker_process& worker = *m_mains[my_turn.index()];
  if (main_used) *main_used = int(my_turn.index());
  job_outcome out;
  restart_error.clear();
  bool ready = worker.alive();
  // The job holds the gate shared for its checked runs (another main job's
  // timing waits for them) and exclusively for its timed samples.
  enum class hold { none, shared, exclusive } held = hold::none;
  const auto release = [&] {
    if (held == hold::shared) m_gate.unlock_shared();
    if (held == hold::exclusive) m_gate.unlock();
    held = hold::none;
  };
  try {
    if (!ready) {
      worker_start s = start_gated(worker, false);
      ready = s.ok;
      if (!ready) restart_error = "GPU worker could not be restarted: " + s.error;
    }
    if (ready) {
      struct busy_job {  // the job's time counts as busy, however it ends
        gpu_slot& slot;
        const std::chrono::steady_clock::time_point since = (slot.enter_busy(), std::chrono::steady_clock::now());
        ~busy_job() { slot.leave_busy(slot.m_usage.main_s, slot.m_usage.jobs, since); }
      } busy{*this};
      m_gate.lock_shared();
      held = hold::shared;
      out = worker.run(job, [&] {
        if (held == hold::exclusive) return;
        const auto asked = std::chrono::steady_clock::now();
        release();
        m_gate.lock();
        held = hold::exclusive;
        std::lock_guard lock(m_usage_mutex);
        m_usage.timing_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
      }, [&] {  // the timed samples are over: the checks after them share the GPU
        if (held != hold::exclusive) return;
        m_gate.downgrade();
        held = hold::shared;
      });
    }
  } catch (...) {
    // The worker said something the supervisor cannot read (or the pipe
    // broke): it is not trusted with the next job. The gate and the turn are
    // handed on whatever happened, or every later job would wait for ever.
    release();
    worker.stop();
    std::lock_guard lock(m_mutex);
    ++m_restarts;
    throw;
  }
  release();
  if (!out.trail.empty()) {
    std::lock_guard lock(m_usage_mutex);
    for (const auto& [kind, ms] : trail_phases(out.trail, out.trail.back().at_ms)) m_usage.main_phase_s[kind] += ms / 1000.0;
  }
  std::lock_guard lock(m_mutex);
  if (!ready || out.end != job_end::result || out.result.context_lost) ++m_restarts;
  return out;
}

void gpu_slot::replace_worker(int main) {
  const size_t i = main >= 0 && size_t(main) < m_mains.size() ? size_t(main) : 0;
  {
    std::unique_lock lock(m_mutex);
    m_turn.wait(lock, [&] { return !m_main_busy[i]; });
    m_main_busy[i] = true;
  }
  m_mains[i]->stop();
  std::lock_guard lock(m_mutex);
  m_main_busy[i] = false;
  ++m_restarts;
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
    worker_start s = start_gated(*w, true);
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
  worker_start s = start_gated(*w, true);
  if (!s.ok) {
    error = "no GPU worker for the counting pass: " + s.error;
    return nullptr;
  }
  return w;
}

job_outcome gpu_slot::count(const protocol::worker_job& job, std::string& start_error,
                            const std::atomic<bool>* stop) {
  start_error.clear();
  if (stop && stop->load()) {  // not wanted any more: no spare spent on it
    job_outcome out;
    out.end = job_end::stopped;
    out.cause = "stopped by the supervisor before it started";
    return out;
  }
  auto w = take_spare(start_error);
  if (!w) return {};
  return run_counted(*w, job, stop);
}

std::vector<job_outcome> gpu_slot::count_series(const std::function<std::optional<protocol::worker_job>(size_t)>& next,
                                                std::string& start_error) {
  start_error.clear();
  std::vector<job_outcome> out;
  std::unique_ptr<worker_process> w;
  for (size_t i = 0;; ++i) {
    std::optional<protocol::worker_job> job = next(i);
    if (!job) break;
    if (!w && !(w = take_spare(start_error))) break;
    out.push_back(run_counted(*w, *job));
    if (out.back().end != job_end::result) break;
  }
  return out;
}

job_outcome gpu_slot::run_counted(worker_process& w, const protocol::worker_job& job, const std::atomic<bool>* stop) {
  // The pass holds the GPU only for its parts that use it: the worker asks
  // before each and says when one is over (its CUPTI set-up in between runs
  // while another job may time). Busy time counts the held parts. A SASS
  // counting pass or PC sampling holds it shared (their counts are their own
  // process's); the hardware counters (the cross-check, the profile's
  // counters) are the whole GPU's, so those parts hold it alone, as timing
  // does: beside other jobs' kernels they counted those too (H100 under load,
  // docs/gpu-runs.md 2026-12-07 13:22).
  const bool alone = job.hw_check || job.profile_part == "counters";
  job_outcome out;
  bool held = false;
  std::chrono::steady_clock::time_point since;
  double held_s = 0;
  uint64_t parts = 0;
  const auto release = [&] {
    if (!held) return;
    held = false;
    leave_busy(held_s, parts, since);
    if (alone) m_gate.unlock();
    else m_gate.unlock_shared();
  };
  try {
    out = w.run(
        job,
        [&] {
          if (held) return;
          if (alone) m_gate.lock();
          else m_gate.lock_shared();
          held = true;
          enter_busy();
          since = std::chrono::steady_clock::now();
        },
        release, stop);
  } catch (...) {
    release();  // a stuck shared hold would keep every later timing waiting
    throw;
  }
  release();
  std::lock_guard lock(m_usage_mutex);
  m_usage.counting_s += held_s;
  ++m_usage.passes;
  return out;
}

void gpu_slot::hold_spare_starts() {
  std::lock_guard lock(m_spare_mutex);
  ++m_spare_holds;
}

void gpu_slot::release_spare_starts() {
  std::lock_guard lock(m_spare_mutex);
  if (m_spare_holds > 0) --m_spare_holds;
  m_spare_changed.notify_all();
}

int gpu_slot::ready_spares() {
  std::lock_guard lock(m_spare_mutex);
  return int(m_spares.size());
}

int gpu_slot::queued() const {
  std::lock_guard lock(m_mutex);
  int running = 0;
  for (bool b : m_main_busy) running += b;
  return int(m_next_ticket - m_serving) + running;
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
