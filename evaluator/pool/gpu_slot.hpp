#pragma once
// One GPU of the host as the supervisor sees it: a worker process and a
// first-come-first-served queue of jobs. A worker that timed out, crashed or
// lost its CUDA context is replaced before the next job runs on this GPU.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "evaluator/pool/worker_process.hpp"

namespace ptxbench {

class gpu_slot {
 public:
  gpu_slot(std::string executable, int device);

  // Starts the worker (blocking, up to `timeout_ms`). Thread-safe.
  worker_start start(int timeout_ms);
  // Waits for the jobs queued before this one, replaces a dead worker, then
  // runs `job`. When the worker cannot be restarted, `restart_error` says why
  // and the outcome is `died`. Thread-safe.
  job_outcome run(const protocol::worker_job& job, std::string& restart_error);

  int queued() const;  // jobs waiting or running
  protocol::worker_hello hello() const;
  int device() const { return m_device; }
  int restarts() const;

 private:
  int m_device;
  worker_process m_worker;
  protocol::worker_hello m_hello;
  mutable std::mutex m_mutex;
  std::condition_variable m_turn;
  uint64_t m_next_ticket = 0;
  uint64_t m_serving = 0;
  int m_restarts = 0;
};

}  // namespace ptxbench
