#include <doctest/doctest.h>

#include "evaluator/common/json_path.hpp"
#include "evaluator/api/manifest.hpp"
#include "evaluator/api/task.hpp"

using namespace ptxbench;

namespace {
const char* good = R"J({
  "launches": [{
    "kernel": "gemm_kernel",
    "grid": ["cdiv(N,256)", "cdiv(M,128)", 1], "block": [384, 1, 1],
    "shared_bytes": 197632, "cluster": [2, 1, 1],
    "params": [
      {"tensor_map": {"tensor": "A", "box": [64, 128], "swizzle": "128B"}},
      {"tensor_map": {"tensor": "B", "box": [64, 256], "swizzle": "128B"}},
      {"buffer": "C"}, {"size": "M"}, {"size": "N"}, {"size": "K"}, {"const": 0}, {"buffer": "workspace"}
    ]
  }],
  "scratch": [{"name": "workspace", "bytes": "M*N*4", "init": "zero"}]
})J";

task gemm_task() {
  return load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_wgmma_tma");
}

std::string error_of(const std::string& text) {
  try {
    parse_manifest_text(text);
  } catch (const input_error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("the docs/design.md manifest parses and matches the task") {
  manifest m = parse_manifest_text(good);
  REQUIRE(m.launches.size() == 1);
  const auto& l = m.launches[0];
  CHECK(l.grid[0] == "cdiv(N,256)");
  CHECK(l.grid[2] == "1");
  CHECK(l.cluster[0] == "2");
  CHECK(l.params[0].kind == binding_kind::tensor_map);
  CHECK(l.params[0].map.box == std::vector<int64_t>{64, 128});
  CHECK(l.params[6].kind == binding_kind::constant);
  CHECK(m.scratch[0].bytes == "M*N*4");
  // Its 2-CTA cluster does not divide grid.x = cdiv(N,256) = 1 at the task's N = 256 (nor at a hidden
  // size with N = 128, named by its label): the only problems.
  auto problems = check_manifest_against_task(m, gemm_task());
  REQUIRE_FALSE(problems.empty());
  CHECK(problems[0].find("N=256 is not a multiple of cluster.x (2)") != std::string::npos);
  for (const auto& p : problems) CHECK(p.find("is not a multiple of cluster.x (2)") != std::string::npos);
  m.launches[0].cluster[0] = "1";
  CHECK(check_manifest_against_task(m, gemm_task()).empty());
  CHECK(parse_manifest(manifest_to_json(m)).launches[0].params.size() == 8);  // round trip
}

TEST_CASE("manifest errors give the JSON path") {
  CHECK(error_of("{").find("not valid JSON") != std::string::npos);
  CHECK(error_of(R"J({"launches": []})J").find("$.launches: at least one launch") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"bufer": "A"}]}]})J")
            .find("$.launches[0].params[0].bufer: unknown binding") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1.5], "block": [1], "params": []}]})J")
            .find("$.launches[0].grid[0]") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [], "shared_byte": 5}]})J")
            .find("$.launches[0].shared_byte: unknown field") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"tensor_map": {"tensor": "A", "box": [64, 999]}}]}]})J")
            .find("box dimensions are integers from 1 to 256") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"buffer": "A", "size": "M"}]}]})J")
            .find("exactly one of") != std::string::npos);
}

TEST_CASE("checks against the task catch unknown names and impossible values at every size") {
  auto problems = [&](const std::string& text) { return check_manifest_against_task(parse_manifest_text(text), gemm_task()); };
  auto p = problems(R"J({"launches": [{"kernel": "k", "grid": ["cdiv(N,256)"], "block": [128], "params": [{"buffer": "D"}, {"size": "Q"}, {"scalar": "scale"}]}]})J");
  REQUIRE(p.size() == 3);
  CHECK(p[0].find("buffer 'D' is neither a task tensor nor a scratch buffer") != std::string::npos);
  CHECK(p[1].find("'Q' is not a size") != std::string::npos);
  CHECK(p[2].find("'scale' is not a scalar") != std::string::npos);
  p = problems(R"J({"launches": [{"kernel": "k", "grid": ["N-4096"], "block": [128], "params": []}]})J");
  CHECK_FALSE(p.empty());
  CHECK(p[0].find("grid.x = 0") != std::string::npos);
  p = problems(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"tensor_map": {"tensor": "A", "box": [128, 128], "swizzle": "128B"}}]}]})J");
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("at most 128 bytes") != std::string::npos);
  p = problems(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"tensor_map": {"tensor": "A", "box": [64, 64, 2]}}]}]})J");
  CHECK(p[0].find("box has 3 dimensions") != std::string::npos);
}

TEST_CASE("manifest integers past int64 are errors with the JSON path") {
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [18446744073709551615], "block": [1], "params": []}]})J")
            .find("$.launches[0].grid[0]: integer 18446744073709551615 is out of range") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "shared_bytes": 9223372036854775808, "params": []}]})J")
            .find("$.launches[0].shared_bytes") != std::string::npos);
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"const": 18446744073709551615}]}]})J")
            .find("$.launches[0].params[0].const") != std::string::npos);
}

TEST_CASE("manifests are bounded in nesting - size and counts") {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(error_of(deep).find("nested deeper than") != std::string::npos);
  CHECK(error_of("{\"launches\": \"" + std::string(2u << 20, 'x') + "\"}").find("the limit is") != std::string::npos);
  std::string many = R"J({"launches": [)J";
  for (int i = 0; i < 100; ++i) many += std::string(i ? "," : "") + R"J({"kernel": "k", "grid": [1], "block": [1], "params": []})J";
  CHECK(error_of(many + "]}").find("$.launches: at most 64 launches") != std::string::npos);
}

TEST_CASE("a crashing grid expression becomes a manifest problem") {
  auto p = check_manifest_against_task(
      parse_manifest_text(R"J({"launches": [{"kernel": "k", "grid": ["(0-9223372036854775807-1)/(0-1)", "(0-9223372036854775807-1)%(0-1)"], "block": [1], "params": []}]})J"),
      gemm_task());
  REQUIRE(p.size() >= 2);
  CHECK(p[0].find("integer overflow") != std::string::npos);
  std::string parens = std::string(30000, '(') + "1" + std::string(30000, ')');
  p = check_manifest_against_task(
      parse_manifest_text(R"J({"launches": [{"kernel": "k", "grid": [")J" + parens + R"J("], "block": [1], "params": []}]})J"),
      gemm_task());
  CHECK_FALSE(p.empty());
}

TEST_CASE("a tensor_map view whose element count overflows is a problem") {
  auto p = check_manifest_against_task(
      parse_manifest_text(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"tensor_map": {"tensor": "A", "box": [64, 64, 1], "view": ["4294967296", "4294967296", "K"]}}]}]})J"),
      gemm_task());
  bool found = false;
  for (const auto& s : p) found |= s.find("overflows 64 bits") != std::string::npos;
  CHECK(found);
}

TEST_CASE("a number past double in a manifest is invalid JSON - not an escaping exception") {
  // Found by fuzz_manifest: nlohmann throws out_of_range (not parse_error) for 1e400.
  CHECK(error_of(R"J({"launches": [{"kernel": "k", "grid": [1e400], "block": [1], "params": []}]})J")
            .find("not valid JSON") != std::string::npos);
  CHECK(error_of(std::string(400, '9')).find("not valid JSON") != std::string::npos);
}

// Every resource a manifest asks for has a bound derived from the task; past
// it the format stage fails naming the bound, before the harness is asked for
// anything (a 275 GB scratch buffer used to make the worker's allocation throw:
// an evaluator error that hid the candidate's verdict).
TEST_CASE("resources past the task's bounds are format problems that name the bound") {
  auto problems = [&](const std::string& text) { return check_manifest_against_task(parse_manifest_text(text), gemm_task()); };
  auto one = [](const std::vector<std::string>& p, const std::string& part) {
    std::string all;
    for (const auto& s : p) all += s + "\n";
    INFO(all);
    return std::any_of(p.begin(), p.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
  };
  const std::string k = R"J({"launches": [{"kernel": "k", "grid": [1], "block": [128], "params": []}])J";
  // M*N*K*4 bytes: 275 GB at 4096^3.
  auto p = problems(k + R"J(, "scratch": [{"name": "ws", "bytes": "M*N*K*4"}]})J");
  CHECK(one(p, "scratch buffers ask for 274.88 GB"));
  CHECK(one(p, "the bound is 8 x the task's tensor bytes at that size"));
  // A split-K workspace of 4 fp32 partial C's stays inside.
  CHECK(problems(k + R"J(, "scratch": [{"name": "ws", "bytes": "4*M*N*4"}]})J").empty());
  p = problems(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [128], "shared_bytes": 300000, "params": []}]})J");
  CHECK(one(p, "300000 bytes of dynamic shared memory"));
  CHECK(one(p, "at most 232448"));
  p = problems(R"J({"launches": [{"kernel": "k", "grid": [1, 70000, 1], "block": [2048], "params": []}]})J");
  CHECK(one(p, "grid.y = 70000"));
  CHECK(one(p, "block.x = 2048"));
  p = problems(R"J({"launches": [{"kernel": "k", "grid": [32], "block": [128], "cluster": [32], "params": []}]})J");
  CHECK(one(p, "cluster of 32 CTAs; at most 16"));
  std::string many = R"J({"launches": [)J";
  for (int i = 0; i < 17; ++i) many += std::string(i ? "," : "") + R"J({"kernel": "k", "grid": [1], "block": [1], "params": []})J";
  CHECK(one(problems(many + "]}"), "17 launches; at most 16"));
}

TEST_CASE("bounds never name a hidden size") {
  task t = gemm_task();
  size_point hidden = t.sizes.back();
  hidden.values = {{"M", 384}, {"N", 256}, {"K", 1004}};  // K*2 bytes: not a multiple of 16
  hidden.hidden = true;
  hidden.timed = false;
  t.sizes.push_back(hidden);
  auto p = check_manifest_against_task(
      parse_manifest_text(R"J({"launches": [{"kernel": "k", "grid": [1], "block": [1], "params": [{"tensor_map": {"tensor": "A", "box": [64, 128]}}]}]})J"),
      t);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("at a hidden size") != std::string::npos);
  CHECK(p[0].find("1004") == std::string::npos);
  CHECK(p[0].find("multiples of 16 bytes") != std::string::npos);
}
