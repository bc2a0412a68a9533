#pragma once
// Straightforward fp64 references for single output rows, so small problems
// can be checked whole and large ones by sampled rows. Attention tensors are
// [B,H,S,D] contiguous, LSE [B,H,S]; `head` indexes b*H + h.
#include <cstdint>
#include <vector>

namespace ptxbench::gpu_test {

// C[i,j] = Σ_k A[i,k]·B[j,k] with A M×K and B N×K row-major.
double gemm_element(const float* a, const float* b, int64_t k_size, int64_t i, int64_t j);

struct attention_problem {
  int64_t b = 0, h = 0, s = 0, d = 0;
  bool causal = false;
  double scale = 0.0;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  // Backward only: the given forward results and the output gradient.
  const float* o = nullptr;
  const float* d_o = nullptr;
  const float* lse = nullptr;
};

// Forward: O row i of `head` (d values) and its natural-log LSE.
void attention_forward_row(const attention_problem& p, int64_t head, int64_t i, double* o_row, double& lse);

// Backward rows, from P_ij = exp(scale·q_i·k_j − LSE_i) with the given LSE and
// Delta_i = dO_i·O_i computed from the given O. `delta` holds Delta for every
// row of `head` (attention_delta).
std::vector<double> attention_delta(const attention_problem& p, int64_t head);
void attention_dq_row(const attention_problem& p, int64_t head, const std::vector<double>& delta, int64_t i,
                      double* out);
void attention_dk_row(const attention_problem& p, int64_t head, const std::vector<double>& delta, int64_t j,
                      double* out);
void attention_dv_row(const attention_problem& p, int64_t head, int64_t j, double* out);

}  // namespace ptxbench::gpu_test
