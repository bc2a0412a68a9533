#pragma once
// The index inputs that tasks generate from their sizes instead of drawing at
// random (docs/task-suite.md): the row offsets of grouped GEMM and the
// cu_seqlens of variable-length attention. One definition, used by the size
// expressions (grouped_rows, varlen_total, ...), the harness that writes the
// tensors, the references and the CPU tests, so they can never disagree.
//
// The patterns are fixed functions of the sizes (no seed): uneven on purpose.
//  - groups: rows_g = M * ((5g + 3) mod 7) / 3 (integer division): a mean of
//    about M, from 0 (an empty group at g = 5, 12, ...) to 2M.
//  - sequences: len_b = max(1, S - S * ((3b) mod 5) / 5 - 3 * (b mod 2)):
//    the first is S (the longest), the others S/5 .. 4S/5, odd ones shorter
//    by 3, so lengths are seldom tile multiples.
#include <cstdint>
#include <vector>

namespace ptxbench {

// Counts above these are refused (they are loops, and manifests may call them).
inline constexpr int64_t k_max_index_groups = 1 << 16;

// Throw expression_error when G or B is outside [1, k_max_index_groups], or M, S < 1.
std::vector<int64_t> group_rows(int64_t groups, int64_t mean_rows);
std::vector<int32_t> group_offsets(int64_t groups, int64_t mean_rows);  // G+1 entries, [0] = 0, [G] = total
int64_t grouped_rows(int64_t groups, int64_t mean_rows);                // the total T

std::vector<int64_t> varlen_lengths(int64_t batch, int64_t max_len);
std::vector<int32_t> varlen_cu_seqlens(int64_t batch, int64_t max_len);  // B+1 entries
int64_t varlen_total(int64_t batch, int64_t max_len);                    // sum of lengths
int64_t varlen_sumsq(int64_t batch, int64_t max_len);                    // sum of length^2
int64_t varlen_causal_pairs(int64_t batch, int64_t max_len);             // sum of length*(length+1)/2

}  // namespace ptxbench
