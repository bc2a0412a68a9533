#include "agent/service/eval_queue.hpp"

namespace ptxbench::service {

eval_queue::eval_queue(int width, int capacity) : m_capacity(capacity < 1 ? 1 : capacity) {
  if (width < 1) width = 1;
  for (int i = 0; i < width; ++i) m_threads.emplace_back([this] { work(); });
}

eval_queue::~eval_queue() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_ready.notify_all();
  for (auto& t : m_threads) t.join();
}

std::optional<std::vector<std::future<evaluation_result>>> eval_queue::submit(std::vector<job> jobs) {
  std::vector<std::future<evaluation_result>> futures;
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping || int(m_jobs.size()) + m_running + int(jobs.size()) > m_capacity) return std::nullopt;
    for (auto& j : jobs) {
      std::packaged_task<evaluation_result()> task(std::move(j));
      futures.push_back(task.get_future());
      m_jobs.push_back(std::move(task));
    }
  }
  m_ready.notify_all();
  return futures;
}

int eval_queue::waiting() const {
  std::lock_guard lock(m_mutex);
  return int(m_jobs.size());
}

int eval_queue::running() const {
  std::lock_guard lock(m_mutex);
  return m_running;
}

void eval_queue::work() {
  std::unique_lock lock(m_mutex);
  while (true) {
    m_ready.wait(lock, [&] { return m_stopping || !m_jobs.empty(); });
    if (m_jobs.empty()) return;  // stopping, and every admitted job done
    auto task = std::move(m_jobs.front());
    m_jobs.pop_front();
    ++m_running;
    lock.unlock();
    task();  // a packaged_task keeps an exception in its future
    lock.lock();
    --m_running;
  }
}

}  // namespace ptxbench::service
