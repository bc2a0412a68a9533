// Family files: the expansion rules (merge order, fragments, size sets) and
// the shipped catalogue (docs/task-suite.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/task_check.hpp"
#include "evaluator/api/task_family.hpp"

using namespace ptxbench;
using nlohmann::json;

namespace {

json small_family() {
  return json::parse(R"({
    "family": "gemm",
    "base": {
      "arch": "sm_90a", "title": "GEMM ${dtype} ${shape_title}",
      "statement": "C = A·Bᵀ in ${dtype}. ${size_text}", "constraints": "${size_text}",
      "size_set": "${shape}",
      "tensors": {"A": {"dtype": "${dtype}", "shape": ["M","K"], "role": "input"},
                  "B": {"dtype": "${dtype}", "shape": ["N","K"], "role": "input"},
                  "C": {"dtype": "bf16", "shape": ["M","N"], "role": "output"}},
      "flops": "2*M*N*K", "reference": "gemm", "baseline": "cublaslt",
      "target_instructions": ["wgmma.mma_async"], "tolerance": {"atol": 0.02, "rtol": 0.02},
      "speedup_threshold": 0.5, "suites": ["full"], "text": {"shape_title": "square"}
    },
    "axes": [
      {"name": "dtype", "values": {"bf16": {}, "fp16": {"tolerance": {"atol": 0.03}}}},
      {"name": "shape", "values": {
        "square": {},
        "batched": {"tensors": {"A": {"shape": ["L","M","K"]}, "B": {"shape": ["L","N","K"]},
                                "C": {"shape": ["L","M","N"]}},
                    "flops": "2*L*M*N*K", "text": {"shape_title": "batched"}}}}
    ],
    "size_sets": {
      "square": {"sizes": [{"M": 256, "N": 128, "K": 64, "timed": true}, {"M": 100, "N": 8, "K": 8, "hidden": true}],
                 "size_rules": {"M": {"min": 1}, "N": {"multiple_of": 8}, "K": {"multiple_of": 8}},
                 "text": {"size_text": "M any; N, K multiples of 8."}},
      "batched": {"sizes": [{"L": 2, "M": 256, "N": 128, "K": 64, "timed": true}],
                  "text": {"size_text": "L any."}}
    },
    "variants": [
      {"id": "g_bf16", "level": 2, "variant": {"dtype": "bf16", "shape": "square"}},
      {"id": "g_fp16_batched", "level": 3, "variant": {"dtype": "fp16", "shape": "batched"},
       "speedup_threshold": 0.7, "text": {"shape_title": "strided"}}
    ]
  })");
}

std::string expand_error(const json& family) {
  try {
    expand_family(family, "tasks/families/x.json");
  } catch (const input_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a family expands each variant: base - then each axis value - then the variant's own fields") {
  auto docs = expand_family(small_family(), "x.json");
  REQUIRE(docs.size() == 2);
  task a = parse_task(docs[0]), b = parse_task(docs[1]);
  CHECK(a.id == "g_bf16");
  CHECK(a.family == "gemm");
  CHECK(a.variant == std::map<std::string, std::string>{{"dtype", "bf16"}, {"shape", "square"}});
  CHECK(a.title == "GEMM bf16 square");
  CHECK(a.statement == "C = A·Bᵀ in bf16. M any; N, K multiples of 8.");
  CHECK(a.constraints == "M any; N, K multiples of 8.");
  CHECK(a.find_tensor("A")->type == dtype::bf16);
  CHECK(a.size_rules.at("N").multiple_of == 8);
  CHECK(a.hidden_size_count() == 1);
  // The axis patch merges into the tolerance; the size set sits under the document.
  CHECK(b.tolerance_for("C").atol == doctest::Approx(0.03));
  CHECK(b.tolerance_for("C").rtol == doctest::Approx(0.02));
  CHECK(b.find_tensor("A")->shape == std::vector<std::string>{"L", "M", "K"});
  CHECK(b.find_tensor("A")->type == dtype::fp16);
  CHECK(b.flops == "2*L*M*N*K");
  CHECK(b.constraints == "L any.");
  // The variant's own text wins over the axis value's.
  CHECK(b.title == "GEMM fp16 strided");
  CHECK(b.speedup_threshold == doctest::Approx(0.7));
  CHECK(b.level == 3);
}

TEST_CASE("family errors name the file - the variant and what is wrong") {
  json f = small_family();
  f["variants"][0]["variant"].erase("shape");
  CHECK(expand_error(f).find("$.variants[0].variant.shape: missing (every variant gives a value of every axis)") !=
        std::string::npos);
  f = small_family();
  f["variants"][1]["variant"]["dtype"] = "fp64";
  CHECK(expand_error(f).find("'fp64' is not a value of this axis (known: bf16, fp16)") != std::string::npos);
  f = small_family();
  f["variants"][0]["variant"]["layout"] = "nt";
  CHECK(expand_error(f).find("variant.layout: not an axis of this family") != std::string::npos);
  f = small_family();
  f["base"]["statement"] = "C = ${nothing}";
  CHECK(expand_error(f).find("${nothing} is not defined") != std::string::npos);
  f = small_family();
  f["base"]["text"]["loop"] = "${loop}";
  f["base"]["notes"] = "${loop}";
  CHECK(expand_error(f).find("nested deeper than 8 levels") != std::string::npos);
  f = small_family();
  f["base"]["size_set"] = "round";
  CHECK(expand_error(f).find("size set 'round' is not declared") != std::string::npos);
  f = small_family();
  f["base"]["text"]["dtype"] = "x";
  CHECK(expand_error(f).find("redefines the axis or built-in ${dtype}") != std::string::npos);
  f = small_family();
  f["variants"][0]["family"] = "attention_fwd";
  CHECK(expand_error(f).find("cannot set another family") != std::string::npos);
  f = small_family();
  f["colour"] = 1;
  CHECK(expand_error(f).find("$.colour: unknown field") != std::string::npos);
}

TEST_CASE("size rules are checked at load - and a hidden size may not repeat a shown one") {
  json f = small_family();
  f["size_sets"]["square"]["sizes"][1]["N"] = 12;
  auto docs = expand_family(f, "x.json");
  std::string error;
  try {
    parse_task(docs[0], "x.json (g_bf16)");
  } catch (const input_error& e) {
    error = e.what();
  }
  CHECK(error.find("$.sizes[1]: breaks the task's size_rules: N = 12 is not a multiple of 8") != std::string::npos);

  f = small_family();
  f["size_sets"]["square"]["sizes"][1] = {{"M", 256}, {"N", 128}, {"K", 64}, {"hidden", true}};
  docs = expand_family(f, "x.json");
  CHECK_THROWS_WITH_AS(parse_task(docs[0]), doctest::Contains("a hidden size equal to the shown size 0"), input_error);

  f = small_family();
  f["base"]["size_rules"] = {{"Q", {{"min", 1}}}};
  docs = expand_family(f, "x.json");
  CHECK_THROWS_WITH_AS(parse_task(docs[0]), doctest::Contains("$.size_rules.Q: not a size of this task"), input_error);

  f = small_family();
  f["base"]["size_rules"] = {{"M", {{"equals", "2*N"}}}};
  docs = expand_family(f, "x.json");
  CHECK_THROWS_WITH_AS(parse_task(docs[0]), doctest::Contains("$.sizes[1]: breaks the task's size_rules: M = 100 is not 2*N = 16"),
                       input_error);
}

namespace {

// The catalogue of docs/task-suite.md: every id, and whether the GPU judges it.
const std::vector<std::string> k_catalogue = {
    "gemm_bf16_mma_sync", "gemm_fp16_mma_sync", "gemm_bf16_nn_mma_sync", "gemm_bf16_wgmma", "gemm_bf16_wgmma_tma",
    "gemm_fp16_wgmma_tma", "gemm_bf16_nn_wgmma_tma", "gemm_fp8_e4m3_wgmma_tma", "gemm_bf16_llm_up",
    "gemm_bf16_llm_down", "gemm_bf16_general", "gemm_fp16_nn_general", "gemm_bf16_bias", "gemm_bf16_bias_gelu",
    "gemm_fp16_bias_gelu", "gemm_bf16_alpha_beta", "gemm_fp8_e4m3_scaled", "gemm_bf16_decode_m16",
    "gemm_bf16_decode_m64", "gemm_bf16_decode_m128", "gemm_bf16_batched", "gemm_bf16_grouped",
    "attention_fwd_bf16_mma_sync_d64", "attention_fwd_bf16_wgmma", "attention_fwd_bf16_wgmma_causal",
    "attention_fwd_bf16_wgmma_d64", "attention_fwd_bf16_wgmma_d64_causal", "attention_fwd_bf16_wgmma_d256",
    "attention_fwd_bf16_gqa4", "attention_fwd_bf16_gqa8_causal", "attention_fwd_bf16_mqa",
    "attention_fwd_bf16_general", "attention_fwd_bf16_varlen", "attention_fwd_bf16_varlen_causal",
    "attention_decode_bf16", "attention_decode_bf16_gqa8", "attention_fwd_fp8_e4m3", "attention_fwd_fp8_e4m3_causal",
    "attention_bwd_bf16_wgmma", "attention_bwd_bf16_wgmma_causal", "attention_bwd_bf16_d64", "attention_bwd_bf16_gqa4"};
const std::vector<std::string> k_static = {
    "gemm_bf16_tcgen05",           "gemm_fp16_tcgen05",      "gemm_fp8_e4m3_tcgen05",     "gemm_bf16_nn_tcgen05",
    "gemm_bf16_tcgen05_bias_gelu", "gemm_bf16_tcgen05_2cta", "gemm_bf16_tcgen05_batched", "gemm_bf16_tcgen05_grouped"};

const task& by_id(const std::vector<task>& tasks, const std::string& id) {
  auto it = std::find_if(tasks.begin(), tasks.end(), [&](const task& t) { return t.id == id; });
  REQUIRE_MESSAGE(it != tasks.end(), id);
  return *it;
}

}  // namespace

TEST_CASE("the shipped families expand to the catalogue: 42 tasks on the GPU - 8 at the compile and SASS level") {
  const auto tasks = load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks");
  CHECK(tasks.size() == k_catalogue.size() + k_static.size());
  for (const auto& id : k_catalogue) CHECK_MESSAGE(by_id(tasks, id).runs_on_hopper, id);
  for (const auto& id : k_static) {
    CHECK_MESSAGE(!by_id(tasks, id).runs_on_hopper, id);
    CHECK(by_id(tasks, id).arch == "sm_100a");
  }
  // tasks check's rules: size rules for every size, hidden sizes that
  // exercise what the rules allow, one core task per family and level.
  for (const auto& p : suite_problems(tasks)) FAIL_CHECK(p);
  CHECK(tasks_in_suite(tasks, "core").size() == 8);
  CHECK(tasks_in_suite(tasks, "full").size() == tasks.size());
  CHECK_THROWS_WITH_AS(tasks_in_suite(tasks, "quick"), "unknown suite 'quick' (known: core, full)", input_error);
}

TEST_CASE("the eight original ids keep their meaning") {
  const auto tasks = load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks");
  auto targets = [&](const std::string& id) { return by_id(tasks, id).target_instructions; };
  using v = std::vector<std::string>;
  CHECK(targets("gemm_bf16_mma_sync") == v{"mma.sync", "ldmatrix", "cp.async"});
  CHECK(targets("gemm_bf16_wgmma") == v{"wgmma.mma_async"});
  CHECK(targets("gemm_bf16_wgmma_tma") == v{"wgmma.mma_async", "cp.async.bulk.tensor", "mbarrier.try_wait"});
  CHECK(targets("gemm_fp8_e4m3_wgmma_tma") == v{"wgmma.mma_async", "cp.async.bulk.tensor"});
  CHECK(targets("gemm_bf16_tcgen05") == v{"tcgen05.mma", "tcgen05.alloc", "cp.async.bulk.tensor"});
  CHECK(targets("attention_fwd_bf16_wgmma") == v{"wgmma.mma_async"});
  CHECK(targets("attention_bwd_bf16_wgmma") == v{"wgmma.mma_async"});
  for (const char* id : {"gemm_bf16_mma_sync", "gemm_bf16_wgmma", "gemm_bf16_wgmma_tma", "gemm_bf16_tcgen05"}) {
    const task& t = by_id(tasks, id);
    CHECK(t.find_tensor("A")->type == dtype::bf16);
    CHECK(t.find_tensor("B")->shape == std::vector<std::string>{"N", "K"});
    CHECK(t.timed_size().values == std::map<std::string, int64_t>{{"K", 4096}, {"M", 4096}, {"N", 4096}});
    CHECK(t.op.epilogue == "none");
    CHECK(t.tolerance_for("C").atol == doctest::Approx(0.02));
  }
  const task& fp8 = by_id(tasks, "gemm_fp8_e4m3_wgmma_tma");
  CHECK(fp8.find_tensor("A")->type == dtype::fp8_e4m3);
  CHECK(fp8.find_tensor("C")->type == dtype::bf16);
  CHECK(fp8.size_rules.at("K").multiple_of == 128);
  CHECK_FALSE(fp8.op.scaled);
  CHECK(by_id(tasks, "attention_fwd_bf16_wgmma_causal").causal);
  CHECK_FALSE(by_id(tasks, "attention_fwd_bf16_wgmma").causal);
  const task& bwd = by_id(tasks, "attention_bwd_bf16_wgmma");
  CHECK(bwd.timed_size().values.at("S") == 4096);
  CHECK(bwd.tolerance_for("dQ").rel_l2 == doctest::Approx(0.015));
  CHECK(by_id(tasks, "attention_fwd_bf16_wgmma").tolerance_for("LSE").rel_l2 == doctest::Approx(1e-5));
}

TEST_CASE("every task's statement - prompt facts and op agree with its variant") {
  const auto tasks = load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks");
  for (const auto& t : tasks) {
    CAPTURE(t.id);
    CHECK(t.statement.find("${") == std::string::npos);
    CHECK(t.notes.find("${") == std::string::npos);
    CHECK(t.statement.find(t.constraints) != std::string::npos);
    CHECK(t.hidden_size_count() >= 3);
    if (t.family == "gemm") {
      CHECK(t.op.layout == t.variant.at("layout"));
      CHECK(t.op.grouped == (t.variant.at("shape") == "grouped"));
      CHECK(t.op.batched == (t.variant.at("shape") == "batched"));
      CHECK(t.op.scaled == (t.variant.at("epilogue") == "scale_ab"));
      if (t.op.epilogue == "bias_gelu") CHECK(t.statement.find("0.7978845608") != std::string::npos);
      if (t.op.epilogue == "alpha_beta") CHECK(t.find_tensor("D")->role == tensor_role::output);
    } else {
      CHECK(t.causal == (t.variant.at("mask") == "causal"));
      CHECK(t.size_rules.at("D").equals == t.variant.at("head_dim"));
      if (t.variant.count("heads") && t.variant.at("heads") != "mha") CHECK(t.find_tensor("K")->shape[1] == "HKV");
    }
  }
}
