#pragma once
// Milliseconds on the steady clock since a point: the phase and stage times
// the supervisor, the worker and the profiler report.
#include <chrono>

namespace ptxbench {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace ptxbench
