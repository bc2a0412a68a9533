#include "evaluator/baselines/attention_graphs.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ptxbench::cudnn {
namespace {

struct layouts {
  std::vector<int64_t> q, q_strides;               // Q, O, dO, dQ: [b,h,s_q,d]
  std::vector<int64_t> kv, kv_strides;             // K, V, dK, dV: [b,hkv,s_kv,d]
  std::vector<int64_t> kt, kt_strides;             // Kᵀ / Vᵀ views: [b,hkv,d,s_kv]
  std::vector<int64_t> kv_full;                    // [b,h,s_kv,d] packed: dK, dV per query head (GQA)
  std::vector<int64_t> scores;                     // [b,h,s_q,s_kv]
  std::vector<int64_t> scores_t, scores_t_strides;  // the scores transposed (a view)
  std::vector<int64_t> q_t, q_t_strides;           // K read as [b,hkv,s_kv,d] from the Kᵀ buffer (dQ = dS·K)
  std::vector<int64_t> stats, stats_strides;       // [b,h,s_q,1]
};

// Ragged rows are [T, heads, d]: a token's heads are adjacent, a head's rows
// are heads*d apart; cuDNN adds each batch's ragged offset to the base.
layouts make_layouts(const attention_shape& a, bool ragged_stats) {
  const int64_t b = a.b, h = a.h, hk = a.hkv, sq = a.s_q, sk = a.s_kv, d = a.d;
  layouts l;
  l.q = {b, h, sq, d};
  l.kv = {b, hk, sk, d};
  l.kt = {b, hk, d, sk};
  if (a.ragged) {
    l.q_strides = {sq * h * d, d, h * d, 1};
    l.kv_strides = {sk * hk * d, d, hk * d, 1};
    l.kt_strides = {sk * hk * d, d, 1, hk * d};
  } else {
    l.q_strides = {h * sq * d, sq * d, d, 1};
    l.kv_strides = {hk * sk * d, sk * d, d, 1};
    l.kt_strides = {hk * sk * d, sk * d, 1, d};
  }
  l.kv_full = {b, h, sk, d};
  l.scores = {b, h, sq, sk};
  l.scores_t = {b, h, sk, sq};
  l.scores_t_strides = {h * sq * sk, sq * sk, 1, sk};
  l.stats = {b, h, sq, 1};
  l.stats_strides = ragged_stats ? std::vector<int64_t>{h * sq, a.total(), 1, 1} : std::vector<int64_t>{h * sq, sq, 1, 1};
  return l;
}

int64_t owned_i32(graph& g, attention_graph_io& io, std::vector<int64_t> dims, std::vector<int32_t> values) {
  const int64_t uid = g.tensor(dims, packed_strides(dims), CUDNN_DATA_INT32);
  io.owned.push_back({uid, values.size() * sizeof(int32_t), std::move(values), {}, false});
  return uid;
}

int64_t owned_f32(graph& g, attention_graph_io& io, float value) {
  const int64_t uid = g.tensor({1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT);
  io.owned.push_back({uid, sizeof(float), {}, {value}, false});
  return uid;
}

// The per-sequence tensors of a ragged graph: lengths (for the padding mask
// and the matmuls' row counts) and the element offsets of each sequence.
struct ragged_tensors {
  int64_t seq_q = -1, seq_kv = -1, q_offsets = -1, kv_offsets = -1, stats_offsets = -1;
};

ragged_tensors make_ragged(graph& g, attention_graph_io& io, const attention_shape& a, bool ragged_stats) {
  ragged_tensors r;
  if (!a.ragged) return r;
  if (static_cast<int64_t>(a.lengths.size()) != a.b) throw std::invalid_argument("ragged attention needs B lengths");
  r.seq_q = owned_i32(g, io, {a.b, 1, 1, 1}, a.lengths);
  r.seq_kv = owned_i32(g, io, {a.b, 1, 1, 1}, a.lengths);
  std::vector<int32_t> q_off{0}, kv_off{0}, stats_off{0};
  int64_t at = 0;
  for (int32_t len : a.lengths) {
    at += len;
    q_off.push_back(static_cast<int32_t>(at * a.h * a.d));
    kv_off.push_back(static_cast<int32_t>(at * a.hkv * a.d));
    stats_off.push_back(static_cast<int32_t>(at));
  }
  r.q_offsets = owned_i32(g, io, {a.b + 1, 1, 1, 1}, q_off);
  r.kv_offsets = owned_i32(g, io, {a.b + 1, 1, 1, 1}, kv_off);
  if (ragged_stats) r.stats_offsets = owned_i32(g, io, {a.b + 1, 1, 1, 1}, stats_off);
  return r;
}

// scores <- scores where row >= col, else the lowest float (cuDNN's causal pattern).
int64_t causal_mask(graph& g, const layouts& l, int64_t scores, int64_t lowest) {
  const int64_t row = g.virtual_tensor(l.scores, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, row, -1, CUDNN_DATA_INT32, 2);
  const int64_t col = g.virtual_tensor(l.scores, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, col, -1, CUDNN_DATA_INT32, 3);
  const int64_t keep = g.virtual_tensor(l.scores, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, keep, -1, CUDNN_DATA_BOOLEAN);
  const int64_t masked = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, lowest, masked, keep);
  return masked;
}

// scores <- scores where row < seq_q[b] and col < seq_kv[b], else -inf (cudnn-frontend's padding mask).
int64_t padding_mask(graph& g, const layouts& l, int64_t scores, const ragged_tensors& r) {
  const int64_t row = g.virtual_tensor(l.scores, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, row, -1, CUDNN_DATA_INT32, 2);
  const int64_t col = g.virtual_tensor(l.scores, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, col, -1, CUDNN_DATA_INT32, 3);
  const int64_t row_ok = g.virtual_tensor(l.scores, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_LT, row, r.seq_q, row_ok, -1, CUDNN_DATA_BOOLEAN);
  const int64_t col_ok = g.virtual_tensor(l.scores, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_LT, col, r.seq_kv, col_ok, -1, CUDNN_DATA_BOOLEAN);
  const int64_t keep = g.virtual_tensor(l.scores, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_LOGICAL_AND, row_ok, col_ok, keep, -1, CUDNN_DATA_BOOLEAN);
  const int64_t masked = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, g.scalar(-std::numeric_limits<float>::infinity()), masked, keep);
  return masked;
}

// softmax with stats: max, exp(x - max), sum, stats = max + ln(sum); returns
// P = exp / sum (virtual, of type p_type: the type the next matmul takes).
int64_t softmax(graph& g, const layouts& l, int64_t scores, int64_t stats, cudnnDataType_t p_type) {
  const int64_t row_max = g.tensor(l.stats, packed_strides(l.stats), CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, scores, row_max);
  const int64_t shifted = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, scores, row_max, shifted);
  const int64_t e = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, -1, e);
  const int64_t row_sum = g.tensor(l.stats, packed_strides(l.stats), CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, row_sum);
  const int64_t log_sum = g.tensor(l.stats, packed_strides(l.stats), CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.pointwise(CUDNN_POINTWISE_LOG, row_sum, -1, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, row_max, log_sum, stats);
  const int64_t p = g.virtual_tensor(l.scores, p_type);
  g.pointwise(CUDNN_POINTWISE_DIV, e, row_sum, p);
  return p;
}

// O = P·V for fp8: P scaled into e4m3, the product descaled, O scaled by 1,
// with the amax outputs the fp8 engines produce (cudnn-frontend's matmul_fp8).
void fp8_output(graph& g, attention_graph_io& io, const layouts& l, int64_t p, int64_t v, int64_t descale_v,
                int64_t o, const matmul_options& mm) {
  constexpr float p_scale = 256.0f;  // P in [0, 1] kept away from e4m3's subnormals
  g.reduction(CUDNN_REDUCE_TENSOR_AMAX, p, owned_f32(g, io, 0.0f));
  const int64_t p8 = g.virtual_tensor(l.scores, CUDNN_DATA_FP8_E4M3);
  g.pointwise(CUDNN_POINTWISE_MUL, p, owned_f32(g, io, p_scale), p8);
  const int64_t acc = g.virtual_tensor(l.q, CUDNN_DATA_FLOAT);
  g.matmul(p8, v, acc, mm);
  const int64_t descaled_s = g.virtual_tensor(l.q, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, acc, owned_f32(g, io, 1.0f / p_scale), descaled_s);
  const int64_t descaled = g.virtual_tensor(l.q, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, descaled_s, descale_v, descaled);
  g.pointwise(CUDNN_POINTWISE_MUL, descaled, owned_f32(g, io, 1.0f), o);
  g.reduction(CUDNN_REDUCE_TENSOR_AMAX, descaled, owned_f32(g, io, 0.0f));
}

// dX = lhs·rhs for the key side (dK, dV): straight into the output when every
// query head has its own KV head, else per query head (virtual, the I/O type)
// and summed over each group's heads (cudnn-frontend's GQA lowering).
void key_side_product(graph& g, const layouts& l, const attention_shape& a, int64_t lhs, int64_t rhs, int64_t out) {
  if (a.h == a.hkv) {
    g.matmul(lhs, rhs, out);
    return;
  }
  const int64_t full = g.virtual_tensor(l.kv_full, CUDNN_DATA_BFLOAT16);
  g.matmul(lhs, rhs, full);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}

}  // namespace

int64_t attention_shape::total() const {
  if (!ragged) return b * s_q;
  int64_t t = 0;
  for (int32_t len : lengths) t += len;
  return t;
}

const char* to_string(backward_lowering l) { return l == backward_lowering::current ? "current" : "legacy"; }

attention_graph_io build_forward_graph(graph& g, const attention_shape& a) {
  const bool ragged_stats = a.ragged && a.ragged_stats;
  const layouts l = make_layouts(a, ragged_stats);
  attention_graph_io io;
  io.lse_in_task_layout = !a.ragged || a.ragged_stats;
  const ragged_tensors r = make_ragged(g, io, a, ragged_stats);
  const cudnnDataType_t io_type = a.fp8 ? CUDNN_DATA_FP8_E4M3 : CUDNN_DATA_BFLOAT16;
  const int64_t q = g.tensor(l.q, l.q_strides, io_type, {.ragged_offset = r.q_offsets});
  const int64_t kt = g.tensor(l.kt, l.kt_strides, io_type, {.ragged_offset = r.kv_offsets});
  const int64_t v = g.tensor(l.kv, l.kv_strides, io_type, {.ragged_offset = r.kv_offsets});
  const int64_t o = g.tensor(l.q, l.q_strides, io_type, {.ragged_offset = r.q_offsets});
  const int64_t stats = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.ragged_offset = r.stats_offsets});
  io.uids = {{"Q", q}, {"K", kt}, {"V", v}, {"O", o}};
  if (io.lse_in_task_layout) {
    io.uids["LSE"] = stats;
  } else {
    io.owned.push_back({stats, static_cast<size_t>(a.b * a.h * a.s_q) * sizeof(float), {}, {}, false});
  }

  const int64_t s_raw = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s_raw, {.m_override = r.seq_q, .n_override = r.seq_kv});
  int64_t scores = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, s_raw, g.scalar(a.scale), scores);
  if (a.fp8) {
    for (float descale : {a.descale_q, a.descale_k}) {
      const int64_t descaled = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
      g.pointwise(CUDNN_POINTWISE_MUL, scores, owned_f32(g, io, descale), descaled);
      scores = descaled;
    }
  }
  if (a.ragged) scores = padding_mask(g, l, scores, r);
  if (a.causal) scores = causal_mask(g, l, scores, g.scalar(std::numeric_limits<float>::lowest()));
  // bmm2 takes P in the I/O type; fp8 scales it into e4m3 first.
  const int64_t p = softmax(g, l, scores, stats, a.fp8 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16);
  const matmul_options mm{.m_override = r.seq_q, .k_override = r.seq_kv};
  if (a.fp8)
    fp8_output(g, io, l, p, v, owned_f32(g, io, a.descale_v), o, mm);
  else
    g.matmul(p, v, o, mm);
  return io;
}

attention_graph_io build_backward_graph(graph& g, const attention_shape& a, backward_lowering lowering) {
  if (a.ragged || a.fp8) throw std::invalid_argument("the attention backward baseline takes dense bf16 tensors only");
  const layouts l = make_layouts(a, false);
  const bool current = lowering == backward_lowering::current;
  attention_graph_io io;
  const int64_t q = g.tensor(l.q, l.q_strides, CUDNN_DATA_BFLOAT16);
  const int64_t kt = g.tensor(l.kt, l.kt_strides, CUDNN_DATA_BFLOAT16);
  const int64_t vt = g.tensor(l.kt, l.kt_strides, CUDNN_DATA_BFLOAT16);
  const int64_t o = g.tensor(l.q, l.q_strides, CUDNN_DATA_BFLOAT16);
  const int64_t d_o = g.tensor(l.q, l.q_strides, CUDNN_DATA_BFLOAT16);
  const int64_t stats = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT);
  const int64_t dq = g.tensor(l.q, l.q_strides, CUDNN_DATA_BFLOAT16);
  const int64_t dk = g.tensor(l.kv, l.kv_strides, CUDNN_DATA_BFLOAT16);
  const int64_t dv = g.tensor(l.kv, l.kv_strides, CUDNN_DATA_BFLOAT16);
  io.uids = {{"Q", q}, {"K", kt}, {"V", vt}, {"O", o}, {"dO", d_o}, {"LSE", stats}, {"dQ", dq}, {"dK", dk}, {"dV", dv}};
  const int64_t scale = g.scalar(a.scale);
  const int64_t one = g.scalar(1.0f);
  const int64_t lowest = a.causal ? g.scalar(std::numeric_limits<float>::lowest()) : -1;

  // Delta = rowsum(dO ∘ O)
  const int64_t do_o = g.virtual_tensor(l.q, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, do_o);
  const int64_t delta_raw = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = true});
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, delta_raw);
  const int64_t delta = g.tensor(l.stats, l.stats_strides, CUDNN_DATA_FLOAT, {.is_virtual = !current});
  g.pointwise(CUDNN_POINTWISE_MUL, delta_raw, one, delta);
  if (current) io.owned.push_back({delta, static_cast<size_t>(a.b * a.h * a.s_q) * sizeof(float), {}, {}, false});

  // P = exp(scale·Q·Kᵀ (masked) − LSE)
  const int64_t s_raw = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s_raw);
  int64_t scores = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, s_raw, scale, scores);
  if (a.causal && !current) scores = causal_mask(g, l, scores, lowest);
  int64_t centred = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, scores, stats, centred);
  if (a.causal && current) centred = causal_mask(g, l, centred, lowest);
  const int64_t p = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, centred, -1, p);

  // dV = Pᵀ·dO
  const int64_t p_t = g.tensor(l.scores_t, l.scores_t_strides, CUDNN_DATA_BFLOAT16, {.is_virtual = true});
  g.reshape(p, p_t);
  key_side_product(g, l, a, p_t, d_o, dv);

  // dS = scale · P ∘ (dO·Vᵀ − Delta)
  int64_t dp = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.matmul(d_o, vt, dp);
  if (!current) {
    const int64_t dp_kept = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_MUL, dp, one, dp_kept);  // the dropout-mask slot, 1 without dropout
    dp = dp_kept;
  }
  const int64_t dp_centred = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, delta, dp_centred);
  const int64_t ds_unscaled = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, p, ds_unscaled);
  const int64_t ds = g.virtual_tensor(l.scores, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, scale, ds);

  // dK = dSᵀ·Q
  const int64_t ds_t = g.tensor(l.scores_t, l.scores_t_strides, CUDNN_DATA_BFLOAT16, {.is_virtual = true});
  g.reshape(ds, ds_t);
  key_side_product(g, l, a, ds_t, q, dk);

  // dQ = dS·K, accumulated in fp32 and converted
  const int64_t k = g.tensor(l.kv, l.kv_strides, CUDNN_DATA_BFLOAT16, {.is_virtual = true});
  g.reshape(kt, k);
  const int64_t dq_accum = g.tensor(l.q, packed_strides(l.q), CUDNN_DATA_FLOAT, {.reorder_f16x16 = !current});
  io.owned.push_back({dq_accum, static_cast<size_t>(a.b * a.h * a.s_q * a.d) * sizeof(float), {}, {}, !current});
  g.matmul(ds, k, dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, -1, dq);
  return io;
}

}  // namespace ptxbench::cudnn
