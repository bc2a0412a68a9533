#include "tests/gpu/naive_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ptxbench::naive {
namespace {

int64_t size_of(const size_point& s, const char* name, int64_t fallback = -1) {
  auto it = s.values.find(name);
  if (it != s.values.end()) return it->second;
  if (fallback >= 0) return fallback;
  throw std::invalid_argument(std::string("size ") + name + " missing");
}

double scalar(const task& t, const size_point& s, const char* name, double fallback) {
  auto v = scalar_values(t, s);
  auto it = v.find(name);
  return it == v.end() ? fallback : it->second;
}

const std::vector<double>& input(const tensor_values& in, const char* name) {
  auto it = in.find(name);
  if (it == in.end()) throw std::invalid_argument(std::string("input ") + name + " missing");
  return it->second;
}

// One (batch, query head) of attention: where its rows live in each tensor.
struct head {
  int64_t sq = 0, sk = 0;
  int64_t q0 = 0, q_step = 0;  // Q, O, dO, dQ: element (i, d) at q0 + i*q_step + d
  int64_t k0 = 0, k_step = 0;  // K, V, dK, dV
  int64_t lse0 = 0;            // LSE of row i at lse0 + i
};

struct attention_sizes {
  int64_t b, h, hkv, s, d, total;
};

attention_sizes sizes_of(const task& t, const size_point& s, const tensor_values& in) {
  attention_sizes a;
  a.b = size_of(s, "B");
  a.h = size_of(s, "H");
  a.hkv = size_of(s, "HKV", a.h);
  a.s = size_of(s, "S");
  a.d = size_of(s, "D");
  a.total = t.op.varlen ? int64_t(input(in, "cu_seqlens").at(size_t(a.b))) : a.b * a.s;
  return a;
}

head head_of(const task& t, const attention_sizes& a, const tensor_values& in, int64_t b, int64_t h) {
  const int64_t kvh = h / (a.h / a.hkv);
  head r;
  if (t.op.varlen) {
    const auto& cu = input(in, "cu_seqlens");
    const int64_t start = int64_t(cu.at(size_t(b))), len = int64_t(cu.at(size_t(b + 1))) - start;
    r.sq = r.sk = len;
    r.q0 = (start * a.h + h) * a.d;
    r.q_step = a.h * a.d;
    r.k0 = (start * a.hkv + kvh) * a.d;
    r.k_step = a.hkv * a.d;
    r.lse0 = h * a.total + start;
  } else if (t.op.decode) {
    r.sq = 1;
    r.sk = a.s;
    r.q0 = (b * a.h + h) * a.d;
    r.q_step = a.d;
    r.k0 = (b * a.hkv + kvh) * a.s * a.d;
    r.k_step = a.d;
    r.lse0 = b * a.h + h;
  } else {
    r.sq = r.sk = a.s;
    r.q0 = (b * a.h + h) * a.s * a.d;
    r.q_step = a.d;
    r.k0 = (b * a.hkv + kvh) * a.s * a.d;
    r.k_step = a.d;
    r.lse0 = (b * a.h + h) * a.s;
  }
  return r;
}

// The scaled scores of row i of one head (-inf where causal masks them).
std::vector<double> scores(const task& t, const size_point& s, const attention_sizes& a, const head& hd,
                           const tensor_values& in, int64_t i) {
  const double scale = scalar(t, s, "scale", 1.0 / std::sqrt(double(a.d)));
  const double sq = t.op.fp8 ? scalar(t, s, "scale_q", 1.0) : 1.0, sk = t.op.fp8 ? scalar(t, s, "scale_k", 1.0) : 1.0;
  const auto& q = input(in, "Q");
  const auto& k = input(in, "K");
  std::vector<double> row(size_t(hd.sk), -std::numeric_limits<double>::infinity());
  for (int64_t j = 0; j < hd.sk; ++j) {
    if (t.causal && j > i) continue;
    double dot = 0;
    for (int64_t d = 0; d < a.d; ++d)
      dot += (q[size_t(hd.q0 + i * hd.q_step + d)] * sq) * (k[size_t(hd.k0 + j * hd.k_step + d)] * sk);
    row[size_t(j)] = scale * dot;
  }
  return row;
}

double log_sum_exp(const std::vector<double>& row) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : row) m = std::max(m, x);
  double sum = 0;
  for (double x : row) sum += std::exp(x - m);
  return m + std::log(sum);
}

}  // namespace

std::vector<int64_t> documented_group_rows(int64_t groups, int64_t mean_rows) {
  std::vector<int64_t> rows;
  for (int64_t g = 0; g < groups; ++g) rows.push_back(mean_rows * ((5 * g + 3) % 7) / 3);
  return rows;
}

std::vector<int64_t> documented_lengths(int64_t batch, int64_t max_len) {
  std::vector<int64_t> lens;
  for (int64_t b = 0; b < batch; ++b)
    lens.push_back(std::max<int64_t>(1, max_len - max_len * ((3 * b) % 5) / 5 - 3 * (b % 2)));
  return lens;
}

tensor_values gemm(const task& t, const size_point& s, const tensor_values& in) {
  const int64_t M = size_of(s, "M"), N = size_of(s, "N"), K = size_of(s, "K");
  const int64_t L = t.op.batched ? size_of(s, "L") : 1;
  const bool nn = t.op.layout == "nn";
  const auto& A = input(in, "A");
  const auto& B = input(in, "B");
  // Each output row: the batch (or group) whose B it uses and its row in A.
  std::vector<std::pair<int64_t, int64_t>> rows;
  if (t.op.grouped) {
    const auto& off = input(in, "offsets");
    for (size_t g = 0; g + 1 < off.size(); ++g)
      for (int64_t r = int64_t(off[g]); r < int64_t(off[g + 1]); ++r) rows.push_back({int64_t(g), r});
  } else {
    for (int64_t l = 0; l < L; ++l)
      for (int64_t i = 0; i < M; ++i) rows.push_back({l, l * M + i});
  }
  const std::string epi = t.op.epilogue;
  const double ab = t.op.scaled ? scalar(t, s, "scale_a", 1) * scalar(t, s, "scale_b", 1) : 1.0;
  const double alpha = scalar(t, s, "alpha", 1), beta = scalar(t, s, "beta", 0);
  std::vector<double> out(rows.size() * size_t(N));
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto [l, arow] = rows[r];
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double b = nn ? B[size_t((l * K + k) * N + j)] : B[size_t((l * N + j) * K + k)];
        acc += A[size_t(arow * K + k)] * b;
      }
      double v = ab * acc;
      const size_t at = r * size_t(N) + size_t(j);
      if (epi == "bias") v += input(in, "bias")[size_t(j)];
      if (epi == "bias_gelu") {
        const double x = v + input(in, "bias")[size_t(j)];
        v = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      }
      if (epi == "alpha_beta") v = alpha * v + beta * input(in, "C")[at];
      out[at] = v;
    }
  }
  return {{epi == "alpha_beta" ? "D" : "C", out}};
}

tensor_values attention_forward(const task& t, const size_point& s, const tensor_values& in) {
  const attention_sizes a = sizes_of(t, s, in);
  const double sv = t.op.fp8 ? scalar(t, s, "scale_v", 1.0) : 1.0;
  const auto& v = input(in, "V");
  const int64_t q_rows = t.op.varlen ? a.total : t.op.decode ? a.b : a.b * a.s;
  std::vector<double> o(size_t(q_rows * a.h * a.d)), lse(size_t(q_rows * a.h));
  for (int64_t b = 0; b < a.b; ++b)
    for (int64_t h = 0; h < a.h; ++h) {
      const head hd = head_of(t, a, in, b, h);
      for (int64_t i = 0; i < hd.sq; ++i) {
        const std::vector<double> row = scores(t, s, a, hd, in, i);
        const double l = log_sum_exp(row);
        lse[size_t(hd.lse0 + i)] = l;
        for (int64_t d = 0; d < a.d; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < hd.sk; ++j)
            acc += std::exp(row[size_t(j)] - l) * v[size_t(hd.k0 + j * hd.k_step + d)] * sv;
          o[size_t(hd.q0 + i * hd.q_step + d)] = acc;
        }
      }
    }
  return {{"O", o}, {"LSE", lse}};
}

tensor_values attention_backward(const task& t, const size_point& s, const tensor_values& in) {
  const attention_sizes a = sizes_of(t, s, in);
  const double scale = scalar(t, s, "scale", 1.0 / std::sqrt(double(a.d)));
  const auto &q = input(in, "Q"), &k = input(in, "K"), &v = input(in, "V");
  const auto &o = input(in, "O"), &d_o = input(in, "dO"), &lse = input(in, "LSE");
  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
  for (int64_t b = 0; b < a.b; ++b)
    for (int64_t h = 0; h < a.h; ++h) {
      const head hd = head_of(t, a, in, b, h);
      for (int64_t i = 0; i < hd.sq; ++i) {
        const std::vector<double> row = scores(t, s, a, hd, in, i);
        double delta = 0;
        for (int64_t d = 0; d < a.d; ++d)
          delta += d_o[size_t(hd.q0 + i * hd.q_step + d)] * o[size_t(hd.q0 + i * hd.q_step + d)];
        for (int64_t j = 0; j < hd.sk; ++j) {
          const double p = std::exp(row[size_t(j)] - lse[size_t(hd.lse0 + i)]);
          double dp = 0;
          for (int64_t d = 0; d < a.d; ++d)
            dp += d_o[size_t(hd.q0 + i * hd.q_step + d)] * v[size_t(hd.k0 + j * hd.k_step + d)];
          const double ds = p * (dp - delta);
          for (int64_t d = 0; d < a.d; ++d) {
            const size_t qi = size_t(hd.q0 + i * hd.q_step + d), kj = size_t(hd.k0 + j * hd.k_step + d);
            dv[kj] += p * d_o[qi];
            dq[qi] += scale * ds * k[kj];
            dk[kj] += scale * ds * q[qi];
          }
        }
      }
    }
  return {{"dQ", dq}, {"dK", dk}, {"dV", dv}};
}

tensor_values outputs(const task& t, const size_point& s, const tensor_values& in) {
  if (t.reference == "gemm") return gemm(t, s, in);
  if (t.reference == "attention_fwd") return attention_forward(t, s, in);
  if (t.reference == "attention_bwd") return attention_backward(t, s, in);
  throw std::invalid_argument("no naive reference for '" + t.reference + "'");
}

}  // namespace ptxbench::naive
