#pragma once
// The per-element mathematics of the fp32 references that is easy to get
// wrong, written once for the host and the device (docs/task-suite.md,
// "Operations"): the GEMM epilogue and its GELU, fp8 scales, where each
// attention head's rows live in every layout (dense, varlen, decode), which
// KV head a query head reads (GQA/MQA) and which keys a query attends
// (causal). The GPU references (gemm_reference.cpp, attention_reference.cpp)
// and the host reference (host_reference.cpp, tested on the CPU against an
// independent formula) both use these functions. No CUDA headers needed.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define PTXB_HD __host__ __device__
#else
#define PTXB_HD
#endif

namespace ptxbench::refmath {

// gelu(x) = 0.5·x·(1 + tanh(0.7978845608·(x + 0.044715·x³))), in fp32.
PTXB_HD inline float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

enum class epilogue_kind : int { none = 0, bias = 1, bias_gelu = 2, alpha_beta = 3 };

struct gemm_epilogue {
  epilogue_kind kind = epilogue_kind::none;
  float scale = 1.0f;  // scale_a·scale_b of a scaled (fp8) task, else 1
  float alpha = 1.0f, beta = 0.0f;
};

// An output element before its single rounding, from the fp32 product
// acc = Σ_k A·B, the bias of its column (bias, bias_gelu) and the C input at
// its position (alpha_beta): scale·acc, then the epilogue.
PTXB_HD inline float apply_epilogue(const gemm_epilogue& e, float acc, float bias, float c_in) {
  const float v = e.scale * acc;
  switch (e.kind) {
    case epilogue_kind::bias: return v + bias;
    case epilogue_kind::bias_gelu: return gelu_tanh(v + bias);
    case epilogue_kind::alpha_beta: return e.alpha * v + e.beta * c_in;
    default: return v;
  }
}

enum class attention_layout : int { dense = 0, varlen = 1, decode = 2 };

struct attention_dims {
  attention_layout layout = attention_layout::dense;
  int64_t batch = 0, heads = 0, kv_heads = 0, dim = 0;
  int64_t seq = 0;    // S: the sequence (dense), the longest sequence (varlen), the KV cache (decode)
  int64_t total = 0;  // varlen: T, the rows of the packed tensors
  bool causal = false;
};

// One (sequence b, query head h): query row i, element d of Q, O, dO, dQ is
// at q + i·q_step + d; key row j of K, V, dK, dV at k + j·k_step + d; the
// LSE of query i at lse + i. sq queries, sk keys.
struct head_view {
  int64_t q = 0, q_step = 0, k = 0, k_step = 0, lse = 0;
  int64_t sq = 0, sk = 0;
  int64_t kv_head = 0;
};

// Query head h reads KV head h / (H / HKV).
PTXB_HD inline int64_t kv_head_of(int64_t h, int64_t heads, int64_t kv_heads) { return h / (heads / kv_heads); }

// The rows of (b, h). seq_start / seq_len: the sequence's first row and
// length in the packed tensors (varlen: cu_seqlens[b], cu_seqlens[b+1] −
// cu_seqlens[b]); ignored by the other layouts.
PTXB_HD inline head_view view_of(const attention_dims& a, int64_t b, int64_t h, int64_t seq_start, int64_t seq_len) {
  head_view v;
  v.kv_head = kv_head_of(h, a.heads, a.kv_heads);
  switch (a.layout) {
    case attention_layout::varlen:  // Q [T, H, D], K [T, HKV, D], LSE [H, T]
      v.sq = v.sk = seq_len;
      v.q = (seq_start * a.heads + h) * a.dim;
      v.q_step = a.heads * a.dim;
      v.k = (seq_start * a.kv_heads + v.kv_head) * a.dim;
      v.k_step = a.kv_heads * a.dim;
      v.lse = h * a.total + seq_start;
      break;
    case attention_layout::decode:  // Q [B, H, D], K [B, HKV, S, D], LSE [B, H]
      v.sq = 1;
      v.sk = a.seq;
      v.q = (b * a.heads + h) * a.dim;
      v.q_step = a.dim;
      v.k = (b * a.kv_heads + v.kv_head) * a.seq * a.dim;
      v.k_step = a.dim;
      v.lse = b * a.heads + h;
      break;
    default:  // Q [B, H, S, D], K [B, HKV, S, D], LSE [B, H, S]
      v.sq = v.sk = a.seq;
      v.q = (b * a.heads + h) * a.seq * a.dim;
      v.q_step = a.dim;
      v.k = (b * a.kv_heads + v.kv_head) * a.seq * a.dim;
      v.k_step = a.dim;
      v.lse = (b * a.heads + h) * a.seq;
      break;
  }
  return v;
}

// Query i attends keys 0 .. keys_attended − 1. Causal: key j ≤ i + (sk − sq),
// the diagonal ending at the last key (j ≤ i when sq = sk, as every causal
// task of the suite has); otherwise all sk keys.
PTXB_HD inline int64_t keys_attended(bool causal, int64_t i, int64_t sq, int64_t sk) {
  if (!causal) return sk;
  const int64_t n = i + (sk - sq) + 1;
  return n < 0 ? 0 : (n > sk ? sk : n);
}

}  // namespace ptxbench::refmath
