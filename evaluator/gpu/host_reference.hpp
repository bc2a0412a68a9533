#pragma once
// The references computed on the host from the same plan (reference_plan.hpp)
// and per-element math (reference_math.hpp) as the GPU's: the host side of
// the reference, which the CPU tests compare with an independent formula at
// small sizes of every variant, and which a task author can run without a GPU.
// Products accumulate in double. Quadratic loops: small sizes only.
#include <map>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench::gpu {

// Tensor values by name, every element as an fp32 value (inputs as the device
// holds them after rounding to their type; index inputs as integers).
using host_tensors = std::map<std::string, std::vector<float>>;

// Every output of `t` at `s` (C or D; O and LSE; dQ, dK and dV). Attention
// backward takes O and LSE from `inputs`, as the GPU reference does from the
// values the candidate sees. Throws std::runtime_error naming a missing
// input or size.
host_tensors host_reference(const task& t, const size_point& s, const host_tensors& inputs);

// The attention forward pass (O, LSE) of an attention task's Q, K, V, as the
// harness derives attention backward's O and LSE inputs (O before rounding).
host_tensors host_attention_forward(const task& t, const size_point& s, const host_tensors& inputs);

}  // namespace ptxbench::gpu
