#pragma once
// The cuDNN operation graphs of fused attention, node for node the pattern
// cudnn-frontend lowers sdpa / sdpa_backward to (the pattern cuDNN's fused
// flash-attention engines recognise). Layout: Q, K, V, O, dO, dQ, dK, dV are
// [B,H,S,D] contiguous bf16; LSE ("stats") is fp32 [B,H,S] (cuDNN: [B,H,S,1]),
// the natural-log log-sum-exp of the scaled, masked scores: max + ln(sum exp).
#include <cstdint>
#include <map>
#include <string>

#include "evaluator/baselines/cudnn_graph.hpp"

namespace ptxbench::cudnn {

struct attention_shape {
  int64_t b = 0, h = 0, s = 0, d = 0;
  bool causal = false;
  float scale = 1.0f;
};

// Two lowerings of the backward pass. `current` follows cudnn-frontend 1.1x
// (non-virtual fp32 softmax_sum and dQ accumulator, mask after the stats are
// subtracted); `legacy` follows the cuDNN 9.0-era frontend (virtual
// softmax_sum, F16x16-reordered dQ accumulator that must start at zero).
enum class backward_lowering { current, legacy };
const char* to_string(backward_lowering l);

struct attention_graph_io {
  std::map<std::string, int64_t> uids;  // task tensor name -> uid
  int64_t softmax_sum = -1;             // scratch uid (fp32 [B,H,S,1]) or -1
  int64_t dq_accum = -1;                // scratch uid (fp32 [B,H,S,D]) or -1
  bool zero_dq_accum = false;           // the accumulator must be zeroed before each run
};

attention_graph_io build_forward_graph(graph& g, const attention_shape& a);
attention_graph_io build_backward_graph(graph& g, const attention_shape& a, backward_lowering lowering);

}  // namespace ptxbench::cudnn
