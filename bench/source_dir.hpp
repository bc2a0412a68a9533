#pragma once
// The source tree a benchmark reads its tasks and solutions from:
// $PTXBENCH_SOURCE_DIR when set (a copy on another machine, the GPU machine's),
// else the build's (PTXBENCH_SOURCE_DIR, defined per benchmark target).
#include <cstdlib>
#include <filesystem>

namespace ptxbench::bench {

inline std::filesystem::path source_dir() {
  if (const char* e = std::getenv("PTXBENCH_SOURCE_DIR"); e && *e) return e;
  return PTXBENCH_SOURCE_DIR;
}

}  // namespace ptxbench::bench
