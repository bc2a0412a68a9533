#pragma once
// Inputs and fp32 references of one task at one size and seed. Inputs are
// seeded uniform values in [-1, 1] (never zeros); attention backward's O and
// LSE inputs are the fp32 forward pass of its Q, K, V (O rounded to bf16).
// References are computed in fp32 on pristine inputs, before the candidate
// runs: GEMM and attention products through cuBLAS SGEMM in pedantic fp32
// (no TF32), softmax in fp32. They are cached per (task, size, seed).
#include <cuda.h>

#include <map>
#include <memory>
#include <string>

#include "evaluator/api/task.hpp"
#include "evaluator/gpu/device_memory.hpp"
#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/worker_state.hpp"

namespace ptxbench::gpu {

struct reference_set {
  std::map<std::string, device_memory> outputs;        // fp32, by output tensor name
  std::map<std::string, device_memory> derived_inputs;  // inputs that are not random (attention bwd O, LSE)
};

class reference_cache {
 public:
  explicit reference_cache(worker_state& w) : m_w(w) {}
  // Writes the inputs of `seed` into `tensors` (device addresses by name) and
  // returns the references. Synchronises the worker's stream.
  const reference_set& prepare(const task& t, const size_point& s, uint64_t seed,
                               const std::map<std::string, CUdeviceptr>& tensors);

 private:
  void compute(const task& t, const size_point& s, const std::map<std::string, CUdeviceptr>& tensors,
               reference_set& out);
  worker_state& m_w;
  std::map<std::string, std::unique_ptr<reference_set>> m_cache;
  size_t m_bytes = 0;
};

elem to_elem(dtype t);

}  // namespace ptxbench::gpu
