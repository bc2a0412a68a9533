#pragma once
// CUDA driver, runtime and cuBLAS calls are wrapped once, with file and line.
// A failing call throws cuda_error; whether the context survived is in
// `sticky`: after an illegal address, a trap or a misaligned access the
// context is poisoned for good, and the worker must report and exit.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "evaluator/common/cuda_error.hpp"

namespace ptxbench::gpu {

using ptxbench::cuda_error;  // evaluator/common/cuda_error.hpp: code is the CUresult

// Errors after which the CUDA context cannot be used again.
bool is_sticky(CUresult r);
// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
std::string describe(CUresult r);

void check_driver(CUresult r, const char* call, const char* file, int line);
void check_runtime(cudaError_t e, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t s, const char* call, const char* file, int line);

}  // namespace ptxbench::gpu

#define PTXB_CU(call) ::ptxbench::gpu::check_driver((call), #call, __FILE__, __LINE__)
#define PTXB_CUDA(call) ::ptxbench::gpu::check_runtime((call), #call, __FILE__, __LINE__)
#define PTXB_CUBLAS(call) ::ptxbench::gpu::check_cublas((call), #call, __FILE__, __LINE__)
