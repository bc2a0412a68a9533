// Reading ptxas' verbose log: resources per kernel and diagnostics, from logs
// in the form nvJitLink returns them.
#include <doctest/doctest.h>

#include "evaluator/compile/ptxas_log.hpp"

using namespace ptxbench;

TEST_CASE("resources of several kernels - with spills and constant memory - are read per kernel") {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'gemm_kernel' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm_kernel\n"
      "ptxas         .     16 bytes stack frame, 24 bytes spill stores, 40 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 232 bytes smem, 8 bytes cmem[0]\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'reduce_kernel' for 'sm_90a'\n"
      "ptxas info    : Function properties for reduce_kernel\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers, 360 bytes cmem[0], 16 bytes cmem[2]\n"
      "ptxas info    : Compile time = 12.5 ms\n";
  const std::vector<kernel_resources> kernels = parse_ptxas_resources(log);
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].kernel == "gemm_kernel");
  CHECK(kernels[0].registers == 168);
  CHECK(kernels[0].stack_bytes == 16);
  CHECK(kernels[0].spill_store_bytes == 24);
  CHECK(kernels[0].spill_load_bytes == 40);
  CHECK(kernels[0].static_shared_bytes == 232);
  CHECK(kernels[0].constant_bytes == 8);
  CHECK(kernels[1].kernel == "reduce_kernel");
  CHECK(kernels[1].registers == 32);
  CHECK(kernels[1].stack_bytes == 0);  // the helper's 64 bytes are not the kernel's
  CHECK(kernels[1].static_shared_bytes == 0);
  CHECK(kernels[1].constant_bytes == 376);
}

TEST_CASE("advisories with a code are kept as infos - with their line when they name one") {
  const std::string ptx = "l1\nl2\nl3\nl4\nl5\nl6\n";
  const std::string log =
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 4 by compiler to allow use of registers\n"
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count\n"
      "ptxas info    : Used 96 registers, used 1 barriers, 24576 bytes smem\n";
  const std::vector<ptxas_diagnostic> d = parse_ptxas_diagnostics(log, ptx);
  REQUIRE(d.size() == 2);
  CHECK(d[0].severity == "info");
  CHECK(d[0].line == 4);
  CHECK(d[0].quoted == "     2 | l2\n     3 | l3\n>    4 | l4\n     5 | l5\n     6 | l6\n");
  CHECK(d[1].line == 0);
  CHECK(d[1].quoted.empty());
  CHECK(d[1].message.rfind("(C7508)", 0) == 0);
}

TEST_CASE("warnings and unlocated fatals are read - the closing 'aborted' line is dropped") {
  const std::string log =
      "ptxas application ptx input, line 2; warning : Unused parameter\n"
      "ptxas fatal   : SM version specified by .target is higher than default SM version assumed\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n"
      "ERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (candidate.ptx)\n";
  const std::vector<ptxas_diagnostic> d = parse_ptxas_diagnostics(log, "a\nb\nc\n");
  REQUIRE(d.size() == 2);
  CHECK(d[0].severity == "warning");
  CHECK(d[0].line == 2);
  CHECK(d[0].quoted == "     1 | a\n>    2 | b\n     3 | c\n");
  CHECK(d[1].severity == "error");
  CHECK(d[1].message.find("higher than default SM") != std::string::npos);
}

TEST_CASE("nvJitLink's own error lines are errors - its ERROR trailer is none") {
  const std::string log =
      "error   : Undefined reference to 'foo' in 'candidate.ptx'\n"
      "ERROR 9: finish\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n";
  const std::vector<ptxas_diagnostic> d = parse_ptxas_diagnostics(log, "");
  REQUIRE(d.size() == 1);
  CHECK(d[0].severity == "error");
  CHECK(d[0].line == 0);
  CHECK(d[0].message == "Undefined reference to 'foo' in 'candidate.ptx'");
}

TEST_CASE("quoting clamps to the module and cuts very long lines") {
  const std::string ptx = "first\n" + std::string(500, 'x') + "\n";
  const std::string q = quote_ptx_lines(ptx, -1, 9, 2);
  CHECK(q.rfind("     1 | first\n>    2 | ", 0) == 0);
  CHECK(q.size() < 300);
  CHECK(q.find(" ...\n") != std::string::npos);
}

TEST_CASE("numbers past int in a log saturate instead of throwing") {
  // std::stoi threw out_of_range on these, taking the compile stage down.
  const std::string log =
      "ptxas application ptx input, line 99999999999999999999; error   : Unknown symbol\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Used 99999999999999 registers, 99999999999 bytes smem, 2147483647 bytes cmem[0], 9 bytes cmem[1]\n";
  const std::vector<ptxas_diagnostic> d = parse_ptxas_diagnostics(log, "a\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].line == 2147483647);
  CHECK(d[0].quoted.empty());
  const std::vector<kernel_resources> k = parse_ptxas_resources(log);
  REQUIRE(k.size() == 1);
  CHECK(k[0].registers == 2147483647);
  CHECK(k[0].static_shared_bytes == 2147483647);
  CHECK(k[0].constant_bytes == 2147483647);
}

TEST_CASE("a log line of megabytes is read without a recursive regex") {
  // std::regex's `.*` recursed per character and overflowed the stack.
  const std::string log = "ptxas application ptx input, line 1; error   : near '" + std::string(2000000, 'x') + "'\n";
  const std::vector<ptxas_diagnostic> d = parse_ptxas_diagnostics(log, "a\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].line == 1);
}

TEST_CASE("diagnostics are capped and quoting splits the module once") {
  std::string ptx, log;
  for (int i = 1; i <= 20000; ++i) {
    ptx += "line\n";
    log += "ptxas application ptx input, line " + std::to_string(i) + "; warning : w\n";
  }
  const std::vector<ptxas_diagnostic> d = parse_ptxas_diagnostics(log, ptx);
  CHECK(d.size() == k_max_ptxas_diagnostics);
}
