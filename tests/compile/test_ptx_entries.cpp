// parse_ptx_entries on nvcc-generated, Triton-style and hand-written headers.
#include <doctest/doctest.h>

#include <stdexcept>

#include "evaluator/compile/compile.hpp"
#include "fixtures.hpp"

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {
ptx_entry entry_named(const std::vector<ptx_entry>& entries, const std::string& name) {
  for (const ptx_entry& e : entries) {
    if (e.name == name) return e;
  }
  throw std::runtime_error("no entry " + name);
}
}  // namespace

TEST_CASE("entries - not device functions or commented-out text - are found with their lines") {
  const std::vector<ptx_entry> entries = parse_ptx_entries(read_ptx_fixture("entries_mixed.ptx"));
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].name == "triton_matmul");
  CHECK(entries[0].line == 19);
  CHECK(entries[1].name == "tma_gemm");
  CHECK(entries[2].name == "weak_kernel");
  CHECK(entries[2].params.empty());
}

TEST_CASE("Triton pointers: the .align after .ptr is the pointee's - the parameter is 8 bytes aligned 8") {
  const ptx_entry e = entry_named(parse_ptx_entries(read_ptx_fixture("entries_mixed.ptx")), "triton_matmul");
  REQUIRE(e.params.size() == 3);
  CHECK(e.params[0].name == "triton_matmul_param_0");
  CHECK(e.params[0].type == ".u64");
  CHECK(e.params[0].size_bytes == 8);
  CHECK(e.params[0].align == 8);
  CHECK(e.params[1].name == "triton_matmul_param_1");
  CHECK(e.params[1].align == 8);
  CHECK(e.params[2].type == ".u32");
  CHECK(e.params[2].size_bytes == 4);
  CHECK(e.directives.at(".reqntid") == "128,1,1");
  CHECK(e.directives.at(".maxnreg") == "168");
}

TEST_CASE("tensor maps by value - one-line parameter lists and several directives on a line") {
  const ptx_entry e = entry_named(parse_ptx_entries(read_ptx_fixture("entries_mixed.ptx")), "tma_gemm");
  REQUIRE(e.params.size() == 6);
  CHECK(e.params[0].name == "tma_gemm_a_map");
  CHECK(e.params[0].type == ".b8");
  CHECK(e.params[0].array_length == 128);
  CHECK(e.params[0].size_bytes == 128);
  CHECK(e.params[0].align == 64);
  CHECK(e.params[1].align == 128);
  CHECK(e.params[2].name == "c");
  CHECK(e.params[4].size_bytes == 8);
  CHECK(e.params[5].type == ".f32");
  CHECK(e.directives.at(".maxntid") == "384,1,1");
  CHECK(e.directives.at(".reqnctapercluster") == "2,1,1");
  CHECK(e.directives.at(".minnctapersm") == "1");
}

TEST_CASE("nvcc output: CUtensorMap parameters are .align 128 .b8 [128]") {
  const std::vector<ptx_entry> entries = parse_ptx_entries(read_ptx_fixture("tma_mbarrier_sm90a.ptx"));
  REQUIRE(entries.size() == 1);
  const ptx_entry& e = entries[0];
  CHECK(e.name == "tma_copy");
  CHECK(e.line == 17);
  REQUIRE(e.params.size() == 3);
  CHECK(e.params[0].size_bytes == 128);
  CHECK(e.params[0].align == 128);
  CHECK(e.params[2].name == "tma_copy_param_2");
  CHECK(e.params[2].type == ".u32");
  CHECK(e.directives.at(".maxntid") == "256,1,1");
}

TEST_CASE("text that is not PTX yields no entries and no exception") {
  CHECK(parse_ptx_entries("").empty());
  CHECK(parse_ptx_entries("I cannot write that kernel.").empty());
  const std::vector<ptx_entry> truncated = parse_ptx_entries(".visible .entry cut(.param .u64 a, .param");
  REQUIRE(truncated.size() == 1);
  CHECK(truncated[0].name == "cut");
  CHECK(truncated[0].params.size() == 2);
}

// Device system calls (the device heap, printf, device-side launches) are
// refused at the format stage: a heap block outlives the run and the candidate.
TEST_CASE("external device functions are found with their lines - not in comments or strings") {
  const std::string ptx =
      "// .extern .func free(.param .b64 p);\n"
      ".version 9.0\n.target sm_90a\n.address_size 64\n"
      ".extern .func (.param .b64 func_retval0) malloc\n(\n.param .b64 malloc_param_0\n);\n"
      ".extern .func free(.param .b64 p);\n"
      ".extern .shared .align 16 .b8 dynamic_smem[];\n"
      ".func helper() { ret; }\n"
      ".visible .entry k() { ret; }\n";
  auto calls = ptx_external_functions(ptx);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].name == "malloc");
  CHECK(calls[0].line == 5);
  CHECK(calls[1].name == "free");
  CHECK(calls[1].line == 9);
  const std::string problem = system_calls_problem(ptx);
  CHECK(problem.find("malloc (line 5), free (line 9)") != std::string::npos);
  CHECK(problem.find("refused") != std::string::npos);
  CHECK(system_calls_problem(read_ptx_fixture("trivial_sm90a.ptx")).empty());
}

TEST_CASE("the special registers a kernel could time itself with are found - not names in comments or look-alikes") {
  const std::string ptx =
      ".version 9.0\n.target sm_90a\n.address_size 64\n"
      "// mov.u64 %rd1, %clock64;\n"
      ".visible .entry k() {\n"
      ".reg .b64 %clock64x;\n.reg .b32 %pm1x;\n"
      "mov.u64 %clock64x, 0; // %globaltimer\n"
      "mov.u32 %pm1x, %pm3;\n"
      "ret; }\n";
  const ptx_timer_read pm = ptx_timer_read_of(ptx);
  CHECK(pm.name == "%pm3");
  CHECK(pm.line == 9);
  for (const char* reg : {"%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi",
                          "%pm0", "%pm7", "%pm0_64", "%pm7_64"}) {
    const std::string text = std::string(".visible .entry k() {\n.reg .b64 %rd<2>;\nmov.u64 %rd1, ") + reg + ";\nret; }\n";
    CHECK_MESSAGE(ptx_timer_read_of(text).name == reg, reg);
    CHECK(ptx_timer_read_of(text).line == 3);
  }
  for (const char* other : {"%clock2", "%pm8", "%globaltimer_x", "%tid.x", "%smid"}) {
    const std::string text = std::string(".visible .entry k() {\n.reg .b64 %rd<2>;\nmov.u64 %rd1, ") + other + ";\nret; }\n";
    CHECK_MESSAGE(ptx_timer_read_of(text).name.empty(), other);
  }
  CHECK(ptx_timer_read_of(read_ptx_fixture("trivial_sm90a.ptx")).name.empty());
  CHECK(ptx_timer_read_of(ptx.substr(0, ptx.find(".visible"))).name.empty());  // only the comment
}
