#pragma once
// Sets environment variables for one test and restores them after.
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace ptxbench::test {

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
