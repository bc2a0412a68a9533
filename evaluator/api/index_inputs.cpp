#include "evaluator/api/index_inputs.hpp"

#include <algorithm>
#include <string>

#include "evaluator/api/expression.hpp"

namespace ptxbench {
namespace {

void check_count(const char* what, int64_t n) {
  if (n < 1 || n > k_max_index_groups)
    throw expression_error(std::string(what) + " must be in [1, " + std::to_string(k_max_index_groups) + "], not " +
                           std::to_string(n));
}

void check_positive(const char* what, int64_t n) {
  // Bounded so that sums of squares over k_max_index_groups entries fit 64 bits.
  if (n < 1 || n > (int64_t(1) << 24))
    throw expression_error(std::string(what) + " must be in [1, 2^24], not " + std::to_string(n));
}

// 0 followed by the running sums of `lengths`, each of which must fit int32.
std::vector<int32_t> int32_offsets(const std::vector<int64_t>& lengths, const char* too_long) {
  std::vector<int32_t> out{0};
  int64_t at = 0;
  for (int64_t l : lengths) {
    at += l;
    if (at > INT32_MAX) throw expression_error(too_long);
    out.push_back(int32_t(at));
  }
  return out;
}

}  // namespace

std::vector<int64_t> group_rows(int64_t groups, int64_t mean_rows) {
  check_count("the number of groups", groups);
  check_positive("the mean rows per group", mean_rows);
  std::vector<int64_t> rows(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) rows[size_t(g)] = mean_rows * ((5 * g + 3) % 7) / 3;
  return rows;
}

std::vector<int32_t> group_offsets(int64_t groups, int64_t mean_rows) {
  return int32_offsets(group_rows(groups, mean_rows), "grouped rows exceed 2^31 - 1");
}

int64_t grouped_rows(int64_t groups, int64_t mean_rows) { return group_offsets(groups, mean_rows).back(); }

std::vector<int64_t> varlen_lengths(int64_t batch, int64_t max_len) {
  check_count("the batch", batch);
  check_positive("the longest sequence", max_len);
  std::vector<int64_t> lens(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    lens[size_t(b)] = std::max<int64_t>(1, max_len - max_len * ((3 * b) % 5) / 5 - 3 * (b % 2));
  return lens;
}

std::vector<int32_t> varlen_cu_seqlens(int64_t batch, int64_t max_len) {
  return int32_offsets(varlen_lengths(batch, max_len), "the packed sequences exceed 2^31 - 1 tokens");
}

int64_t varlen_total(int64_t batch, int64_t max_len) { return varlen_cu_seqlens(batch, max_len).back(); }

int64_t varlen_sumsq(int64_t batch, int64_t max_len) {
  int64_t s = 0;
  for (int64_t l : varlen_lengths(batch, max_len)) s += l * l;
  return s;
}

int64_t varlen_causal_pairs(int64_t batch, int64_t max_len) {
  int64_t s = 0;
  for (int64_t l : varlen_lengths(batch, max_len)) s += l * (l + 1) / 2;
  return s;
}

}  // namespace ptxbench
