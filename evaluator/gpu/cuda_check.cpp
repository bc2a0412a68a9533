#include "evaluator/gpu/cuda_check.hpp"

namespace ptxbench::gpu {

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

std::string describe(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA_ERROR_?") + ": " + (text ? text : "unknown error");
}

void check_driver(CUresult r, const char* call, const char* file, int line) {
  if (r == CUDA_SUCCESS) return;
  throw cuda_error(describe(r) + " (" + call + " at " + file + ":" + std::to_string(line) + ")", r, is_sticky(r));
}

void check_runtime(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  // Runtime and driver codes coincide for the sticky errors that matter here.
  auto code = static_cast<CUresult>(e);
  throw cuda_error(std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e) + " (" + call + " at " + file +
                       ":" + std::to_string(line) + ")",
                   code, is_sticky(code));
}

void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw cuda_error(std::string("cuBLAS: ") + cublasGetStatusString(s) + " (" + call + " at " + file + ":" +
                       std::to_string(line) + ")",
                   CUDA_ERROR_UNKNOWN, false);
}

}  // namespace ptxbench::gpu
