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
#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/compile_backends.hpp"
#include "evaluator/compile/lru_cache.hpp"

namespace ptxbench {
namespace {

using module_cache = lru_cache<compiled_module>;

module_cache& the_cache() {
  static module_cache cache;
  return cache;
}

// Which compiler compile_ptx would run, and which build of it: a toolkit
// upgrade (another ptxas file) is another key.
std::string compiler_identity() {
  if (automatic_backend() == compiler_backend::nvjitlink) return "nvjitlink " + nvjitlink_version();
  const std::string ptxas = ptxas_path();
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
  if (reproducible(m)) the_cache().put(key, m, m.cubin.size() + m.report.log.size(), capacity);
  return m;
}

compile_cache_stats compile_cache_statistics() {
  const lru_stats s = the_cache().stats();
  return {s.hits, s.misses, s.evictions, s.entries, s.bytes};
}
void compile_cache_clear() { the_cache().clear(); }

}  // namespace ptxbench
