#pragma once
// The operations of docs/task-suite.md written out plainly in double
// precision, one output element at a time, with the index arithmetic of each
// layout spelled out. Independent of the evaluator's references (it shares
// none of their code): the tests compare those, on the CPU and on the GPU,
// and the baselines with this.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench::naive {

// Tensor values by name, every element as the device holds it (an input
// rounded to its type and read back exactly).
using tensor_values = std::map<std::string, std::vector<double>>;

// GEMM outputs (C, or D for alpha_beta) of `t` at `s`. Grouped tasks take the
// row offsets from the `offsets` input.
tensor_values gemm(const task& t, const size_point& s, const tensor_values& in);

// Attention forward: O and LSE. Varlen tasks take sequence starts from the
// `cu_seqlens` input.
tensor_values attention_forward(const task& t, const size_point& s, const tensor_values& in);

// Attention backward: dQ, dK, dV from Q, K, V, dO and the given O and LSE.
tensor_values attention_backward(const task& t, const size_point& s, const tensor_values& in);

// Dispatch on t.reference.
tensor_values outputs(const task& t, const size_point& s, const tensor_values& in);

// The documented uneven patterns (docs/task-suite.md), from their sentences:
// rows of group g = M·((5g+3) mod 7)/3; length of sequence b =
// max(1, S − S·((3b) mod 5)/5 − 3·(b mod 2)).
std::vector<int64_t> documented_group_rows(int64_t groups, int64_t mean_rows);
std::vector<int64_t> documented_lengths(int64_t batch, int64_t max_len);

}  // namespace ptxbench::naive
