#pragma once
// One GPU of the host as the supervisor sees it: its main worker processes
// (one or more) with a first-come-first-served queue of jobs (correctness and
// timing), and spare
// workers started ahead of need for the executed-instruction passes (CUPTI
// counts only in a process's first pass, so each pass takes a fresh process;
// a spare has its context and cuBLAS set up before it is needed; CUPTI is set
// up inside the pass, after the candidate's module is loaded).
//
// The GPU gate keeps timing clean: a main worker about to take timed samples
// asks for the GPU (`ready_to_time`), and is answered only when no worker is
// making its context, no counting pass is running and no other main job is in
// its checked runs on this GPU; while it times, those wait. The part of a
// start that leaves the GPU alone (exec, libraries, cuInit) runs outside the
// gate, and spares start side by side. Everything else (checked runs of
// several main jobs, counting passes, spare starts) may overlap.
//
// With several main workers, a job takes the first free one (ticket order);
// the extra ones start when a job first finds every started one busy, so a
// caller that sends one job at a time only ever starts one.
//
// A worker that timed out, crashed or lost its CUDA context is replaced
// before the next job runs on this GPU.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "evaluator/pool/worker_process.hpp"

namespace ptxbench {

// Many shared holders or one exclusive one; a waiting exclusive holder blocks
// new shared ones, so timing is never starved.
class gpu_gate {
 public:
  void lock_shared();
  void unlock_shared();
  void lock();
  void unlock();
  // Exclusive to shared at once: no other exclusive holder gets in between
  // (the checks after a job's timed samples must not run during another's).
  void downgrade();

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_shared = 0;
  bool m_exclusive = false;
  int m_exclusive_waiting = 0;
};

class gpu_slot {
 public:
  // `spares`: counting workers kept ready (0: each pass starts its own).
  // `visible_devices`: the GPU this slot's workers may see (their
  // CUDA_VISIBLE_DEVICES; they then use device 0); "" = they see every GPU
  // and use `device`.
  // `mains`: main workers (at least 1), so that one job's checked runs go
  // on while another's timing waits for the GPU.
  gpu_slot(std::string executable, int device, int spares = 2, std::string visible_devices = "", int mains = 1);
  ~gpu_slot();

  // Starts the main worker (blocking, up to `timeout_ms`), then the spares in
  // the background. Thread-safe.
  worker_start start(int timeout_ms);
  // Waits for the jobs queued before this one and a free main worker,
  // replaces it if dead, then runs `job` on it (`main_used`: which one).
  // When the worker cannot be restarted, `restart_error` says why and the
  // outcome is `died`. Thread-safe.
  job_outcome run(const protocol::worker_job& job, std::string& restart_error, int* main_used = nullptr);
  // Runs a counting job on a spare worker (which exits afterwards); several
  // may run at once. `start_error` says why no worker could be had. With
  // `stop`, the pass ends (its worker killed) once the flag is set: its counts
  // are no longer wanted. Thread-safe.
  job_outcome count(const protocol::worker_job& job, std::string& start_error,
                    const std::atomic<bool>* stop = nullptr);
  // Runs jobs one after another on one spare: `next(i)` gives the i-th (it may
  // wait for what the job needs; nullopt ends the series), asked for once the
  // one before ended with a result. The profiling pass's two parts share a
  // worker this way (one start instead of two). The outcomes, in order.
  std::vector<job_outcome> count_series(const std::function<std::optional<protocol::worker_job>(size_t)>& next,
                                        std::string& start_error);
  // Ends main worker `main` (once no job runs on it), so the next job there
  // runs on a fresh one (the retry after an evaluator error).
  void replace_worker(int main = 0);

  int queued() const;  // jobs waiting for or running on a main worker
  int main_workers() const { return int(m_mains.size()); }
  int ready_spares();  // spare workers started and waiting for a pass
  // While held (counted), spare starts wait before making their context, for
  // at most k_spare_hold_ms each: a main job whose counting passes took the
  // spares times first, instead of waiting for their replacements' contexts.
  void hold_spare_starts();
  void release_spare_starts();
  static constexpr int k_spare_hold_ms = 1500;
  // CUDA_DEVICE_MAX_CONNECTIONS of the spares' processes (0: the supervisor's
  // environment as it is). Set before start().
  void set_spare_connections(int connections) { m_spare_connections = connections; }
  protocol::worker_hello hello() const;
  int device() const { return m_device; }
  int restarts() const;
  gpu_usage usage() const;

 private:
  void keep_spares();
  std::unique_ptr<worker_process> new_spare() const;
  std::unique_ptr<worker_process> take_spare(std::string& error);
  job_outcome run_counted(worker_process& w, const protocol::worker_job& job, const std::atomic<bool>* stop = nullptr);
  // Starts `w`, taking the gate (shared) only for the part that uses the GPU.
  worker_start start_gated(worker_process& w, bool spare);
  void enter_busy();
  void leave_busy(double& total_s, uint64_t& count, std::chrono::steady_clock::time_point since);

  std::string m_executable;
  int m_device;
  int m_spare_target;
  int m_spare_connections = 0;
  std::string m_visible_devices;
  std::vector<std::unique_ptr<worker_process>> m_mains;
  std::vector<bool> m_main_busy;  // m_mutex
  protocol::worker_hello m_hello;
  class turn {  // holds one main worker for one caller (see gpu_slot.cpp)
   public:
    explicit turn(gpu_slot& s);
    ~turn();
    turn(const turn&) = delete;
    turn& operator=(const turn&) = delete;
    size_t index() const { return m_index; }

   private:
    gpu_slot& m_slot;
    size_t m_index = 0;
  };
  gpu_gate m_gate;
  mutable std::mutex m_mutex;
  std::condition_variable m_turn;
  uint64_t m_next_ticket = 0;
  uint64_t m_serving = 0;
  int m_restarts = 0;

  std::mutex m_spare_mutex;
  std::condition_variable m_spare_changed;
  std::deque<std::unique_ptr<worker_process>> m_spares;
  int m_spares_starting = 0;
  int m_spare_holds = 0;
  int m_spare_failures = 0;  // consecutive failed starts; the keeper pauses after a few
  std::string m_spare_error;
  bool m_stopping = false;
  std::vector<std::thread> m_keepers;  // one per spare: spares start side by side

  // Usage (m_usage_mutex): busy time accrues while m_active > 0.
  mutable std::mutex m_usage_mutex;
  int m_active = 0;
  std::chrono::steady_clock::time_point m_busy_since;
  gpu_usage m_usage;
};

}  // namespace ptxbench
