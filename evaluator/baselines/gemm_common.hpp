#pragma once
// What the cuBLASLt and cuBLAS GEMM baselines share: the task's GEMM variant
// read once (types, layout, epilogue, scalars, batch, groups), cuBLAS status
// checks and the library's version text.
#include <cublasLt.h>

#include <cstdint>
#include <string>

#include "evaluator/api/task.hpp"

namespace ptxbench::baselines_detail {

struct gemm_problem {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;   // L of a batched task
  int64_t groups = 0;  // G of a grouped task (M is then the mean rows per group)
  bool nn = false;     // B is [K, N] (else [N, K])
  std::string epilogue = "none";
  bool scaled = false;
  float alpha = 1.0f, beta = 0.0f, scale_a = 1.0f, scale_b = 1.0f;
  cudaDataType_t in_type = CUDA_R_16BF, out_type = CUDA_R_16BF;
  std::string type_name;  // "bf16 -> bf16"
  std::string output = "C";  // D for alpha_beta

  // Reads the task at size `s`; throws std::invalid_argument naming what the
  // libraries cannot do (an fp16 GEMM with a bf16 output, an fp8 nn layout).
  static gemm_problem of(const task& t, const size_point& s);
  std::string describe() const;  // "bf16 -> bf16 nt bias+GELU batched L16"
};

// Throws std::runtime_error "<what>: STATUS (description)" unless s is success.
void check_lt(cublasStatus_t s, const char* what);

std::string lt_version();  // "cuBLASLt 13.1.0"

}  // namespace ptxbench::baselines_detail
