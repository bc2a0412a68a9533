#pragma once
// A task's reference at one size, read once from the task (its op, sizes,
// scalars and index inputs) into plain numbers: what the GPU references and
// the host reference compute from. Host code only (CPU-testable).
#include <cstdint>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"
#include "evaluator/gpu/reference_math.hpp"

namespace ptxbench::gpu {

struct gemm_plan {
  int64_t m = 0, n = 0, k = 0;  // m: the rows of one batch; grouped: every row (T)
  int64_t batch = 1;            // L of a batched task
  bool nn = false;              // B is [K, N] (else [N, K])
  // Grouped: rows of group g are group_rows[g] .. group_rows[g+1]-1 (G+1
  // entries, from evaluator/api/index_inputs.hpp); empty otherwise.
  std::vector<int64_t> group_rows;
  refmath::gemm_epilogue epilogue;
  std::string output = "C";  // D for alpha_beta
  dtype a_type = dtype::bf16, b_type = dtype::bf16;
};

// Throws std::runtime_error naming what the task lacks (a size, a tensor, a scalar).
gemm_plan plan_gemm(const task& t, const size_point& s);

struct attention_plan {
  refmath::attention_dims dims;
  float scale = 1.0f;                                 // of the scores (scalar "scale", else 1/sqrt(D))
  float q_scale = 1.0f, k_scale = 1.0f, v_scale = 1.0f;  // fp8 descales, else 1
  std::vector<refmath::head_view> heads;              // every (b, h), b-major
  int64_t q_elements = 0, kv_elements = 0, lse_elements = 0;
  bool backward = false;
};

attention_plan plan_attention(const task& t, const size_point& s);

// Runs of consecutive heads of one shape (sq, sk) whose per-head buffers of
// sq·sk floats, `matrices` of them per head, fit in `budget_bytes` together
// (one head at least): the batches the GPU reference computes at once.
struct head_chunk {
  size_t first = 0, count = 0;
};
std::vector<head_chunk> chunk_heads(const attention_plan& p, int matrices, size_t budget_bytes);

}  // namespace ptxbench::gpu
