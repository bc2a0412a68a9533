#pragma once
// The shared queue in front of the GPU slots (work stealing): a job does not
// pick a GPU when it arrives; it waits in one first-come-first-served queue,
// and whichever slot is idle first takes the job at its head. A long job on one
// GPU therefore never holds up the jobs behind it while another GPU is free.
// A slot takes up to `per_slot` jobs at once (its main workers).
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ptxbench {

class slot_queue {
 public:
  explicit slot_queue(size_t slots, int per_slot = 1);

  // Waits for this caller's turn and a slot with room; returns the slot's
  // index (the least busy one, and of those the one idle longest, so work
  // spreads over the GPUs).
  size_t acquire();
  void release(size_t slot);

  size_t slots() const { return m_busy.size(); }
  int waiting() const;  // callers queued for a slot
  int busy() const;     // jobs holding a slot

  // Holds a slot for one scope.
  class lease {
   public:
    explicit lease(slot_queue& q) : m_queue(q), m_slot(q.acquire()) {}
    ~lease() { m_queue.release(m_slot); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    size_t slot() const { return m_slot; }

   private:
    slot_queue& m_queue;
    size_t m_slot;
  };

 private:
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_per_slot;
  std::vector<int> m_busy;  // jobs holding each slot
  std::vector<uint64_t> m_idle_since;  // release order: the smallest has waited longest
  uint64_t m_releases = 0;
  uint64_t m_next_ticket = 0;
  uint64_t m_serving = 0;
};

}  // namespace ptxbench
