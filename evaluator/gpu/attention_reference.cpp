// Attention references a chunk of heads at a time (reference_plan.hpp's
// chunk_heads): the heads of a chunk share one shape (sq queries × sk keys),
// so each product is one pointer-array batched SGEMM over the chunk, every
// head's operands located by its head_view. Row-major X (rows × D, row step
// ld) is the column-major D × rows matrix with leading dimension ld; scores
// are row-major sq × sk per head (column-major sk × sq, ld sk).
#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/reference_compute.hpp"
#include "evaluator/gpu/reference_kernels.hpp"

namespace ptxbench::gpu {
namespace {

// Device arrays of one chunk: the heads' views and the operand pointers of
// its batched products, filled from the host and kept until the chunk is done.
class chunk_arrays {
 public:
  chunk_arrays(size_t max_heads, int max_pointer_sets)
      : m_views(max_heads * sizeof(refmath::head_view)), m_pointers(max_heads * size_t(max_pointer_sets) * 8) {}
  // Uploads the views of heads [first, first+count) and returns them on the device.
  const refmath::head_view* views(const reference_env& env, const attention_plan& p, const head_chunk& c) {
    PTXB_CU(cuMemcpyHtoDAsync(m_views.ptr(), p.heads.data() + c.first, c.count * sizeof(refmath::head_view),
                              env.stream));
    return m_views.as<refmath::head_view>();
  }
  // Appends a set of `pointers` and returns where it lives on the device (valid until finish()).
  const float* const* add(const std::vector<const float*>& pointers) {
    const size_t at = m_host.size();
    if ((at + pointers.size()) * 8 > m_pointers.bytes()) throw std::logic_error("reference chunk: pointer sets overflow");
    m_host.insert(m_host.end(), pointers.begin(), pointers.end());
    return reinterpret_cast<const float* const*>(m_pointers.ptr() + at * 8);
  }
  void upload(const reference_env& env) {
    PTXB_CU(cuMemcpyHtoDAsync(m_pointers.ptr(), m_host.data(), m_host.size() * 8, env.stream));
  }
  // Waits for the chunk's work: the host copies above must outlive their transfers.
  void finish(const reference_env& env) {
    PTXB_CU(cuStreamSynchronize(env.stream));
    m_host.clear();
  }

 private:
  device_memory m_views, m_pointers;
  std::vector<const float*> m_host;
};

struct batched_product {
  cublasOperation_t ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  const float* const* a;
  int64_t lda;
  const float* const* b;
  int64_t ldb;
  const float* const* c;
  int64_t ldc;
  int64_t count;
};

void sgemm(const reference_env& env, const batched_product& g) {
  PTXB_CUBLAS(cublasSgemmBatched(env.blas, g.ta, g.tb, int(g.m), int(g.n), int(g.k), &g.alpha, g.a, int(g.lda), g.b,
                                 int(g.ldb), &g.beta, const_cast<float* const*>(g.c), int(g.ldc), int(g.count)));
}

// Pointers base + offset(view) for the heads of a chunk (a subset when `keep` says so).
template <typename offset_fn>
std::vector<const float*> pointers(const attention_plan& p, const head_chunk& c, const float* base, offset_fn offset,
                                   int64_t step = 0, int keep_group_index = -1) {
  std::vector<const float*> out;
  const int64_t group = p.dims.heads / p.dims.kv_heads;
  for (size_t i = c.first; i < c.first + c.count; ++i) {
    const int64_t h = int64_t(i) % p.dims.heads;
    if (keep_group_index >= 0 && h % group != keep_group_index) continue;
    out.push_back(base + offset(p.heads[i]) + int64_t(i - c.first) * step);
  }
  return out;
}

struct chunk_extent {
  size_t heads = 0, rows = 0, scores = 0;  // the largest chunk's heads, query rows and score elements
};

chunk_extent largest(const std::vector<head_chunk>& chunks, const attention_plan& p) {
  chunk_extent e;
  for (const auto& c : chunks) {
    const auto& h = p.heads[c.first];
    e.heads = std::max(e.heads, c.count);
    e.rows = std::max(e.rows, c.count * size_t(h.sq));
    e.scores = std::max(e.scores, c.count * size_t(h.sq * h.sk));
  }
  return e;
}

auto q_of = [](const refmath::head_view& v) { return v.q; };
auto k_of = [](const refmath::head_view& v) { return v.k; };

}  // namespace

attention_inputs upcast_attention_inputs(const reference_env& env, const task& t, const attention_plan& p,
                                         const std::map<std::string, CUdeviceptr>& tensors) {
  attention_inputs in{device_memory(size_t(p.q_elements) * 4), device_memory(size_t(p.kv_elements) * 4),
                      device_memory(size_t(p.kv_elements) * 4)};
  upcast_scaled(tensors.at("Q"), to_elem(t.find_tensor("Q")->type), p.q_elements, p.q_scale, in.q.as<float>(), env.stream);
  upcast_scaled(tensors.at("K"), to_elem(t.find_tensor("K")->type), p.kv_elements, p.k_scale, in.k.as<float>(), env.stream);
  upcast_scaled(tensors.at("V"), to_elem(t.find_tensor("V")->type), p.kv_elements, p.v_scale, in.v.as<float>(), env.stream);
  return in;
}

attention_forward_result attention_forward_reference(const reference_env& env, const attention_plan& p,
                                                     const attention_inputs& in) {
  attention_forward_result r{device_memory(size_t(p.q_elements) * 4), device_memory(size_t(p.lse_elements) * 4)};
  const auto chunks = chunk_heads(p, 1, env.scores_budget_bytes);
  const chunk_extent most = largest(chunks, p);
  chunk_arrays arrays(most.heads, 5);
  device_memory scores(most.scores * 4);
  const int64_t D = p.dims.dim;
  for (const auto& c : chunks) {
    const refmath::head_view& h0 = p.heads[c.first];
    const int64_t sq = h0.sq, sk = h0.sk, n = int64_t(c.count);
    const auto* views = arrays.views(env, p, c);
    auto zero = [](const refmath::head_view&) { return int64_t(0); };
    const auto k = arrays.add(pointers(p, c, in.k.as<float>(), k_of));
    const auto q = arrays.add(pointers(p, c, in.q.as<float>(), q_of));
    const auto s = arrays.add(pointers(p, c, scores.as<float>(), zero, sq * sk));
    const auto v = arrays.add(pointers(p, c, in.v.as<float>(), k_of));
    const auto o = arrays.add(pointers(p, c, r.o.as<float>(), q_of));
    arrays.upload(env);
    // S (sq × sk) = scale · Q Kᵀ ; softmax rows -> P and LSE ; O = P V
    sgemm(env, {CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, D, p.scale, 0.f, k, h0.k_step, q, h0.q_step, s, sk, n});
    softmax_heads(scores.as<float>(), views, n, sq, sk, p.dims.causal, r.lse.as<float>(), nullptr, env.stream);
    sgemm(env, {CUBLAS_OP_N, CUBLAS_OP_N, D, sq, sk, 1.f, 0.f, v, h0.k_step, s, sk, o, h0.q_step, n});
    arrays.finish(env);
  }
  return r;
}

attention_backward_result attention_backward_reference(const reference_env& env, const attention_plan& p,
                                                       const attention_inputs& in, const float* o_seen,
                                                       const float* d_o, const float* lse) {
  attention_backward_result r{device_memory(size_t(p.q_elements) * 4), device_memory(size_t(p.kv_elements) * 4),
                              device_memory(size_t(p.kv_elements) * 4)};
  PTXB_CU(cuMemsetD8Async(r.dk.ptr(), 0, r.dk.bytes(), env.stream));  // accumulated over each group's heads
  PTXB_CU(cuMemsetD8Async(r.dv.ptr(), 0, r.dv.bytes(), env.stream));
  const auto chunks = chunk_heads(p, 2, env.scores_budget_bytes);
  const chunk_extent most = largest(chunks, p);
  const int64_t group = p.dims.heads / p.dims.kv_heads, D = p.dims.dim;
  chunk_arrays arrays(most.heads, 7 + 6 * int(group));
  device_memory probs(most.scores * 4), grads(most.scores * 4), delta(most.rows * 4);
  auto zero = [](const refmath::head_view&) { return int64_t(0); };
  for (const auto& c : chunks) {
    const refmath::head_view& h0 = p.heads[c.first];
    const int64_t sq = h0.sq, sk = h0.sk, n = int64_t(c.count);
    const auto* views = arrays.views(env, p, c);
    const auto k = arrays.add(pointers(p, c, in.k.as<float>(), k_of));
    const auto q = arrays.add(pointers(p, c, in.q.as<float>(), q_of));
    const auto v = arrays.add(pointers(p, c, in.v.as<float>(), k_of));
    const auto dout = arrays.add(pointers(p, c, d_o, q_of));
    const auto pr = arrays.add(pointers(p, c, probs.as<float>(), zero, sq * sk));
    const auto ds = arrays.add(pointers(p, c, grads.as<float>(), zero, sq * sk));
    const auto dq = arrays.add(pointers(p, c, r.dq.as<float>(), q_of));
    // dK and dV sum over the query heads of a KV head: one query head per KV
    // head in each batched product (group index j), so no two of a batch collide.
    struct key_side {
      int64_t count;
      std::array<const float* const*, 6> sets;  // dO, P, dV, Q, dS, dK
    };
    std::vector<key_side> key_sides;
    for (int64_t j = 0; j < group; ++j) {
      const auto d_o_j = pointers(p, c, d_o, q_of, 0, int(j));
      if (d_o_j.empty()) continue;
      key_sides.push_back({int64_t(d_o_j.size()),
                           {arrays.add(d_o_j), arrays.add(pointers(p, c, probs.as<float>(), zero, sq * sk, int(j))),
                            arrays.add(pointers(p, c, r.dv.as<float>(), k_of, 0, int(j))),
                            arrays.add(pointers(p, c, in.q.as<float>(), q_of, 0, int(j))),
                            arrays.add(pointers(p, c, grads.as<float>(), zero, sq * sk, int(j))),
                            arrays.add(pointers(p, c, r.dk.as<float>(), k_of, 0, int(j)))}});
    }
    arrays.upload(env);
    // P = exp(scale · Q Kᵀ − LSE) (masked) ; Delta = rowsum(dO ∘ O) ; dS = P ∘ (dO Vᵀ − Delta) ; dQ = scale · dS K
    sgemm(env, {CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, D, p.scale, 0.f, k, h0.k_step, q, h0.q_step, pr, sk, n});
    softmax_heads(probs.as<float>(), views, n, sq, sk, p.dims.causal, nullptr, lse, env.stream);
    row_dot_heads(d_o, o_seen, views, n, sq, D, delta.as<float>(), env.stream);
    sgemm(env, {CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, D, 1.f, 0.f, v, h0.k_step, dout, h0.q_step, ds, sk, n});
    softmax_backward(grads.as<float>(), probs.as<float>(), delta.as<float>(), n * sq, int(sk), env.stream);
    sgemm(env, {CUBLAS_OP_N, CUBLAS_OP_N, D, sq, sk, p.scale, 0.f, k, h0.k_step, ds, sk, dq, h0.q_step, n});
    for (const auto& g : key_sides) {
      // dV += Pᵀ dO ; dK += scale · dSᵀ Q
      const auto& x = g.sets;
      sgemm(env, {CUBLAS_OP_N, CUBLAS_OP_T, D, sk, sq, 1.f, 1.f, x[0], h0.q_step, x[1], sk, x[2], h0.k_step, g.count});
      sgemm(env, {CUBLAS_OP_N, CUBLAS_OP_T, D, sk, sq, p.scale, 1.f, x[3], h0.q_step, x[4], sk, x[5], h0.k_step,
                  g.count});
    }
    arrays.finish(env);
  }
  return r;
}

}  // namespace ptxbench::gpu
