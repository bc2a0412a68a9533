#include "evaluator/gpu/reference_plan.hpp"

#include <cmath>
#include <stdexcept>

#include "evaluator/api/index_inputs.hpp"

namespace ptxbench::gpu {
namespace {

int64_t size_of(const task& t, const size_point& s, const char* name) {
  auto it = s.values.find(name);
  if (it == s.values.end())
    throw std::runtime_error("task " + t.id + " has no size " + name + ", needed by its reference");
  return it->second;
}

float scalar_of(const std::map<std::string, double>& scalars, const char* name, double fallback) {
  auto it = scalars.find(name);
  return static_cast<float>(it == scalars.end() ? fallback : it->second);
}

dtype type_of(const task& t, const std::string& name) {
  const tensor_spec* ts = t.find_tensor(name);
  if (!ts) throw std::runtime_error("task " + t.id + " has no tensor " + name + " needed by its reference");
  return ts->type;
}

refmath::epilogue_kind epilogue_of(const std::string& e) {
  if (e == "bias") return refmath::epilogue_kind::bias;
  if (e == "bias_gelu") return refmath::epilogue_kind::bias_gelu;
  if (e == "alpha_beta") return refmath::epilogue_kind::alpha_beta;
  return refmath::epilogue_kind::none;
}

}  // namespace

gemm_plan plan_gemm(const task& t, const size_point& s) {
  gemm_plan p;
  p.n = size_of(t, s, "N");
  p.k = size_of(t, s, "K");
  p.nn = t.op.layout == "nn";
  p.a_type = type_of(t, "A");
  p.b_type = type_of(t, "B");
  if (t.op.grouped) {
    for (int32_t r : group_offsets(size_of(t, s, "G"), size_of(t, s, "M"))) p.group_rows.push_back(r);
    p.m = p.group_rows.back();
  } else {
    p.m = size_of(t, s, "M");
    if (t.op.batched) p.batch = size_of(t, s, "L");
  }
  const auto scalars = scalar_values(t, s);
  p.epilogue.kind = epilogue_of(t.op.epilogue);
  if (t.op.scaled) p.epilogue.scale = scalar_of(scalars, "scale_a", 1.0) * scalar_of(scalars, "scale_b", 1.0);
  if (p.epilogue.kind == refmath::epilogue_kind::alpha_beta) {
    p.output = "D";
    p.epilogue.alpha = scalar_of(scalars, "alpha", 1.0);
    p.epilogue.beta = scalar_of(scalars, "beta", 0.0);
    type_of(t, "C");
  }
  if (p.epilogue.kind == refmath::epilogue_kind::bias || p.epilogue.kind == refmath::epilogue_kind::bias_gelu)
    type_of(t, "bias");
  type_of(t, p.output);
  return p;
}

attention_plan plan_attention(const task& t, const size_point& s) {
  attention_plan p;
  refmath::attention_dims& a = p.dims;
  a.layout = t.op.varlen ? refmath::attention_layout::varlen
             : t.op.decode ? refmath::attention_layout::decode
                           : refmath::attention_layout::dense;
  a.batch = size_of(t, s, "B");
  a.heads = size_of(t, s, "H");
  a.kv_heads = s.values.count("HKV") ? s.values.at("HKV") : a.heads;
  if (a.kv_heads < 1 || a.heads % a.kv_heads != 0)
    throw std::runtime_error("task " + t.id + ": H is not a multiple of HKV at " + describe_size(s));
  a.seq = size_of(t, s, "S");
  a.dim = size_of(t, s, "D");
  a.causal = t.causal;
  p.backward = t.reference == "attention_bwd";
  std::vector<int32_t> cu;
  if (t.op.varlen) cu = varlen_cu_seqlens(a.batch, a.seq);
  a.total = t.op.varlen ? cu.back() : a.batch * a.seq;
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < a.heads; ++h) {
      const int64_t start = t.op.varlen ? cu[size_t(b)] : 0, len = t.op.varlen ? cu[size_t(b) + 1] - start : 0;
      p.heads.push_back(refmath::view_of(a, b, h, start, len));
    }
  const int64_t q_rows = t.op.varlen ? a.total : t.op.decode ? a.batch : a.batch * a.seq;
  const int64_t kv_rows = t.op.varlen ? a.total : a.batch * a.seq;
  p.q_elements = q_rows * a.heads * a.dim;
  p.kv_elements = kv_rows * a.kv_heads * a.dim;
  p.lse_elements = q_rows * a.heads;
  const auto scalars = scalar_values(t, s);
  p.scale = scalar_of(scalars, "scale", 1.0 / std::sqrt(double(a.dim)));
  if (t.op.fp8) {
    p.q_scale = scalar_of(scalars, "scale_q", 1.0);
    p.k_scale = scalar_of(scalars, "scale_k", 1.0);
    p.v_scale = scalar_of(scalars, "scale_v", 1.0);
  }
  return p;
}

std::vector<head_chunk> chunk_heads(const attention_plan& p, int matrices, size_t budget_bytes) {
  std::vector<head_chunk> chunks;
  for (size_t i = 0; i < p.heads.size(); ++i) {
    const auto& h = p.heads[i];
    const size_t per_head = size_t(h.sq) * size_t(h.sk) * sizeof(float) * size_t(matrices);
    if (!chunks.empty()) {
      head_chunk& c = chunks.back();
      const auto& first = p.heads[c.first];
      if (first.sq == h.sq && first.sk == h.sk && (c.count + 1) * per_head <= budget_bytes) {
        ++c.count;
        continue;
      }
    }
    chunks.push_back({i, 1});
  }
  return chunks;
}

}  // namespace ptxbench::gpu
