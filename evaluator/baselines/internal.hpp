#pragma once
// Pieces shared by the baseline implementations; not part of the contract.
#include <memory>
#include <string>

#include "evaluator/baselines/baselines.hpp"

namespace ptxbench::baselines_detail {

// A baseline that could not be set up: available() is false and why_not() says why.
std::unique_ptr<baseline> make_unavailable(std::string name, std::string why_not);

// The device pointer bound to `tensor`, or throws std::invalid_argument naming it.
CUdeviceptr require_buffer(const baseline_buffers& b, const std::string& tensor);

// The value of size `name` at `s`, or throws std::invalid_argument naming it.
int64_t require_size(const size_point& s, const std::string& name);

// Grouped GEMM (MoE): cuBLAS's grouped batched GEMM, or per-group cuBLASLt
// calls captured in one CUDA graph, whichever is faster (gemm_grouped_baseline.cpp).
// Throws what the factory turns into an unavailable baseline.
std::unique_ptr<baseline> make_grouped_gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                                     CUstream stream);

}  // namespace ptxbench::baselines_detail
