#include "evaluator/baselines/attention_graphs.hpp"

#include <limits>

namespace ptxbench::cudnn {
namespace {

struct layouts {
  std::vector<int64_t> bhsd, bhsd_strides;    // Q-like
  std::vector<int64_t> bhds, bhds_strides;    // Kᵀ view of a [B,H,S,D] buffer
  std::vector<int64_t> bhss;                  // scores
  std::vector<int64_t> bhss_t, bhss_t_strides;  // scores transposed (a view)
  std::vector<int64_t> stats, stats_strides;  // [B,H,S,1]
};

layouts make_layouts(const attention_shape& a) {
  const int64_t b = a.b, h = a.h, s = a.s, d = a.d;
  layouts l;
  l.bhsd = {b, h, s, d};
  l.bhsd_strides = {h * s * d, s * d, d, 1};
  l.bhds = {b, h, d, s};
  l.bhds_strides = {h * s * d, s * d, 1, d};
  l.bhss = {b, h, s, s};
  l.bhss_t = {b, h, s, s};
  l.bhss_t_strides = {h * s * s, s * s, 1, s};
  l.stats = {b, h, s, 1};
  l.stats_strides = {h * s, s, 1, 1};
  return l;
}

// scores <- scores where row >= col, else the lowest float (cuDNN's causal pattern).
int64_t causal_mask(graph& g, const layouts& l, int64_t scores, int64_t lowest) {
  const int64_t row = g.virtual_tensor(l.bhss, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, row, -1, CUDNN_DATA_INT32, 2);
  const int64_t col = g.virtual_tensor(l.bhss, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, col, -1, CUDNN_DATA_INT32, 3);
  const int64_t keep = g.virtual_tensor(l.bhss, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, keep, -1, CUDNN_DATA_BOOLEAN);
  const int64_t masked = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, lowest, masked, keep);
  return masked;
}

}  // namespace

const char* to_string(backward_lowering l) { return l == backward_lowering::current ? "current" : "legacy"; }

attention_graph_io build_forward_graph(graph& g, const attention_shape& a) {
  const layouts l = make_layouts(a);
  attention_graph_io io;
  const int64_t q = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t kt = g.tensor(l.bhds, l.bhds_strides, CUDNN_DATA_BFLOAT16);
  const int64_t v = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t o = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t stats = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT);
  io.uids = {{"Q", q}, {"K", kt}, {"V", v}, {"O", o}, {"LSE", stats}};
  const int64_t scale = g.scalar(a.scale);

  const int64_t s_raw = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s_raw);
  int64_t scores = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, s_raw, scale, scores);
  if (a.causal) scores = causal_mask(g, l, scores, g.scalar(std::numeric_limits<float>::lowest()));

  // softmax with stats: max, exp(x - max), sum, stats = max + ln(sum), P = exp / sum
  const int64_t row_max = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, scores, row_max);
  const int64_t shifted = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, scores, row_max, shifted);
  const int64_t e = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, -1, e);
  const int64_t row_sum = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, row_sum);
  const int64_t log_sum = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.pointwise(CUDNN_POINTWISE_LOG, row_sum, -1, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, row_max, log_sum, stats);
  const int64_t p = g.virtual_tensor(l.bhss, CUDNN_DATA_BFLOAT16);  // bmm2 takes P in the I/O type
  g.pointwise(CUDNN_POINTWISE_DIV, e, row_sum, p);
  g.matmul(p, v, o);
  return io;
}

attention_graph_io build_backward_graph(graph& g, const attention_shape& a, backward_lowering lowering) {
  const layouts l = make_layouts(a);
  const bool current = lowering == backward_lowering::current;
  attention_graph_io io;
  const int64_t q = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t kt = g.tensor(l.bhds, l.bhds_strides, CUDNN_DATA_BFLOAT16);
  const int64_t vt = g.tensor(l.bhds, l.bhds_strides, CUDNN_DATA_BFLOAT16);
  const int64_t o = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t d_o = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t stats = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT);
  const int64_t dq = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t dk = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  const int64_t dv = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16);
  io.uids = {{"Q", q}, {"K", kt}, {"V", vt}, {"O", o}, {"dO", d_o}, {"LSE", stats}, {"dQ", dq}, {"dK", dk}, {"dV", dv}};
  const int64_t scale = g.scalar(a.scale);
  const int64_t one = g.scalar(1.0f);
  const int64_t lowest = a.causal ? g.scalar(std::numeric_limits<float>::lowest()) : -1;

  // Delta = rowsum(dO ∘ O)
  const int64_t do_o = g.virtual_tensor(l.bhsd, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, do_o);
  const int64_t delta_raw = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, delta_raw);
  const int64_t delta = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = !current});
  g.pointwise(CUDNN_POINTWISE_MUL, delta_raw, one, delta);
  if (current) io.softmax_sum = delta;

  // P = exp(scale·Q·Kᵀ (masked) − LSE)
  const int64_t s_raw = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s_raw);
  int64_t scores = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, s_raw, scale, scores);
  if (a.causal && !current) scores = causal_mask(g, l, scores, lowest);
  int64_t centred = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, scores, stats, centred);
  if (a.causal && current) centred = causal_mask(g, l, centred, lowest);
  const int64_t p = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, centred, -1, p);

  // dV = Pᵀ·dO
  const int64_t p_t = g.tensor(l.bhss_t, l.bhss_t_strides, CUDNN_DATA_BFLOAT16, {.is_virtual = true});
  g.reshape(p, p_t);
  g.matmul(p_t, d_o, dv);

  // dS = scale · P ∘ (dO·Vᵀ − Delta)
  int64_t dp = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.matmul(d_o, vt, dp);
  if (!current) {
    const int64_t dp_kept = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_MUL, dp, one, dp_kept);  // the dropout-mask slot, 1 without dropout
    dp = dp_kept;
  }
  const int64_t dp_centred = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, delta, dp_centred);
  const int64_t ds_unscaled = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, p, ds_unscaled);
  const int64_t ds = g.virtual_tensor(l.bhss, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, scale, ds);

  // dK = dSᵀ·Q
  const int64_t ds_t = g.tensor(l.bhss_t, l.bhss_t_strides, CUDNN_DATA_BFLOAT16, {.is_virtual = true});
  g.reshape(ds, ds_t);
  g.matmul(ds_t, q, dk);

  // dQ = dS·K, accumulated in fp32 and converted
  const int64_t k = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_BFLOAT16, {.is_virtual = true});
  g.reshape(kt, k);
  const int64_t dq_accum = g.tensor(l.bhsd, l.bhsd_strides, CUDNN_DATA_FLOAT, {.reorder_f16x16 = !current});
  io.dq_accum = dq_accum;
  io.zero_dq_accum = !current;
  g.matmul(ds, k, dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, -1, dq);
  return io;
}

}  // namespace ptxbench::cudnn
