#pragma once
// A thread-safe cache bounded in bytes, least recently used out first, keyed
// by the whole input text (compared in full: a hit is never a collision).
// Internal to the compile library: the compile cache and the disassembly cache.
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ptxbench {

struct lru_stats {
  uint64_t hits = 0, misses = 0, evictions = 0;
  size_t entries = 0, bytes = 0;
};

template <typename V>
class lru_cache {
 public:
  std::optional<V> find(const std::string& key) {
    std::lock_guard lock(m_mutex);
    auto it = m_index.find(key);
    if (it == m_index.end()) {
      ++m_stats.misses;
      return std::nullopt;
    }
    m_entries.splice(m_entries.begin(), m_entries, it->second);
    ++m_stats.hits;
    return it->second->value;
  }

  // `bytes`: what the value costs, beside its key.
  void put(const std::string& key, const V& value, size_t bytes, size_t capacity) {
    bytes += key.size() + 1024;
    std::lock_guard lock(m_mutex);
    if (bytes > capacity || m_index.count(key)) return;
    m_entries.push_front({key, value, bytes});
    m_index.emplace(m_entries.front().key, m_entries.begin());
    m_stats.bytes += bytes;
    while (m_stats.bytes > capacity && !m_entries.empty()) {
      m_stats.bytes -= m_entries.back().bytes;
      m_index.erase(m_entries.back().key);
      m_entries.pop_back();
      ++m_stats.evictions;
    }
  }

  void clear() {
    std::lock_guard lock(m_mutex);
    m_index.clear();
    m_entries.clear();
    m_stats = {};
  }

  lru_stats stats() {
    std::lock_guard lock(m_mutex);
    m_stats.entries = m_entries.size();
    return m_stats;
  }

 private:
  struct entry {
    std::string key;
    V value;
    size_t bytes = 0;
  };
  std::mutex m_mutex;
  std::list<entry> m_entries;  // most recently used first
  std::unordered_map<std::string_view, typename std::list<entry>::iterator> m_index;
  lru_stats m_stats;
};

}  // namespace ptxbench
