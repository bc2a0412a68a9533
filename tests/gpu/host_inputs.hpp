#pragma once
// Seeded host inputs of a task at a size, rounded to each tensor's type, for
// the reference tests on the CPU and the GPU: uniform values in [-2, 2]
// (bf16, fp16, fp32) or random e4m3 codes of magnitude <= 2; index inputs
// (offsets, cu_seqlens) from the documented patterns
// (naive::documented_group_rows / documented_lengths), not from the
// evaluator's code.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evaluator/api/task.hpp"

namespace ptxbench::test_inputs {

float round_to(dtype t, float v);  // bf16 and fp16 to nearest even; fp8 e4m3 to nearest, saturating
uint16_t bf16_bits(float v);
float bf16_value(uint16_t bits);
float fp8_value(uint8_t code);

// Every input except attention backward's O and LSE, by name, as fp32 values.
std::map<std::string, std::vector<float>> draw_inputs(const task& t, const size_point& s, uint64_t seed);

}  // namespace ptxbench::test_inputs
