#pragma once
// What the pool's tests share: the source tree, a request for an adversarial
// fixture, and environment variables set for one test.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/common/files.hpp"

namespace ptxbench::test {

inline std::filesystem::path source_dir() {
  if (const char* e = std::getenv("PTXBENCH_SOURCE_DIR"); e && *e) return e;
  return PTXBENCH_SOURCE_DIR;
}

// The fixture's kernel for the task, untimed; `mode` (a fake worker's
// behaviour, "fake:<mode>" in the task's notes) when given.
inline evaluation_request fixture_request(const std::string& fixture, const std::string& task_id,
                                          const std::string& mode = "") {
  evaluation_request r;
  r.t = load_task(source_dir() / "tasks", task_id);
  if (!mode.empty()) r.t.notes = "fake:" + mode;
  const std::filesystem::path dir = source_dir() / "tests/fixtures/adversarial" / fixture;
  r.ptx = read_text_file(dir / "kernel.ptx");
  r.manifest_text = read_text_file(dir / "manifest.json");
  r.run_timing = false;
  return r;
}

// Sets environment variables for one test and restores them after.
struct scoped_env {
  std::map<std::string, std::optional<std::string>> saved;
  void set(const std::string& k, const std::optional<std::string>& v) {
    if (!saved.count(k)) {
      const char* old = std::getenv(k.c_str());
      saved[k] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (v) setenv(k.c_str(), v->c_str(), 1);
    else unsetenv(k.c_str());
  }
  ~scoped_env() {
    for (const auto& [k, v] : saved) v ? (void)setenv(k.c_str(), v->c_str(), 1) : (void)unsetenv(k.c_str());
  }
};

}  // namespace ptxbench::test
