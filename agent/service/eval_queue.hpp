#pragma once
// A bounded queue of evaluations in front of an evaluator: `width` threads
// take jobs in arrival order; at most `capacity` jobs are admitted at once
// (running and waiting together). A caller that would overfill it is refused
// at once (the service answers 429) instead of waiting: a trainer retries
// later, while a growing queue would only add latency to every request.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench::service {

class eval_queue {
 public:
  using job = std::function<evaluation_result()>;

  eval_queue(int width, int capacity);
  ~eval_queue();  // finishes the admitted jobs, then joins the threads
  eval_queue(const eval_queue&) = delete;
  eval_queue& operator=(const eval_queue&) = delete;

  // Admits every job or none (a batch is never half-queued); nullopt when
  // they do not fit now. The futures carry each job's result or exception.
  std::optional<std::vector<std::future<evaluation_result>>> submit(std::vector<job> jobs);

  int waiting() const;   // admitted, not started
  int running() const;
  int width() const { return int(m_threads.size()); }
  int capacity() const { return m_capacity; }

 private:
  void work();

  int m_capacity;
  mutable std::mutex m_mutex;
  std::condition_variable m_ready;
  std::deque<std::packaged_task<evaluation_result()>> m_jobs;
  int m_running = 0;
  bool m_stopping = false;
  std::vector<std::thread> m_threads;
};

}  // namespace ptxbench::service
