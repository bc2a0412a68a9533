#pragma once
// The fp32 references on the GPU, from a plan (reference_plan.hpp) and the
// task's inputs: products through cuBLAS SGEMM in pedantic fp32 (the handle's
// math mode, set by its owner: no TF32), the rest in fp32 kernels
// (reference_kernels.hpp). Attention is computed a chunk of heads at a time
// so that its score matrices stay within a memory budget at any size.
// Asynchronous on env.stream except where noted; throws cuda_error.
#include <cublas_v2.h>
#include <cuda.h>

#include <cstdint>
#include <map>
#include <string>

#include "evaluator/api/task.hpp"
#include "evaluator/gpu/device_memory.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/reference_plan.hpp"

namespace ptxbench::gpu {

// The worker's element type of a task dtype.
elem to_elem(dtype t);

struct reference_env {
  CUstream stream = nullptr;
  cublasHandle_t blas = nullptr;  // bound to `stream`
  size_t scores_budget_bytes = size_t(2) << 30;  // score (and dP) matrices of one chunk of heads
};

// Writes the inputs of `seed` into `tensors` (device addresses by name): every
// input drawn from its distribution (kernels.hpp: fill_distribution, tagged by
// its position in the task), except attention backward's derived O and LSE and
// the index inputs (group offsets, cu_seqlens), which are written from the
// sizes, the same for every seed (synchronising the stream). Throws
// std::runtime_error for an index input whose type or count does not fit.
void write_inputs(const reference_env& env, const task& t, const size_point& s, uint64_t seed,
                  const std::map<std::string, CUdeviceptr>& tensors);

struct reference_set {
  std::map<std::string, device_memory> outputs;        // fp32, by output tensor name
  std::map<std::string, device_memory> derived_inputs;  // inputs that are not random (attention bwd O, LSE)
  std::map<std::string, uint64_t> checksums;            // of every buffer above, when computed
};

// Every output's reference of `t` at `s` from the inputs in `tensors`; for
// attention backward also its derived inputs O (rounded to O's type) and
// LSE, written into `tensors` and kept in `out`. Synchronises the stream.
void compute_reference(const reference_env& env, const task& t, const size_point& s,
                       const std::map<std::string, CUdeviceptr>& tensors, reference_set& out);

// The GEMM output (C, or D for alpha_beta) in fp32, [rows, N] as the task's
// output, from the inputs at `tensors` (by task tensor name).
device_memory gemm_reference(const reference_env& env, const task& t, const gemm_plan& p,
                             const std::map<std::string, CUdeviceptr>& tensors);

// fp32 copies of attention inputs, each times its fp8 descale (1 unless fp8).
struct attention_inputs {
  device_memory q, k, v;
};
attention_inputs upcast_attention_inputs(const reference_env& env, const task& t, const attention_plan& p,
                                         const std::map<std::string, CUdeviceptr>& tensors);

struct attention_forward_result {
  device_memory o, lse;  // fp32, the layouts of O and LSE
};
// Synchronises env.stream once per chunk.
attention_forward_result attention_forward_reference(const reference_env& env, const attention_plan& p,
                                                     const attention_inputs& in);

struct attention_backward_result {
  device_memory dq, dk, dv;  // fp32; dK, dV summed over each KV head's query heads
};
// o_seen: O as the candidate sees it (rounded to its type), in fp32; lse: the LSE input.
// Synchronises env.stream once per chunk.
attention_backward_result attention_backward_reference(const reference_env& env, const attention_plan& p,
                                                       const attention_inputs& in, const float* o_seen,
                                                       const float* d_o, const float* lse);

}  // namespace ptxbench::gpu
