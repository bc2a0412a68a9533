#include "tests/baselines/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptxbench::gpu_test {
namespace {

double dot(const float* x, const float* y, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return acc;
}

const float* row(const float* base, const attention_problem& p, int64_t head, int64_t i) {
  return base + (head * p.s + i) * p.d;
}

bool attended(const attention_problem& p, int64_t i, int64_t j) { return !p.causal || j <= i; }

// P_ij from the given LSE (backward).
double probability(const attention_problem& p, int64_t head, int64_t i, int64_t j) {
  if (!attended(p, i, j)) return 0.0;
  const double s = p.scale * dot(row(p.q, p, head, i), row(p.k, p, head, j), p.d);
  return std::exp(s - static_cast<double>(p.lse[head * p.s + i]));
}

// dS_ij = P_ij (dO_i·V_j − Delta_i)
double score_gradient(const attention_problem& p, int64_t head, const std::vector<double>& delta, int64_t i,
                      int64_t j) {
  const double prob = probability(p, head, i, j);
  if (prob == 0.0) return 0.0;
  return prob * (dot(row(p.d_o, p, head, i), row(p.v, p, head, j), p.d) - delta[static_cast<size_t>(i)]);
}

}  // namespace

double gemm_element(const float* a, const float* b, int64_t k_size, int64_t i, int64_t j) {
  return dot(a + i * k_size, b + j * k_size, k_size);
}

void attention_forward_row(const attention_problem& p, int64_t head, int64_t i, double* o_row, double& lse) {
  std::vector<double> scores(static_cast<size_t>(p.s), -std::numeric_limits<double>::infinity());
  double max_score = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < p.s; ++j) {
    if (!attended(p, i, j)) continue;
    scores[static_cast<size_t>(j)] = p.scale * dot(row(p.q, p, head, i), row(p.k, p, head, j), p.d);
    max_score = std::max(max_score, scores[static_cast<size_t>(j)]);
  }
  double sum = 0.0;
  for (auto& sc : scores) {
    sc = std::isinf(sc) ? 0.0 : std::exp(sc - max_score);
    sum += sc;
  }
  std::fill(o_row, o_row + p.d, 0.0);
  for (int64_t j = 0; j < p.s; ++j) {
    const double w = scores[static_cast<size_t>(j)] / sum;
    if (w == 0.0) continue;
    const float* vj = row(p.v, p, head, j);
    for (int64_t c = 0; c < p.d; ++c) o_row[c] += w * vj[c];
  }
  lse = max_score + std::log(sum);
}

std::vector<double> attention_delta(const attention_problem& p, int64_t head) {
  std::vector<double> delta(static_cast<size_t>(p.s));
  for (int64_t i = 0; i < p.s; ++i) delta[static_cast<size_t>(i)] = dot(row(p.d_o, p, head, i), row(p.o, p, head, i), p.d);
  return delta;
}

void attention_dq_row(const attention_problem& p, int64_t head, const std::vector<double>& delta, int64_t i,
                      double* out) {
  std::fill(out, out + p.d, 0.0);
  for (int64_t j = 0; j < p.s; ++j) {
    const double ds = score_gradient(p, head, delta, i, j);
    if (ds == 0.0) continue;
    const float* kj = row(p.k, p, head, j);
    for (int64_t c = 0; c < p.d; ++c) out[c] += p.scale * ds * kj[c];
  }
}

void attention_dk_row(const attention_problem& p, int64_t head, const std::vector<double>& delta, int64_t j,
                      double* out) {
  std::fill(out, out + p.d, 0.0);
  for (int64_t i = 0; i < p.s; ++i) {
    const double ds = score_gradient(p, head, delta, i, j);
    if (ds == 0.0) continue;
    const float* qi = row(p.q, p, head, i);
    for (int64_t c = 0; c < p.d; ++c) out[c] += p.scale * ds * qi[c];
  }
}

void attention_dv_row(const attention_problem& p, int64_t head, int64_t j, double* out) {
  std::fill(out, out + p.d, 0.0);
  for (int64_t i = 0; i < p.s; ++i) {
    const double prob = probability(p, head, i, j);
    if (prob == 0.0) continue;
    const float* doi = row(p.d_o, p, head, i);
    for (int64_t c = 0; c < p.d; ++c) out[c] += prob * doi[c];
  }
}

}  // namespace ptxbench::gpu_test
