#include <doctest/doctest.h>

#include <string>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/task.hpp"

using namespace ptxbench;
using nlohmann::json;

namespace {
json good_task() {
  return json::parse(R"({
    "id": "gemm_test", "family": "gemm", "arch": "sm_90a", "statement": "C = A·Bᵀ",
    "tensors": {"A": {"dtype": "bf16", "shape": ["M","K"], "role": "input"},
                "B": {"dtype": "bf16", "shape": ["N","K"], "role": "input"},
                "C": {"dtype": "bf16", "shape": ["M","N"], "role": "output"}},
    "sizes": [{"M": 256, "N": 128, "K": 64}, {"M": 4096, "N": 4096, "K": 4096, "timed": true}],
    "flops": "2*M*N*K", "reference": "gemm", "baseline": "cublaslt",
    "target_instructions": ["wgmma.mma_async"],
    "tolerance": {"atol": 0.02, "rtol": 0.02}, "speedup_threshold": 0.9})");
}

std::string error_of(const json& j) {
  try {
    parse_task(j, "tasks/t.json");
  } catch (const input_error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("a valid task parses with its timed size - flops and tolerances") {
  task t = parse_task(good_task());
  CHECK(t.id == "gemm_test");
  CHECK(t.tensors.size() == 3);
  CHECK(t.find_tensor("C")->role == tensor_role::output);
  CHECK(t.timed_size().values.at("M") == 4096);
  CHECK(task_flops(t, t.timed_size()) == doctest::Approx(2.0 * 4096 * 4096 * 4096));
  CHECK(t.tolerance_for("C").atol == doctest::Approx(0.02));
  CHECK(tensor_elements(*t.find_tensor("A"), t.sizes[0]) == 256 * 64);
  CHECK(describe_size(t.sizes[0]) == "K=64 M=256 N=128");
}

TEST_CASE("task errors name the file and the JSON path of the bad field") {
  json j = good_task();
  j["tensors"]["A"]["dtype"] = "bf17";
  CHECK(error_of(j).find("tasks/t.json: $.tensors.A.dtype") != std::string::npos);
  CHECK(error_of(j).find("unknown dtype 'bf17'") != std::string::npos);

  j = good_task();
  j["sizes"][1].erase("K");
  CHECK(error_of(j).find("$.sizes[1].K: missing") != std::string::npos);

  j = good_task();
  j["tensors"]["C"]["shape"][1] = "Q";
  CHECK(error_of(j).find("$.tensors.C.shape[1]") != std::string::npos);

  j = good_task();
  j["speedup_treshold"] = 1;
  CHECK(error_of(j).find("$.speedup_treshold: unknown field") != std::string::npos);

  j = good_task();
  j.erase("flops");
  CHECK(error_of(j).find("$.flops: missing") != std::string::npos);

  j = good_task();
  j["family"] = "conv";
  CHECK(error_of(j).find("unknown family 'conv'") != std::string::npos);

  j = good_task();
  j["tolerance"] = json::parse(R"({"default": {"atol": 0.1, "rtol": 0.1}, "Z": {"atol": 1, "rtol": 1}})");
  CHECK(error_of(j).find("$.tolerance.Z: not a tensor of this task") != std::string::npos);
}

TEST_CASE("per-tensor tolerances override the default") {
  json j = good_task();
  j["tolerance"] = json::parse(R"({"default": {"atol": 0.1, "rtol": 0.2}, "C": {"atol": 0.001, "rtol": 0.002}})");
  task t = parse_task(j);
  CHECK(t.tolerance_for("C").atol == doctest::Approx(0.001));
  CHECK(t.tolerance_for("A").atol == doctest::Approx(0.1));
}

TEST_CASE("the shipped task suite loads and every task is well formed") {
  auto tasks = load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks");
  REQUIRE(tasks.size() >= 50);
  int not_on_hopper = 0;
  for (const auto& t : tasks) {
    CHECK_FALSE(t.statement.empty());
    CHECK_FALSE(t.target_instructions.empty());
    int timed = 0;
    for (const auto& s : t.sizes) timed += s.timed;
    CHECK(timed == 1);
    if (!t.runs_on_hopper) ++not_on_hopper;
    CHECK(parse_task(task_to_json(t)).id == t.id);  // round trip
  }
  CHECK(not_on_hopper == 8);  // the sm_100a tasks, judged at the compile and SASS level
}

TEST_CASE("task sizes past int64 and tensors whose size overflows are errors with the path") {
  json j = good_task();
  j["sizes"][0]["M"] = json::parse("18446744073709551615");
  CHECK(error_of(j).find("$.sizes[0].M: integer 18446744073709551615 is out of range") != std::string::npos);
  j = good_task();
  j["sizes"][0]["M"] = 1e300;
  CHECK(error_of(j).find("$.sizes[0].M: number") != std::string::npos);
  j = good_task();
  j["sizes"][0]["M"] = 4294967296LL;
  j["sizes"][0]["K"] = 4294967296LL;
  CHECK(error_of(j).find("$.tensors.A.shape: tensor 'A': element count overflows") != std::string::npos);
  j = good_task();
  j["sizes"][0]["M"] = 4611686018427387904LL;
  j["sizes"][0]["K"] = 1;
  CHECK(error_of(j).find("$.tensors.A.shape: byte count overflows") != std::string::npos);
}

TEST_CASE("a task document is bounded - and its arch is sm_ digits with an optional a or f") {
  // A client's task document: 100000 targets held an evaluation slot for 18 s,
  // and "sm_90a -o /x" became the candidate's compile failure.
  json j = good_task();
  j["target_instructions"] = json::array();
  for (int i = 0; i < 100000; ++i) j["target_instructions"].push_back("wgmma.mma_async");
  CHECK(error_of(j).find("$.target_instructions: 100000 entries; the limit is 64") != std::string::npos);
  j["target_instructions"] = {std::string(1000, 'x')};
  CHECK(error_of(j).find("$.target_instructions[0]: longer than 64") != std::string::npos);

  j = good_task();
  for (int i = 0; i < 65; ++i) j["tensors"]["T" + std::to_string(i)] = j["tensors"]["A"];
  CHECK(error_of(j).find("$.tensors: 68 entries; the limit is 64") != std::string::npos);
  j = good_task();
  for (int i = 0; i < 65; ++i) j["sizes"].push_back(j["sizes"][0]);
  CHECK(error_of(j).find("$.sizes: 67 entries") != std::string::npos);
  j = good_task();
  j["tensors"]["A"]["shape"] = json(std::vector<std::string>(9, "M"));
  CHECK(error_of(j).find("$.tensors.A.shape: 9 entries; the limit is 8") != std::string::npos);

  for (const char* bad : {"sm_90a -o /x", "sm_", "sm_90ab", "sm_90z", "sm_x", "sm_123456", "compute_90a", ""}) {
    CAPTURE(bad);
    j = good_task();
    j["arch"] = bad;
    CHECK(error_of(j).find("$.arch: expected sm_<digits>") != std::string::npos);
  }
  for (const char* good : {"sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_120"}) {
    CAPTURE(good);
    j = good_task();
    j["arch"] = good;
    CHECK(error_of(j) == "no error");
  }
  // Inside a request, the path is the document's own.
  j = good_task();
  j["arch"] = "sm_90a -o /x";
  try {
    parse_task(j, "", "$.task");
    FAIL("no error");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("$.task.arch: expected") == 0);
  }
}
