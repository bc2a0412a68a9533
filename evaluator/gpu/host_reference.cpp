#include "evaluator/gpu/host_reference.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "evaluator/gpu/reference_math.hpp"
#include "evaluator/gpu/reference_plan.hpp"

namespace ptxbench::gpu {
namespace {

const std::vector<float>& need(const host_tensors& in, const std::string& name, size_t elements) {
  auto it = in.find(name);
  if (it == in.end()) throw std::runtime_error("the host reference needs input " + name);
  if (it->second.size() < elements)
    throw std::runtime_error("input " + name + " has " + std::to_string(it->second.size()) + " elements, not " +
                             std::to_string(elements));
  return it->second;
}

host_tensors gemm(const task& t, const size_point& s, const host_tensors& in) {
  const gemm_plan p = plan_gemm(t, s);
  const int64_t rows = p.m * p.batch, groups = p.group_rows.empty() ? p.batch : int64_t(p.group_rows.size()) - 1;
  const auto& a = need(in, "A", size_t(rows * p.k));
  const auto& b = need(in, "B", size_t(groups * p.n * p.k));
  const bool has_bias = p.epilogue.kind == refmath::epilogue_kind::bias ||
                        p.epilogue.kind == refmath::epilogue_kind::bias_gelu;
  const std::vector<float> none;
  const auto& bias = has_bias ? need(in, "bias", size_t(p.n)) : none;
  const auto& c = p.epilogue.kind == refmath::epilogue_kind::alpha_beta ? need(in, "C", size_t(rows * p.n)) : none;
  std::vector<float> out(size_t(rows * p.n));
  int64_t g = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (!p.group_rows.empty()) {
      while (r >= p.group_rows[size_t(g) + 1]) ++g;  // empty groups are passed over
    } else {
      g = r / p.m;
    }
    const float* brows = b.data() + g * p.n * p.k;
    for (int64_t j = 0; j < p.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < p.k; ++k)
        acc += double(a[size_t(r * p.k + k)]) * (p.nn ? brows[k * p.n + j] : brows[j * p.k + k]);
      const size_t at = size_t(r * p.n + j);
      out[at] = refmath::apply_epilogue(p.epilogue, float(acc), has_bias ? bias[size_t(j)] : 0.0f,
                                        c.empty() ? 0.0f : c[at]);
    }
  }
  return {{p.output, out}};
}

// Scaled scores of query i of one head over the keys it attends.
std::vector<double> scores(const attention_plan& p, const refmath::head_view& v, const std::vector<float>& q,
                           const std::vector<float>& k, int64_t i) {
  const int64_t n = refmath::keys_attended(p.dims.causal, i, v.sq, v.sk);
  std::vector<double> s(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < p.dims.dim; ++d)
      dot += double(q[size_t(v.q + i * v.q_step + d)] * p.q_scale) * double(k[size_t(v.k + j * v.k_step + d)] * p.k_scale);
    s[size_t(j)] = p.scale * dot;
  }
  return s;
}

double log_sum_exp(const std::vector<double>& s) {
  if (s.empty()) return -std::numeric_limits<double>::infinity();
  double m = s[0];
  for (double x : s) m = std::max(m, x);
  double sum = 0;
  for (double x : s) sum += std::exp(x - m);
  return m + std::log(sum);
}

host_tensors backward(const task& t, const size_point& s, const host_tensors& in) {
  const attention_plan p = plan_attention(t, s);
  const auto& q = need(in, "Q", size_t(p.q_elements));
  const auto& k = need(in, "K", size_t(p.kv_elements));
  const auto& v = need(in, "V", size_t(p.kv_elements));
  const auto& o = need(in, "O", size_t(p.q_elements));
  const auto& d_o = need(in, "dO", size_t(p.q_elements));
  const auto& lse = need(in, "LSE", size_t(p.lse_elements));
  const int64_t D = p.dims.dim;
  std::vector<double> dq(size_t(p.q_elements)), dk(size_t(p.kv_elements)), dv(size_t(p.kv_elements));
  for (const auto& h : p.heads)
    for (int64_t i = 0; i < h.sq; ++i) {
      const std::vector<double> row = scores(p, h, q, k, i);
      double delta = 0;
      for (int64_t d = 0; d < D; ++d) delta += double(d_o[size_t(h.q + i * h.q_step + d)]) * o[size_t(h.q + i * h.q_step + d)];
      for (size_t j = 0; j < row.size(); ++j) {
        const double pij = std::exp(row[j] - lse[size_t(h.lse + i)]);
        const int64_t kj = h.k + int64_t(j) * h.k_step, qi = h.q + i * h.q_step;
        double dp = 0;
        for (int64_t d = 0; d < D; ++d) dp += double(d_o[size_t(qi + d)]) * v[size_t(kj + d)];
        const double ds = pij * (dp - delta);
        for (int64_t d = 0; d < D; ++d) {
          dv[size_t(kj + d)] += pij * d_o[size_t(qi + d)];
          dq[size_t(qi + d)] += p.scale * ds * k[size_t(kj + d)];
          dk[size_t(kj + d)] += p.scale * ds * q[size_t(qi + d)];
        }
      }
    }
  return {{"dQ", {dq.begin(), dq.end()}}, {"dK", {dk.begin(), dk.end()}}, {"dV", {dv.begin(), dv.end()}}};
}

}  // namespace

host_tensors host_attention_forward(const task& t, const size_point& s, const host_tensors& in) {
  const attention_plan p = plan_attention(t, s);
  const auto& q = need(in, "Q", size_t(p.q_elements));
  const auto& k = need(in, "K", size_t(p.kv_elements));
  const auto& v = need(in, "V", size_t(p.kv_elements));
  std::vector<float> o(size_t(p.q_elements)), lse(size_t(p.lse_elements));
  for (const auto& h : p.heads)
    for (int64_t i = 0; i < h.sq; ++i) {
      const std::vector<double> row = scores(p, h, q, k, i);
      const double l = log_sum_exp(row);
      lse[size_t(h.lse + i)] = float(l);
      for (int64_t d = 0; d < p.dims.dim; ++d) {
        double acc = 0;
        for (size_t j = 0; j < row.size(); ++j)
          acc += std::exp(row[j] - l) * double(v[size_t(h.k + int64_t(j) * h.k_step + d)] * p.v_scale);
        o[size_t(h.q + i * h.q_step + d)] = float(acc);
      }
    }
  return {{"O", o}, {"LSE", lse}};
}

host_tensors host_reference(const task& t, const size_point& s, const host_tensors& inputs) {
  if (t.reference == "gemm") return gemm(t, s, inputs);
  if (t.reference == "attention_fwd") return host_attention_forward(t, s, inputs);
  if (t.reference == "attention_bwd") return backward(t, s, inputs);
  throw std::runtime_error("unknown reference '" + t.reference + "' in task " + t.id);
}

}  // namespace ptxbench::gpu
