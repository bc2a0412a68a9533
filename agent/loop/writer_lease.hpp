#pragma once
// One writer per experiment: a lease row in the run database names the process
// (host, PID) running the experiment and is refreshed by a heartbeat. A second
// `run --resume` of a live experiment is refused; a lease whose holder is gone
// (same host and its PID is dead, or no heartbeat for stale_after_s) is taken
// over, the check and the take-over in one write transaction.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "agent/store/store.hpp"

namespace ptxbench {

struct lease_timing {
  double heartbeat_s = 5.0;
  double stale_after_s = 60.0;
};

// This machine's host name ("unknown" when it cannot be read).
std::string this_host();

// Whether the holder of a lease still runs, seen from `host`.
bool lease_holder_alive(const lease_row& holder, const std::string& host, const lease_timing& timing);

class writer_lease {
 public:
  // Takes the lease and starts the heartbeat, or throws input_error naming the
  // holder. on_lost runs (on the heartbeat thread) when another process took
  // the lease over, which happens only after this one missed its heartbeats.
  writer_lease(run_store& store, int64_t experiment_id, const std::string& experiment_name, lease_timing timing,
               std::function<void()> on_lost);
  ~writer_lease();  // stops the heartbeat and releases the lease
  writer_lease(const writer_lease&) = delete;
  writer_lease& operator=(const writer_lease&) = delete;
  bool lost() const { return m_lost.load(); }

 private:
  void beat();
  run_store& m_store;
  int64_t m_experiment_id;
  std::string m_host;
  int64_t m_pid;
  lease_timing m_timing;
  std::function<void()> m_on_lost;
  std::atomic<bool> m_lost{false};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  std::thread m_thread;
};

}  // namespace ptxbench
