// Each task's statement-level math against a direct count: the FLOP
// expression against the multiply-adds the statement asks for, counted pair by
// pair at every public and hidden size, and the tensors' extents against the
// index inputs (offsets, cu_seqlens) the harness writes.
#include <doctest/doctest.h>

#include <string>

#include "evaluator/api/index_inputs.hpp"
#include "evaluator/api/task.hpp"

using namespace ptxbench;

namespace {

int64_t at(const size_point& s, const char* name) { return s.values.at(name); }

// Attended (query, key) pairs of one sequence of length n.
int64_t pairs(int64_t n, bool causal) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += causal ? i + 1 : n;  // query i attends keys 0..i, or all n
  return count;
}

// The FLOPs the statement asks for, counted directly: 2 per multiply-add of
// the matrix products (epilogues and the softmax are not counted).
double direct_flops(const task& t, const size_point& s) {
  if (t.family == "gemm") {
    int64_t rows = 0;  // rows of the output, over every batch or group
    if (t.op.grouped)
      for (int64_t r : group_rows(at(s, "G"), at(s, "M"))) rows += r;
    else
      rows = (t.op.batched ? at(s, "L") : 1) * at(s, "M");
    return 2.0 * double(rows) * double(at(s, "N")) * double(at(s, "K"));
  }
  const int64_t D = at(s, "D"), H = at(s, "H");
  int64_t attended = 0;  // (query, key) pairs over every batch and head
  if (t.op.decode) attended = at(s, "B") * H * at(s, "S");
  else if (t.op.varlen)
    for (int64_t len : varlen_lengths(at(s, "B"), at(s, "S"))) attended += H * pairs(len, t.causal);
  else attended = at(s, "B") * H * pairs(at(s, "S"), t.causal);
  // Forward: Q·Kᵀ and P·V; backward: those two recomputed or used, dP = dO·Vᵀ, dQ, dK, dV.
  const int products = t.family == "attention_bwd" ? 5 : 2;
  return 2.0 * products * double(attended) * double(D);
}

}  // namespace

TEST_CASE("every task's FLOP expression equals the multiply-adds its statement asks for - at every size") {
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
    for (const auto& s : t.sizes) {
      CAPTURE(t.id);
      CAPTURE(describe_size(s));
      CHECK(task_flops(t, s) == direct_flops(t, s));
    }
}

TEST_CASE("the packed tensors' extents are the index inputs' totals - and GQA groups are whole") {
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
    for (const auto& s : t.sizes) {
      CAPTURE(t.id);
      CAPTURE(describe_size(s));
      if (t.op.grouped) {
        const auto offsets = group_offsets(at(s, "G"), at(s, "M"));
        CHECK(tensor_elements(*t.find_tensor("offsets"), s) == int64_t(offsets.size()));
        CHECK(tensor_elements(*t.find_tensor("A"), s) == int64_t(offsets.back()) * at(s, "K"));
        CHECK(tensor_elements(*t.find_tensor("B"), s) == at(s, "G") * at(s, "N") * at(s, "K"));
      }
      if (t.op.varlen) {
        const auto cu = varlen_cu_seqlens(at(s, "B"), at(s, "S"));
        CHECK(tensor_elements(*t.find_tensor("cu_seqlens"), s) == int64_t(cu.size()));
        CHECK(tensor_elements(*t.find_tensor("Q"), s) == int64_t(cu.back()) * at(s, "H") * at(s, "D"));
        CHECK(tensor_elements(*t.find_tensor("LSE"), s) == int64_t(cu.back()) * at(s, "H"));
        for (int64_t len : varlen_lengths(at(s, "B"), at(s, "S"))) CHECK((len >= 1 && len <= at(s, "S")));
      }
      if (s.values.count("HKV")) {
        CHECK(at(s, "H") % at(s, "HKV") == 0);
        CHECK(tensor_elements(*t.find_tensor("K"), s) == at(s, "B") * at(s, "HKV") * at(s, "S") * at(s, "D"));
      }
      if (t.op.decode) CHECK(tensor_elements(*t.find_tensor("O"), s) == at(s, "B") * at(s, "H") * at(s, "D"));
    }
}
