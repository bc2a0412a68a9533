// check_manifest_against_ptx: every mismatch between the manifest and the
// kernel's declared parameters is refused with a message the model can act on.
#include <doctest/doctest.h>

#include <limits>

#include "evaluator/compile/compile.hpp"
#include "fixtures.hpp"

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {

task gemm_task() {
  task t;
  t.id = "gemm_test";
  t.arch = "sm_90a";
  t.tensors = {{"A", dtype::bf16, {"M", "K"}, tensor_role::input},
               {"B", dtype::bf16, {"N", "K"}, tensor_role::input},
               {"C", dtype::bf16, {"M", "N"}, tensor_role::output}};
  size_point small;
  small.values = {{"M", 128}, {"N", 256}, {"K", 64}};
  t.sizes = {small};
  return t;
}

const std::string tma_gemm_ptx =
    ".version 8.7\n.target sm_90a\n.address_size 64\n"
    ".visible .entry gemm(\n"
    "  .param .align 64 .b8 a_map[128],\n"
    "  .param .align 64 .b8 b_map[128],\n"
    "  .param .u64 c,\n"
    "  .param .u32 m, .param .u32 n, .param .u32 k\n"
    ")\n.maxntid 384, 1, 1\n{\n ret;\n}\n";

manifest gemm_manifest(const std::string& params, const std::string& block = "[384, 1, 1]") {
  return parse_manifest_text(R"json({"launches": [{"kernel": "gemm", "grid": ["cdiv(N,256)", "cdiv(M,128)", 1],
    "block": )json" + block + R"json(, "params": [)json" +
                             params + "]}]}");
}

const std::string good_params =
    R"({"tensor_map": {"tensor": "A", "box": [64, 128], "swizzle": "128B"}},
       {"tensor_map": {"tensor": "B", "box": [64, 256], "swizzle": "128B"}},
       {"buffer": "C"}, {"size": "M"}, {"size": "N"}, {"size": "K"})";

}  // namespace

TEST_CASE("a manifest that matches the entry has no problems") {
  const std::vector<std::string> problems =
      check_manifest_against_ptx(gemm_manifest(good_params), parse_ptx_entries(tma_gemm_ptx), gemm_task());
  CHECK(problems.empty());
}

TEST_CASE("a kernel name that is not an entry lists the entries there are") {
  manifest m = gemm_manifest(good_params);
  m.launches[0].kernel = "gemm_kernel";
  const std::vector<std::string> problems = check_manifest_against_ptx(m, parse_ptx_entries(tma_gemm_ptx), gemm_task());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "launch 0 (gemm_kernel): no .entry named 'gemm_kernel' in the PTX; its entries are: gemm");
}

TEST_CASE("a parameter count mismatch lists the declared parameters") {
  const manifest m = gemm_manifest(R"({"tensor_map": {"tensor": "A", "box": [64, 128]}}, {"buffer": "C"})");
  const std::vector<std::string> problems = check_manifest_against_ptx(m, parse_ptx_entries(tma_gemm_ptx), gemm_task());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("the manifest binds 2 params but .entry gemm (line 4) declares 6") != std::string::npos);
  CHECK(problems[0].find("2 'c' .u64 (8 bytes)") != std::string::npos);
  CHECK(problems[0].find("0 'a_map' .align 64 .b8 a_map[128]") != std::string::npos);
}

TEST_CASE("width mismatches name the parameter - its declaration and what the binding needs") {
  const std::string ptx =
      ".visible .entry gemm(.param .u32 p0, .param .align 64 .b8 p1[128], .param .u32 p2, .param .f32 p3,"
      " .param .u64 p4, .param .u32 p5)\n{\n ret;\n}\n";
  const std::vector<std::string> problems =
      check_manifest_against_ptx(gemm_manifest(good_params), parse_ptx_entries(ptx), gemm_task());
  REQUIRE(problems.size() == 3);
  CHECK(
      problems[0] ==
      "launch 0 (gemm): param 0 'p0' is .u32 (4 bytes) but binds tensor_map A, which is a CUtensorMap passed by value "
      "and needs .param .align 64 .b8 p0[128]");
  CHECK(problems[1] ==
        "launch 0 (gemm): param 2 'p2' is .u32 (4 bytes) but binds buffer C, which is a device address and needs "
        ".param .u64 p2");
  CHECK(problems[2].find("param 3 'p3' is .f32 (4 bytes) but binds size M, which is an integer") != std::string::npos);
}

TEST_CASE("a tensor map parameter must be 128 bytes aligned to 64") {
  const std::string misaligned =
      ".visible .entry gemm(.param .align 8 .b8 a[128], .param .align 64 .b8 b[64], .param .u64 c,"
      " .param .u32 m, .param .u32 n, .param .u32 k)\n{\n ret;\n}\n";
  const std::vector<std::string> problems =
      check_manifest_against_ptx(gemm_manifest(good_params), parse_ptx_entries(misaligned), gemm_task());
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].find("param 0 'a' is .align 8 .b8 a[128]") != std::string::npos);
  CHECK(problems[1].find("param 1 'b' is .align 64 .b8 b[64]") != std::string::npos);
}

TEST_CASE("a 32-bit size parameter is refused when the size exceeds 2^31 - 1") {
  task t = gemm_task();
  size_point huge;
  huge.values = {{"M", 1LL << 32}, {"N", 256}, {"K", 64}};
  t.sizes.push_back(huge);
  const std::vector<std::string> problems =
      check_manifest_against_ptx(gemm_manifest(good_params), parse_ptx_entries(tma_gemm_ptx), t);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("param 3 'm' is .u32 (4 bytes) but binds size M, which reaches 4294967296") !=
        std::string::npos);
}

TEST_CASE("constants and scalars fit scalar parameters of their kind") {
  const std::string ptx =
      ".visible .entry gemm(.param .u64 unused, .param .f32 scale, .param .u32 flag)\n{\n ret;\n}\n";
  task t = gemm_task();
  t.scalars = {{"scale", "1.0"}};
  const manifest ok = gemm_manifest(R"({"const": 0}, {"scalar": "scale"}, {"const": 1})");
  CHECK(check_manifest_against_ptx(ok, parse_ptx_entries(ptx), t).empty());
  const manifest bad = gemm_manifest(R"({"const": 0}, {"const": 0.5}, {"const": 0.5})");
  const std::vector<std::string> problems = check_manifest_against_ptx(bad, parse_ptx_entries(ptx), t);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("param 2 'flag'") != std::string::npos);
  CHECK(problems[0].find("floating-point literal") != std::string::npos);
}

TEST_CASE("a literal block larger than .maxntid - or unlike .reqntid - is refused") {
  const std::vector<std::string> problems = check_manifest_against_ptx(gemm_manifest(good_params, "[512, 1, 1]"),
                                                                       parse_ptx_entries(tma_gemm_ptx), gemm_task());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "launch 0 (gemm): block [512, 1, 1] has 512 but the kernel allows at most .maxntid 384,1,1 (384)");
  const std::string reqntid = ".visible .entry gemm(.param .u64 a)\n.reqntid 128\n{\n ret;\n}\n";
  CHECK(check_manifest_against_ptx(gemm_manifest(R"({"buffer": "A"})", "[128, 1, 1]"), parse_ptx_entries(reqntid),
                                   gemm_task())
            .empty());
  CHECK(check_manifest_against_ptx(gemm_manifest(R"({"buffer": "A"})", "[256, 1, 1]"), parse_ptx_entries(reqntid),
                                   gemm_task())
            .size() == 1);
}

TEST_CASE("PTX without any entry is one clear problem") {
  const std::vector<std::string> problems =
      check_manifest_against_ptx(gemm_manifest(good_params), parse_ptx_entries(".version 8.7\n"), gemm_task());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("no .entry kernel") != std::string::npos);
}

TEST_CASE("literal shapes whose product overflows are left to the launch - not multiplied past int64") {
  // Signed overflow in the product was undefined behaviour (UBSan: runtime error).
  const std::string huge = ".visible .entry gemm(.param .u64 a)\n.maxntid 9223372036854775807, 2, 2\n{\n ret;\n}\n";
  CHECK_NOTHROW(check_manifest_against_ptx(gemm_manifest(R"({"buffer": "A"})", "[9223372036854775807, 2, 1]"),
                                           parse_ptx_entries(huge), gemm_task()));
  CHECK(check_manifest_against_ptx(gemm_manifest(R"({"buffer": "A"})", "[128, 1, 1]"), parse_ptx_entries(huge),
                                   gemm_task())
            .empty());
}

TEST_CASE("the entries listed for a missing kernel are capped") {
  std::string ptx;
  for (int i = 0; i < 5000; ++i) ptx += ".visible .entry k" + std::to_string(i) + "() { ret; }\n";
  const std::vector<std::string> problems =
      check_manifest_against_ptx(gemm_manifest(good_params), parse_ptx_entries(ptx), gemm_task());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("k19 and 4980 more") != std::string::npos);
  CHECK(problems[0].size() < 400);
}

TEST_CASE("an array parameter of billions of elements saturates its size instead of overflowing") {
  const std::vector<ptx_entry> e = parse_ptx_entries(".entry k(.param .b64 x[2000000000]) { ret; }");
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].params.size() == 1);
  CHECK(e[0].params[0].size_bytes == std::numeric_limits<int>::max());
}
