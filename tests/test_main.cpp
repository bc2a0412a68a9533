// doctest's main, plus reported skips (skip.hpp): exit 77 when every case
// that ran passed and one of them skipped work for a missing tool.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "skip.hpp"

namespace ptxbench::test {
namespace {
std::mutex g_mutex;
std::set<std::string> g_reasons;
std::atomic<int> g_skips{0};
}  // namespace

void skip(const std::string& why) {
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("CI=true and this case cannot run: " << why);
  MESSAGE("SKIPPED: " << why);
  ++g_skips;
  std::lock_guard lock(g_mutex);
  g_reasons.insert(why);
}

int skip_count() { return g_skips; }

bool tool_missing(const std::string& tool, const std::string& path, const std::string& untested) {
  if (!path.empty()) return false;
  skip(tool + " not found on this machine: " + untested + " not tested");
  return true;
}

}  // namespace ptxbench::test

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (context.shouldExit() || failed != 0 || ptxbench::test::skip_count() == 0) return failed;
  for (const std::string& why : ptxbench::test::g_reasons) std::printf("SKIPPED: %s\n", why.c_str());
  std::printf("exit 77: every case that ran passed, but %d skipped work (ctest: Skipped)\n",
              ptxbench::test::skip_count());
  return 77;
}
