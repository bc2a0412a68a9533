#include "evaluator/pool/slot_queue.hpp"

namespace ptxbench {

slot_queue::slot_queue(size_t slots, int per_slot)
    : m_per_slot(per_slot < 1 ? 1 : per_slot), m_busy(slots, 0), m_idle_since(slots, 0) {}

size_t slot_queue::acquire() {
  std::unique_lock lock(m_mutex);
  const uint64_t ticket = m_next_ticket++;
  size_t chosen = 0;
  m_changed.wait(lock, [&] {
    if (m_serving != ticket) return false;
    bool found = false;
    for (size_t i = 0; i < m_busy.size(); ++i)
      if (m_busy[i] < m_per_slot &&
          (!found || m_busy[i] < m_busy[chosen] || (m_busy[i] == m_busy[chosen] && m_idle_since[i] < m_idle_since[chosen]))) {
        chosen = i;
        found = true;
      }
    return found;
  });
  ++m_busy[chosen];
  ++m_serving;
  m_changed.notify_all();  // the next ticket may take another slot with room
  return chosen;
}

void slot_queue::release(size_t slot) {
  {
    std::lock_guard lock(m_mutex);
    if (m_busy[slot] > 0) --m_busy[slot];
    m_idle_since[slot] = ++m_releases;
  }
  m_changed.notify_all();
}

int slot_queue::waiting() const {
  std::lock_guard lock(m_mutex);
  return int(m_next_ticket - m_serving);
}

int slot_queue::busy() const {
  std::lock_guard lock(m_mutex);
  int n = 0;
  for (int b : m_busy) n += b;
  return n;
}

}  // namespace ptxbench
