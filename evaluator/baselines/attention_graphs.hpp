#pragma once
// The cuDNN operation graphs of fused attention, node for node the pattern
// cudnn-frontend lowers sdpa / sdpa_fp8 / sdpa_backward to (the pattern
// cuDNN's fused flash-attention engines recognise).
//
// Layouts (docs/task-suite.md): dense Q, O, dO, dQ [B,H,S,D] and K, V, dK, dV
// [B,HKV,S,D]; decode Q, O [B,H,D] against a [B,HKV,S,D] cache (s_q = 1);
// varlen ("ragged") Q, O [T,H,D] and K, V [T,HKV,D], sequence b at rows
// cu_seqlens[b].., given to cuDNN as per-batch element offsets with a padding
// mask over the sequence lengths. LSE ("stats") is fp32 [B,H,S] (cuDNN:
// [B,H,S,1]), the natural-log log-sum-exp of the scaled, masked scores.
// GQA/MQA: K and V have HKV heads, query head h reads KV head h / (H / HKV);
// the backward pass sums dK and dV over the query heads of a group.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evaluator/baselines/cudnn_graph.hpp"

namespace ptxbench::cudnn {

struct attention_shape {
  int64_t b = 0, h = 0, hkv = 0, s_q = 0, s_kv = 0, d = 0;
  bool causal = false;  // query i attends keys j <= i (top-left aligned)
  float scale = 1.0f;
  // Packed variable-length sequences: lengths[b] of each (s_q = s_kv = the longest).
  bool ragged = false;
  std::vector<int32_t> lengths;
  // LSE written in the task's varlen layout [H, T] through ragged offsets;
  // false: into a private padded [B,H,S,1] buffer (not the task's tensor).
  bool ragged_stats = true;
  // e4m3 Q, K, V with descale factors; O is e4m3 too (cuDNN's fp8 forward on
  // Hopper writes no bf16 O), scaled by 1.
  bool fp8 = false;
  float descale_q = 1.0f, descale_k = 1.0f, descale_v = 1.0f;

  int64_t total() const;  // rows of the packed tensors (sum of lengths), or b * s_q
};

// Two lowerings of the backward pass. `current` follows cudnn-frontend 1.1x
// (non-virtual fp32 softmax_sum and dQ accumulator, mask after the stats are
// subtracted); `legacy` follows the cuDNN 9.0-era frontend (virtual
// softmax_sum, F16x16-reordered dQ accumulator that must start at zero).
enum class backward_lowering { current, legacy };
const char* to_string(backward_lowering l);

// A device tensor the baseline owns (not a task tensor): sequence lengths,
// ragged offsets, fp8 scale factors, amax outputs, scratch. `i32` / `f32`
// hold its initial contents (empty: left uninitialised).
struct owned_tensor {
  int64_t uid = -1;
  size_t bytes = 0;
  std::vector<int32_t> i32;
  std::vector<float> f32;
  bool zero_each_run = false;  // an accumulator that must start at zero
};

struct attention_graph_io {
  std::map<std::string, int64_t> uids;  // task tensor name -> uid
  std::vector<owned_tensor> owned;
  bool lse_in_task_layout = true;  // false: LSE went to an owned buffer
};

attention_graph_io build_forward_graph(graph& g, const attention_shape& a);
attention_graph_io build_backward_graph(graph& g, const attention_shape& a, backward_lowering lowering);

}  // namespace ptxbench::cudnn
