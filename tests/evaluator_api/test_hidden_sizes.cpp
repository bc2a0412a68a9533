// Hidden sizes are described by their properties, never their numbers
// (docs/task-suite.md, "Hidden-size feedback").
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "evaluator/api/hidden_sizes.hpp"

using namespace ptxbench;
using nlohmann::json;

namespace {

task gemm_task() {
  return parse_task(json::parse(R"J({
    "id": "g", "family": "gemm", "arch": "sm_90a",
    "statement": "C = A·Bᵀ; M any, N and K multiples of 8 (tiles of 128 are natural).",
    "tensors": {"A": {"dtype": "bf16", "shape": ["M","K"], "role": "input"},
                "B": {"dtype": "bf16", "shape": ["N","K"], "role": "input"},
                "C": {"dtype": "bf16", "shape": ["M","N"], "role": "output"}},
    "sizes": [{"M": 4096, "N": 4096, "K": 4096, "timed": true}, {"M": 1024, "N": 2048, "K": 512},
              {"M": 3001, "N": 1288, "K": 4040, "hidden": true}, {"M": 1, "N": 1048, "K": 520, "hidden": true}],
    "flops": "2*M*N*K", "reference": "gemm", "baseline": "cublaslt", "target_instructions": ["wgmma.mma_async"],
    "tolerance": {"atol": 0.02, "rtol": 0.02}, "speedup_threshold": 0.9})J"));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a hidden size is labelled by the properties that tell it from the shown sizes") {
  task t = gemm_task();
  CHECK(size_label(t, t.sizes[0]) == "K=4096 M=4096 N=4096");
  CHECK(size_label(t, t.sizes[2]) == "a hidden size where K is not a multiple of 16, M is odd and N is not a multiple of 16");
  CHECK(size_label(t, t.sizes[3]) == "a hidden size where K is not a multiple of 16, M is smaller than 8 and M is odd");
  CHECK(at_size(size_label(t, t.sizes[0])) == "at size K=4096 M=4096 N=4096");
  CHECK(at_size(size_label(t, t.sizes[3])).rfind("at a hidden size where", 0) == 0);
  // 4040, 3001, 1288, 1048, 520 are no number the statement or a shown size
  // writes; 3001*1288 is C's element count at the hidden size, 2*3001*1288 its bytes.
  const auto values = distinctive_hidden_values(t);
  for (int64_t v : {520, 1048, 1288, 3001, 4040, 3001 * 1288, 2 * 3001 * 1288})
    CHECK(std::count(values.begin(), values.end(), v) == 1);
  CHECK(std::count(values.begin(), values.end(), 4096) == 0);
  CHECK(std::count(values.begin(), values.end(), 1) == 0);
}

TEST_CASE("empty groups and uneven sequence lengths are properties of the index inputs") {
  json j = json::parse(R"J({
    "id": "g", "family": "gemm", "arch": "sm_90a", "statement": "grouped", "op": {"grouped": true},
    "tensors": {"A": {"dtype": "bf16", "shape": ["grouped_rows(G,M)","K"], "role": "input"},
                "C": {"dtype": "bf16", "shape": ["grouped_rows(G,M)","K"], "role": "output"}},
    "sizes": [{"G": 4, "M": 128, "K": 64, "timed": true}, {"G": 7, "M": 128, "K": 64, "hidden": true}],
    "flops": "2*K", "reference": "gemm", "baseline": "cublaslt", "target_instructions": ["wgmma.mma_async"],
    "tolerance": {"atol": 0.02, "rtol": 0.02}, "speedup_threshold": 0.9})J");
  task t = parse_task(j);
  CHECK(size_label(t, t.sizes[1]) == "a hidden size where G is odd and some groups are empty");
  j["op"] = {{"varlen", true}};
  j["sizes"] = json::parse(R"J([{"B": 1, "S": 128, "K": 64, "timed": true}, {"B": 3, "S": 128, "K": 64, "hidden": true}])J");
  j["tensors"]["A"]["shape"] = {"varlen_total(B,S)", "K"};
  j["tensors"]["C"]["shape"] = {"varlen_total(B,S)", "K"};
  t = parse_task(j);
  CHECK(size_label(t, t.sizes[1]) == "a hidden size where sequence lengths are not multiples of 64");
}

TEST_CASE("redaction rewrites every string of a result and drops the counts of a hidden size's checks") {
  task t = gemm_task();
  const std::string raw = describe_size(t.sizes[2]);  // "K=4040 M=3001 N=1288"
  evaluation_result r;
  r.verdict = stage::correctness;
  r.headline = "C wrong at " + raw + " (hidden seed): 9 of 3865288 elements bad";
  r.stages[stage::correctness] = {stage_status::failed, r.headline, 1.0};
  r.stages[stage::format] = {stage_status::passed, "launch 0 (k) grid.x = 0 at size " + raw, 0.0};
  output_check c;
  c.tensor = "C";
  c.size = raw;
  c.elements = 3001 * 1288;
  c.untouched_count = 1288;
  c.nan_count = 3;
  c.where = "bad elements confined to rows 3000-3000; 64 KiB guard; max abs error 0.8";
  r.correctness.outputs.push_back(c);
  output_check shown = c;
  shown.size = describe_size(t.sizes[1]);
  shown.elements = 1024 * 2048;
  shown.where = "rows 1000-1023";
  shown.untouched_count = 5;
  r.correctness.outputs.push_back(shown);
  r.runtime = runtime_report{"cuTensorMapEncodeTiled: globalDim 4040 x 3001 refused at size " + raw, 0, raw, false};
  instruction_check ic;
  ic.ptx = "wgmma.mma_async";
  ic.sizes.push_back({raw, 10, 0.5, -1, -1, false});
  ic.note = "carries 50% of the FLOPs at " + raw;
  r.instructions.checks.push_back(ic);
  r.instructions.counting.push_back({raw, 0, 1.0, 1.0, {}});
  r.instructions.other_math_share[raw] = 0.1;
  r.timeline.push_back({"main: checking outputs at size " + raw, 5.0});

  redact_hidden_sizes(r, t);
  const std::string text = to_json(r).dump();
  for (const char* leak : {"3001", "4040", "1288", "M=3001", "3865288"}) CHECK_MESSAGE(!contains(text, leak), std::string(leak) << " in " << text);
  const std::string label = size_label(t, t.sizes[2]);
  CHECK(r.correctness.outputs[0].size == label);
  CHECK(r.correctness.outputs[0].hidden_size);
  CHECK(r.correctness.outputs[0].elements == 0);
  CHECK(r.correctness.outputs[0].untouched_count == 1);
  CHECK(r.correctness.outputs[0].nan_count == 1);
  CHECK(contains(r.correctness.outputs[0].where, "64 KiB guard; max abs error 0.8"));
  CHECK(r.runtime->hidden_size);
  CHECK(r.runtime->size == label);
  CHECK(contains(r.headline, "C wrong at " + label));
  CHECK(r.instructions.checks[0].sizes[0].size == label);
  CHECK(r.instructions.counting[0].size == label);
  CHECK(r.instructions.other_math_share.count(label) == 1);
  CHECK(r.timeline[0].what == "main: checking outputs at " + label);
  // A shown size keeps its numbers and its counts.
  CHECK(r.correctness.outputs[1].size == "K=512 M=1024 N=2048");
  CHECK(r.correctness.outputs[1].elements == 1024 * 2048);
  CHECK_FALSE(r.correctness.outputs[1].hidden_size);
  CHECK(r.correctness.outputs[1].where == "rows 1000-1023");
}
