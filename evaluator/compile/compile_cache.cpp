// The compile cache behind compile_ptx(ptx, arch): compiled modules kept in
// memory, least recently used first out, keyed by the whole input of a
// compile (the compiler and its identity, the architecture, the PTX text).
// Keys are compared in full, so a hit is the same compile, never a hash
// collision. Only results that another compile would reproduce are kept: a
// compile killed at the time limit, or one that failed for want of a
// compiler, is compiled again next time.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <list>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "evaluator/compile/compile.hpp"

namespace ptxbench {
namespace {

struct cache_entry {
  std::string key;
  compiled_module module;
  size_t bytes = 0;
};

class module_cache {
 public:
  std::optional<compiled_module> find(const std::string& key) {
    std::lock_guard lock(m_mutex);
    auto it = m_index.find(key);
    if (it == m_index.end()) {
      ++m_stats.misses;
      return std::nullopt;
    }
    m_entries.splice(m_entries.begin(), m_entries, it->second);
    ++m_stats.hits;
    return it->second->module;
  }

  void put(const std::string& key, const compiled_module& m, size_t capacity) {
    const size_t bytes = key.size() + m.cubin.size() + m.report.log.size() + 1024;
    std::lock_guard lock(m_mutex);
    if (bytes > capacity || m_index.count(key)) return;
    m_entries.push_front({key, m, bytes});
    m_index.emplace(m_entries.front().key, m_entries.begin());
    m_stats.bytes += bytes;
    while (m_stats.bytes > capacity && !m_entries.empty()) {
      m_stats.bytes -= m_entries.back().bytes;
      m_index.erase(m_entries.back().key);
      m_entries.pop_back();
      ++m_stats.evictions;
    }
    m_stats.entries = m_entries.size();
  }

  void clear() {
    std::lock_guard lock(m_mutex);
    m_index.clear();
    m_entries.clear();
    m_stats = {};
  }

  compile_cache_stats stats() {
    std::lock_guard lock(m_mutex);
    m_stats.entries = m_entries.size();
    return m_stats;
  }

 private:
  std::mutex m_mutex;
  std::list<cache_entry> m_entries;  // most recently used first
  std::unordered_map<std::string_view, std::list<cache_entry>::iterator> m_index;
  compile_cache_stats m_stats;
};

module_cache& the_cache() {
  static module_cache cache;
  return cache;
}

// Which compiler compile_ptx would run, and which build of it: a toolkit
// upgrade (another ptxas file) is another key.
std::string compiler_identity() {
  const char* configured = std::getenv("PTXBENCH_COMPILER");
  const std::string choice = configured ? configured : "";
  const std::string ptxas = choice == "nvjitlink" ? "" : ptxas_path();
  if (ptxas.empty()) return "nvjitlink " + nvjitlink_version();
  struct stat st {};
  std::string id = "ptxas " + ptxas;
  if (::stat(ptxas.c_str(), &st) == 0)
    id += " " + std::to_string(static_cast<long long>(st.st_size)) + " " +
          std::to_string(static_cast<long long>(st.st_mtime));
  return id;
}

// Would compiling again give the same result? A success, or a failure that
// the compiler pinned on a line of the PTX. Not a kill at the time limit, a
// crash, a missing compiler or a temporary file that could not be written
// (those carry no line), and the cheap whole-module refusals need no cache.
bool reproducible(const compiled_module& m) {
  if (m.ok) return true;
  for (const auto& d : m.report.diagnostics)
    if (d.line > 0) return true;
  return false;
}

}  // namespace

size_t compile_cache_capacity() {
  if (const char* configured = std::getenv("PTXBENCH_COMPILE_CACHE_MB"); configured && *configured) {
    char* end = nullptr;
    const double mb = std::strtod(configured, &end);
    if (end != configured && *end == '\0' && mb >= 0 && mb <= 1 << 20) return static_cast<size_t>(mb * (1 << 20));
  }
  return size_t(256) << 20;
}

compiled_module compile_ptx(const std::string& ptx, const std::string& arch) {
  const size_t capacity = compile_cache_capacity();
  if (capacity == 0) return compile_ptx(ptx, arch, compiler_backend::automatic);
  const auto start = std::chrono::steady_clock::now();
  std::string key = compiler_identity();
  key += '\x1f';
  key += arch;
  key += '\x1f';
  key += ptx;
  if (auto hit = the_cache().find(key)) {
    hit->report.cache_hit = true;
    hit->time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return *std::move(hit);
  }
  compiled_module m = compile_ptx(ptx, arch, compiler_backend::automatic);
  if (reproducible(m)) the_cache().put(key, m, capacity);
  return m;
}

compile_cache_stats compile_cache_statistics() { return the_cache().stats(); }
void compile_cache_clear() { the_cache().clear(); }

}  // namespace ptxbench
