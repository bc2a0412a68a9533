#pragma once
// The one CUDA error type: the worker's driver, runtime and cuBLAS checks
// (evaluator/gpu/cuda_check.hpp), the baselines' and the profiler's throw it.
// `code` is the CUresult (0 when none applies); `sticky` says the context is
// lost for good (an illegal address, a trap): the worker reports and exits.
#include <stdexcept>
#include <string>

namespace ptxbench {

struct cuda_error : std::runtime_error {
  explicit cuda_error(const std::string& what, int code = 0, bool sticky = false)
      : std::runtime_error(what), code(code), sticky(sticky) {}
  int code;
  bool sticky;
};

}  // namespace ptxbench
