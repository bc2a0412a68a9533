#include "statement_math.hpp"

#include <algorithm>
#include <cmath>

#include "evaluator/api/index_inputs.hpp"

namespace ptxbench::testing {
namespace {

int64_t size_of(const size_point& s, const char* name, int64_t fallback = -1) {
  auto it = s.values.find(name);
  return it == s.values.end() ? fallback : it->second;
}

double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x))); }

values gemm(const task& t, const size_point& s, const values& in) {
  const auto sc = scalar_values(t, s);
  const int64_t N = size_of(s, "N"), K = size_of(s, "K");
  const auto& A = in.at("A");
  const auto& B = in.at("B");
  // (row of A and C, batch or group whose B it uses)
  std::vector<std::pair<int64_t, int64_t>> rows;
  if (t.op.grouped) {
    const auto off = group_offsets(size_of(s, "G"), size_of(s, "M"));
    for (int64_t g = 0; g + 1 < int64_t(off.size()); ++g)
      for (int64_t r = off[size_t(g)]; r < off[size_t(g) + 1]; ++r) rows.push_back({r, g});
  } else {
    const int64_t L = t.op.batched ? size_of(s, "L") : 1, M = size_of(s, "M");
    for (int64_t l = 0; l < L; ++l)
      for (int64_t i = 0; i < M; ++i) rows.push_back({l * M + i, l});
  }
  const std::string out = t.op.epilogue == "alpha_beta" ? "D" : "C";
  std::vector<double> C(rows.size() * size_t(N));
  for (const auto& [r, g] : rows)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double b = t.op.layout == "nn" ? B[size_t(k * N + j)] : B[size_t((g * N + j) * K + k)];
        acc += A[size_t(r * K + k)] * b;
      }
      double v = acc;
      if (t.op.epilogue == "bias") v = acc + in.at("bias")[size_t(j)];
      if (t.op.epilogue == "bias_gelu") v = gelu_tanh(acc + in.at("bias")[size_t(j)]);
      if (t.op.epilogue == "alpha_beta") v = sc.at("alpha") * acc + sc.at("beta") * in.at("C")[size_t(r * N + j)];
      if (t.op.scaled) v = sc.at("scale_a") * sc.at("scale_b") * acc;
      C[size_t(r * N + j)] = v;
    }
  return {{out, C}};
}

// One attention problem: the rows of Q, K, V, O (and LSE) of one (sequence,
// head). Query row i, element d is at q + i*q_step + d; key row j at
// k + j*k_step + d; the LSE of query i at lse + i*lse_step.
struct head_view {
  int64_t q_len = 0, kv_len = 0;
  int64_t q = 0, q_step = 0, k = 0, k_step = 0, lse = 0, lse_step = 0;
  size_t qi(int64_t i, int64_t d) const { return size_t(q + i * q_step + d); }
  size_t kj(int64_t j, int64_t d) const { return size_t(k + j * k_step + d); }
  size_t li(int64_t i) const { return size_t(lse + i * lse_step); }
};

std::vector<head_view> heads_of(const task& t, const size_point& s) {
  const int64_t B = size_of(s, "B"), H = size_of(s, "H"), S = size_of(s, "S"), D = size_of(s, "D");
  const int64_t HKV = size_of(s, "HKV", H), group = H / HKV;
  std::vector<head_view> out;
  if (t.op.varlen) {
    // Token t of the packed tensors: element (t, h, d) at (t*H + h)*D + d; LSE (h, t) at h*T + t.
    const auto cu = varlen_cu_seqlens(B, S);
    const int64_t T = cu.back();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t start = cu[size_t(b)], len = cu[size_t(b) + 1] - start;
        out.push_back({len, len, (start * H + h) * D, H * D, (start * H + h) * D, H * D, h * T + start, 1});
      }
    return out;
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / group;  // the KV head query head h reads
      const int64_t kv = (b * HKV + g) * S * D;
      if (t.op.decode) out.push_back({1, S, (b * H + h) * D, 0, kv, D, b * H + h, 0});
      else out.push_back({S, S, (b * H + h) * S * D, D, kv, D, (b * H + h) * S, 1});
    }
  return out;
}

// The softmax scale of the scores and the factor of the output (fp8 descales).
std::pair<double, double> scales(const task& t, const size_point& s) {
  const auto sc = scalar_values(t, s);
  double score = 1.0 / std::sqrt(double(size_of(s, "D"))), out = 1.0;
  if (t.op.fp8) {
    score *= sc.at("scale_q") * sc.at("scale_k");
    out = sc.at("scale_v");
  }
  return {score, out};
}

bool attended(const task& t, int64_t i, int64_t j) { return !t.causal || j <= i; }

}  // namespace

values statement_attention_forward(const task& t, const size_point& s, const values& in) {
  const int64_t D = size_of(s, "D");
  const auto [score_scale, out_scale] = scales(t, s);
  const auto &Q = in.at("Q"), &K = in.at("K"), &V = in.at("V");
  values out{{"O", std::vector<double>(Q.size())}, {"LSE", std::vector<double>(Q.size() / size_t(D))}};
  for (const auto& h : heads_of(t, s))
    for (int64_t i = 0; i < h.q_len; ++i) {
      std::vector<double> score(size_t(h.kv_len));
      double top = -INFINITY;
      for (int64_t j = 0; j < h.kv_len; ++j) {
        if (!attended(t, i, j)) continue;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += Q[h.qi(i, d)] * K[h.kj(j, d)];
        score[size_t(j)] = score_scale * dot;
        top = std::max(top, score[size_t(j)]);
      }
      double sum = 0;
      for (int64_t j = 0; j < h.kv_len; ++j)
        if (attended(t, i, j)) sum += std::exp(score[size_t(j)] - top);
      const double lse = top + std::log(sum);
      out["LSE"][h.li(i)] = lse;
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j < h.kv_len; ++j)
          if (attended(t, i, j)) o += std::exp(score[size_t(j)] - lse) * V[h.kj(j, d)];
        out["O"][h.qi(i, d)] = out_scale * o;
      }
    }
  return out;
}

namespace {

values attention_backward(const task& t, const size_point& s, const values& in) {
  const int64_t D = size_of(s, "D");
  const double scale = scales(t, s).first;
  const auto &Q = in.at("Q"), &K = in.at("K"), &V = in.at("V"), &O = in.at("O"), &dO = in.at("dO"),
             &LSE = in.at("LSE");
  values out{{"dQ", std::vector<double>(Q.size())}, {"dK", std::vector<double>(K.size())},
             {"dV", std::vector<double>(V.size())}};
  for (const auto& h : heads_of(t, s))
    for (int64_t i = 0; i < h.q_len; ++i) {
      double delta = 0;
      for (int64_t d = 0; d < D; ++d) delta += dO[h.qi(i, d)] * O[h.qi(i, d)];
      for (int64_t j = 0; j < h.kv_len; ++j) {
        if (!attended(t, i, j)) continue;
        double dot = 0, dp = 0;
        for (int64_t d = 0; d < D; ++d) {
          dot += Q[h.qi(i, d)] * K[h.kj(j, d)];
          dp += dO[h.qi(i, d)] * V[h.kj(j, d)];
        }
        const double p = std::exp(scale * dot - LSE[h.li(i)]);
        const double ds = p * (dp - delta);
        for (int64_t d = 0; d < D; ++d) {
          out["dQ"][h.qi(i, d)] += scale * ds * K[h.kj(j, d)];
          out["dK"][h.kj(j, d)] += scale * ds * Q[h.qi(i, d)];  // summed over the query heads of the group
          out["dV"][h.kj(j, d)] += p * dO[h.qi(i, d)];
        }
      }
    }
  return out;
}

}  // namespace

values statement_outputs(const task& t, const size_point& s, const values& in) {
  if (t.family == "gemm") return gemm(t, s, in);
  if (t.family == "attention_fwd") return statement_attention_forward(t, s, in);
  return attention_backward(t, s, in);
}

}  // namespace ptxbench::testing
